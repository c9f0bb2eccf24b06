//! The statistics experiments report (percentiles, bootstrap confidence
//! intervals, sign tests, rater agreement, seeded shuffles), written once in Rust so that every
//! script computes them the same way and fast.
//!
//! `cluster.rs` holds the bootstrap for clustered data (questions grouped in conversations).
//!
//! Everything here is a pure function of its inputs: resampling uses a seeded generator, so a
//! report is reproducible to the last digit.

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum StatsError {
    #[error("no values to summarise")]
    Empty,
    #[error("`{name}` must be {expected}, got {value}")]
    OutOfRange { name: &'static str, expected: &'static str, value: f64 },
    #[error("value {index} is not a finite number")]
    NotFinite { index: usize },
    #[error("the two raters scored different numbers of items ({left} and {right})")]
    LengthMismatch { left: usize, right: usize },
    #[error("{values} values but {clusters} cluster ids; hint: give one cluster id per value")]
    ClusterLength { values: usize, clusters: usize },
    #[error("the paired samples have different lengths ({first} and {second}); hint: pair them question by question")]
    PairLength { first: usize, second: usize },
}

type Result<T> = std::result::Result<T, StatsError>;

fn finite(values: &[f64]) -> Result<()> {
    match values.iter().position(|value| !value.is_finite()) {
        Some(index) => Err(StatsError::NotFinite { index }),
        None => Ok(()),
    }
}

/// The arithmetic mean.
pub fn mean(values: &[f64]) -> Result<f64> {
    if values.is_empty() {
        return Err(StatsError::Empty);
    }
    finite(values)?;
    Ok(values.iter().sum::<f64>() / values.len() as f64)
}

/// The sample variance (divisor n − 1); 0 for a single value.
pub fn variance(values: &[f64]) -> Result<f64> {
    let centre = mean(values)?;
    if values.len() < 2 {
        return Ok(0.0);
    }
    Ok(values.iter().map(|value| (value - centre).powi(2)).sum::<f64>() / (values.len() - 1) as f64)
}

/// The nearest-rank percentile, as the original benchmark computed latency: the value at
/// position ⌈q·n⌉ (1-based) of the sorted values, `q` in [0, 1].
pub fn nearest_rank(values: &[f64], q: f64) -> Result<f64> {
    if !(0.0..=1.0).contains(&q) {
        return Err(StatsError::OutOfRange { name: "q", expected: "between 0 and 1", value: q });
    }
    if values.is_empty() {
        return Err(StatsError::Empty);
    }
    finite(values)?;
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Ok(sorted[rank.saturating_sub(1).min(sorted.len() - 1)])
}

/// A percentile bootstrap interval for the mean.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Interval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    pub level: f64,
    pub resamples: usize,
    pub seed: u64,
}

/// Bootstrap confidence interval of the mean: `resamples` resamples with replacement, drawn by a
/// SplitMix64 generator seeded with `seed`, and the (1 − level)/2 and (1 + level)/2 quantiles of
/// their means (nearest rank).
pub fn bootstrap_mean(values: &[f64], level: f64, resamples: usize, seed: u64) -> Result<Interval> {
    check_bootstrap(level, resamples)?;
    let centre = mean(values)?;
    let mut random = SplitMix64(seed);
    let n = values.len();
    let means: Vec<f64> =
        (0..resamples).map(|_| (0..n).map(|_| values[random.below(n)]).sum::<f64>() / n as f64).collect();
    percentile_interval(centre, &means, level, seed)
}

fn check_bootstrap(level: f64, resamples: usize) -> Result<()> {
    if !(level > 0.0 && level < 1.0) {
        return Err(StatsError::OutOfRange { name: "level", expected: "strictly between 0 and 1", value: level });
    }
    if resamples == 0 {
        return Err(StatsError::OutOfRange { name: "resamples", expected: "at least 1", value: 0.0 });
    }
    Ok(())
}

/// The interval of the (1 − level)/2 and (1 + level)/2 quantiles (nearest rank) of the
/// resampled `means`.
fn percentile_interval(centre: f64, means: &[f64], level: f64, seed: u64) -> Result<Interval> {
    let tail = (1.0 - level) / 2.0;
    Ok(Interval {
        mean: centre,
        low: nearest_rank(means, tail)?,
        high: nearest_rank(means, 1.0 - tail)?,
        level,
        resamples: means.len(),
        seed,
    })
}

