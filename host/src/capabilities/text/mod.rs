//! The `text` capability: `text::` for scripts, a thin adapter over [`algorithms::text`].

pub mod rhai;

/// `text::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability::script("text", |_| rhai::module());

#[cfg(test)]
mod parity_tests;
