//! What can go wrong with a model call, classified for retries and for scripts.

use std::time::Duration;

/// A failed call, with how many times it was retried before giving up.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{kind}{}", retried(*.retries))]
pub struct LlmError {
    pub kind: ErrorKind,
    pub retries: u32,
}

fn retried(retries: u32) -> String {
    match retries {
        0 => String::new(),
        1 => " (after 1 retry)".to_string(),
        n => format!(" (after {n} retries)"),
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum ErrorKind {
    #[error("no API key for {provider}; hint: set `{variable}`")]
    NoKey { provider: String, variable: &'static str },
    #[error("invalid LLM request: {message}")]
    InvalidRequest { message: String },
    #[error("{provider} answered HTTP {status}: {body}")]
    Http {
        provider: String,
        status: u16,
        /// The start of the response body (at most 200 characters).
        body: String,
        /// How long the server asked us to wait (`Retry-After`, `x-ratelimit-reset*`).
        retry_after: Option<Duration>,
    },
    #[error(
        "{provider} quota is exhausted: {body}; hint: add credit or raise the limit, then rerun (answered calls are cached)"
    )]
    Quota { provider: String, body: String },
    #[error("no answer within {seconds:.1}s")]
    Timeout { seconds: f64 },
    #[error("cannot reach {provider}: {message}")]
    Connection { provider: String, message: String },
    #[error("{provider} sent a response that is not valid JSON: {message}")]
    InvalidResponse { provider: String, message: String },
    #[error("{provider} sent a response without content")]
    NoContent { provider: String },
    #[error(
        "offline: no recorded answer for call `{call_id}` ({model}, first message: {preview}); hint: run once online to record it"
    )]
    OfflineMiss { call_id: String, model: String, preview: String },
    #[error("LLM budget of ${limit:.4} reached (spent ${spent:.4}); no new calls are made")]
    Budget { limit: f64, spent: f64 },
}

impl ErrorKind {
    /// A short, stable name for tables and scripts.
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::NoKey { .. } => "no_key",
            ErrorKind::InvalidRequest { .. } => "invalid_request",
            ErrorKind::Http { .. } => "http",
            ErrorKind::Quota { .. } => "quota",
            ErrorKind::Timeout { .. } => "timeout",
            ErrorKind::Connection { .. } => "connection",
            ErrorKind::InvalidResponse { .. } => "invalid_response",
            ErrorKind::NoContent { .. } => "no_content",
            ErrorKind::OfflineMiss { .. } => "offline_miss",
            ErrorKind::Budget { .. } => "budget",
        }
    }

    /// Transient failures: 408, 409, 429, 5xx, connection errors and timeouts.
    pub fn is_retryable(&self) -> bool {
        match self {
            ErrorKind::Http { status, .. } => matches!(status, 408 | 409 | 429) || *status >= 500,
            ErrorKind::Timeout { .. } | ErrorKind::Connection { .. } => true,
            _ => false,
        }
    }

    /// Failures after which no further call can succeed in this run.
    pub fn is_fatal(&self) -> bool {
        matches!(self, ErrorKind::Quota { .. })
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ErrorKind::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

impl From<ErrorKind> for LlmError {
    fn from(kind: ErrorKind) -> Self {
        LlmError { kind, retries: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> ErrorKind {
        ErrorKind::Http { provider: "openai".into(), status, body: String::new(), retry_after: None }
    }

    #[test]
    fn transient_statuses_are_retried_and_client_errors_are_not() {
        for status in [408, 409, 429, 500, 502, 503, 529] {
            assert!(http(status).is_retryable(), "{status}");
        }
        for status in [400, 401, 403, 404, 422] {
            assert!(!http(status).is_retryable(), "{status}");
        }
        assert!(!ErrorKind::Quota { provider: "openai".into(), body: String::new() }.is_retryable());
    }

    #[test]
    fn the_message_says_how_often_a_call_was_retried() {
        let error = LlmError { kind: ErrorKind::Timeout { seconds: 1.0 }, retries: 3 };
        assert_eq!(error.to_string(), "no answer within 1.0s (after 3 retries)");
    }
}
