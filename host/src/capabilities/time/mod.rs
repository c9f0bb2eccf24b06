//! The `time` capability: a monotonic clock for measuring latency, pauses, and the date.
//!
//! Pure functions over the system clocks, so there is no backend to swap and no trait. Nothing
//! here decides what a run does with the time; `now_ms` is for differences, not dates.

pub mod rhai;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The longest step of a pause, so that a pause can be stopped between steps.
pub const SLEEP_SLICE: Duration = Duration::from_millis(100);

#[derive(Debug, thiserror::Error)]
pub enum TimeError {
    #[error("cannot sleep for {seconds} seconds; hint: pass a finite number of seconds, 0 or more")]
    InvalidSeconds { seconds: f64 },
}

/// Milliseconds on a monotonic clock since the first call in this process: never goes back,
/// so differences are latencies even when the wall clock is adjusted.
pub fn now_ms() -> f64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_secs_f64() * 1000.0
}

/// The current UTC time as RFC 3339 with whole seconds (`2026-02-15T09:30:00Z`).
pub fn utc_now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `seconds` as a duration, refusing negative, NaN and unrepresentably long values.
pub fn duration(seconds: f64) -> Result<Duration, TimeError> {
    if seconds < 0.0 {
        return Err(TimeError::InvalidSeconds { seconds });
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| TimeError::InvalidSeconds { seconds })
}

/// Sleeps for `duration` in steps of at most [`SLEEP_SLICE`], asking `stop` before each step;
/// returns false when `stop` cut the pause short.
pub fn sleep(duration: Duration, stop: &dyn Fn() -> bool) -> bool {
    let until = Instant::now() + duration;
    loop {
        if stop() {
            return false;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(SLEEP_SLICE));
    }
}

/// `time::` for scripts.
pub const CAPABILITY: super::registry::Capability =
    super::registry::Capability::script("time", |capabilities| rhai::module(capabilities.interrupt.clone()));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_nan_and_endless_durations_are_refused_by_value() {
        for seconds in [-1.0, f64::NAN, f64::INFINITY, 1e300] {
            let error = duration(seconds).expect_err("refused");
            assert!(error.to_string().starts_with(&format!("cannot sleep for {seconds} seconds")), "{error}");
        }
        assert_eq!(duration(0.25).expect("valid"), Duration::from_millis(250));
        assert_eq!(duration(0.0).expect("valid"), Duration::ZERO);
    }

    #[test]
    fn a_pause_stops_at_the_first_step_after_stop_says_so() {
        let started = Instant::now();
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let finished =
            sleep(Duration::from_secs(60), &|| asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 2);
        assert!(!finished);
        assert!(started.elapsed() < Duration::from_secs(5), "slept {:?}", started.elapsed());
        assert!(sleep(Duration::from_millis(1), &|| false));
    }

    #[test]
    fn the_clock_moves_forward_and_the_date_has_whole_seconds() {
        let first = now_ms();
        std::thread::sleep(Duration::from_millis(2));
        assert!(now_ms() > first);
        let date = utc_now();
        assert_eq!((date.len(), date.ends_with('Z')), (20, true), "{date}");
        assert!(chrono::DateTime::parse_from_rfc3339(&date).is_ok());
    }
}
