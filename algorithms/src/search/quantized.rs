//! An int8 copy of a store's vectors with, per vector, the constants of a bound on how far an
//! int8 dot product can be from the f32 score. It approximates and bounds scores, nothing more:
//! which documents win is `prefilter.rs`'s business, and every returned score is an f32 one.
//!
//! The bound. A vector is `v = s·c + e`, with `s = max|vᵢ|/127`, `c = round(v/s)` in −127..=127
//! and `e` what rounding left; the query is `q = t·d + f` alike. Then
//! `q·v = s·t·(d·c) + s·(f·c) + q·e`, so by Cauchy–Schwarz
//! `|q·v − s·t·(d·c)| ≤ ‖f‖·s‖c‖ + ‖q‖·‖e‖`, and `d·c` is an exact integer. The store's score is
//! `q·v` summed in f32, at most `γ·Σ|qᵢvᵢ| ≤ γ·‖q‖·‖v‖` from the real number, with
//! `γ = (n+1)u/(1 − (n+1)u)`, `u = 2⁻²⁴`, for any order of summing n products (Higham, *Accuracy
//! and Stability of Numerical Algorithms*, §3.1). A slack in [`QueryBound`] covers that and the
//! rounding of evaluating the bound in f32, so `lower ≤ f32 score ≤ upper` holds for every vector.

use std::ops::Range;

/// No vector longer than this is quantised: 65,536 × 127² < 2³¹, so an `i32` dot product of codes
/// cannot overflow. Longer stores keep to the f32 scan.
pub const MAX_DIMENSION: usize = 65_536;
/// Stored vectors are unit length (or zero); a store read from a hand-made file with longer ones
/// keeps to the f32 scan rather than widen every bound (and risk overflowing f32 constants).
const MAX_NORM: f64 = 2.0;
/// The unit roundoff of f32.
const UNIT_ROUNDOFF: f64 = 1.0 / 16_777_216.0;
/// Norms are computed in f64 (relative error below `(n+1)·2⁻⁵³`, under 1e-11 for n ≤ 65,536) and
/// widened by this factor before they are rounded up to f32, so the f32 constants are upper bounds.
const NORM_WIDENING: f64 = 1.0 + 1e-9;

/// Codes and bound constants of vectors `0..len`, laid out like the f32 store.
#[derive(Debug, Clone)]
pub struct QuantizedVectors {
    dimension: usize,
    codes: Vec<i8>,
    /// `s` per vector, exact: the codes were made with it.
    scales: Vec<f32>,
    /// `s·‖c‖` per vector, rounded up.
    code_norms: Vec<f32>,
    /// `‖e‖` per vector, rounded up.
    residual_norms: Vec<f32>,
    /// Upper bounds over the store of `‖v‖`, `s·‖c‖` and `‖e‖`, for the slack.
    max_norm: f64,
    max_code_norm: f64,
    max_residual_norm: f64,
}

/// One vector's quantisation: its scale and (widened) norms.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Parts {
    scale: f32,
    norm: f64,
    code_norm: f64,
    residual_norm: f64,
}

/// A query quantised against one store: its codes, widened to `i16` once, and the constants
/// that turn an integer dot product into an interval holding the f32 score.
#[derive(Debug, Clone)]
pub struct QueryBound {
    codes: Vec<i16>,
    scale: f32,
    norm: f32,
    residual_norm: f32,
    slack: f32,
}

impl QuantizedVectors {
    /// The copy of `data` (vectors of `dimension` laid end to end), quantised on `threads`
    /// threads, or `None` when the bound cannot be used: a dimension over [`MAX_DIMENSION`] or a
    /// vector longer than `MAX_NORM`.
    pub fn build(dimension: usize, data: &[f32], threads: usize) -> Option<Self> {
        if dimension == 0 || dimension > MAX_DIMENSION || !data.len().is_multiple_of(dimension) {
            return None;
        }
        let count = data.len() / dimension;
        let mut copy = Self {
            dimension,
            codes: vec![0; data.len()],
            scales: vec![0.0; count],
            code_norms: vec![0.0; count],
            residual_norms: vec![0.0; count],
            max_norm: 0.0,
            max_code_norm: 0.0,
            max_residual_norm: 0.0,
        };
        let parts = quantize_all(data, dimension, &mut copy.codes, threads)?;
        for (index, part) in parts.iter().enumerate() {
            if part.norm > MAX_NORM {
                return None;
            }
            let (code_norm, residual_norm) = (round_up(part.code_norm), round_up(part.residual_norm));
            copy.scales[index] = part.scale;
            copy.code_norms[index] = code_norm;
            copy.residual_norms[index] = residual_norm;
            copy.max_norm = copy.max_norm.max(part.norm);
            copy.max_code_norm = copy.max_code_norm.max(f64::from(code_norm));
            copy.max_residual_norm = copy.max_residual_norm.max(f64::from(residual_norm));
        }
        Some(copy)
    }

