//! Guest SDK (arrives with the guest-modules issue).
