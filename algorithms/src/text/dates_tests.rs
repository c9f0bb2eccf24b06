//! Specification of `dates.rs`: data.rhai's `add_days` and `days_from_civil`, on well-formed
//! dates, and the errors for the rest.

use super::*;

#[test]
fn add_days_crosses_months_years_and_leap_days() {
    assert_eq!(add_days("2024-02-27", 3).as_deref(), Ok("2024-03-01"));
    assert_eq!(add_days("2023-02-27", 3).as_deref(), Ok("2023-03-02"));
    assert_eq!(add_days("2024-12-31", 1).as_deref(), Ok("2025-01-01"));
    assert_eq!(add_days("2024-03-01", -1).as_deref(), Ok("2024-02-29"));
    assert_eq!(add_days("2024-01-15", 0).as_deref(), Ok("2024-01-15"));
}

#[test]
fn day_number_counts_days_from_1970_01_01() {
    assert_eq!(day_number("1970-01-01"), Ok(0));
    assert_eq!(day_number("1970-01-02"), Ok(1));
    assert_eq!(day_number("1969-12-31"), Ok(-1));
    assert_eq!(day_number("2000-03-01"), Ok(11_017));
    assert_eq!(day_number("2024-01-15"), Ok(19_737));
}

#[test]
fn add_days_agrees_with_day_number() {
    for offset in [-800, -1, 0, 1, 59, 60, 365, 366, 10_000] {
        let later = add_days("2024-01-15", offset).unwrap();
        assert_eq!(day_number(&later), Ok(19_737 + offset), "{later}");
    }
}

#[test]
fn days_from_civil_of_the_original_gives_the_same_day_numbers() {
    // Howard Hinnant's algorithm, as data.rhai wrote it.
    fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
        let y = if month <= 2 { year - 1 } else { year };
        let era = (if y >= 0 { y } else { y - 399 }) / 400;
        let yoe = y - era * 400;
        let mp = (month + 9) % 12;
        let doy = (153 * mp + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }
    let mut date = "1899-12-25".to_owned();
    for _ in 0..3000 {
        let (year, month, day) =
            (date[0..4].parse().unwrap(), date[5..7].parse().unwrap(), date[8..10].parse().unwrap());
        assert_eq!(day_number(&date), Ok(days_from_civil(year, month, day)), "{date}");
        date = add_days(&date, 47).unwrap();
    }
}

#[test]
fn a_malformed_date_is_an_error_naming_it_and_the_form() {
    for date in ["2024-1-5", "2024/01/05", "20240105", "", "2024-01-05 ", "x024-01-05", "2024-01-0５", "２024-01-05"]
    {
        let error = add_days(date, 1).unwrap_err();
        assert_eq!(error, TextError::NotADate { date: date.into() });
        assert_eq!(day_number(date).unwrap_err(), error);
    }
    assert_eq!(
        TextError::NotADate { date: "2024-1-5".into() }.to_string(),
        "`2024-1-5` is not a date of the form YYYY-MM-DD"
    );
}

#[test]
fn an_impossible_date_is_an_error_not_a_roll_over() {
    assert_eq!(add_days("2023-02-29", 0), Err(TextError::NotADate { date: "2023-02-29".into() }));
    assert_eq!(day_number("2024-13-01"), Err(TextError::NotADate { date: "2024-13-01".into() }));
    assert_eq!(day_number("2024-00-10"), Err(TextError::NotADate { date: "2024-00-10".into() }));
}

#[test]
fn a_result_outside_four_digit_years_is_an_error() {
    assert_eq!(add_days("9999-12-31", 1), Err(TextError::DateOutOfRange { date: "9999-12-31".into(), days: 1 }));
    assert_eq!(add_days("0000-01-01", -1), Err(TextError::DateOutOfRange { date: "0000-01-01".into(), days: -1 }));
    assert!(add_days("2024-01-01", i64::MAX).is_err());
    assert!(add_days("2024-01-01", i64::MIN).is_err());
    assert_eq!(add_days("0000-01-01", 0).as_deref(), Ok("0000-01-01"));
}
