//! Specification of `prefilter.rs`: its top k is the f32 scan's top k, bit for bit (the same
//! documents, the same scores, ties by index), whatever the store, the query and k.

use proptest::prelude::*;

use super::*;
use crate::search::vector::{Scan, VectorStore, normalize_in_place, top_k_of};

/// What the prefilter is held to: the f32 scan's top k, with scores as bits so that −0.0 ≠ 0.0.
fn scan_top_k(store: &VectorStore, query: &[f32], k: usize) -> Vec<(usize, u32)> {
    bits(&top_k_of(&store.scores(query).expect("valid query"), k))
}

fn bits(hits: &[VectorHit]) -> Vec<(usize, u32)> {
    hits.iter().map(|hit| (hit.doc, hit.score.to_bits())).collect()
}

/// The prefilter's top k over `store`, whatever its size, on `threads` ranges.
fn prefiltered(store: &VectorStore, query: &[f32], k: usize, threads: usize) -> (Vec<(usize, u32)>, usize) {
    let dimension = store.dimension();
    let data: Vec<f32> = (0..store.len()).flat_map(|doc| store.get(doc).unwrap_or_default().to_vec()).collect();
    let copy = QuantizedVectors::build(dimension, &data, 2).expect("normalised vectors");
    let mut query = query.to_vec();
    normalize_in_place(&mut query);
    let (hits, rescored) = top_k(&data, &copy, &query, k, threads);
    (bits(&hits), rescored)
}

/// How a stored vector relates to the others: the adversarial cases for a bound-based filter.
#[derive(Debug, Clone)]
enum Kind {
    Fresh(Vec<f32>),
    /// An exact copy of an earlier vector (a tie).
    Copy(usize),
    /// An earlier vector with one component moved by one unit in the last place.
    LastBit(usize, usize),
    Zero,
}

fn kinds(dimension: usize) -> impl Strategy<Value = Vec<Kind>> {
    let fresh = prop::collection::vec(-1.0f32..=1.0, dimension).prop_map(Kind::Fresh);
    let kind = prop_oneof![
        4 => fresh,
        3 => any::<usize>().prop_map(Kind::Copy),
        2 => (any::<usize>(), 0..dimension).prop_map(|(of, component)| Kind::LastBit(of, component)),
        1 => Just(Kind::Zero),
    ];
    prop::collection::vec(kind, 1..=160)
}

fn build(dimension: usize, kinds: &[Kind]) -> VectorStore {
    let mut raw: Vec<Vec<f32>> = Vec::with_capacity(kinds.len());
    for kind in kinds {
        let vector = match kind {
            Kind::Fresh(vector) => vector.clone(),
            Kind::Copy(of) if !raw.is_empty() => raw[of % raw.len()].clone(),
            Kind::LastBit(of, component) if !raw.is_empty() => {
                let mut vector = raw[of % raw.len()].clone();
                vector[*component] = vector[*component].next_up();
                vector
            }
            _ => vec![0.0; dimension],
        };
        raw.push(vector);
    }
    VectorStore::from_flat(dimension, raw.concat()).expect("finite vectors")
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(512) })]

    #[test]
    fn the_prefiltered_top_k_is_the_f32_scans_top_k(
        (dimension, kinds, query) in (1usize..=45).prop_flat_map(|dimension| {
            (Just(dimension), kinds(dimension), prop::collection::vec(-1.0f32..=1.0, dimension))
        }),
        k in 0usize..=40,
        threads in 1usize..=3,
        query_kind in 0u8..4,
    ) {
        let store = build(dimension, &kinds);
        // A fresh query, a stored one (ties at the top), a stored one moved by one ulp, or zero.
        let query = match query_kind {
            0 => query,
            1 => store.get(kinds.len() / 2).unwrap_or_default().to_vec(),
            2 => store.get(0).unwrap_or_default().iter().map(|x| x.next_down()).collect(),
            _ => vec![0.0; dimension],
        };
        let (hits, rescored) = prefiltered(&store, &query, k, threads);
        prop_assert_eq!(hits, scan_top_k(&store, &query, k));
        prop_assert!(rescored <= store.len());
    }
}

#[test]
fn k_larger_than_the_store_returns_every_vector_in_scan_order() {
    let store = build(5, &[Kind::Fresh(vec![1.0, 2.0, 3.0, 4.0, 5.0]), Kind::Zero, Kind::Copy(0), Kind::LastBit(0, 4)]);
    let query = [0.5, -1.0, 0.25, 2.0, 1.0];
    assert_eq!(prefiltered(&store, &query, 10, 2).0, scan_top_k(&store, &query, 10));
    assert_eq!(prefiltered(&store, &query, 10, 2).0.len(), 4);
    assert!(prefiltered(&store, &query, 0, 2).0.is_empty());
}

