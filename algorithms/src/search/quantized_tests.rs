//! Specification of `quantized.rs`: every interval holds both the real dot product and the f32
//! score the store computes, for any query and vector, and it is narrow enough to prune.

use proptest::prelude::*;

use super::*;
use crate::search::vector::{VectorStore, dot};

/// The vectors of `raw` normalised as the store normalises them, laid end to end.
fn normalized(dimension: usize, raw: &[Vec<f32>]) -> Vec<f32> {
    let store = VectorStore::from_flat(dimension, raw.concat()).expect("finite vectors");
    (0..store.len()).flat_map(|doc| store.get(doc).unwrap_or_default().to_vec()).collect()
}

/// Each vector's interval against `query` (already normalised).
fn intervals(copy: &QuantizedVectors, query: &[f32]) -> Vec<(f32, f32)> {
    let bound = copy.bound(query);
    let (mut lower, mut upper) = (vec![0.0; copy.len()], vec![0.0; copy.len()]);
    copy.intervals(&bound, 0..copy.len(), &mut lower, &mut upper);
    lower.into_iter().zip(upper).collect()
}

fn assert_intervals_hold(dimension: usize, data: &[f32], query: &[f32]) {
    let copy = QuantizedVectors::build(dimension, data, 2).expect("bounded vectors");
    for (doc, (vector, (lower, upper))) in data.chunks_exact(dimension).zip(intervals(&copy, query)).enumerate() {
        let stored = dot(query, vector) + 0.0;
        let real: f64 = query.iter().zip(vector).map(|(&q, &v)| f64::from(q) * f64::from(v)).sum();
        assert!(lower <= stored && stored <= upper, "doc {doc}: f32 score {stored} outside [{lower}, {upper}]");
        assert!(f64::from(lower) <= real && real <= f64::from(upper), "doc {doc}: real {real} outside");
    }
}

/// A component in [−1, 1], sometimes exactly 0, sometimes far smaller than the rest.
fn component() -> impl Strategy<Value = f32> {
    prop_oneof![
        6 => -1.0f32..=1.0,
        1 => Just(0.0f32),
        1 => -1e-6f32..=1e-6,
    ]
}

fn vectors(dimension: usize, count: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<Vec<f32>>> {
    prop::collection::vec(prop::collection::vec(component(), dimension), count)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(256) })]

    #[test]
    fn every_interval_holds_the_real_product_and_the_f32_score(
        (dimension, raw, query) in (1usize..=70).prop_flat_map(|dimension| {
            (Just(dimension), vectors(dimension, 1..=12), prop::collection::vec(component(), dimension))
        })
    ) {
        let data = normalized(dimension, &raw);
        let query = normalized(dimension, &[query]);
        assert_intervals_hold(dimension, &data, &query);
    }

    #[test]
    fn intervals_hold_when_the_codes_represent_vectors_almost_exactly(
        (dimension, codes, query_codes) in (1usize..=300).prop_flat_map(|dimension| {
            let codes = prop::collection::vec(-127i8..=127, dimension);
            (Just(dimension), prop::collection::vec(codes.clone(), 1..=6), codes)
        }),
        fraction in 0.01f32..1.0,
    ) {
        // Residuals of an ulp or so leave the interval little more than the f32 rounding of the
        // score itself, which only the slack covers. The scale keeps every norm under 2.
        let scale = fraction * 1.9 / (127.0 * (dimension as f32).sqrt());
        let exact = |codes: &[i8]| -> Vec<f32> {
            let mut vector: Vec<f32> = codes.iter().map(|&c| scale * f32::from(c)).collect();
            vector[0] = scale * 127.0;
            vector
        };
        let data: Vec<f32> = codes.iter().flat_map(|codes| exact(codes)).collect();
        assert_intervals_hold(dimension, &data, &exact(&query_codes));
    }

    #[test]
    fn intervals_hold_for_vectors_that_are_not_unit_length(
        (dimension, raw, query) in (1usize..=40).prop_flat_map(|dimension| {
            (Just(dimension), vectors(dimension, 1..=8), prop::collection::vec(component(), dimension))
        }),
        shrink in prop_oneof![Just(1.0f32), Just(1e-3), Just(1e-30), Just(1e-38)],
    ) {
        // A hand-made corpus file may hold any finite vector up to the norm limit.
        let data: Vec<f32> = raw.concat().iter().map(|x| x * shrink / (dimension as f32).sqrt()).collect();
        assert_intervals_hold(dimension, &data, &normalized(dimension, &[query]));
    }
}

