//! Question-answering scores as LoCoMo's official evaluation computes them
//! (`task_eval/evaluation.py` of snap-research/LoCoMo, read at commit `0e22967`): the answer
//! normalisation, token F1 over Porter stems, the per-category rules and evidence recall, plus
//! BLEU-1, which that file does not compute (see [`bleu1`]).
//!
//! Pure functions of their inputs: reading a LoCoMo file, asking a memory system and judging
//! with an LLM belong to the host and its scripts.

mod category;
mod evidence;
mod normalize;
mod overlap;

pub use category::{Category, gold_text, score};
pub use evidence::evidence_recall;
pub use normalize::{answer_tokens, normalize_answer};
pub use overlap::{bleu1, token_f1};

/// What reading LoCoMo's fields can fail with.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum QaError {
    #[error("`{code}` is not a LoCoMo category; hint: the categories are 1 (multi-hop) to 5 (adversarial)")]
    UnknownCategory { code: i64 },
    #[error("a gold answer must be a string or a number, got {kind}")]
    GoldAnswer { kind: &'static str },
}