/// The exact two-sided sign test on paired differences: ties are dropped, and the p-value is
/// the probability under Binomial(n, ½) of a split at least as uneven as the one seen.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SignTest {
    pub positive: usize,
    pub negative: usize,
    pub ties: usize,
    pub p_value: f64,
}

pub fn sign_test(differences: &[f64]) -> Result<SignTest> {
    finite(differences)?;
    let positive = differences.iter().filter(|&&d| d > 0.0).count();
    let negative = differences.iter().filter(|&&d| d < 0.0).count();
    let ties = differences.len() - positive - negative;
    let n = positive + negative;
    let smaller = positive.min(negative);
    // P(X ≤ smaller) for X ~ Binomial(n, ½), doubled and capped at 1; computed in log space so
    // that large n neither overflows nor underflows.
    let tail: f64 = (0..=smaller).map(|k| (log_choose(n, k) - n as f64 * std::f64::consts::LN_2).exp()).sum();
    let p_value = if n == 0 { 1.0 } else { (2.0 * tail).min(1.0) };
    Ok(SignTest { positive, negative, ties, p_value })
}

fn log_choose(n: usize, k: usize) -> f64 {
    (1..=k).map(|i| ((n - k + i) as f64).ln() - (i as f64).ln()).sum()
}

/// How two raters agree on the same items.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Agreement {
    pub n: usize,
    /// The share of items both raters put in the same category.
    pub exact: f64,
    /// Cohen's κ: agreement beyond chance; 1 when the raters agree and chance agreement is 1.
    pub kappa: f64,
    /// The categories seen, sorted; they label the matrix's rows (first rater) and columns.
    pub labels: Vec<i64>,
    pub confusion: Vec<Vec<usize>>,
}

pub fn agreement(first: &[i64], second: &[i64]) -> Result<Agreement> {
    if first.len() != second.len() {
        return Err(StatsError::LengthMismatch { left: first.len(), right: second.len() });
    }
    if first.is_empty() {
        return Err(StatsError::Empty);
    }
    let mut labels: Vec<i64> = first.iter().chain(second).copied().collect();
    labels.sort_unstable();
    labels.dedup();
    let index = |label: &i64| labels.binary_search(label).unwrap_or(0);
    let mut confusion = vec![vec![0usize; labels.len()]; labels.len()];
    for (a, b) in first.iter().zip(second) {
        confusion[index(a)][index(b)] += 1;
    }
    let n = first.len() as f64;
    let observed = (0..labels.len()).map(|i| confusion[i][i]).sum::<usize>() as f64 / n;
    let chance: f64 = (0..labels.len())
        .map(|i| {
            let row: usize = confusion[i].iter().sum();
            let column: usize = confusion.iter().map(|r| r[i]).sum();
            (row as f64 / n) * (column as f64 / n)
        })
        .sum();
    let kappa = if (1.0 - chance).abs() < f64::EPSILON { 1.0 } else { (observed - chance) / (1.0 - chance) };
    Ok(Agreement { n: first.len(), exact: observed, kappa, labels, confusion })
}

/// The permutation of `0..n` that the original benchmark's `--shuffle-prompts` produced:
/// mulberry32 seeded with `seed`, then Fisher–Yates from the end.
pub fn shuffled_order(n: usize, seed: u32) -> Vec<usize> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x6D2B_79F5);
        let mut t = (state ^ (state >> 15)).wrapping_mul(1 | state);
        t = (t.wrapping_add((t ^ (t >> 7)).wrapping_mul(61 | t))) ^ t;
        f64::from(t ^ (t >> 14)) / 4_294_967_296.0
    };
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (next() * (i + 1) as f64).floor() as usize;
        order.swap(i, j.min(i));
    }
    order
}

/// SplitMix64 (Steele, Lea and Flood 2014): small, fast and good enough for resampling indices.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (n ≥ 1), by Lemire's multiply-shift.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

mod cluster;

pub use cluster::{bootstrap_clustered_difference, bootstrap_clustered_mean};

#[cfg(test)]
mod tests;
