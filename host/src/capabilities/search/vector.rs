//! Exact (brute-force) cosine similarity and top-k over f32 vectors stored contiguously in one
//! `Vec<f32>`. Stays fast to 100k × 384 because the inner loop is a dot product the compiler
//! vectorises and top-k is a linear-time selection; no approximate index, no I/O.
//!
//! Defined behaviour at the edges: a vector with a NaN or infinite component is rejected (at
//! insert and as a query) because it cannot be ordered; a zero vector is accepted and scores 0
//! against everything (OpenClaw's `cosineSimilarity` returns 0 for a zero norm); a vector of the
//! wrong dimension is an error. Ties are ordered by document index, lower first.

use serde::{Deserialize, Serialize};
use thiserror::Error;

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

/// L2-normalised vectors of one dimension, addressed by insertion position.
#[derive(Debug, Clone)]
pub struct VectorStore {
    dimension: usize,
    data: Vec<f32>,
}

impl VectorStore {
    pub fn new(dimension: usize) -> Result<Self, VectorError> {
        Self::with_capacity(dimension, 0)
    }

    pub fn with_capacity(dimension: usize, vectors: usize) -> Result<Self, VectorError> {
        if dimension == 0 {
            return Err(VectorError::ZeroDimension);
        }
        Ok(Self { dimension, data: Vec::with_capacity(dimension.saturating_mul(vectors)) })
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
        Ok(Self { dimension, data })
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
        Ok(Self { dimension, data })
    }

    /// Adds a vector (normalised to unit length; a zero vector stays zero) and returns its index.
    pub fn push(&mut self, vector: &[f32]) -> Result<usize, VectorError> {
        self.check_dimension(vector)?;
        check_finite(vector)?;
        let index = self.len();
        let start = self.data.len();
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
        self.check_dimension(query)?;
        check_finite(query)?;
        let mut query = query.to_vec();
        normalize_in_place(&mut query);
        let mut scores = vec![0.0; self.len()];
        // Asked only for big stores: on Linux the answer comes from reading cgroup files, which
        // costs more than scoring a few hundred vectors.
        let threads = if self.len() < PARALLEL_FROM { 1 } else { *THREADS };
        if threads < 2 {
            fill_scores(&query, &self.data, self.dimension, &mut scores);
            return Ok(scores);
        }
        // Each score is computed exactly as in the sequential path, so results do not depend
        // on the number of threads.
        let per_thread = self.len().div_ceil(threads);
        std::thread::scope(|scope| {
            for (data, out) in self.data.chunks(per_thread * self.dimension).zip(scores.chunks_mut(per_thread)) {
                let query = &query;
                scope.spawn(move || fill_scores(query, data, self.dimension, out));
            }
        });
        Ok(scores)
    }

    /// The `k` most similar vectors, best first; equal scores by index, lower first.
    pub fn top_k(&self, query: &[f32], k: usize) -> Result<Vec<VectorHit>, VectorError> {
        let scores = self.scores(query)?;
        Ok(top_k_of(&scores, k))
    }
}

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

