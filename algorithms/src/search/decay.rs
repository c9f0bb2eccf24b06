//! Temporal decay, `score × exp(−ln 2 × age_days / half_life)` (openclaw-memory.md §3.5,
//! cortex-benchmark-original.md §2 Phase 3), and OpenClaw's classic rule for which memory files
//! carry a date in their path and which are evergreen.
//!
//! The caller supplies each item's age and whether it is exempt; nothing here reads a clock or
//! a file. OpenClaw's fallback to a file's modification time is the caller's to do
//! ([`MemoryTimestamp::FileTime`]).

use serde::{Deserialize, Serialize};

/// `query.hybrid.temporalDecay.halfLifeDays` (openclaw-memory.md §6) and the Cortex benchmark's
/// half-life (cortex-benchmark-original.md §2 Phase 3, "half-life 30 d").
pub const DEFAULT_HALF_LIFE_DAYS: f64 = 30.0;
pub const MILLISECONDS_PER_DAY: f64 = 86_400_000.0;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DecayOptions {
    pub half_life_days: f64,
}

impl Default for DecayOptions {
    fn default() -> Self {
        Self { half_life_days: DEFAULT_HALF_LIFE_DAYS }
    }
}

/// `exp(−ln 2 / half_life × max(0, age))`. A half-life that is not a positive finite number, or
/// an age that is not finite, means no decay (multiplier 1), as in OpenClaw's `toDecayLambda`.
pub fn multiplier(age_days: f64, half_life_days: f64) -> f64 {
    if !(half_life_days.is_finite() && half_life_days > 0.0 && age_days.is_finite()) {
        return 1.0;
    }
    let lambda = std::f64::consts::LN_2 / half_life_days;
    (-lambda * age_days.max(0.0)).exp()
}

/// The decayed score; an exempt (evergreen) item keeps its score.
pub fn apply(score: f64, age_days: f64, exempt: bool, half_life_days: f64) -> f64 {
    if exempt { score } else { score * multiplier(age_days, half_life_days) }
}

/// OpenClaw's resolved half-life: `max(1, ⌊configured⌋)` (§3.5). A NaN configuration disables
/// decay in OpenClaw; it maps to an infinite half-life here, which [`multiplier`] treats the same.
pub fn openclaw_half_life(configured: f64) -> f64 {
    if configured.is_nan() { f64::INFINITY } else { configured.floor().max(1.0) }
}

/// Age in days between two millisecond timestamps, never negative (§3.5).
pub fn age_days(now_ms: i64, timestamp_ms: i64) -> f64 {
    (now_ms.saturating_sub(timestamp_ms)).max(0) as f64 / MILLISECONDS_PER_DAY
}

/// Where OpenClaw takes a memory chunk's timestamp from (§3.5, classic versions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryTimestamp {
    /// `memory/YYYY-MM-DD.md`: UTC midnight of that date, in milliseconds since the epoch.
    Dated { epoch_ms: i64 },
    /// `MEMORY.md`, `memory.md` and any other file under `memory/` of source `memory`: no decay.
    Evergreen,
    /// Anything else: the file's modification time, or no decay when it cannot be read. Session
    /// transcripts land here and in practice do not decay.
    FileTime,
}

/// Classifies a chunk's (source, path) by OpenClaw's classic rule (§3.5).
///
/// The dated pattern is `(^|/)memory/YYYY-MM-DD.md$` with a valid calendar date; slugged files
/// (`memory/2026-03-01-standup.md`) and dated files in subdirectories are therefore evergreen.
/// Backslashes count as `/` and a leading `./` is ignored, as in OpenClaw.
pub fn classify_memory_path(source: &str, path: &str) -> MemoryTimestamp {
    let normalized = path.replace('\\', "/");
    let normalized = normalized.strip_prefix("./").unwrap_or(&normalized);
    if let Some(epoch_ms) = dated_path(normalized) {
        return MemoryTimestamp::Dated { epoch_ms };
    }
    let memory_file = normalized == "MEMORY.md" || normalized == "memory.md" || normalized.starts_with("memory/");
    if source == "memory" && memory_file { MemoryTimestamp::Evergreen } else { MemoryTimestamp::FileTime }
}

