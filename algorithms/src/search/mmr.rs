//! Greedy maximal marginal relevance (Carbonell & Goldstein 1998): at each step pick the item
//! maximising `λ·relevance − (1 − λ)·max similarity to the items already picked`.
//!
//! Two reference variants, both over a list already sorted by score: OpenClaw's (openclaw-memory.md
//! §3.6: relevance min–max normalised, Jaccard over snippet tokens, the whole list reordered)
//! and the Cortex benchmark's (cortex-benchmark-original.md §2 Phase 3: raw decayed score,
//! chunk-to-chunk embedding cosine, stop after 6). MMR only reorders; scores are untouched.
//!
//! Ties on the objective go to the higher original score, then to the earlier item, OpenClaw's
//! rule; on a list sorted by score that is also the benchmark's "first in order".

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::vector::{VectorError, cosine};

/// `query.hybrid.mmr.lambda` (openclaw-memory.md §6) and the benchmark's λ.
pub const DEFAULT_LAMBDA: f64 = 0.7;
/// The benchmark's OC_TOP_K (cortex-benchmark-original.md §2, "Fixed constants").
pub const BENCHMARK_TOP_K: usize = 6;

/// MMR options; the default is OpenClaw's variant.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MmrOptions {
    /// 0 = only diversity, 1 = only relevance; clamped to [0, 1].
    pub lambda: f64,
    /// Min–max normalise the scores into relevance (all equal → relevance 1 for every item).
    pub normalize_relevance: bool,
    /// Stop after this many picks; `None` reorders the whole list.
    pub limit: Option<usize>,
}

impl Default for MmrOptions {
    fn default() -> Self {
        Self { lambda: DEFAULT_LAMBDA, normalize_relevance: true, limit: None }
    }
}