    pub fn len(&self) -> usize {
        self.scales.len()
    }

    /// Bytes held: the codes and three `f32` per vector.
    pub fn memory_bytes(&self) -> usize {
        self.codes.len() + 3 * 4 * self.scales.len()
    }

    /// `query` (of the store's dimension, finite, as the store scores it) quantised against this
    /// store. The slack makes [`Self::intervals`] hold the f32 score; see the module comment.
    pub fn bound(&self, query: &[f32]) -> QueryBound {
        let mut codes = vec![0i8; query.len()];
        let parts = quantize(query, &mut codes);
        let norm = round_up(parts.norm);
        let residual_norm = round_up(parts.residual_norm);
        let (query_norm, query_residual) = (f64::from(norm), f64::from(residual_norm));
        let terms = (self.dimension + 1) as f64 * UNIT_ROUNDOFF;
        let gamma = terms / (1.0 - terms);
        // |s·t·(d·c)| ≤ ‖t·d‖·s‖c‖ ≤ (‖q‖ + ‖f‖)·s‖c‖, and the radius is at most the second line.
        let largest_center = (query_norm + query_residual) * self.max_code_norm;
        let largest_radius = query_norm * self.max_residual_norm + query_residual * self.max_code_norm;
        // The f32 sum's error; the interval's own arithmetic, whose result is within 4u of each
        // of |center| and radius; underflow (at most seven operations of 2⁻¹⁴⁹ each); all doubled.
        let slack = 2.0
            * (gamma * query_norm * self.max_norm
                + 5.0 * UNIT_ROUNDOFF * (largest_center + largest_radius)
                + f64::from(f32::MIN_POSITIVE));
        QueryBound {
            codes: codes.into_iter().map(i16::from).collect(),
            scale: parts.scale,
            norm,
            residual_norm,
            slack: round_up(slack),
        }
    }

    /// For each vector in `docs`, an interval holding its f32 score against `query`, written to
    /// `lower` and `upper` (at least `docs.len()` long).
    #[inline(always)]
    pub fn intervals(&self, query: &QueryBound, docs: Range<usize>, lower: &mut [f32], upper: &mut [f32]) {
        let dimension = self.dimension;
        let codes = self.codes.get(docs.start * dimension..docs.end * dimension).unwrap_or_default();
        let constants = self.scales.get(docs.clone()).unwrap_or_default().iter().zip(
            self.code_norms
                .get(docs.clone())
                .unwrap_or_default()
                .iter()
                .zip(self.residual_norms.get(docs).unwrap_or_default()),
        );
        for (((vector, (&scale, (&code_norm, &residual_norm))), low), high) in
            codes.chunks_exact(dimension).zip(constants).zip(lower.iter_mut()).zip(upper.iter_mut())
        {
            let product = dot_codes(&query.codes, vector);
            let center = scale * (query.scale * product as f32);
            let radius = query.norm * residual_norm + query.residual_norm * code_norm + query.slack;
            *low = center - radius;
            *high = center + radius;
        }
    }
}

/// The integer dot product of a query's codes and a vector's. LLVM turns it into `vpmaddwd`
/// (AVX2/AVX-512BW) when inlined into a `pulp` dispatch.
#[inline(always)]
fn dot_codes(query: &[i16], vector: &[i8]) -> i32 {
    query.iter().zip(vector).map(|(&q, &c)| i32::from(q) * i32::from(c)).sum()
}

/// Every vector of `data` quantised into `codes`, the store split evenly across `threads`.
fn quantize_all(data: &[f32], dimension: usize, codes: &mut [i8], threads: usize) -> Option<Vec<Parts>> {
    let count = data.len() / dimension;
    let per_thread = count.div_ceil(threads.max(1)).max(1) * dimension;
    let quantize = |data: &[f32], codes: &mut [i8]| pulp::Arch::new().dispatch(QuantizeAll { data, dimension, codes });
    if threads < 2 || data.len() <= per_thread {
        return Some(quantize(data, codes));
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = data
            .chunks(per_thread)
            .zip(codes.chunks_mut(per_thread))
            .map(|(data, codes)| scope.spawn(move || quantize(data, codes)))
            .collect();
        // A thread that died leaves no copy (the store keeps to the f32 scan), never a partial one.
        let mut parts = Vec::with_capacity(count);
        for handle in handles {
            parts.extend(handle.join().ok()?);
        }
        Some(parts)
    })
}

/// Quantises every vector of `data` into `codes`, in a target-feature context so that rounding
/// and the f64 sums vectorise.
struct QuantizeAll<'a> {
    data: &'a [f32],
    dimension: usize,
    codes: &'a mut [i8],
}

