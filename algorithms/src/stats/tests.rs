use super::*;

#[test]
fn nearest_rank_takes_the_value_at_the_ceiling_rank() {
    let values = [50.0, 15.0, 40.0, 20.0, 35.0];
    assert_eq!(nearest_rank(&values, 0.3), Ok(20.0));
    assert_eq!(nearest_rank(&values, 0.4), Ok(20.0));
    assert_eq!(nearest_rank(&values, 0.5), Ok(35.0));
    assert_eq!(nearest_rank(&values, 1.0), Ok(50.0));
    assert_eq!(nearest_rank(&values, 0.0), Ok(15.0));
}

#[test]
fn nearest_rank_rejects_a_quantile_outside_zero_to_one_and_empty_input() {
    assert!(matches!(nearest_rank(&[1.0], 95.0), Err(StatsError::OutOfRange { name: "q", .. })));
    assert_eq!(nearest_rank(&[], 0.5), Err(StatsError::Empty));
    assert_eq!(nearest_rank(&[1.0, f64::NAN], 0.5), Err(StatsError::NotFinite { index: 1 }));
}

#[test]
fn variance_divides_by_n_minus_one() {
    assert_eq!(variance(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), Ok(32.0 / 7.0));
    assert_eq!(variance(&[3.0]), Ok(0.0));
}

#[test]
fn sign_test_gives_the_exact_binomial_p_value_and_drops_ties() {
    let mut differences = vec![1.0; 8];
    differences.extend([-0.5, -1.0, 0.0, 0.0]);
    let test = sign_test(&differences).unwrap();
    assert_eq!((test.positive, test.negative, test.ties), (8, 2, 2));
    // 2 × (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 112 / 1024
    assert!((test.p_value - 0.109_375).abs() < 1e-12, "{}", test.p_value);
}

#[test]
fn sign_test_of_no_differences_is_p_one() {
    assert_eq!(sign_test(&[0.0, 0.0]).unwrap().p_value, 1.0);
    assert_eq!(sign_test(&[1.0, -1.0]).unwrap().p_value, 1.0);
}

#[test]
fn sign_test_stays_finite_for_many_pairs() {
    let differences: Vec<f64> = (0..2000).map(|i| if i % 3 == 0 { -1.0 } else { 1.0 }).collect();
    let p = sign_test(&differences).unwrap().p_value;
    assert!(p > 0.0 && p < 1e-20, "{p}");
}

#[test]
fn bootstrap_of_a_constant_is_that_constant() {
    let interval = bootstrap_mean(&[2.0; 10], 0.95, 1000, 7).unwrap();
    assert_eq!((interval.mean, interval.low, interval.high), (2.0, 2.0, 2.0));
}

#[test]
fn bootstrap_is_reproducible_for_a_seed_and_brackets_the_mean() {
    let values: Vec<f64> = (0..50).map(|i| f64::from(i % 4) - 1.0).collect();
    let first = bootstrap_mean(&values, 0.95, 2000, 42).unwrap();
    assert_eq!(first, bootstrap_mean(&values, 0.95, 2000, 42).unwrap());
    assert!(first.low < first.mean && first.mean < first.high, "{first:?}");
    // The standard error of this sample's mean is about 0.16, so the interval is about ±0.31.
    assert!((first.high - first.low - 0.62).abs() < 0.12, "{first:?}");
    assert_ne!(first, bootstrap_mean(&values, 0.95, 2000, 43).unwrap());
}

#[test]
fn bootstrap_rejects_a_level_of_95_meaning_percent() {
    assert!(matches!(bootstrap_mean(&[1.0], 95.0, 10, 1), Err(StatsError::OutOfRange { name: "level", .. })));
}

#[test]
fn agreement_gives_cohens_kappa_and_the_confusion_matrix() {
    // 20 both-yes, 5 yes/no, 10 no/yes, 15 both-no: p_o = 0.7, p_e = 0.5, κ = 0.4.
    let mut first = vec![1; 25];
    first.extend(vec![0; 25]);
    let mut second = vec![1; 20];
    second.extend(vec![0; 5]);
    second.extend(vec![1; 10]);
    second.extend(vec![0; 15]);
    let agreement = agreement(&first, &second).unwrap();
    assert_eq!(agreement.labels, vec![0, 1]);
    assert_eq!(agreement.confusion, vec![vec![15, 10], vec![5, 20]]);
    assert!((agreement.exact - 0.7).abs() < 1e-12);
    assert!((agreement.kappa - 0.4).abs() < 1e-12);
}

#[test]
fn agreement_of_identical_constant_ratings_is_perfect() {
    let agreement = agreement(&[3, 3], &[3, 3]).unwrap();
    assert_eq!((agreement.exact, agreement.kappa), (1.0, 1.0));
}

#[test]
fn agreement_needs_equal_lengths() {
    assert_eq!(agreement(&[1], &[1, 2]), Err(StatsError::LengthMismatch { left: 1, right: 2 }));
}

#[test]
fn shuffle_matches_the_original_runners_mulberry32_fisher_yates() {
    // Node: mulberry32(1337) driving Fisher–Yates from the end over [0..10).
    assert_eq!(shuffled_order(10, 1337), vec![0, 3, 7, 5, 8, 2, 4, 6, 9, 1]);
    assert_eq!(shuffled_order(0, 1), Vec::<usize>::new());
}
