//! Specification of `vector.rs`: cosine scores, the top-k order (ties by index), the edges
//! (zero, NaN, wrong dimension) and that threads do not change a score.

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
fn a_vector_of_subnormal_components_normalises_to_unit_length_not_to_infinity() {
    let tiny = f32::from_bits(1);
    let store = store(&[&[tiny, 0.0], &[tiny, tiny], &[3e38, 3e38]]);
    assert_eq!(store.get(0), Some(&[1.0f32, 0.0][..]));
    for doc in 1..3 {
        let vector = store.get(doc).unwrap();
        assert!((vector[0] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6, "doc {doc}: {vector:?}");
        assert_eq!(vector[0], vector[1]);
    }
    assert_eq!(store.top_k(&[tiny, 0.0], 1).unwrap(), [VectorHit { doc: 0, score: 1.0 }]);
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

#[test]
fn a_store_asked_for_one_top_k_never_builds_its_int8_copy() {
    let data: Vec<f32> = (0..2_000 * 8).map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5).collect();
    let store = VectorStore::from_flat(8, data).unwrap();
    store.top_k(&[1.0; 8], 10).unwrap();
    assert!(store.int8.built.get().is_none(), "one query: the f32 scan alone");
    store.top_k(&[1.0; 8], 10).unwrap();
    assert!(store.int8.built.get().is_some_and(Option::is_some), "the second query builds the copy");
}

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