impl pulp::WithSimd for QuantizeAll<'_> {
    type Output = Vec<Parts>;

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) -> Vec<Parts> {
        let mut parts = Vec::with_capacity(self.data.len() / self.dimension);
        // A `for` loop, not `map().collect()`: the iterator's `fold` would be compiled outside
        // this target-feature context, and rounding would become a call per component.
        for (vector, codes) in self.data.chunks_exact(self.dimension).zip(self.codes.chunks_exact_mut(self.dimension)) {
            parts.push(quantize(vector, codes));
        }
        parts
    }
}

/// `vector` as `s·c + e`: writes `c` to `codes` (as long as `vector`) and returns `s` and the
/// widened norms of `v`, `s·c` and `e`. Any `c` keeps the bound true, since `e` is measured, not
/// assumed; rounding to nearest only makes it tight.
#[inline(always)]
fn quantize(vector: &[f32], codes: &mut [i8]) -> Parts {
    let largest = largest_magnitude(vector);
    let (scale, inverse) = (largest / 127.0, 127.0 / largest);
    if scale == 0.0 || !inverse.is_finite() {
        // Zero, or so small that the scales do not fit an f32: all of it is residual.
        codes.fill(0);
        let (norm, _, residual_norm) = norms(vector, codes, 0.0);
        return Parts { scale: 0.0, norm, code_norm: 0.0, residual_norm };
    }
    for (code, &x) in codes.iter_mut().zip(vector) {
        *code = round_to_code(x * inverse);
    }
    let (norm, code_norm, residual_norm) = norms(vector, codes, f64::from(scale));
    Parts { scale, norm, code_norm, residual_norm }
}

/// `x` (within ±127 give or take a rounding) rounded to the nearest code, ties to even.
///
/// Adding 1.5·2²³ leaves the rounded integer in the low mantissa bits (the FPU rounds to
/// nearest even), which vectorises where a saturating `as i8` becomes one conversion per
/// component. Valid for |x| < 2²², which the clamp (a no-op but for rounding) ensures.
#[inline(always)]
fn round_to_code(x: f32) -> i8 {
    const SHIFTER: f32 = 12_582_912.0;
    let clamped = x.clamp(-127.0, 127.0);
    let rounded = (clamped + SHIFTER).to_bits() as i32 - SHIFTER.to_bits() as i32;
    rounded as i8
}

/// max |vᵢ|, over sixteen lanes so that it vectorises.
#[inline(always)]
fn largest_magnitude(vector: &[f32]) -> f32 {
    let (chunks, tail) = vector.as_chunks::<16>();
    let mut lanes = [0.0f32; 16];
    for chunk in chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(x.abs());
        }
    }
    tail.iter().chain(&lanes).fold(0.0f32, |largest, x| largest.max(x.abs()))
}

/// The widened norms of `v`, `s·c` and `e = v − s·c`, summed in f64 over eight lanes so that
/// the sums vectorise (the order does not matter: any order is well within `NORM_WIDENING`).
/// `s·c` is exact in f64 (24 + 8 bits), and so is `v − s·c` up to one rounding.
#[inline(always)]
fn norms(vector: &[f32], codes: &[i8], scale: f64) -> (f64, f64, f64) {
    const LANES: usize = 8;
    let (vector_chunks, vector_tail) = vector.as_chunks::<LANES>();
    let (code_chunks, code_tail) = codes.as_chunks::<LANES>();
    // Three simple loops rather than one: each vectorises on its own.
    let mut lanes = [0.0f64; LANES];
    for chunk in vector_chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk.map(f64::from)) {
            *lane += x * x;
        }
    }
    let vector_squares =
        lanes.iter().sum::<f64>() + vector_tail.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>();
    // Exact: at most 65,536 × 127² < 2³¹.
    let code_squares: i32 = codes.iter().map(|&c| i32::from(c) * i32::from(c)).sum();
    let residual = |x: f32, c: i8| f64::from(x) - scale * f64::from(c);
    let mut lanes = [0.0f64; LANES];
    for (xs, cs) in vector_chunks.iter().zip(code_chunks) {
        for (lane, (&x, &c)) in lanes.iter_mut().zip(xs.iter().zip(cs)) {
            let e = residual(x, c);
            *lane += e * e;
        }
    }
    let tail_residuals = vector_tail.iter().zip(code_tail).map(|(&x, &c)| residual(x, c) * residual(x, c));
    let residual_squares = lanes.iter().sum::<f64>() + tail_residuals.sum::<f64>();
    (
        vector_squares.sqrt() * NORM_WIDENING,
        scale * f64::from(code_squares).sqrt() * NORM_WIDENING,
        residual_squares.sqrt() * NORM_WIDENING,
    )
}

/// The smallest f32 at least `value` (finite, non-negative).
fn round_up(value: f64) -> f32 {
    let narrow = value as f32;
    if f64::from(narrow) < value { narrow.next_up() } else { narrow }
}

#[cfg(test)]
#[path = "quantized_tests.rs"]
mod tests;
