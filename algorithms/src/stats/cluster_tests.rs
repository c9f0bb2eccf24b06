//! Specification of `cluster.rs`: the cluster bootstrap and its paired form.

use super::*;
use crate::stats::bootstrap_mean;

/// Ten conversations of twenty questions; in conversation `c` every answer scores `c mod 2`
/// give or take a little, so questions of one conversation rise and fall together.
fn correlated() -> (Vec<f64>, Vec<usize>) {
    let mut values = Vec::new();
    let mut clusters = Vec::new();
    for conversation in 0..10 {
        for question in 0..20 {
            values.push((conversation % 2) as f64 + if question % 2 == 0 { 0.05 } else { -0.05 });
            clusters.push(conversation);
        }
    }
    (values, clusters)
}

#[test]
fn one_value_per_cluster_draws_exactly_what_the_plain_bootstrap_draws() {
    let values: Vec<f64> = (0..40).map(|i| f64::from(i % 5) / 4.0).collect();
    let clusters: Vec<usize> = (0..40).collect();
    assert_eq!(bootstrap_clustered_mean(&values, &clusters, 0.95, 500, 9), bootstrap_mean(&values, 0.95, 500, 9));
}

#[test]
fn correlated_clusters_give_a_wider_interval_than_resampling_questions() {
    let (values, clusters) = correlated();
    let clustered = bootstrap_clustered_mean(&values, &clusters, 0.95, 2000, 1).unwrap();
    let naive = bootstrap_mean(&values, 0.95, 2000, 1).unwrap();
    assert_eq!(clustered.mean, naive.mean);
    // Per question the standard error is about 0.5/√200 ≈ 0.035; per conversation about
    // 0.5/√10 ≈ 0.16, some 4.5 times more.
    let (wide, narrow) = (clustered.high - clustered.low, naive.high - naive.low);
    assert!(wide > 3.0 * narrow, "clustered {clustered:?}, naive {naive:?}");
}

#[test]
fn the_statistic_is_the_mean_over_all_questions_of_the_drawn_clusters() {
    // One cluster of one value 0 and one cluster of three values 1: drawing both clusters
    // gives (0 + 3) / 4 = 0.75, not the mean of cluster means 0.5. Every resample is one of
    // 0 (first twice), 0.75 (both) or 1 (second twice).
    let interval = bootstrap_clustered_mean(&[0.0, 1.0, 1.0, 1.0], &["a", "b", "b", "b"], 0.5, 400, 3).unwrap();
    assert_eq!(interval.mean, 0.75);
    for bound in [interval.low, interval.high] {
        assert!([0.0, 0.75, 1.0].contains(&bound), "{interval:?}");
    }
}

#[test]
fn it_is_reproducible_for_a_seed_and_only_the_cluster_of_each_value_matters() {
    let (values, clusters) = correlated();
    let first = bootstrap_clustered_mean(&values, &clusters, 0.9, 1000, 42).unwrap();
    assert_eq!(first, bootstrap_clustered_mean(&values, &clusters, 0.9, 1000, 42).unwrap());
    assert_ne!(first, bootstrap_clustered_mean(&values, &clusters, 0.9, 1000, 43).unwrap());
    // The same clusters, with their questions interleaved (first appearances kept in order).
    let grouped = bootstrap_clustered_mean(&[1.0, 2.0, 5.0, 7.0], &[1, 1, 2, 2], 0.9, 300, 5).unwrap();
    let interleaved = bootstrap_clustered_mean(&[1.0, 5.0, 2.0, 7.0], &[1, 2, 1, 2], 0.9, 300, 5).unwrap();
    assert_eq!(grouped, interleaved);
}

#[test]
fn a_constant_gives_that_constant() {
    let interval = bootstrap_clustered_mean(&[0.5; 6], &[1, 1, 2, 2, 3, 3], 0.95, 100, 7).unwrap();
    assert_eq!((interval.mean, interval.low, interval.high), (0.5, 0.5, 0.5));
    assert_eq!((interval.level, interval.resamples, interval.seed), (0.95, 100, 7));
}

#[test]
fn the_paired_form_resamples_the_differences_by_cluster() {
    let (second, clusters) = correlated();
    // The first system scores one more on every question (whole numbers, so that the
    // differences are exactly 1).
    let whole: Vec<f64> = second.iter().map(|value| value.round()).collect();
    let first: Vec<f64> = whole.iter().map(|value| value + 1.0).collect();
    let shifted = bootstrap_clustered_difference(&first, &whole, &clusters, 0.95, 200, 1).unwrap();
    assert_eq!((shifted.mean, shifted.low, shifted.high), (1.0, 1.0, 1.0));
    // In general it is the clustered interval of the differences.
    let reversed: Vec<f64> = second.iter().rev().copied().collect();
    assert_eq!(
        bootstrap_clustered_difference(&second, &reversed, &clusters, 0.9, 300, 2),
        bootstrap_clustered_mean(
            &second.iter().zip(&reversed).map(|(a, b)| a - b).collect::<Vec<_>>(),
            &clusters,
            0.9,
            300,
            2
        )
    );
}

#[test]
fn mismatched_lengths_empty_input_and_bad_numbers_are_errors() {
    assert_eq!(
        bootstrap_clustered_mean(&[1.0, 2.0], &[1], 0.95, 10, 1),
        Err(StatsError::ClusterLength { values: 2, clusters: 1 })
    );
    let none: [u8; 0] = [];
    assert_eq!(bootstrap_clustered_mean(&[], &none, 0.95, 10, 1), Err(StatsError::Empty));
    assert_eq!(
        bootstrap_clustered_mean(&[1.0, f64::NAN], &[1, 1], 0.95, 10, 1),
        Err(StatsError::NotFinite { index: 1 })
    );
    assert!(matches!(
        bootstrap_clustered_mean(&[1.0], &[1], 95.0, 10, 1),
        Err(StatsError::OutOfRange { name: "level", .. })
    ));
    assert!(matches!(
        bootstrap_clustered_mean(&[1.0], &[1], 0.95, 0, 1),
        Err(StatsError::OutOfRange { name: "resamples", .. })
    ));
    assert_eq!(
        bootstrap_clustered_difference(&[1.0, 2.0], &[1.0], &[1, 1], 0.95, 10, 1),
        Err(StatsError::PairLength { first: 2, second: 1 })
    );
    assert_eq!(
        bootstrap_clustered_difference(&[1.0], &[f64::INFINITY], &[1], 0.95, 10, 1),
        Err(StatsError::NotFinite { index: 0 })
    );
}
