//! Fusion of a vector leg and a keyword leg into one score per document: weighted linear fusion
//! with a choice of per-leg normalisation, and reciprocal rank fusion. OpenClaw's own merge, with
//! its thresholds, is in `hybrid.rs`.
//!
//! A leg is a ranked list of (document, score), best first: its order *is* its ranking, which is
//! what rank-based normalisation and RRF read. Results come back in first-appearance order
//! (vector leg, then keyword-only documents in keyword order), unsorted, because both reference
//! pipelines apply temporal decay before they sort; [`sort_by_score`] is the stable sort they use.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One entry of a ranked leg.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LegHit {
    pub doc: usize,
    pub score: f64,
}

/// A leg's contribution to a fused result: the score the leg reported and the value that entered
/// the fusion after normalisation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LegScore {
    pub raw: f64,
    pub normalized: f64,
}

/// A fused result. A leg that did not return the document is `None` and contributes 0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FusedHit {
    pub doc: usize,
    pub vector: Option<LegScore>,
    pub keyword: Option<LegScore>,
    pub score: f64,
}

/// How a leg's raw scores become fusion inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalization {
    /// The raw score as is (a cosine).
    #[default]
    None,
    /// `1/(1 + rank)`, rank 0-based in the leg (the Cortex benchmark's BM25 normalisation).
    Rank,
    /// `|s|/(1 + |s|)` (OpenClaw ≥ 2026.3.7 for FTS5 ranks).
    Saturating,
    /// `(s − min)/(max − min)` over the leg; 1 for every entry when all scores are equal.
    MinMax,
}

/// Weighted linear fusion. The default is the Cortex benchmark's: `0.7 × cosine + 0.3 ×
/// 1/(1 + BM25 rank)` over all documents (cortex-benchmark-original.md §2, Phase 3).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinearFusionOptions {
    pub vector_weight: f64,
    pub keyword_weight: f64,
    pub vector_normalization: Normalization,
    pub keyword_normalization: Normalization,
    /// Keep only the first `pool_size` entries of each leg before fusing; `None` fuses whole legs.
    pub pool_size: Option<usize>,
    /// Rank every document in the keyword leg, those that match no query term too (after the
    /// matching ones, in corpus order), so each gets `1/(1 + rank)` as in the original benchmark;
    /// `false` leaves them out of the leg (a keyword contribution of 0).
    pub rank_every_document: bool,
}

impl Default for LinearFusionOptions {
    fn default() -> Self {
        Self {
            vector_weight: 0.7,
            keyword_weight: 0.3,
            vector_normalization: Normalization::None,
            keyword_normalization: Normalization::Rank,
            pool_size: None,
            rank_every_document: true,
        }
    }
}

/// Reciprocal rank fusion: `Σ 1/(k + rank)` over the legs that returned the document, rank
/// 1-based (Cormack et al. 2009).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RrfOptions {
    pub k: f64,
    pub pool_size: Option<usize>,
}

impl Default for RrfOptions {
    fn default() -> Self {
        Self { k: 60.0, pool_size: None }
    }
}

/// Which leg a problem was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Leg {
    Vector,
    Keyword,
}

