//! The `http` capability: plain HTTP requests from experiment scripts (the Cortex memory API,
//! or any other service an experiment talks to).
//!
//! One async trait, [`Http`], with the boundary types [`HttpRequest`] and [`HttpResponse`].
//! A transport failure or a non-2xx status is a response with `ok: false`, not an error: an
//! experiment records failed calls as data. Only a request that cannot be sent as written (a bad
//! URL, an unknown method, an unknown field) is an [`HttpError`]. Header values may be secrets
//! (`x-api-key`), so nothing here logs, records or formats them into a message.

mod client;
mod metered;
mod offline;
mod reqwest;
pub mod rhai;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use self::reqwest::ReqwestHttp;
pub use client::SharedClient;
pub use metered::{CALLS_TABLE, MeteredHttp};
pub use offline::OfflineHttp;

/// Seconds a request may take, connection and body included, when the script does not say.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 30.0;

/// The most response bytes kept; a longer body is a `body` failure rather than memory exhaustion.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// Characters of a failed response's body quoted in its `error`.
const QUOTED_BODY_CHARS: usize = 200;

/// Methods a script may use.
const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/// What a script asks for. Only `url` is required.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HttpRequest {
    /// `GET` (the default), `POST`, `PUT`, `PATCH`, `DELETE`, `HEAD` or `OPTIONS`, in any case.
    #[serde(default = "default_method")]
    pub method: String,
    /// An absolute `http://` or `https://` URL.
    pub url: String,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A body sent as JSON, with `content-type: application/json`.
    #[serde(default)]
    pub json: Option<Value>,
    /// A body sent as text, as it is; exclusive with `json`.
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default = "default_timeout", deserialize_with = "crate::capabilities::decode::seconds")]
    pub timeout_s: f64,
}

/// The options of the `get` and `post` conveniences: a request without method, URL and body.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RequestOptions {
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default = "default_timeout", deserialize_with = "crate::capabilities::decode::seconds")]
    pub timeout_s: f64,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions { headers: BTreeMap::new(), timeout_s: DEFAULT_TIMEOUT_SECONDS }
    }
}

impl HttpRequest {
    /// A request with `options` applied.
    pub fn new(method: &str, url: &str, json: Option<Value>, options: RequestOptions) -> Self {
        HttpRequest {
            method: method.to_string(),
            url: url.to_string(),
            headers: options.headers,
            json,
            body: None,
            timeout_s: options.timeout_s,
        }
    }

    /// Checks every field and returns the request in the client's terms.
    pub fn validate(&self) -> Result<Validated, HttpError> {
        let method = self.method.to_ascii_uppercase();
        if !METHODS.contains(&method.as_str()) {
            return Err(HttpError::UnknownMethod { method: self.method.clone() });
        }
        let method = ::reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|_| HttpError::UnknownMethod { method: self.method.clone() })?;
        let url = ::reqwest::Url::parse(&self.url)
            .map_err(|source| HttpError::InvalidUrl { url: self.url.clone(), source })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(HttpError::UnsupportedScheme { url: self.url.clone() });
        }
        let mut headers = ::reqwest::header::HeaderMap::new();
        for (name, value) in &self.headers {
            let header = ::reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| HttpError::HeaderName { name: name.clone() })?;
            let mut value = ::reqwest::header::HeaderValue::from_str(value)
                .map_err(|_| HttpError::HeaderValue { name: name.clone() })?;
            // Keeps the value out of reqwest's `Debug` output, should anything print a request.
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            return Err(HttpError::Timeout { value: self.timeout_s });
        }
        if self.json.is_some() && self.body.is_some() {
            return Err(HttpError::BodyAndJson);
        }
        Ok(Validated { method, url, headers, timeout: Duration::from_secs_f64(self.timeout_s.min(86_400.0)) })
    }
}

/// A request whose fields are known to be usable.
#[derive(Debug, Clone)]
pub struct Validated {
    pub method: ::reqwest::Method,
    pub url: ::reqwest::Url,
    pub headers: ::reqwest::header::HeaderMap,
    pub timeout: Duration,
}

fn default_method() -> String {
    "GET".to_string()
}

fn default_timeout() -> f64 {
    DEFAULT_TIMEOUT_SECONDS
}

/// Why a request went wrong, when it is not a value of [`HttpResponse`].
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FailureKind {
    /// No complete answer within `timeout_s`.
    Timeout,
    /// No connection, or the connection broke before an answer.
    Connect,
    /// An answer with a status outside 200-299.
    Status,
    /// The body could not be read to its end (cut short, or over [`MAX_RESPONSE_BYTES`]).
    Body,
    /// The body says it is JSON and is not.
    Invalid,
}

/// What came back. A failure is a value: `ok` is false and `error` says why.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HttpResponse {
    /// A complete 2xx answer whose body, if it says it is JSON, parses.
    pub ok: bool,
    /// The HTTP status; 0 when no answer came.
    pub status: u16,
    pub text: String,
    /// The body parsed, when it is JSON.
    pub json: Option<Value>,
    pub latency_ms: f64,
    pub error: Option<String>,
    pub kind: Option<FailureKind>,
}