#[test]
fn intervals_hold_where_rounding_is_hardest() {
    let dimension = 67;
    let mut raw = vec![
        vec![0.0; dimension],
        vec![1.0; dimension],
        // Components half-way between codes, and one component that sets the scale alone.
        (0..dimension).map(|i| (i as f32 + 0.5) / 127.0).collect(),
        (0..dimension).map(|i| if i == 0 { 1.0 } else { 1e-7 * i as f32 }).collect(),
        (0..dimension).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect(),
    ];
    raw.push(raw[2].iter().map(|x| x.next_up()).collect());
    let data = normalized(dimension, &raw);
    for query in &raw {
        assert_intervals_hold(dimension, &data, &normalized(dimension, std::slice::from_ref(query)));
    }
    // A zero query scores 0 everywhere, and its intervals are (almost) the single point 0.
    let copy = QuantizedVectors::build(dimension, &data, 2).expect("bounded vectors");
    for (lower, upper) in intervals(&copy, &vec![0.0; dimension]) {
        assert!(lower <= 0.0 && 0.0 <= upper && upper - lower < 1e-30);
    }
}

#[test]
fn intervals_of_random_unit_vectors_are_narrow_enough_to_prune() {
    // At 384 dimensions random unit vectors score about ±0.05 against each other, and the
    // 24th best of 100,000 sits near 0.18: an interval must be much narrower to prune.
    let dimension = 384;
    let raw: Vec<Vec<f32>> = (0..64)
        .map(|v| (0..dimension).map(|i| ((v * 7919 + i * 104_729) % 2003) as f32 / 1001.0 - 1.0).collect())
        .collect();
    let data = normalized(dimension, &raw);
    let copy = QuantizedVectors::build(dimension, &data, 2).expect("bounded vectors");
    let query = normalized(dimension, &[(0..dimension).map(|i| (i as f32 * 0.7).sin()).collect()]);
    for (lower, upper) in intervals(&copy, &query) {
        assert!(upper - lower < 0.02, "width {}", upper - lower);
    }
}

#[test]
fn codes_use_the_whole_range_and_round_to_nearest() {
    let copy = QuantizedVectors::build(4, &[0.5, -0.25, 0.0, 0.126], 1).expect("bounded");
    assert_eq!(copy.codes, [127, -64, 0, 32]);
    assert_eq!(copy.scales, [0.5 / 127.0]);
    assert_eq!(copy.memory_bytes(), 4 + 12);
}

#[test]
fn vectors_that_the_bound_cannot_take_are_refused() {
    assert!(QuantizedVectors::build(2, &[3.0, 0.0], 1).is_none(), "longer than the norm limit");
    assert!(QuantizedVectors::build(MAX_DIMENSION + 1, &vec![0.0; MAX_DIMENSION + 1], 1).is_none());
    assert!(QuantizedVectors::build(MAX_DIMENSION, &vec![0.0; MAX_DIMENSION], 1).is_some());
    assert!(QuantizedVectors::build(0, &[], 1).is_none());
}

#[test]
fn the_largest_products_fit_an_i32() {
    let query = vec![-127i16; MAX_DIMENSION];
    let vector = vec![-127i8; MAX_DIMENSION];
    assert_eq!(i64::from(dot_codes(&query, &vector)), 127 * 127 * MAX_DIMENSION as i64);
}
