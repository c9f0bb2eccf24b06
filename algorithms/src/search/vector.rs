//! Exact (brute-force) cosine similarity and top-k over f32 vectors stored contiguously in one
//! `Vec<f32>`. Stays fast to 100k × 384 because the inner loop is a dot product the compiler
//! vectorises and top-k is a linear-time selection; no approximate index, no I/O.
//!
//! Top-k on a store of 1,000 vectors or more reads an int8 copy first (`quantized.rs`, a quarter
//! of the f32 bytes, built by the second such query) and scores in f32 only the vectors that can
//! still make the top k (`prefilter.rs`): the same hits and scores as the full f32 scan, for
//! about a quarter of the memory traffic.
//!
//! Defined behaviour at the edges: a vector with a NaN or infinite component is rejected (at
//! insert and as a query) because it cannot be ordered; a zero vector is accepted and scores 0
//! against everything (OpenClaw's `cosineSimilarity` returns 0 for a zero norm); a vector of the
//! wrong dimension is an error. Ties are ordered by document index, lower first.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::best::best_k;
use super::prefilter;
use super::quantized::QuantizedVectors;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum VectorError {
    #[error("vector dimension must be at least 1")]
    ZeroDimension,
    #[error("vector has dimension `{found}` but the store holds vectors of dimension `{expected}`")]
    DimensionMismatch { expected: usize, found: usize },
    #[error("flat vector data of length `{length}` is not a multiple of the dimension `{dimension}`")]
    FlatLengthMismatch { dimension: usize, length: usize },
    #[error("vector component `{component}` is `{value}`; hint: NaN and infinite values cannot be ranked")]
    NotFinite { component: usize, value: f32 },
}

/// One scored document.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct VectorHit {
    pub doc: usize,
    pub score: f32,
}

/// The int8 copy of a store and whether a top-k has asked for it yet (see `prefilter_for`).
#[derive(Debug, Clone, Default)]
struct Int8Copy {
    asked: OnceLock<()>,
    /// `None` inside: the vectors cannot be bounded (see `quantized.rs`).
    built: OnceLock<Option<QuantizedVectors>>,
}

/// How [`VectorStore::top_k_traced`] found its hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scan {
    /// Every vector scored in f32.
    Exhaustive,
    /// The int8 copy bounded every score; this many vectors were then scored in f32.
    Prefiltered { rescored: usize },
}

/// L2-normalised vectors of one dimension, addressed by insertion position.
#[derive(Debug, Clone)]
pub struct VectorStore {
    dimension: usize,
    data: Vec<f32>,
    /// The int8 copy for top-k; `push` drops it.
    int8: Int8Copy,
}

impl VectorStore {
    pub fn new(dimension: usize) -> Result<Self, VectorError> {
        Self::with_capacity(dimension, 0)
    }

    pub fn with_capacity(dimension: usize, vectors: usize) -> Result<Self, VectorError> {
        if dimension == 0 {
            return Err(VectorError::ZeroDimension);
        }
        Ok(Self { dimension, data: Vec::with_capacity(dimension.saturating_mul(vectors)), int8: Int8Copy::default() })
    }

    /// A store from vectors laid end to end; each is validated and normalised like [`Self::push`].
    pub fn from_flat(dimension: usize, data: Vec<f32>) -> Result<Self, VectorError> {
        if dimension == 0 {
            return Err(VectorError::ZeroDimension);
        }
        if !data.len().is_multiple_of(dimension) {
            return Err(VectorError::FlatLengthMismatch { dimension, length: data.len() });
        }
        let mut data = data;
        for vector in data.chunks_exact_mut(dimension) {
            check_finite(vector)?;
            normalize_in_place(vector);
        }
        Ok(Self { dimension, data, int8: Int8Copy::default() })
    }

    /// A store from vectors laid end to end that an earlier store normalised (a corpus file):
    /// checked, and kept bit for bit, since normalising twice can move the last bit.
    pub fn from_normalized_flat(dimension: usize, data: Vec<f32>) -> Result<Self, VectorError> {
        if dimension == 0 {
            return Err(VectorError::ZeroDimension);
        }
        if !data.len().is_multiple_of(dimension) {
            return Err(VectorError::FlatLengthMismatch { dimension, length: data.len() });
        }
        for vector in data.chunks_exact(dimension) {
            check_finite(vector)?;
        }
        Ok(Self { dimension, data, int8: Int8Copy::default() })
    }

