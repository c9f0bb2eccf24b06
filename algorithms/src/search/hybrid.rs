//! OpenClaw's hybrid merge and result selection, reference release 2026.3.31
//! (openclaw-memory.md §3.1 entry, §3.2 rank → textScore, §3.4 merge, §6 configuration).
//!
//! Temporal decay (§3.5) and MMR (§3.6) live in their own modules. The caller runs the steps in
//! OpenClaw's order: [`merge`] → decay → stable sort → MMR → [`select`]. Chunks are identified by
//! their index in the caller's corpus, which stands in for OpenClaw's chunk id (the same id in
//! both legs, §2.2) and for its (source, path, startLine, endLine) key (§3.1).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::fusion::{FusedHit, LegHit, LegScore};

/// `query.maxResults` (§6).
pub const DEFAULT_MAX_RESULTS: usize = 6;
/// `query.minScore` (§6).
pub const DEFAULT_MIN_SCORE: f64 = 0.35;
/// `query.hybrid.vectorWeight` (§6).
pub const DEFAULT_VECTOR_WEIGHT: f64 = 0.7;
/// `query.hybrid.textWeight` (§6).
pub const DEFAULT_TEXT_WEIGHT: f64 = 0.3;
/// `query.hybrid.candidateMultiplier` (§6).
pub const DEFAULT_CANDIDATE_MULTIPLIER: u32 = 4;
/// The multiplier's allowed range (§6: "integer clamped to 1..20").
pub const CANDIDATE_MULTIPLIER_RANGE: (u32, u32) = (1, 20);
/// The hard cap on K, the per-leg candidate count (§3.1, §6 "K cap 200").
pub const MAX_CANDIDATES: usize = 200;
/// What `bm25RankToScore` treats a non-finite rank as (it maps to 1/1000).
const NON_FINITE_RANK: f64 = 999.0;

/// How an FTS5 rank (negative, more negative = better) becomes a textScore (§3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextScoreMapping {
    /// From 2026.3.7: `|r|/(1 + |r|)` for `r < 0`, `1/(1 + r)` otherwise. Monotonic, in (0, 1).
    #[default]
    Saturating,
    /// Up to 2026.3.2: `1/(1 + max(0, r))`, which is 1.0 for every hit.
    Constant,
}

/// OpenClaw's `bm25RankToScore`: the textScore of an FTS5 `rank`.
pub fn text_score(rank: f64, mapping: TextScoreMapping) -> f64 {
    if !rank.is_finite() {
        return 1.0 / (1.0 + NON_FINITE_RANK);
    }
    match mapping {
        TextScoreMapping::Saturating if rank < 0.0 => -rank / (1.0 - rank),
        TextScoreMapping::Saturating => 1.0 / (1.0 + rank),
        TextScoreMapping::Constant => 1.0 / (1.0 + rank.max(0.0)),
    }
}

/// The query options of OpenClaw's classic builtin search, with its defaults (§3.1, §6).
/// Out-of-range values are clamped the way OpenClaw's config resolution does, when read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HybridOptions {
    pub max_results: usize,
    pub min_score: f64,
    pub vector_weight: f64,
    pub text_weight: f64,
    pub candidate_multiplier: u32,
    pub text_score: TextScoreMapping,
}

impl Default for HybridOptions {
    fn default() -> Self {
        Self {
            max_results: DEFAULT_MAX_RESULTS,
            min_score: DEFAULT_MIN_SCORE,
            vector_weight: DEFAULT_VECTOR_WEIGHT,
            text_weight: DEFAULT_TEXT_WEIGHT,
            candidate_multiplier: DEFAULT_CANDIDATE_MULTIPLIER,
            text_score: TextScoreMapping::default(),
        }
    }
}

/// Leg weights after clamping and normalisation; they sum to 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HybridWeights {
    pub vector: f64,
    pub text: f64,
}

impl HybridOptions {
    /// K = min(200, max(1, ⌊maxResults × candidateMultiplier⌋)), the per-leg candidate count.
    pub fn candidate_pool(&self) -> usize {
        let (low, high) = CANDIDATE_MULTIPLIER_RANGE;
        let multiplier = self.candidate_multiplier.clamp(low, high) as usize;
        self.max_results.saturating_mul(multiplier).clamp(1, MAX_CANDIDATES)
    }