impl MmrOptions {
    /// The Cortex benchmark's MMR: λ 0.7 on the raw decayed score, top 6.
    pub fn benchmark() -> Self {
        Self { lambda: DEFAULT_LAMBDA, normalize_relevance: false, limit: Some(BENCHMARK_TOP_K) }
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum MmrError {
    #[error("MMR `lambda` must be a number, got `{value}`")]
    InvalidLambda { value: f64 },
    #[error("item `{index}` has score `{value}`; hint: MMR needs finite scores")]
    NonFiniteScore { index: usize, value: f64 },
    #[error("`{scores}` scores but `{items}` items to compare")]
    LengthMismatch { scores: usize, items: usize },
    #[error("cannot compare embeddings")]
    Vector(#[from] VectorError),
}

/// The greedy MMR order of items `0..scores.len()`: indices in pick order.
pub fn rerank(
    scores: &[f64],
    options: &MmrOptions,
    mut similarity: impl FnMut(usize, usize) -> f64,
) -> Result<Vec<usize>, MmrError> {
    if options.lambda.is_nan() {
        return Err(MmrError::InvalidLambda { value: options.lambda });
    }
    if let Some((index, &value)) = scores.iter().enumerate().find(|(_, score)| !score.is_finite()) {
        return Err(MmrError::NonFiniteScore { index, value });
    }
    let lambda = options.lambda.clamp(0.0, 1.0);
    let relevance = if options.normalize_relevance { min_max(scores) } else { scores.to_vec() };
    let picks = options.limit.unwrap_or(scores.len()).min(scores.len());
    let mut picked = vec![false; scores.len()];
    // Highest similarity to any picked item; only read once something has been picked.
    let mut closest = vec![f64::NEG_INFINITY; scores.len()];
    let mut order = Vec::with_capacity(picks);
    while order.len() < picks {
        let mut best: Option<(usize, f64)> = None;
        for (index, (&relevant, &score)) in relevance.iter().zip(scores).enumerate() {
            if picked.get(index).copied().unwrap_or(true) {
                continue;
            }
            let penalty = if order.is_empty() { 0.0 } else { closest.get(index).copied().unwrap_or(0.0) };
            let objective = lambda * relevant - (1.0 - lambda) * penalty;
            let better = match best {
                None => true,
                Some((leader, leading)) => {
                    objective > leading
                        || (objective == leading && score > scores.get(leader).copied().unwrap_or(score))
                }
            };
            if better {
                best = Some((index, objective));
            }
        }
        let Some((chosen, _)) = best else { break };
        order.push(chosen);
        if let Some(flag) = picked.get_mut(chosen) {
            *flag = true;
        }
        for (index, nearest) in closest.iter_mut().enumerate() {
            if !picked.get(index).copied().unwrap_or(true) {
                *nearest = nearest.max(similarity(index, chosen));
            }
        }
    }
    Ok(order)
}

/// OpenClaw's MMR (§3.6) over snippets: Jaccard similarity of [`token_set`]s.
pub fn rerank_by_text(scores: &[f64], texts: &[&str], options: &MmrOptions) -> Result<Vec<usize>, MmrError> {
    if scores.len() != texts.len() {
        return Err(MmrError::LengthMismatch { scores: scores.len(), items: texts.len() });
    }
    let sets: Vec<HashSet<String>> = texts.iter().map(|text| token_set(text)).collect();
    rerank(scores, options, |left, right| match (sets.get(left), sets.get(right)) {
        (Some(left), Some(right)) => jaccard(left, right),
        _ => 0.0,
    })
}

/// The benchmark's MMR: cosine similarity between item embeddings.
pub fn rerank_by_embedding(scores: &[f64], vectors: &[&[f32]], options: &MmrOptions) -> Result<Vec<usize>, MmrError> {
    if scores.len() != vectors.len() {
        return Err(MmrError::LengthMismatch { scores: scores.len(), items: vectors.len() });
    }
    if let Some(first) = vectors.first() {
        for vector in vectors {
            // Validates dimension and finiteness once, so the closure below cannot fail.
            cosine(first, vector)?;
        }
    }
    rerank(scores, options, |left, right| match (vectors.get(left), vectors.get(right)) {
        (Some(left), Some(right)) => cosine(left, right).map_or(0.0, f64::from),
        _ => 0.0,
    })
}

/// Jaccard similarity: |A ∩ B| / |A ∪ B|, with J(∅, ∅) = 1 and J(∅, X) = 0 (§3.6).
pub fn jaccard(left: &HashSet<String>, right: &HashSet<String>) -> f64 {
    if left.is_empty() && right.is_empty() {
        return 1.0;
    }
    let (smaller, larger) = if left.len() <= right.len() { (left, right) } else { (right, left) };
    let shared = smaller.iter().filter(|token| larger.contains(*token)).count();
    let union = left.len() + right.len() - shared;
    if union == 0 { 0.0 } else { shared as f64 / union as f64 }
}

/// OpenClaw's MMR token set (§3.6): the text lowercased, runs of `[a-z0-9_]` (every other
/// character separates, accented Latin letters included), plus, from 2026.2.27, each CJK
/// character and each pair of adjacent CJK characters.
pub fn token_set(text: &str) -> HashSet<String> {
    let lower = text.to_lowercase();
    let mut tokens: HashSet<String> = lower
        .split(|character: char| !(character.is_ascii_lowercase() || character.is_ascii_digit() || character == '_'))
        .filter(|token| !token.is_empty())
        .map(str::to_owned)
        .collect();
    let mut previous: Option<char> = None;
    for character in lower.chars() {
        if is_mmr_cjk(character) {
            tokens.insert(character.to_string());
            if let Some(before) = previous {
                tokens.insert([before, character].iter().collect());
            }
            previous = Some(character);
        } else {
            previous = None;
        }
    }
    tokens
}

/// The scripts OpenClaw's MMR tokenizer splits into characters: Hiragana, Katakana, CJK
/// Unified Ideographs and Extension A, Hangul Syllables and Jamo.
fn is_mmr_cjk(character: char) -> bool {
    matches!(
        character,
        '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7AF}' | '\u{1100}'..='\u{11FF}'
    )
}

fn min_max(scores: &[f64]) -> Vec<f64> {
    let min = scores.iter().copied().fold(f64::INFINITY, f64::min);
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let range = max - min;
    scores.iter().map(|score| if range == 0.0 { 1.0 } else { (score - min) / range }).collect()
}

#[cfg(test)]
#[path = "mmr_tests.rs"]
mod tests;
