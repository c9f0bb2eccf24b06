//! Numbers as reports print them (`fixed`, `percent` and `signed` of
//! `scripts/lib/cortex/report.rhai`, `format_score` of `answer.rhai`): rounded half away from
//! zero at a number of decimals, then printed with exactly that many. A missing value prints
//! "n/a".

use super::{Result, TextError};

/// `value` rounded half away from zero to `places` decimals (0 to 9) and printed with exactly
/// `places` decimals: scale by 10^places, round (`f64::round`), scale back, print. The rule
/// works on the float, as the original did: 1.005 × 100 is 100.49999999999999, so 1.005 at 2
/// places is "1.00". A value that rounds to zero prints without a sign. `None` is "n/a"; NaN
/// and the infinities print as Rust prints them ("NaN", "inf", "-inf").
pub fn fixed(value: Option<f64>, places: i64) -> Result<String> {
    let places = check_places(places)?;
    Ok(value.map_or_else(|| "n/a".to_owned(), |value| print(rounded(value, places), places)))
}

/// [`fixed`] of `value × 100`, then "%": 0.1234 at 1 place is "12.3%". `None` is "n/a".
pub fn percent(value: Option<f64>, places: i64) -> Result<String> {
    let places = check_places(places)?;
    Ok(value.map_or_else(|| "n/a".to_owned(), |value| print(rounded(value * 100.0, places), places) + "%"))
}

/// [`fixed`] with a "+" before a value that is positive or rounds to zero: "+0.25", "-0.10",
/// "+0.00" (for -0.001 too, never "-0.00"). `None` is "n/a".
pub fn signed(value: Option<f64>, places: i64) -> Result<String> {
    let places = check_places(places)?;
    Ok(value.map_or_else(
        || "n/a".to_owned(),
        |value| {
            let rounded = rounded(value, places);
            let sign = if rounded >= 0.0 { "+" } else { "" };
            format!("{sign}{}", print(rounded, places))
        },
    ))
}

fn check_places(places: i64) -> Result<usize> {
    usize::try_from(places).ok().filter(|&places| places <= 9).ok_or(TextError::Places { places })
}

/// The original's rounding: `(value * scale).round() / scale`, with negative zero made zero
/// (Rhai prints -0.0 as "0.0"). A finite value too large to scale is already a whole number.
fn rounded(value: f64, places: usize) -> f64 {
    let scale = 10_f64.powi(places as i32);
    let scaled = value * scale;
    let rounded = if scaled.is_finite() || !value.is_finite() { scaled.round() / scale } else { value };
    if rounded == 0.0 { 0.0 } else { rounded }
}

/// A rounded value with exactly `places` decimals. For a value already rounded to `places`,
/// this equals the original's shortest round-trip text padded with zeros: the float nearest to
/// a `places`-decimal number prints back as that number either way.
fn print(rounded: f64, places: usize) -> String {
    if rounded.is_finite() { format!("{rounded:.places$}") } else { rounded.to_string() }
}

/// `text` as a Markdown code span: in backticks, or, when it holds backticks itself, in a run of
/// one backtick more than its longest run, with a space inside each end.
pub fn code(text: &str) -> String {
    let longest = text.split(|character| character != '`').map(str::len).max().unwrap_or(0);
    if longest == 0 {
        return format!("`{text}`");
    }
    let fence = "`".repeat(longest + 1);
    format!("{fence} {text} {fence}")
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