impl std::fmt::Display for Leg {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            Leg::Vector => "vector",
            Leg::Keyword => "keyword",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum FusionError {
    #[error("fusion weight `{name}` must be a finite number, got `{value}`")]
    InvalidWeight { name: &'static str, value: f64 },
    #[error("RRF constant `k` must be a finite number ≥ 0, got `{value}`")]
    InvalidRrfK { value: f64 },
    #[error("the {leg} leg scores document `{doc}` as `{value}`; hint: scores must be finite")]
    NonFiniteScore { leg: Leg, doc: usize, value: f64 },
    #[error("the {leg} leg lists document `{doc}` twice")]
    DuplicateDocument { leg: Leg, doc: usize },
}

/// Normalises one leg (already cut to its pool) into [`LegScore`]s, in leg order.
pub fn normalize_leg(leg: &[LegHit], normalization: Normalization) -> Vec<LegScore> {
    let (min, max) =
        leg.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(min, max), hit| (min.min(hit.score), max.max(hit.score)));
    leg.iter()
        .enumerate()
        .map(|(rank, hit)| {
            let normalized = match normalization {
                Normalization::None => hit.score,
                Normalization::Rank => 1.0 / (1.0 + rank as f64),
                Normalization::Saturating => hit.score.abs() / (1.0 + hit.score.abs()),
                Normalization::MinMax if max > min => (hit.score - min) / (max - min),
                Normalization::MinMax => 1.0,
            };
            LegScore { raw: hit.score, normalized }
        })
        .collect()
}

/// Weighted linear fusion of two legs; results in first-appearance order.
pub fn fuse_linear(
    vector: &[LegHit],
    keyword: &[LegHit],
    options: &LinearFusionOptions,
) -> Result<Vec<FusedHit>, FusionError> {
    check_weight("vector_weight", options.vector_weight)?;
    check_weight("keyword_weight", options.keyword_weight)?;
    let vector = pooled(vector, options.pool_size, Leg::Vector)?;
    let keyword = pooled(keyword, options.pool_size, Leg::Keyword)?;
    let vector_scores = normalize_leg(vector, options.vector_normalization);
    let keyword_scores = normalize_leg(keyword, options.keyword_normalization);
    let mut hits = union(vector, &vector_scores, keyword, &keyword_scores);
    for hit in &mut hits {
        hit.score = options.vector_weight * hit.vector.map_or(0.0, |leg| leg.normalized)
            + options.keyword_weight * hit.keyword.map_or(0.0, |leg| leg.normalized);
    }
    Ok(hits)
}

/// Reciprocal rank fusion of two legs; results in first-appearance order.
pub fn fuse_rrf(vector: &[LegHit], keyword: &[LegHit], options: &RrfOptions) -> Result<Vec<FusedHit>, FusionError> {
    if !(options.k.is_finite() && options.k >= 0.0) {
        return Err(FusionError::InvalidRrfK { value: options.k });
    }
    let vector = pooled(vector, options.pool_size, Leg::Vector)?;
    let keyword = pooled(keyword, options.pool_size, Leg::Keyword)?;
    let reciprocal = |leg: &[LegHit]| -> Vec<LegScore> {
        leg.iter()
            .enumerate()
            .map(|(rank, hit)| LegScore { raw: hit.score, normalized: 1.0 / (options.k + rank as f64 + 1.0) })
            .collect()
    };
    let mut hits = union(vector, &reciprocal(vector), keyword, &reciprocal(keyword));
    for hit in &mut hits {
        hit.score = hit.vector.map_or(0.0, |leg| leg.normalized) + hit.keyword.map_or(0.0, |leg| leg.normalized);
    }
    Ok(hits)
}

/// Stable sort by score, best first: equal scores keep their current order, as JavaScript's
/// `toSorted((a, b) => b.score - a.score)` does in both reference systems.
pub fn sort_by_score(hits: &mut [FusedHit]) {
    hits.sort_by(|left, right| right.score.total_cmp(&left.score));
}

fn check_weight(name: &'static str, value: f64) -> Result<(), FusionError> {
    if value.is_finite() { Ok(()) } else { Err(FusionError::InvalidWeight { name, value }) }
}

/// The leg cut to its pool, after checking that every score is finite and no document repeats.
fn pooled(leg: &[LegHit], pool_size: Option<usize>, name: Leg) -> Result<&[LegHit], FusionError> {
    let leg = match pool_size {
        Some(size) => leg.get(..size).unwrap_or(leg),
        None => leg,
    };
    let mut seen = HashMap::with_capacity(leg.len());
    for hit in leg {
        if !hit.score.is_finite() {
            return Err(FusionError::NonFiniteScore { leg: name, doc: hit.doc, value: hit.score });
        }
        if seen.insert(hit.doc, ()).is_some() {
            return Err(FusionError::DuplicateDocument { leg: name, doc: hit.doc });
        }
    }
    Ok(leg)
}

/// Union by document in first-appearance order, with scores still 0.
fn union(
    vector: &[LegHit],
    vector_scores: &[LegScore],
    keyword: &[LegHit],
    keyword_scores: &[LegScore],
) -> Vec<FusedHit> {
    let mut hits: Vec<FusedHit> = Vec::with_capacity(vector.len() + keyword.len());
    let mut position: HashMap<usize, usize> = HashMap::with_capacity(vector.len() + keyword.len());
    for (hit, score) in vector.iter().zip(vector_scores) {
        position.insert(hit.doc, hits.len());
        hits.push(FusedHit { doc: hit.doc, vector: Some(*score), keyword: None, score: 0.0 });
    }
    for (hit, score) in keyword.iter().zip(keyword_scores) {
        match position.get(&hit.doc).and_then(|&index| hits.get_mut(index)) {
            Some(existing) => existing.keyword = Some(*score),
            None => {
                position.insert(hit.doc, hits.len());
                hits.push(FusedHit { doc: hit.doc, vector: None, keyword: Some(*score), score: 0.0 });
            }
        }
    }
    hits
}

#[cfg(test)]
#[path = "fusion_tests.rs"]
mod tests;
