//! Specification of `format.rs`: report.rhai's `fixed`, `percent` and `signed` and answer.rhai's
//! `format_score`, checked against the original algorithm on the values reports print.

use super::*;

/// report.rhai's `fixed`, with the scale it meant (10^places; it had 1.0 for places other
/// than 2 and 3): round the scaled value, print the float as Rhai does, pad the decimals.
fn original_fixed(value: f64, places: usize) -> String {
    if places == 0 {
        return format!("{}", value.round() as i64);
    }
    let scale = 10_f64.powi(places as i32);
    let scaled = (value * scale).round() / scale;
    // Rhai prints a zero of either sign as "0.0", any other float in Rust's shortest form.
    let mut text = if scaled == 0.0 { "0.0".to_owned() } else { format!("{scaled}") };
    let dot = match text.find('.') {
        Some(dot) => dot,
        None => {
            text.push('.');
            text.len() - 1
        }
    };
    while text.len() - dot - 1 < places {
        text.push('0');
    }
    text
}

/// answer.rhai's `format_score`: hundredths as an integer, then `whole.rest`.
fn original_format_score(score: f64) -> String {
    let hundredths = (score * 100.0).round() as i64;
    let (whole, rest) = (hundredths / 100, hundredths % 100);
    if rest < 10 { format!("{whole}.0{rest}") } else { format!("{whole}.{rest}") }
}

fn report_values() -> Vec<f64> {
    let mut values = Vec::new();
    for k in 0..=150 {
        for denominator in [50.0, 7.0] {
            values.push(f64::from(k) / denominator);
            values.push(-f64::from(k) / denominator);
        }
    }
    values
}

/// Two-sided sign-test p-values for every split of up to 40 differences.
fn p_values() -> Vec<f64> {
    let mut values = Vec::new();
    for n in 1..=40_u32 {
        for smaller in 0..=n / 2 {
            let tail: f64 = (0..=smaller).map(|k| choose(n, k) / 2_f64.powi(n as i32)).sum();
            values.push((2.0 * tail).min(1.0));
        }
    }
    values
}

fn choose(n: u32, k: u32) -> f64 {
    (1..=k).map(|i| f64::from(n - k + i) / f64::from(i)).product()
}

#[test]
fn fixed_equals_the_original_on_every_fiftieth_and_seventh() {
    for value in report_values() {
        for places in [0, 1, 2, 3] {
            assert_eq!(
                fixed(Some(value), places as i64).unwrap(),
                original_fixed(value, places),
                "{value} at {places}"
            );
        }
    }
}

#[test]
fn fixed_equals_the_original_on_sign_test_p_values_at_three_places() {
    for value in p_values() {
        assert_eq!(fixed(Some(value), 3).unwrap(), original_fixed(value, 3), "{value}");
    }
}

#[test]
fn fixed_equals_format_score_on_non_negative_scores() {
    for value in report_values().into_iter().filter(|value| *value >= 0.0) {
        assert_eq!(fixed(Some(value), 2).unwrap(), original_format_score(value), "{value}");
    }
}

#[test]
fn fixed_rounds_half_away_from_zero_and_pads() {
    assert_eq!(fixed(Some(2.5), 0).unwrap(), "3");
    assert_eq!(fixed(Some(-2.5), 0).unwrap(), "-3");
    assert_eq!(fixed(Some(0.125), 2).unwrap(), "0.13");
    assert_eq!(fixed(Some(-0.125), 2).unwrap(), "-0.13");
    assert_eq!(fixed(Some(1.0), 3).unwrap(), "1.000");
    assert_eq!(fixed(Some(0.1), 1).unwrap(), "0.1");
    assert_eq!(fixed(Some(2.0 / 3.0), 9).unwrap(), "0.666666667");
}

#[test]
fn the_rule_works_on_the_float_not_on_its_decimal_text() {
    // 1.005 is stored as 1.00499…, and × 100 gives 100.49999999999999: it rounds down, as it
    // did in the original.
    assert_eq!(fixed(Some(1.005), 2).unwrap(), "1.00");
    assert_eq!(original_fixed(1.005, 2), "1.00");
}