    /// Adds a vector (normalised to unit length; a zero vector stays zero) and returns its index.
    pub fn push(&mut self, vector: &[f32]) -> Result<usize, VectorError> {
        self.check_dimension(vector)?;
        check_finite(vector)?;
        let index = self.len();
        let start = self.data.len();
        self.int8 = Int8Copy::default();
        self.data.extend_from_slice(vector);
        if let Some(stored) = self.data.get_mut(start..) {
            normalize_in_place(stored);
        }
        Ok(index)
    }

    pub fn dimension(&self) -> usize {
        self.dimension
    }

    pub fn len(&self) -> usize {
        self.data.len() / self.dimension
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The stored (normalised) vector at `doc`.
    pub fn get(&self, doc: usize) -> Option<&[f32]> {
        let start = doc.checked_mul(self.dimension)?;
        self.data.get(start..start.checked_add(self.dimension)?)
    }

    /// Cosine similarity of `query` with every stored vector, in storage order.
    pub fn scores(&self, query: &[f32]) -> Result<Vec<f32>, VectorError> {
        let query = self.normalized_query(query)?;
        Ok(self.scores_of(&query))
    }

    /// The scores of a checked, normalised query.
    fn scores_of(&self, query: &[f32]) -> Vec<f32> {
        let mut scores = vec![0.0; self.len()];
        let threads = self.threads();
        if threads < 2 {
            fill_scores(query, &self.data, self.dimension, &mut scores);
            return scores;
        }
        // Each score is computed exactly as in the sequential path, so results do not depend
        // on the number of threads.
        let per_thread = self.len().div_ceil(threads);
        std::thread::scope(|scope| {
            for (data, out) in self.data.chunks(per_thread * self.dimension).zip(scores.chunks_mut(per_thread)) {
                scope.spawn(move || fill_scores(query, data, self.dimension, out));
            }
        });
        scores
    }

    /// The `k` most similar vectors, best first; equal scores by index, lower first.
    pub fn top_k(&self, query: &[f32], k: usize) -> Result<Vec<VectorHit>, VectorError> {
        Ok(self.top_k_traced(query, k)?.0)
    }

    /// [`Self::top_k`], and how the hits were found. Both ways give the same hits and scores.
    pub fn top_k_traced(&self, query: &[f32], k: usize) -> Result<(Vec<VectorHit>, Scan), VectorError> {
        let query = self.normalized_query(query)?;
        if let Some(quantized) = self.prefilter_for(k) {
            let (hits, rescored) = prefilter::top_k(&self.data, quantized, &query, k, self.threads());
            return Ok((hits, Scan::Prefiltered { rescored }));
        }
        Ok((top_k_of(&self.scores_of(&query), k), Scan::Exhaustive))
    }

    /// Builds the int8 copy now, if top-k on this store would use one, rather than on the second
    /// query; returns its size in bytes.
    pub fn prepare_prefilter(&self) -> Option<usize> {
        if !self.prefilter_pays(1) {
            return None;
        }
        self.int8_copy().map(QuantizedVectors::memory_bytes)
    }

    /// The int8 copy, when the prefilter pays for a top `k`. The first such query takes the f32
    /// scan and the second builds the copy (about six f32 scans' worth of work), so that a
    /// process asking once, such as a hook answering one event, never pays for it.
    fn prefilter_for(&self, k: usize) -> Option<&QuantizedVectors> {
        if !self.prefilter_pays(k) {
            return None;
        }
        let first = self.int8.asked.set(()).is_ok();
        if first && self.int8.built.get().is_none() {
            return None;
        }
        self.int8_copy()
    }

    /// A store big enough that the int8 pass beats the f32 one, and k small enough that few
    /// vectors are scored twice.
    fn prefilter_pays(&self, k: usize) -> bool {
        self.len() >= PREFILTER_FROM && k.saturating_mul(PREFILTER_MAX_SHARE) <= self.len()
    }

    fn int8_copy(&self) -> Option<&QuantizedVectors> {
        self.int8.built.get_or_init(|| QuantizedVectors::build(self.dimension, &self.data, self.threads())).as_ref()
    }

    /// How many threads a pass over the store takes. Asked only for big stores: on Linux the
    /// answer comes from reading cgroup files, which costs more than scoring a few hundred vectors.
    fn threads(&self) -> usize {
        if self.len() < PARALLEL_FROM { 1 } else { *THREADS }
    }

    /// `query` checked against the store and normalised, as every score is computed from it.
    fn normalized_query(&self, query: &[f32]) -> Result<Vec<f32>, VectorError> {
        self.check_dimension(query)?;
        check_finite(query)?;
        let mut query = query.to_vec();
        normalize_in_place(&mut query);
        Ok(query)
    }
}

/// Stores smaller than this are ranked by the f32 scan alone: at 1,000 × 384 the prefilter takes
/// 30 µs against the scan's 60, and below that the copy is not worth its memory.
const PREFILTER_FROM: usize = 1_000;
/// The prefilter is used for a top k of at most 1/8 of the store.
const PREFILTER_MAX_SHARE: usize = 8;

/// Stores smaller than this are scored on one thread: starting threads costs more than it saves.
const PARALLEL_FROM: usize = 8_192;
const MAX_THREADS: usize = 8;
static THREADS: std::sync::LazyLock<usize> =
    std::sync::LazyLock::new(|| std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS));