impl HttpResponse {
    /// A complete answer: parses the body, and decides whether it is a success.
    pub fn answered(status: u16, content_type: Option<&str>, bytes: &[u8], latency_ms: f64) -> Self {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let declared_json = content_type.is_some_and(is_json_type);
        let parsed = if bytes.iter().all(u8::is_ascii_whitespace) {
            Ok(None)
        } else {
            serde_json::from_slice::<Value>(bytes).map(Some)
        };
        let mut response = HttpResponse { ok: true, status, text, json: None, latency_ms, error: None, kind: None };
        match parsed {
            Ok(json) => response.json = json,
            Err(error) if declared_json => {
                response.fail(FailureKind::Invalid, format!("the response is not valid JSON: {error}"));
            }
            Err(_) => {}
        }
        if !(200..300).contains(&status) {
            let quoted: String = response.text.chars().take(QUOTED_BODY_CHARS).collect();
            let reason = ::reqwest::StatusCode::from_u16(status).ok().and_then(|code| code.canonical_reason());
            let status_line = reason.map_or_else(|| status.to_string(), |reason| format!("{status} {reason}"));
            response.error = None;
            response.fail(FailureKind::Status, format!("HTTP {status_line}: {quoted}").trim_end().to_string());
        }
        response
    }

    /// No complete answer: nothing but the reason and the time it took.
    pub fn failed(kind: FailureKind, error: String, latency_ms: f64) -> Self {
        HttpResponse {
            ok: false,
            status: 0,
            text: String::new(),
            json: None,
            latency_ms,
            error: Some(error),
            kind: Some(kind),
        }
    }

    fn fail(&mut self, kind: FailureKind, error: String) {
        self.ok = false;
        self.kind = Some(kind);
        self.error = Some(error);
    }
}

/// `application/json`, `application/problem+json`, ... with or without parameters.
fn is_json_type(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// A URL as it may be recorded: without credentials, query string or fragment, where API keys
/// and tokens sometimes travel.
pub fn recordable_url(url: &str) -> String {
    let Ok(mut parsed) = ::reqwest::Url::parse(url) else {
        return url.split(['?', '#']).next().unwrap_or_default().to_string();
    };
    parsed.set_query(None);
    parsed.set_fragment(None);
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.to_string()
}

/// A request that cannot be sent as written; the message names the field.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("invalid HTTP request: {message}")]
    Fields { message: String },
    #[error("invalid HTTP request: unknown `method` `{method}`; hint: use one of {}", METHODS.join(", "))]
    UnknownMethod { method: String },
    #[error("invalid HTTP request: `url` `{url}` is not an absolute URL")]
    InvalidUrl {
        url: String,
        #[source]
        source: UrlError,
    },
    #[error("invalid HTTP request: `url` `{url}` is not an `http://` or `https://` URL")]
    UnsupportedScheme { url: String },
    #[error("invalid HTTP request: `headers.{name}` is not a valid header name")]
    HeaderName { name: String },
    // The value is not quoted: header values are often API keys.
    #[error("invalid HTTP request: the value of `headers.{name}` is not a valid header value (not shown)")]
    HeaderValue { name: String },
    #[error("invalid HTTP request: `timeout_s` must be a positive number of seconds, got {value}")]
    Timeout { value: f64 },
    #[error("invalid HTTP request: `json` and `body` are both set; hint: send one of them")]
    BodyAndJson,
    #[error("{message}")]
    Client { message: String },
}

/// The `url` crate's parse error, which reqwest does not re-export by name.
type UrlError = <::reqwest::Url as std::str::FromStr>::Err;

/// HTTP requests. Object safe; the client and policies (metering) implement it alike.
#[async_trait::async_trait]
pub trait Http: Send + Sync {
    /// Sends `request`. `Err` only for a request that cannot be sent as written.
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError>;
}