/// The `k` best entries of `scores` (document = position), best first, ties by position. Scores
/// must be free of NaN, which every producer in this module guarantees.
pub fn top_k_of(scores: &[f32], k: usize) -> Vec<VectorHit> {
    let order = |left: &usize, right: &usize| {
        let score = |doc: &usize| scores.get(*doc).copied().unwrap_or(f32::NEG_INFINITY);
        score(right).total_cmp(&score(left)).then(left.cmp(right))
    };
    let mut docs: Vec<usize> = (0..scores.len()).collect();
    let k = k.min(docs.len());
    if k == 0 {
        return Vec::new();
    }
    if k < docs.len() {
        // Linear-time partition; the comparator is a total order, so the chosen set is unique.
        docs.select_nth_unstable_by(k - 1, order);
        docs.truncate(k);
    }
    docs.sort_unstable_by(order);
    docs.into_iter().filter_map(|doc| scores.get(doc).map(|&score| VectorHit { doc, score })).collect()
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

fn normalize_in_place(vector: &mut [f32]) {
    let squared: f64 = vector.iter().map(|&x| f64::from(x) * f64::from(x)).sum();
    if squared > 0.0 {
        let scale = (1.0 / squared.sqrt()) as f32;
        vector.iter_mut().for_each(|x| *x *= scale);
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
mod tests {
    use super::*;

    fn store(vectors: &[&[f32]]) -> VectorStore {
        let mut store = VectorStore::new(vectors[0].len()).unwrap();
        for vector in vectors {
            store.push(vector).unwrap();
        }
        store
    }

    #[test]
    fn top_k_orders_by_cosine() {
        let store = store(&[&[1.0, 0.0], &[0.0, 1.0], &[1.0, 1.0], &[-1.0, 0.0]]);
        let hits = store.top_k(&[2.0, 0.0], 3).unwrap();
        assert_eq!(hits.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [0, 2, 1]);
        assert!((hits[0].score - 1.0).abs() < 1e-6);
        assert!((hits[1].score - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!(hits[2].score, 0.0);
    }

    #[test]
    fn stored_vectors_are_unit_length() {
        let store = store(&[&[3.0, 4.0]]);
        assert_eq!(store.get(0), Some(&[0.6f32, 0.8][..]));
        assert_eq!(store.get(1), None);
    }

    #[test]
    fn equal_scores_are_ordered_by_index() {
        let store = store(&[&[0.0, 1.0], &[1.0, 0.0], &[0.0, 1.0], &[1.0, 0.0], &[1.0, 0.0]]);
        let hits = store.top_k(&[1.0, 0.0], 2).unwrap();
        assert_eq!(hits.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [1, 3]);
        let all = store.top_k(&[1.0, 0.0], 10).unwrap();
        assert_eq!(all.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [1, 3, 4, 0, 2]);
    }

    #[test]
    fn zero_vectors_score_zero_and_tie_with_orthogonal_ones() {
        let store = store(&[&[0.0, 0.0], &[0.0, -1.0], &[0.0, 0.0]]);
        let scores = store.scores(&[1.0, 0.0]).unwrap();
        assert_eq!(scores, [0.0, 0.0, 0.0]);
        assert!(scores.iter().all(|score| score.is_sign_positive()), "no −0.0 that would sort apart");
        assert_eq!(store.scores(&[0.0, 0.0]).unwrap(), [0.0, 0.0, 0.0]);
        assert_eq!(store.top_k(&[1.0, 0.0], 3).unwrap().iter().map(|hit| hit.doc).collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    fn nan_and_infinite_components_are_rejected() {
        let mut store = VectorStore::new(2).unwrap();
        assert!(matches!(store.push(&[0.0, f32::NAN]), Err(VectorError::NotFinite { component: 1, .. })));
        assert!(matches!(store.push(&[f32::INFINITY, 0.0]), Err(VectorError::NotFinite { component: 0, .. })));
        assert!(store.is_empty(), "a rejected vector is not stored");
        store.push(&[1.0, 0.0]).unwrap();
        assert!(matches!(store.scores(&[f32::NAN, 0.0]), Err(VectorError::NotFinite { component: 0, .. })));
    }

    #[test]
    fn mismatched_dimensions_are_rejected() {
        let mut store = VectorStore::new(3).unwrap();
        assert_eq!(store.push(&[1.0, 2.0]), Err(VectorError::DimensionMismatch { expected: 3, found: 2 }));
        store.push(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(store.top_k(&[1.0; 4], 1), Err(VectorError::DimensionMismatch { expected: 3, found: 4 }));
        assert_eq!(VectorStore::new(0).unwrap_err(), VectorError::ZeroDimension);
        assert_eq!(
            VectorStore::from_flat(3, vec![0.0; 7]).unwrap_err(),
            VectorError::FlatLengthMismatch { dimension: 3, length: 7 }
        );
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), Err(VectorError::DimensionMismatch { expected: 1, found: 2 }));
    }

    #[test]
    fn empty_store_and_zero_k_give_no_hits() {
        let store = VectorStore::new(4).unwrap();
        assert!(store.top_k(&[1.0, 0.0, 0.0, 0.0], 5).unwrap().is_empty());
        let store = VectorStore::from_flat(2, vec![1.0, 0.0]).unwrap();
        assert!(store.top_k(&[1.0, 0.0], 0).unwrap().is_empty());
    }

    #[test]
    fn dot_matches_a_naive_sum_across_lane_boundaries() {
        for length in [0usize, 1, 15, 16, 17, 33, 384] {
            let left: Vec<f32> = (0..length).map(|i| (i as f32 * 0.37).sin()).collect();
            let right: Vec<f32> = (0..length).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f64 = left.iter().zip(&right).map(|(a, b)| f64::from(*a) * f64::from(*b)).sum();
            assert!((f64::from(dot(&left, &right)) - naive).abs() < 1e-4, "length {length}");
        }
    }

    #[test]
    fn cosine_of_unnormalised_vectors() {
        assert!((cosine(&[2.0, 0.0], &[3.0, 3.0]).unwrap() - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[3.0, 3.0]).unwrap(), 0.0);
        assert!(cosine(&[f32::NAN], &[1.0]).is_err());
    }

    #[test]
    fn selection_agrees_with_a_full_sort_on_many_vectors() {
        let dimension = 24;
        let data: Vec<f32> = (0..2_000 * dimension).map(|i| ((i * 7919 % 1000) as f32 / 500.0) - 1.0).collect();
        let store = VectorStore::from_flat(dimension, data).unwrap();
        let query: Vec<f32> = (0..dimension).map(|i| (i as f32).sin()).collect();
        let mut everything = store.top_k(&query, usize::MAX).unwrap();
        assert_eq!(everything.len(), 2_000);
        everything.truncate(24);
        assert_eq!(store.top_k(&query, 24).unwrap(), everything);
    }
}

#[cfg(test)]
mod parallel_tests {
    use super::*;

    #[test]
    fn a_store_scored_on_several_threads_scores_exactly_as_one_thread_does() {
        let dimension = 8;
        let count = PARALLEL_FROM + 123;
        let data: Vec<f32> = (0..count * dimension).map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5).collect();
        let store = VectorStore::from_flat(dimension, data).unwrap();
        let query: Vec<f32> = (0..dimension).map(|i| i as f32 - 3.5).collect();
        let parallel = store.scores(&query).unwrap();
        let mut normalized = query.clone();
        normalize_in_place(&mut normalized);
        let mut sequential = vec![0.0; count];
        fill_scores(&normalized, &store.data, dimension, &mut sequential);
        assert_eq!(parallel.len(), count);
        assert_eq!(parallel, sequential);
    }
}
