//! The `stats` capability: `stats::` for scripts, a thin adapter over [`algorithms::stats`].

pub mod rhai;

/// `stats::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability::script("stats", |_| rhai::module());
