//! Exact top-k through the int8 copy: one pass over the codes gives every vector an interval
//! holding its f32 score; only vectors whose upper end reaches the k-th best lower end can be in
//! the top k, and only those are scored in f32, exactly as the full scan scores them.
//!
//! Why the result is the f32 scan's, hit for hit: let `L` be the k-th largest lower end. The k
//! vectors with the largest lower ends all score at least `L`, so the k-th best f32 score is at
//! least `L`, and every vector scoring that much (ties included) has an upper end ≥ `L`. So the
//! candidates hold every vector that the scan's top k holds, each with the scan's score, and
//! the same order (score, then index) picks the same k.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::quantized::{QuantizedVectors, QueryBound};
use super::vector::{VectorHit, best_hits, dot};

/// Vectors bounded per block: intervals are written to two stack arrays, then read for the
/// thresholds, so that the scoring loop has no branches.
const BLOCK: usize = 64;
/// Vectors a thread claims at a time: small enough that a thread slowed by other work (the
/// keyword leg, another process) leaves the rest of the store to the others.
const CHUNK: usize = 4_096;

/// The exact top `k` of `query` (normalised, as the store scores it) over `data`, with the
/// number of vectors scored in f32. The store is bounded on `threads` threads.
pub fn top_k(
    data: &[f32],
    quantized: &QuantizedVectors,
    query: &[f32],
    k: usize,
    threads: usize,
) -> (Vec<VectorHit>, usize) {
    let count = quantized.len();
    if k == 0 || count == 0 {
        return (Vec::new(), 0);
    }
    let bound = quantized.bound(query);
    let next = AtomicUsize::new(0);
    let claim_and_scan = || {
        let mut scanner = Scanner::new(k);
        loop {
            let start = next.fetch_add(CHUNK, Ordering::Relaxed);
            if start >= count {
                return scanner;
            }
            scanner.scan(quantized, &bound, start..(start + CHUNK).min(count));
        }
    };
    let scanners: Option<Vec<Scanner>> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads.min(count.div_ceil(CHUNK))).map(|_| scope.spawn(claim_and_scan)).collect();
        // The calling thread scans too rather than wait idle.
        let mut all = vec![claim_and_scan()];
        for helper in helpers {
            all.push(helper.join().ok()?);
        }
        Some(all)
    });
    // A helper that died took its chunks with it: scan the whole store here instead.
    let scanners = scanners.unwrap_or_else(|| {
        let mut scanner = Scanner::new(k);
        scanner.scan(quantized, &bound, 0..count);
        vec![scanner]
    });
    let threshold = kth_largest(scanners.iter().flat_map(|scanner| scanner.best.values()), k);
    let dimension = data.len() / count;
    let rescored: Vec<VectorHit> = scanners
        .iter()
        .flat_map(|scanner| scanner.candidates.iter())
        .filter(|candidate| candidate.upper >= threshold)
        .filter_map(|candidate| {
            let vector = data.get(candidate.doc * dimension..(candidate.doc + 1) * dimension)?;
            // `+ 0.0` as in the full scan: −0.0 becomes +0.0.
            Some(VectorHit { doc: candidate.doc, score: dot(query, vector) + 0.0 })
        })
        .collect();
    let candidates = rescored.len();
    (best_hits(rescored, k), candidates)
}

/// One thread's pass over the chunks it claimed: their k largest lower ends, and every vector
/// whose upper end reached the running threshold (a superset of the final candidates, since
/// the running threshold never exceeds the final one).
#[derive(Debug)]
struct Scanner {
    best: KthLargest,
    candidates: Vec<Candidate>,
}

#[derive(Debug, Clone, Copy)]
struct Candidate {
    doc: usize,
    upper: f32,
}

impl Scanner {
    fn new(k: usize) -> Self {
        Self { best: KthLargest::new(k), candidates: Vec::new() }
    }

    fn scan(&mut self, quantized: &QuantizedVectors, bound: &QueryBound, docs: Range<usize>) {
        pulp::Arch::new().dispatch(ChunkPass { scanner: self, quantized, bound, docs });
    }
}

/// One chunk's pass, in a target-feature context so that the integer dot products vectorise.
struct ChunkPass<'a> {
    scanner: &'a mut Scanner,
    quantized: &'a QuantizedVectors,
    bound: &'a QueryBound,
    docs: Range<usize>,
}

impl pulp::WithSimd for ChunkPass<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Self { scanner, quantized, bound, docs } = self;
        let (mut lower, mut upper) = ([0.0f32; BLOCK], [0.0f32; BLOCK]);
        for start in docs.clone().step_by(BLOCK) {
            let end = (start + BLOCK).min(docs.end);
            quantized.intervals(bound, start..end, &mut lower, &mut upper);
            let mut threshold = scanner.best.value();
            for (offset, (&low, &high)) in lower.iter().zip(&upper).take(end - start).enumerate() {
                if high >= threshold {
                    scanner.candidates.push(Candidate { doc: start + offset, upper: high });
                }
                if low > threshold {
                    scanner.best.offer(low);
                    threshold = scanner.best.value();
                }
            }
        }
    }
}

/// The k-th largest of the values offered so far (−∞ until there are k).
#[derive(Debug)]
struct KthLargest {
    k: usize,
    smallest_first: BinaryHeap<Reverse<Ordered>>,
}

impl KthLargest {
    fn new(k: usize) -> Self {
        Self { k, smallest_first: BinaryHeap::with_capacity(k + 1) }
    }

    fn value(&self) -> f32 {
        match self.smallest_first.peek() {
            Some(Reverse(Ordered(value))) if self.smallest_first.len() >= self.k => *value,
            _ => f32::NEG_INFINITY,
        }
    }

    fn offer(&mut self, value: f32) {
        self.smallest_first.push(Reverse(Ordered(value)));
        if self.smallest_first.len() > self.k {
            self.smallest_first.pop();
        }
    }

    fn values(&self) -> impl Iterator<Item = f32> + '_ {
        self.smallest_first.iter().map(|Reverse(Ordered(value))| *value)
    }
}

/// The k-th largest of `values`, or −∞ when there are fewer than k.
fn kth_largest(values: impl Iterator<Item = f32>, k: usize) -> f32 {
    let mut best = KthLargest::new(k);
    values.for_each(|value| best.offer(value));
    best.value()
}

/// An f32 ordered by `total_cmp` (bounds are finite, so this is the numeric order).
#[derive(Debug, Clone, Copy)]
struct Ordered(f32);

impl PartialEq for Ordered {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
#[path = "prefilter_tests.rs"]
mod tests;