fn fill_scores(query: &[f32], data: &[f32], dimension: usize, out: &mut [f32]) {
    for (score, vector) in out.iter_mut().zip(data.chunks_exact(dimension)) {
        // `+ 0.0` turns −0.0 into +0.0 so that every zero ties with every other zero.
        *score = dot(query, vector) + 0.0;
    }
}

/// The `k` best of `hits`, best first, equal scores by document, lower first (the order of
/// [`top_k_of`]). Scores must be free of NaN.
pub fn best_hits(hits: Vec<VectorHit>, k: usize) -> Vec<VectorHit> {
    best_k(hits, k, |left, right| right.score.total_cmp(&left.score).then(left.doc.cmp(&right.doc)))
}

/// The `k` best entries of `scores` (document = position), best first, ties by position. Scores
/// must be free of NaN, which every producer in this module guarantees.
pub fn top_k_of(scores: &[f32], k: usize) -> Vec<VectorHit> {
    best_hits(scores.iter().enumerate().map(|(doc, &score)| VectorHit { doc, score }).collect(), k)
}

/// Cosine similarity of two vectors of equal dimension: 0 when either is zero.
pub fn cosine(left: &[f32], right: &[f32]) -> Result<f32, VectorError> {
    if left.len() != right.len() {
        return Err(VectorError::DimensionMismatch { expected: left.len(), found: right.len() });
    }
    check_finite(left)?;
    check_finite(right)?;
    let norms = dot(left, left).sqrt() * dot(right, right).sqrt();
    Ok(if norms > 0.0 { dot(left, right) / norms } else { 0.0 })
}

/// Dot product over the common prefix of two slices.
///
/// Sixteen independent accumulators over exact chunks of sixteen let the compiler keep the loop
/// in SIMD registers without reassociating floating-point sums (which it may not do on its own).
pub fn dot(left: &[f32], right: &[f32]) -> f32 {
    const LANES: usize = 16;
    let length = left.len().min(right.len());
    let (left, right) = (&left[..length], &right[..length]);
    let mut lanes = [0.0f32; LANES];
    let left_chunks = left.chunks_exact(LANES);
    let right_chunks = right.chunks_exact(LANES);
    let tail: f32 = left_chunks.remainder().iter().zip(right_chunks.remainder()).map(|(a, b)| a * b).sum();
    for (a, b) in left_chunks.zip(right_chunks) {
        for ((lane, x), y) in lanes.iter_mut().zip(a).zip(b) {
            *lane += x * y;
        }
    }
    // Pairwise reduction keeps the rounding error of the final sum small.
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        let (low, high) = lanes.split_at_mut(width);
        for (a, b) in low.iter_mut().zip(high.iter()) {
            *a += *b;
        }
    }
    lanes[0] + tail
}

/// Scales `vector` to unit length in place (a zero vector stays zero), as every stored vector and
/// query is scaled.
pub(super) fn normalize_in_place(vector: &mut [f32]) {
    let squared: f64 = vector.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
    if squared > 0.0 {
        let wide = 1.0 / squared.sqrt();
        let scale = wide as f32;
        if scale.is_normal() {
            vector.iter_mut().for_each(|x| *x *= scale);
        } else {
            // A vector of subnormal (or huge) components: its scale overflows (or loses bits) in
            // f32, and scaling by it would store ∞ and NaN. Scaled in f64 it comes out unit length.
            vector.iter_mut().for_each(|x| *x = (f64::from(*x) * wide) as f32);
        }
    }
}

fn check_finite(vector: &[f32]) -> Result<(), VectorError> {
    match vector.iter().position(|x| !x.is_finite()) {
        Some(component) => Err(VectorError::NotFinite { component, value: vector[component] }),
        None => Ok(()),
    }
}

impl VectorStore {
    fn check_dimension(&self, vector: &[f32]) -> Result<(), VectorError> {
        if vector.len() == self.dimension {
            Ok(())
        } else {
            Err(VectorError::DimensionMismatch { expected: self.dimension, found: vector.len() })
        }
    }
}

#[cfg(test)]
#[path = "vector_tests.rs"]
mod tests;