#[test]
fn a_store_of_identical_vectors_ranks_by_index() {
    let mut kinds = vec![Kind::Fresh((0..33).map(|i| (i as f32).cos()).collect())];
    kinds.extend((0..300).map(|_| Kind::Copy(0)));
    let store = build(33, &kinds);
    let query: Vec<f32> = (0..33).map(|i| (i as f32 * 0.3).sin()).collect();
    let (hits, _) = prefiltered(&store, &query, 7, 3);
    assert_eq!(hits.iter().map(|(doc, _)| *doc).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(hits, scan_top_k(&store, &query, 7));
}

/// Deterministic vectors spread like random ones, for a store big enough to take the prefilter.
fn spread_store(count: usize, dimension: usize) -> VectorStore {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<f32> = (0..count * dimension)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 2_000_001) as f32 / 1_000_000.0 - 1.0
        })
        .collect();
    VectorStore::from_flat(dimension, data).expect("finite vectors")
}

#[test]
fn a_big_store_takes_the_prefilter_from_its_second_query_and_rescores_few_vectors() {
    let store = spread_store(9_000, 96);
    let query: Vec<f32> = (0..96).map(|i| (i as f32 * 0.37).sin()).collect();
    let (first, scan) = store.top_k_traced(&query, 24).expect("valid query");
    assert_eq!(scan, Scan::Exhaustive);
    let (hits, scan) = store.top_k_traced(&query, 24).expect("valid query");
    assert_eq!(bits(&hits), scan_top_k(&store, &query, 24));
    assert_eq!(hits, first);
    let Scan::Prefiltered { rescored } = scan else { panic!("expected the prefilter, got {scan:?}") };
    assert!((24..=900).contains(&rescored), "rescored {rescored} of 9,000");
    assert_eq!(store.prepare_prefilter(), Some(9_000 * 96 + 9_000 * 12));
}

#[test]
fn small_stores_and_large_k_take_the_f32_scan() {
    let store = spread_store(9_000, 8);
    let query = [1.0; 8];
    for _ in 0..2 {
        assert_eq!(store.top_k_traced(&query, 9_000 / 8 + 1).expect("valid query").1, Scan::Exhaustive);
    }
    let small = spread_store(999, 8);
    assert_eq!(small.prepare_prefilter(), None);
    assert_eq!(small.top_k_traced(&query, 3).expect("valid query").1, Scan::Exhaustive);
}

#[test]
fn a_vector_pushed_after_a_query_is_found_by_the_next_one() {
    let mut store = spread_store(9_000, 16);
    let query: Vec<f32> = (0..16).map(|i| i as f32).collect();
    store.prepare_prefilter();
    assert!(matches!(store.top_k_traced(&query, 5).expect("valid query").1, Scan::Prefiltered { .. }));
    let pushed = store.push(&query).expect("valid vector");
    for expected in [Scan::Exhaustive, Scan::Prefiltered { rescored: 0 }] {
        let (hits, scan) = store.top_k_traced(&query, 5).expect("valid query");
        assert_eq!(std::mem::discriminant(&scan), std::mem::discriminant(&expected), "the copy is rebuilt");
        assert_eq!(hits.first().map(|hit| hit.doc), Some(pushed));
        assert_eq!(bits(&hits), scan_top_k(&store, &query, 5));
    }
}

/// One scanner's findings under the instruction set `simd`, as comparable bits.
fn scan_with(simd: impl pulp::Simd, copy: &QuantizedVectors, bound: &QueryBound) -> (Vec<(usize, u32)>, Vec<u32>) {
    let mut scanner = Scanner::new(10);
    simd.vectorize(ChunkPass { scanner: &mut scanner, quantized: copy, bound, docs: 0..copy.len() });
    let mut lowers: Vec<u32> = scanner.best.values().map(f32::to_bits).collect();
    lowers.sort_unstable();
    (scanner.candidates.iter().map(|candidate| (candidate.doc, candidate.upper.to_bits())).collect(), lowers)
}

#[test]
fn every_instruction_set_bounds_alike() {
    // 45 dimensions: a tail after every SIMD width.
    let store = spread_store(3_000, 45);
    let data: Vec<f32> = (0..store.len()).flat_map(|doc| store.get(doc).unwrap_or_default().to_vec()).collect();
    let copy = QuantizedVectors::build(45, &data, 1).expect("normalised vectors");
    let mut query: Vec<f32> = (0..45).map(|i| (i as f32 * 0.61).cos()).collect();
    normalize_in_place(&mut query);
    let bound = copy.bound(&query);
    let scalar = scan_with(pulp::Scalar::new(), &copy, &bound);
    assert!(scalar.0.len() >= 10);
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(simd) = pulp::x86::V3::try_new() {
            assert_eq!(scan_with(simd, &copy, &bound), scalar, "AVX2");
        }
        if let Some(simd) = pulp::x86::V4::try_new() {
            assert_eq!(scan_with(simd, &copy, &bound), scalar, "AVX-512");
        }
    }
}