fn dated_path(path: &str) -> Option<i64> {
    let stem = path.strip_suffix(".md")?;
    let split = stem.len().checked_sub(10)?;
    let (prefix, date) = (stem.get(..split)?, stem.get(split..)?);
    if !(prefix == "memory/" || prefix.ends_with("/memory/")) {
        return None;
    }
    let bytes = date.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = bytes.get(range)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0, |value, digit| value * 10 + i64::from(digit - b'0')))
    };
    if bytes.get(4) != Some(&b'-') || bytes.get(7) != Some(&b'-') {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    // JavaScript's Date.UTC maps years 0–99 to 1900–1999, so OpenClaw's round-trip check
    // rejects them; so do we.
    let valid = year >= 100 && (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
    valid.then(|| days_from_civil(year, month, day) * 86_400_000)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the era-based algorithm of
/// H. Hinnant's "chrono-compatible low-level date algorithms").
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64) -> bool {
        (actual - expected).abs() < 1e-6
    }

    // openclaw-memory.md §7 TV4: halfLife 30, now = 2026-03-31T00:00Z, source "memory", no files.
    #[test]
    fn tv4_decay_multipliers_and_final_order() {
        let now_ms = days_from_civil(2026, 3, 31) * 86_400_000;
        let table = [
            ("MEMORY.md", 0.60, 0.60),
            ("memory/2026-03-01.md", 0.90, 0.45),
            ("memory/2026-03-31.md", 0.50, 0.50),
            ("memory/projects.md", 0.40, 0.40),
            ("memory/2026-01-30.md", 0.80, 0.20),
            ("memory/2026-03-01-standup.md", 0.70, 0.70),
        ];
        let mut decayed: Vec<(&str, f64)> = Vec::new();
        for (path, before, after) in table {
            let score = match classify_memory_path("memory", path) {
                MemoryTimestamp::Dated { epoch_ms } => apply(before, age_days(now_ms, epoch_ms), false, 30.0),
                MemoryTimestamp::Evergreen => before,
                MemoryTimestamp::FileTime => panic!("{path}: no file on disk, so it cannot reach the mtime rule"),
            };
            assert!(close(score, after), "{path}: {score} instead of {after}");
            decayed.push((path, score));
        }
        decayed.sort_by(|left, right| right.1.total_cmp(&left.1));
        let order: Vec<&str> = decayed.iter().map(|(path, _)| *path).collect();
        assert_eq!(
            order,
            [
                "memory/2026-03-01-standup.md",
                "MEMORY.md",
                "memory/2026-03-31.md",
                "memory/2026-03-01.md",
                "memory/projects.md",
                "memory/2026-01-30.md"
            ]
        );
    }

    // TV4: "A 7-day age gives ×0.850667."
    #[test]
    fn tv4_seven_days_multiply_by_0_850667() {
        assert!(close(multiplier(7.0, 30.0), 0.850667));
    }

    // cortex-benchmark-original.md §2 Phase 3: "Day 1 → ×0.387; day 42 → ×1" (maxDay 42). The
    // exact value is 2^(−41/30) = 0.387786: the reference truncates it to three places.
    #[test]
    fn benchmark_day_one_decays_to_0_387_and_day_42_not_at_all() {
        let day_one = multiplier(42.0 - 1.0, 30.0);
        assert!((0.387..0.388).contains(&day_one), "{day_one}");
        assert!(close(day_one, 0.387786));
        assert_eq!(multiplier(42.0 - 42.0, 30.0), 1.0);
    }

    #[test]
    fn exempt_items_and_future_timestamps_keep_their_score() {
        assert_eq!(apply(0.9, 300.0, true, 30.0), 0.9);
        assert_eq!(apply(0.9, -5.0, false, 30.0), 0.9);
        assert_eq!(age_days(1_000, 5_000), 0.0);
    }

    #[test]
    fn invalid_half_lives_and_ages_disable_decay() {
        assert_eq!(multiplier(10.0, 0.0), 1.0);
        assert_eq!(multiplier(10.0, f64::NAN), 1.0);
        assert_eq!(multiplier(f64::INFINITY, 30.0), 1.0);
        assert_eq!(multiplier(f64::NAN, 30.0), 1.0);
    }

    // §3.5: halfLifeDays = max(1, floor(cfg)).
    #[test]
    fn openclaw_half_life_is_floored_and_at_least_one() {
        assert_eq!(openclaw_half_life(30.9), 30.0);
        assert_eq!(openclaw_half_life(0.2), 1.0);
        assert_eq!(multiplier(5.0, openclaw_half_life(f64::NAN)), 1.0);
    }

    #[test]
    fn dated_paths_need_a_real_calendar_date() {
        assert_eq!(classify_memory_path("memory", "memory/2026-02-30.md"), MemoryTimestamp::Evergreen);
        assert_eq!(
            classify_memory_path("memory", "memory/2024-02-29.md"),
            MemoryTimestamp::Dated { epoch_ms: days_from_civil(2024, 2, 29) * 86_400_000 }
        );
        assert_eq!(classify_memory_path("memory", "memory/0050-01-01.md"), MemoryTimestamp::Evergreen);
        assert_eq!(classify_memory_path("memory", "memory/2026-1-01.md"), MemoryTimestamp::Evergreen);
    }

    #[test]
    fn subdirectories_backslashes_and_other_sources() {
        assert_eq!(classify_memory_path("memory", "memory/2026-02/2026-02-15.md"), MemoryTimestamp::Evergreen);
        assert!(matches!(classify_memory_path("memory", ".\\memory\\2026-02-15.md"), MemoryTimestamp::Dated { .. }));
        assert!(matches!(classify_memory_path("memory", "notes/memory/2026-02-15.md"), MemoryTimestamp::Dated { .. }));
        assert_eq!(classify_memory_path("memory", "notes/ideas.md"), MemoryTimestamp::FileTime);
        assert_eq!(classify_memory_path("sessions", "sessions/abc.jsonl"), MemoryTimestamp::FileTime);
        assert_eq!(classify_memory_path("sessions", "MEMORY.md"), MemoryTimestamp::FileTime);
        assert_eq!(classify_memory_path("memory", "memory/é.md"), MemoryTimestamp::Evergreen, "short non-ASCII name");
    }

    #[test]
    fn days_from_civil_matches_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2026, 3, 31) - days_from_civil(2026, 1, 30), 60);
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }
}
