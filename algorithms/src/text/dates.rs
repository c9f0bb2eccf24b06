//! Calendar dates written "YYYY-MM-DD", as the benchmark's sessions carry them (`add_days` and
//! `days_from_civil` of `scripts/lib/cortex/data.rhai`), on chrono's proleptic Gregorian
//! calendar.

use chrono::{DateTime, Datelike, NaiveDate, TimeDelta};

use super::{Result, TextError};

/// `date` plus `days` days (negative to go back), as "YYYY-MM-DD".
pub fn add_days(date: &str, days: i64) -> Result<String> {
    let start = parse(date)?;
    let out_of_range = || TextError::DateOutOfRange { date: date.to_owned(), days };
    let end = TimeDelta::try_days(days).and_then(|delta| start.checked_add_signed(delta)).ok_or_else(out_of_range)?;
    if !(0..=9999).contains(&end.year()) {
        return Err(out_of_range());
    }
    Ok(end.format("%Y-%m-%d").to_string())
}

/// The days from 1970-01-01 to `date` (negative before it).
pub fn day_number(date: &str) -> Result<i64> {
    Ok((parse(date)? - DateTime::UNIX_EPOCH.date_naive()).num_days())
}

/// A date written exactly "YYYY-MM-DD" (four, two and two ASCII digits), and a real one: the
/// original accepted "2024-1-5" and rolled "2024-02-30" over into March; both are errors here.
fn parse(date: &str) -> Result<NaiveDate> {
    let not_a_date = || TextError::NotADate { date: date.to_owned() };
    let bytes = date.as_bytes();
    let shaped = bytes.len() == 10
        && bytes
            .iter()
            .enumerate()
            .all(|(i, &byte)| if i == 4 || i == 7 { byte == b'-' } else { byte.is_ascii_digit() });
    if !shaped {
        return Err(not_a_date());
    }
    let number = |range: std::ops::Range<usize>| date[range].parse::<u32>().map_err(|_| not_a_date());
    let year = i32::try_from(number(0..4)?).map_err(|_| not_a_date())?;
    NaiveDate::from_ymd_opt(year, number(5..7)?, number(8..10)?).ok_or_else(not_a_date)
}

#[cfg(test)]
#[path = "dates_tests.rs"]
mod tests;