    /// Each weight clamped to [0, 1], then both scaled to sum 1. When both are 0 the defaults
    /// apply (our reading: OpenClaw would otherwise divide by zero).
    pub fn weights(&self) -> HybridWeights {
        let vector = clamp_unit(self.vector_weight, DEFAULT_VECTOR_WEIGHT);
        let text = clamp_unit(self.text_weight, DEFAULT_TEXT_WEIGHT);
        let sum = vector + text;
        if sum > 0.0 {
            HybridWeights { vector: vector / sum, text: text / sum }
        } else {
            HybridWeights { vector: DEFAULT_VECTOR_WEIGHT, text: DEFAULT_TEXT_WEIGHT }
        }
    }

    /// minScore clamped to [0, 1].
    pub fn min_score(&self) -> f64 {
        clamp_unit(self.min_score, DEFAULT_MIN_SCORE)
    }
}

/// A value clamped to [0, 1]; `fallback` for NaN.
fn clamp_unit(value: f64, fallback: f64) -> f64 {
    if value.is_nan() { fallback } else { value.clamp(0.0, 1.0) }
}

/// §3.4: union by chunk of the vector leg (`score` = cosine) and the keyword leg (`score` = the
/// FTS5 rank, negative), each in its leg order, into `wV·vectorScore + wT·textScore`.
///
/// Order: vector-leg order, then keyword-only chunks in keyword order. A chunk listed twice in a
/// leg takes the later values at the earlier position, as a JavaScript `Map` does. The keyword
/// [`LegScore`] carries the rank as `raw` and the textScore as `normalized`.
pub fn merge(vector: &[LegHit], keyword: &[LegHit], options: &HybridOptions) -> Vec<FusedHit> {
    let weights = options.weights();
    let mut merged: Vec<FusedHit> = Vec::with_capacity(vector.len() + keyword.len());
    let mut position: HashMap<usize, usize> = HashMap::new();
    for hit in vector {
        let score = Some(LegScore { raw: hit.score, normalized: hit.score });
        match position.get(&hit.doc).and_then(|&index| merged.get_mut(index)) {
            Some(existing) => existing.vector = score,
            None => {
                position.insert(hit.doc, merged.len());
                merged.push(FusedHit { doc: hit.doc, vector: score, keyword: None, score: 0.0 });
            }
        }
    }
    for hit in keyword {
        let score = Some(LegScore { raw: hit.score, normalized: text_score(hit.score, options.text_score) });
        match position.get(&hit.doc).and_then(|&index| merged.get_mut(index)) {
            Some(existing) => existing.keyword = score,
            None => {
                position.insert(hit.doc, merged.len());
                merged.push(FusedHit { doc: hit.doc, vector: None, keyword: score, score: 0.0 });
            }
        }
    }
    for hit in &mut merged {
        hit.score = weights.vector * hit.vector.map_or(0.0, |leg| leg.normalized)
            + weights.text * hit.keyword.map_or(0.0, |leg| leg.normalized);
    }
    merged
}

/// §3.1, after merge, decay, sort and MMR: the hits with score ≥ minScore, in the given order,
/// cut to maxResults. When none passes and the keyword leg was not empty, the relaxed floor
/// (from 2026.2.27): keyword hits with score ≥ min(minScore, textWeight).
///
/// "The keyword leg was not empty" is read from the hits: every keyword hit is in the merge.
pub fn select(ordered: &[FusedHit], options: &HybridOptions) -> Vec<FusedHit> {
    let min_score = options.min_score();
    let strict: Vec<FusedHit> = ordered.iter().filter(|hit| hit.score >= min_score).copied().collect();
    let keyword_leg_empty = ordered.iter().all(|hit| hit.keyword.is_none());
    if !strict.is_empty() || keyword_leg_empty {
        return strict.into_iter().take(options.max_results).collect();
    }
    let floor = min_score.min(options.weights().text);
    ordered
        .iter()
        .filter(|hit| hit.keyword.is_some() && hit.score >= floor)
        .take(options.max_results)
        .copied()
        .collect()
}

/// §3.1 without hybrid (hybrid disabled or FTS unavailable): the raw cosines ≥ minScore, in leg
/// order, cut to maxResults. No weights, decay or MMR.
pub fn vector_only(vector: &[LegHit], options: &HybridOptions) -> Vec<LegHit> {
    let min_score = options.min_score();
    vector.iter().filter(|hit| hit.score >= min_score).take(options.max_results).copied().collect()
}

#[cfg(test)]
#[path = "hybrid_tests.rs"]
mod tests;
