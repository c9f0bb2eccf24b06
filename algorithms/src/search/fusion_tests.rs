//! Specification of `fusion.rs`: the Cortex benchmark's fusion worked by hand, each
//! normalisation, RRF, pools, ordering and the rejected inputs.

use super::*;

fn leg(entries: &[(usize, f64)]) -> Vec<LegHit> {
    entries.iter().map(|&(doc, score)| LegHit { doc, score }).collect()
}

fn docs(hits: &[FusedHit]) -> Vec<usize> {
    hits.iter().map(|hit| hit.doc).collect()
}

// cortex-benchmark-original.md §2 Phase 3: rank normalisation 1/(1+rank), "top doc 1.0, 2nd 0.5".
#[test]
fn rank_normalisation_gives_one_then_a_half_then_a_third() {
    let scores = normalize_leg(&leg(&[(4, 9.0), (1, 3.0), (0, 0.0)]), Normalization::Rank);
    let normalized: Vec<f64> = scores.iter().map(|score| score.normalized).collect();
    assert_eq!(normalized, [1.0, 0.5, 1.0 / 3.0]);
    assert!(scores[2].normalized > 0.0, "a zero-BM25 document still gets a non-zero value");
}

/// The benchmark's fusion over all chunks, by hand: cosines [0.5, 0.8, 0.2] in chunk order; BM25
/// ranking [2, 0, 1]. Rank values: chunk 2 → 1, chunk 0 → 1/2, chunk 1 → 1/3.
/// chunk 0: 0.7·0.5 + 0.3·0.5 = 0.5; chunk 1: 0.7·0.8 + 0.3/3 = 0.66; chunk 2: 0.7·0.2 + 0.3 = 0.44.
#[test]
fn benchmark_fusion_over_all_chunks_by_hand() {
    let vector = leg(&[(0, 0.5), (1, 0.8), (2, 0.2)]);
    let keyword = leg(&[(2, 4.0), (0, 1.0), (1, 0.0)]);
    let mut hits = fuse_linear(&vector, &keyword, &LinearFusionOptions::default()).unwrap();
    assert_eq!(docs(&hits), [0, 1, 2], "first-appearance order before sorting");
    let scores: Vec<f64> = hits.iter().map(|hit| hit.score).collect();
    for (actual, expected) in scores.iter().zip([0.5, 0.66, 0.44]) {
        assert!((actual - expected).abs() < 1e-12, "{actual} vs {expected}");
    }
    assert_eq!(hits[1].keyword, Some(LegScore { raw: 0.0, normalized: 1.0 / 3.0 }));
    sort_by_score(&mut hits);
    assert_eq!(docs(&hits), [1, 0, 2]);
}

// openclaw-memory.md §3.2 / §7 TV2: |r|/(1+|r|) maps D1's rank −1.958144 to 0.661950.
#[test]
fn saturating_normalisation_maps_tv2_ranks() {
    let scores = normalize_leg(&leg(&[(0, -1.958144), (4, -1.635521)]), Normalization::Saturating);
    assert!((scores[0].normalized - 0.661950).abs() < 1e-6);
    assert!((scores[1].normalized - 0.620568).abs() < 1e-6);
}

#[test]
fn min_max_normalisation_spans_zero_to_one_and_gives_one_when_flat() {
    let spread = normalize_leg(&leg(&[(0, 0.8), (1, 0.7), (2, 0.4)]), Normalization::MinMax);
    let values: Vec<f64> = spread.iter().map(|score| score.normalized).collect();
    assert!((values[0] - 1.0).abs() < 1e-12 && (values[1] - 0.75).abs() < 1e-12 && values[2] == 0.0);
    let flat = normalize_leg(&leg(&[(0, 0.3), (1, 0.3)]), Normalization::MinMax);
    assert!(flat.iter().all(|score| score.normalized == 1.0));
    assert_eq!(normalize_leg(&leg(&[(0, -0.2)]), Normalization::None)[0].normalized, -0.2);
}

