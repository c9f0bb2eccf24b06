//! The `qa` capability: `qa::` for scripts, a thin adapter over [`algorithms::qa`], the answer
//! scores of LoCoMo's official evaluation (normalisation, token F1, the per-category rules,
//! evidence recall) and BLEU-1.

pub mod rhai;

/// `qa::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability::script("qa", |_| rhai::module());