/// `http::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability::script("http", |capabilities| {
    rhai::module(capabilities.http.clone(), capabilities.runtime.clone())
})
.with_scratch(|capabilities| capabilities.http = std::sync::Arc::new(OfflineHttp));

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: &str) -> HttpRequest {
        HttpRequest::new("get", url, None, RequestOptions::default())
    }

    #[test]
    fn a_valid_request_is_accepted_in_the_clients_terms() {
        let mut valid = request("http://127.0.0.1:8080/v1/retrieve?x=1");
        valid.headers.insert("x-api-key".into(), "secret".into());
        let validated = valid.validate().expect("valid");
        assert_eq!(validated.method, ::reqwest::Method::GET);
        assert_eq!(validated.url.path(), "/v1/retrieve");
        assert!(validated.headers["x-api-key"].is_sensitive());
        assert_eq!(validated.timeout, Duration::from_secs(30));
    }

    #[test]
    fn each_invalid_field_is_named() {
        let mut method = request("http://localhost/");
        method.method = "FETCH".into();
        let mut header = request("http://localhost/");
        header.headers.insert("x-api-key".into(), "line\nbreak-secret".into());
        let mut name = request("http://localhost/");
        name.headers.insert("bad name".into(), "v".into());
        let mut timeout = request("http://localhost/");
        timeout.timeout_s = -1.0;
        let mut both = request("http://localhost/");
        both.json = Some(serde_json::json!({}));
        both.body = Some("{}".into());
        let messages: Vec<String> =
            [request("localhost:8080"), request("ftp://host/x"), method, header, name, timeout, both]
                .iter()
                .map(|request| request.validate().expect_err("invalid").to_string())
                .collect();
        assert!(messages[0].contains("`url` `localhost:8080`"), "{}", messages[0]);
        assert!(messages[1].contains("`url` `ftp://host/x`"), "{}", messages[1]);
        assert!(messages[2].contains("unknown `method` `FETCH`"), "{}", messages[2]);
        assert!(messages[3].contains("`headers.x-api-key`") && !messages[3].contains("secret"), "{}", messages[3]);
        assert!(messages[4].contains("`headers.bad name`"), "{}", messages[4]);
        assert!(messages[5].contains("`timeout_s`") && messages[5].contains("-1"), "{}", messages[5]);
        assert!(messages[6].contains("`json` and `body`"), "{}", messages[6]);
    }

    #[test]
    fn unknown_fields_and_integer_seconds_deserialize_as_scripts_write_them() {
        let request: HttpRequest =
            serde_json::from_value(serde_json::json!({"url": "http://a/", "timeout_s": 2})).expect("integer seconds");
        assert_eq!((request.method.as_str(), request.timeout_s), ("GET", 2.0));
        let error = serde_json::from_value::<HttpRequest>(serde_json::json!({"url": "http://a/", "methd": "GET"}))
            .expect_err("unknown field");
        assert!(error.to_string().contains("unknown field `methd`"), "{error}");
    }

    #[test]
    fn a_field_of_the_wrong_type_is_named() {
        use crate::capabilities::decode::decode;
        let minimal = serde_json::json!({"url": "http://a/"});
        let invalid = |value| decode::<HttpRequest>(value, &minimal).expect_err("invalid").to_string();
        let wrong = invalid(serde_json::json!({"url": "http://a/", "headers": {"x-api-key": 1}}));
        assert!(wrong.starts_with("`headers`: invalid type"), "{wrong}");
        let missing = invalid(serde_json::json!({"method": "GET"}));
        assert_eq!(missing, "missing field `url`");
        let seconds = invalid(serde_json::json!({"url": "http://a/", "timeout_s": "soon"}));
        assert!(seconds.contains("`timeout_s`: expected a number of seconds"), "{seconds}");
        let options = decode::<RequestOptions>(serde_json::json!({"timeout_s": 2}), &serde_json::json!({}));
        assert_eq!(options.expect("valid").timeout_s, 2.0);
    }

    #[test]
    fn a_2xx_json_answer_is_parsed_and_ok() {
        let response = HttpResponse::answered(200, Some("application/json; charset=utf-8"), br#"{"a": 1}"#, 3.0);
        assert!(response.ok);
        assert_eq!(response.json, Some(serde_json::json!({"a": 1})));
        let plain = HttpResponse::answered(204, None, b"", 1.0);
        assert!(plain.ok && plain.json.is_none());
        let text = HttpResponse::answered(200, Some("text/plain"), b"hello", 1.0);
        assert!(text.ok && text.json.is_none() && text.text == "hello");
    }

    #[test]
    fn a_non_2xx_status_or_broken_json_is_a_failure_with_a_kind() {
        let status = HttpResponse::answered(401, Some("application/json"), br#"{"error":"unauthorized"}"#, 1.0);
        assert_eq!((status.ok, status.status, status.kind), (false, 401, Some(FailureKind::Status)));
        assert_eq!(status.error.as_deref(), Some(r#"HTTP 401 Unauthorized: {"error":"unauthorized"}"#));
        assert_eq!(status.json, Some(serde_json::json!({"error": "unauthorized"})), "the error body is still parsed");
        let broken = HttpResponse::answered(200, Some("application/json"), b"{\"results\": [", 1.0);
        assert_eq!((broken.ok, broken.kind), (false, Some(FailureKind::Invalid)));
        assert!(broken.error.as_deref().is_some_and(|error| error.starts_with("the response is not valid JSON")));
    }

    #[test]
    fn recorded_urls_lose_credentials_query_and_fragment() {
        assert_eq!(recordable_url("https://user:pw@api.example/v1/x?key=SECRET#frag"), "https://api.example/v1/x");
        assert_eq!(recordable_url("not a url?key=SECRET"), "not a url");
    }
}