#[test]
fn a_value_that_rounds_to_zero_has_no_sign() {
    assert_eq!(fixed(Some(-0.001), 2).unwrap(), "0.00");
    assert_eq!(fixed(Some(-0.0), 0).unwrap(), "0");
    assert_eq!(fixed(Some(-0.4), 0).unwrap(), "0");
}

#[test]
fn a_missing_value_is_n_a() {
    assert_eq!(fixed(None, 2).unwrap(), "n/a");
    assert_eq!(percent(None, 1).unwrap(), "n/a");
    assert_eq!(signed(None, 2).unwrap(), "n/a");
}

#[test]
fn places_must_be_zero_to_nine() {
    assert_eq!(fixed(Some(1.0), 10), Err(TextError::Places { places: 10 }));
    assert_eq!(fixed(Some(1.0), -1), Err(TextError::Places { places: -1 }));
    assert_eq!(percent(None, 12), Err(TextError::Places { places: 12 }));
    assert_eq!(signed(None, i64::MIN), Err(TextError::Places { places: i64::MIN }));
}

#[test]
fn odd_floats_print_without_panicking() {
    assert_eq!(fixed(Some(f64::NAN), 2).unwrap(), "NaN");
    assert_eq!(fixed(Some(f64::INFINITY), 2).unwrap(), "inf");
    assert_eq!(fixed(Some(f64::NEG_INFINITY), 0).unwrap(), "-inf");
    assert_eq!(fixed(Some(1e300), 9).unwrap(), format!("{:.9}", 1e300));
    assert_eq!(fixed(Some(f64::MAX), 3).unwrap(), format!("{:.3}", f64::MAX));
    assert_eq!(fixed(Some(f64::MIN_POSITIVE), 9).unwrap(), "0.000000000");
    assert_eq!(signed(Some(f64::NAN), 2).unwrap(), "NaN");
    assert_eq!(percent(Some(f64::INFINITY), 1).unwrap(), "inf%");
}

#[test]
fn percent_is_fixed_of_the_value_times_a_hundred() {
    assert_eq!(percent(Some(0.875), 1).unwrap(), "87.5%");
    assert_eq!(percent(Some(7.0 / 12.0), 1).unwrap(), "58.3%");
    assert_eq!(percent(Some(1.0), 1).unwrap(), "100.0%");
    assert_eq!(percent(Some(0.0), 0).unwrap(), "0%");
    for value in report_values() {
        assert_eq!(percent(Some(value), 1).unwrap(), original_fixed(value * 100.0, 1) + "%", "{value}");
    }
}

#[test]
fn signed_puts_a_plus_before_values_that_are_positive_or_round_to_zero() {
    assert_eq!(signed(Some(0.25), 2).unwrap(), "+0.25");
    assert_eq!(signed(Some(-0.1), 2).unwrap(), "-0.10");
    assert_eq!(signed(Some(0.0), 2).unwrap(), "+0.00");
    assert_eq!(signed(Some(-0.001), 2).unwrap(), "+0.00");
    assert_eq!(signed(Some(-0.005), 2).unwrap(), "-0.01");
    assert_eq!(signed(Some(3.0), 0).unwrap(), "+3");
}

#[test]
fn signed_equals_the_original_where_the_original_printed_a_sign() {
    for value in report_values().into_iter().filter(|value| *value >= 0.0 || original_fixed(*value, 2) != "0.00") {
        let sign = if value >= 0.0 { "+" } else { "" };
        assert_eq!(signed(Some(value), 2).unwrap(), format!("{sign}{}", original_fixed(value, 2)), "{value}");
    }
}

#[test]
fn a_code_span_uses_a_longer_run_of_backticks_than_the_text_holds() {
    assert_eq!(code("max: 25"), "`max: 25`");
    assert_eq!(code("a `b` c"), "`` a `b` c ``");
    assert_eq!(code("``x"), "``` ``x ```");
    assert_eq!(code(""), "``");
}
