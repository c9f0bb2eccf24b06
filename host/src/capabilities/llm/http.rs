//! The HTTP exchange both providers share: send with a timeout, classify failures, and read
//! how long the server wants us to wait.

use std::time::{Duration, Instant, SystemTime};

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::ErrorKind;
use crate::capabilities::http::SharedClient;

/// A successful exchange: the parsed body and the time it took.
pub struct Reply {
    pub body: Value,
    pub latency_ms: u64,
}

/// The shared client, or why `provider` cannot be reached without one.
pub fn client(shared: &SharedClient, provider: &str) -> Result<reqwest::Client, ErrorKind> {
    shared.get().map_err(|message| ErrorKind::Connection { provider: provider.to_string(), message })
}

/// Sends `request` and returns its JSON body, or the classified failure.
pub async fn exchange(provider: &str, request: reqwest::RequestBuilder, timeout: Duration) -> Result<Reply, ErrorKind> {
    let started = Instant::now();
    let response = request.timeout(timeout).send().await.map_err(|error| transport_error(provider, &error, timeout))?;
    let status = response.status();
    let retry_after = wait_hint(response.headers(), SystemTime::now());
    let bytes = response.bytes().await.map_err(|error| transport_error(provider, &error, timeout))?;
    let latency_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let text = String::from_utf8_lossy(&bytes);
    if !status.is_success() {
        let body: String = text.chars().take(200).collect();
        if is_quota_error(status.as_u16(), &text) {
            return Err(ErrorKind::Quota { provider: provider.to_string(), body });
        }
        return Err(ErrorKind::Http { provider: provider.to_string(), status: status.as_u16(), body, retry_after });
    }
    let body = serde_json::from_slice(&bytes)
        .map_err(|error| ErrorKind::InvalidResponse { provider: provider.to_string(), message: error.to_string() })?;
    Ok(Reply { body, latency_ms })
}

fn transport_error(provider: &str, error: &reqwest::Error, timeout: Duration) -> ErrorKind {
    if error.is_timeout() {
        ErrorKind::Timeout { seconds: timeout.as_secs_f64() }
    } else if error.is_decode() || error.is_body() {
        // The connection broke while the body was arriving: a truncated response.
        ErrorKind::InvalidResponse { provider: provider.to_string(), message: format!("incomplete body: {error}") }
    } else {
        // reqwest's Display names the URL, never headers, so the key cannot appear here.
        ErrorKind::Connection { provider: provider.to_string(), message: error.to_string() }
    }
}

/// OpenAI marks exhausted credit with `insufficient_quota`; Anthropic says the credit balance
/// is too low. Neither gets better by retrying.
fn is_quota_error(status: u16, body: &str) -> bool {
    let lowered = body.to_ascii_lowercase();
    (matches!(status, 400 | 402 | 403 | 429))
        && (lowered.contains("insufficient_quota")
            || lowered.contains("credit balance is too low")
            || lowered.contains("billing_hard_limit"))
}

/// The longest wait the server asked for: `Retry-After` (seconds or an HTTP date),
/// `retry-after-ms`, OpenAI's `x-ratelimit-reset-*` durations (`1s`, `6m0s`, `20ms`) and
/// Anthropic's `anthropic-ratelimit-*-reset` times (RFC 3339).
pub fn wait_hint(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let mut longest: Option<Duration> = None;
    let mut consider = |wait: Option<Duration>| {
        if let Some(wait) = wait {
            longest = Some(longest.map_or(wait, |current| current.max(wait)));
        }
    };
    for (name, value) in headers {
        let Ok(value) = value.to_str() else { continue };
        let name = name.as_str();
        if name == "retry-after" {
            consider(value.trim().parse::<f64>().ok().and_then(seconds).or_else(|| until_http_date(value, now)));
        } else if name == "retry-after-ms" {
            consider(value.trim().parse::<f64>().ok().and_then(|ms| seconds(ms / 1000.0)));
        } else if name.starts_with("x-ratelimit-reset") {
            consider(go_duration(value));
        } else if name.starts_with("anthropic-ratelimit-") && name.ends_with("-reset") {
            consider(until_rfc3339(value, now));
        }
    }
    longest
}

fn seconds(value: f64) -> Option<Duration> {
    (value.is_finite() && value >= 0.0).then(|| Duration::from_secs_f64(value.min(3600.0)))
}

fn until_http_date(value: &str, now: SystemTime) -> Option<Duration> {
    let moment = chrono::DateTime::parse_from_rfc2822(value.trim()).ok()?;
    let target = SystemTime::from(moment.with_timezone(&chrono::Utc));
    Some(target.duration_since(now).unwrap_or_default())
}

fn until_rfc3339(value: &str, now: SystemTime) -> Option<Duration> {
    let moment = chrono::DateTime::parse_from_rfc3339(value.trim()).ok()?;
    let target = SystemTime::from(moment.with_timezone(&chrono::Utc));
    Some(target.duration_since(now).unwrap_or_default())
}

/// `1h2m3.5s`, `6m0s`, `20ms`, `0.5s` → a duration.
fn go_duration(value: &str) -> Option<Duration> {
    let mut total = 0.0;
    let mut number = String::new();
    let mut chars = value.trim().chars().peekable();
    let mut parsed_any = false;
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let amount: f64 = number.parse().ok()?;
        number.clear();
        let unit = match c {
            'h' => 3600.0,
            'm' if chars.peek() == Some(&'s') => {
                chars.next();
                0.001
            }
            'm' => 60.0,
            's' => 1.0,
            _ => return None,
        };
        total += amount * unit;
        parsed_any = true;
    }
    if !number.is_empty() {
        total += number.parse::<f64>().ok()?;
        parsed_any = true;
    }
    if parsed_any { seconds(total) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderName, HeaderValue};

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(wait_hint(&headers(&[("retry-after", "2")]), now), Some(Duration::from_secs(2)));
        let date = chrono::DateTime::<chrono::Utc>::from(now + Duration::from_secs(7)).to_rfc2822();
        assert_eq!(wait_hint(&headers(&[("retry-after", &date)]), now), Some(Duration::from_secs(7)));
    }

    #[test]
    fn the_longest_of_several_rate_limit_headers_wins() {
        let now = SystemTime::UNIX_EPOCH;
        let hint =
            wait_hint(&headers(&[("x-ratelimit-reset-requests", "20ms"), ("x-ratelimit-reset-tokens", "1m2.5s")]), now);
        assert_eq!(hint, Some(Duration::from_secs_f64(62.5)));
        let reset = chrono::DateTime::<chrono::Utc>::from(now + Duration::from_secs(3)).to_rfc3339();
        assert_eq!(
            wait_hint(&headers(&[("anthropic-ratelimit-tokens-reset", &reset)]), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(wait_hint(&headers(&[("retry-after", "soon")]), now), None);
    }

    #[test]
    fn quota_errors_are_told_apart_from_rate_limits() {
        assert!(is_quota_error(429, r#"{"error":{"code":"insufficient_quota"}}"#));
        assert!(is_quota_error(400, r#"{"error":{"message":"Your credit balance is too low"}}"#));
        assert!(!is_quota_error(429, r#"{"error":{"code":"rate_limit_exceeded"}}"#));
    }
}
