//! Bootstrap intervals for clustered data: benchmark questions come in groups (LoCoMo's ten
//! conversations) whose questions succeed or fail together, so resampling questions one by one
//! understates the uncertainty; these resample whole clusters.

use std::collections::HashMap;
use std::hash::Hash;

use super::{Interval, Result, SplitMix64, StatsError, check_bootstrap, finite, mean, percentile_interval};

/// Cluster bootstrap interval of the mean: each of `resamples` resamples draws as many clusters
/// as there are, with replacement (SplitMix64 seeded with `seed`), and takes the mean over all
/// values of the drawn clusters (so a large cluster weighs by its size, as in the plain mean);
/// the interval is the (1 − level)/2 and (1 + level)/2 quantiles of those means (nearest rank).
/// `clusters[i]` names the cluster of `values[i]`; any ids that compare equal are one cluster.
///
/// Clusters are numbered in the order they first appear, so with one value per cluster this
/// draws exactly what [`super::bootstrap_mean`] draws and gives the same interval.
pub fn bootstrap_clustered_mean<C: Eq + Hash>(
    values: &[f64],
    clusters: &[C],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Result<Interval> {
    check_bootstrap(level, resamples)?;
    if values.len() != clusters.len() {
        return Err(StatsError::ClusterLength { values: values.len(), clusters: clusters.len() });
    }
    let centre = mean(values)?;
    let (sums, counts) = cluster_totals(values, clusters);
    let k = sums.len();
    let mut random = SplitMix64(seed);
    let means: Vec<f64> = (0..resamples)
        .map(|_| {
            let drawn: Vec<usize> = (0..k).map(|_| random.below(k)).collect();
            let total: f64 = drawn.iter().map(|&cluster| sums[cluster]).sum();
            let count: usize = drawn.iter().map(|&cluster| counts[cluster]).sum();
            total / count as f64
        })
        .collect();
    percentile_interval(centre, &means, level, seed)
}

/// Paired cluster bootstrap: the interval of the mean of `first[i] − second[i]` (two systems
/// scored on the same questions), resampling whole clusters as [`bootstrap_clustered_mean`]
/// does, so that a conversation both systems find hard moves both together.
pub fn bootstrap_clustered_difference<C: Eq + Hash>(
    first: &[f64],
    second: &[f64],
    clusters: &[C],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Result<Interval> {
    if first.len() != second.len() {
        return Err(StatsError::PairLength { first: first.len(), second: second.len() });
    }
    finite(first)?;
    finite(second)?;
    let differences: Vec<f64> = first.iter().zip(second).map(|(a, b)| a - b).collect();
    bootstrap_clustered_mean(&differences, clusters, level, resamples, seed)
}

/// Each cluster's sum and count of values, clusters numbered by first appearance.
fn cluster_totals<C: Eq + Hash>(values: &[f64], clusters: &[C]) -> (Vec<f64>, Vec<usize>) {
    let mut number: HashMap<&C, usize> = HashMap::new();
    let mut sums: Vec<f64> = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    for (value, cluster) in values.iter().zip(clusters) {
        let index = *number.entry(cluster).or_insert_with(|| {
            sums.push(0.0);
            counts.push(0);
            sums.len() - 1
        });
        sums[index] += value;
        counts[index] += 1;
    }
    (sums, counts)
}

#[cfg(test)]
#[path = "cluster_tests.rs"]
mod tests;