#[test]
fn missing_leg_contributes_zero_and_is_reported_absent() {
    let vector = leg(&[(0, 0.9)]);
    let keyword = leg(&[(1, 5.0)]);
    let hits = fuse_linear(&vector, &keyword, &LinearFusionOptions::default()).unwrap();
    assert_eq!(hits[0].keyword, None);
    assert_eq!(hits[1].vector, None);
    assert!((hits[0].score - 0.63).abs() < 1e-12);
    assert!((hits[1].score - 0.3).abs() < 1e-12);
}

#[test]
fn per_leg_pool_cuts_each_leg_before_fusing() {
    let vector = leg(&[(0, 0.9), (1, 0.8), (2, 0.7)]);
    let keyword = leg(&[(2, 3.0), (3, 2.0), (0, 1.0)]);
    let options = LinearFusionOptions { pool_size: Some(2), ..LinearFusionOptions::default() };
    let hits = fuse_linear(&vector, &keyword, &options).unwrap();
    assert_eq!(docs(&hits), [0, 1, 2, 3], "vector pool [0, 1], keyword pool [2, 3]");
    let document_zero = hits.iter().find(|hit| hit.doc == 0).unwrap();
    assert_eq!(document_zero.keyword, None, "doc 0 is third in the keyword leg, outside the pool");
}

#[test]
fn rrf_sums_reciprocal_ranks_with_k_sixty() {
    let vector = leg(&[(7, 0.9), (3, 0.8)]);
    let keyword = leg(&[(3, 2.0), (9, 1.0)]);
    let mut hits = fuse_rrf(&vector, &keyword, &RrfOptions::default()).unwrap();
    sort_by_score(&mut hits);
    assert_eq!(docs(&hits), [3, 7, 9]);
    assert!((hits[0].score - (1.0 / 62.0 + 1.0 / 61.0)).abs() < 1e-15);
    assert!((hits[1].score - 1.0 / 61.0).abs() < 1e-15);
    assert!((hits[2].score - 1.0 / 62.0).abs() < 1e-15);
}

#[test]
fn stable_sort_keeps_first_appearance_order_for_ties() {
    let vector = leg(&[(5, 0.5), (2, 0.5)]);
    let keyword = leg(&[(9, 0.0)]);
    let options = LinearFusionOptions { keyword_weight: 0.0, vector_weight: 1.0, ..LinearFusionOptions::default() };
    let mut hits = fuse_linear(&vector, &keyword, &options).unwrap();
    sort_by_score(&mut hits);
    assert_eq!(docs(&hits), [5, 2, 9]);
}

#[test]
fn empty_legs_fuse_to_nothing() {
    assert!(fuse_linear(&[], &[], &LinearFusionOptions::default()).unwrap().is_empty());
    assert!(fuse_rrf(&[], &[], &RrfOptions::default()).unwrap().is_empty());
}

#[test]
fn invalid_inputs_are_rejected() {
    let good = leg(&[(0, 0.5)]);
    let nan = leg(&[(1, f64::NAN)]);
    let twice = leg(&[(1, 0.5), (1, 0.4)]);
    let options = LinearFusionOptions::default();
    assert!(matches!(
        fuse_linear(&good, &nan, &options),
        Err(FusionError::NonFiniteScore { leg: Leg::Keyword, doc: 1, .. })
    ));
    assert_eq!(fuse_linear(&twice, &good, &options), Err(FusionError::DuplicateDocument { leg: Leg::Vector, doc: 1 }));
    let bad_weight = LinearFusionOptions { vector_weight: f64::INFINITY, ..options };
    assert!(matches!(fuse_linear(&good, &good, &bad_weight), Err(FusionError::InvalidWeight { .. })));
    assert_eq!(
        fuse_rrf(&good, &good, &RrfOptions { k: -1.0, pool_size: None }),
        Err(FusionError::InvalidRrfK { value: -1.0 })
    );
}

#[test]
fn options_deserialize_with_benchmark_defaults() {
    let options: LinearFusionOptions = serde_json::from_str(r#"{"keyword_normalization": "saturating"}"#).unwrap();
    assert_eq!(options.keyword_normalization, Normalization::Saturating);
    assert_eq!(options.vector_weight, 0.7);
    assert!(serde_json::from_str::<LinearFusionOptions>(r#"{"weight": 1}"#).is_err());
    let rrf: RrfOptions = serde_json::from_str("{}").unwrap();
    assert_eq!(rrf.k, 60.0);
}
