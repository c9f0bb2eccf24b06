//! [`MeteredHttp`]: one row per request in the `http_calls` table.
//!
//! It records what a reader needs to judge the calls (method, where, status, time, size, why it
//! failed) and nothing that may be secret: no header, no query string, no body.

use std::sync::{Arc, OnceLock};

use serde_json::json;

use super::{Http, HttpError, HttpRequest, HttpResponse, recordable_url};
use crate::capabilities::log::{Level, Log};
use crate::capabilities::results::Results;

pub const CALLS_TABLE: &str = "http_calls";

pub struct MeteredHttp {
    inner: Arc<dyn Http>,
    declared: OnceLock<()>,
    results: Arc<dyn Results>,
    log: Arc<dyn Log>,
}

impl MeteredHttp {
    pub fn new(inner: Arc<dyn Http>, results: Arc<dyn Results>, log: Arc<dyn Log>) -> Self {
        MeteredHttp { inner, declared: OnceLock::new(), results, log }
    }

    fn record(&self, request: &HttpRequest, response: &HttpResponse) {
        self.declared.get_or_init(|| {
            let columns = json!([
                ["method", "string"],
                ["url", "string"],
                ["status", "int"],
                ["ok", "bool"],
                ["latency_ms", "float"],
                ["response_bytes", "int"],
                ["error", "string"],
                ["kind", "string"]
            ]);
            if let Err(error) = self.results.declare(CALLS_TABLE, &columns) {
                self.log.write(Level::Warn, &format!("cannot declare `{CALLS_TABLE}`: {error}"));
            }
        });
        let row = row(request, response);
        if let Err(error) = self.results.append(CALLS_TABLE, row) {
            self.log.write(Level::Warn, &format!("cannot record an HTTP call in `{CALLS_TABLE}`: {error}"));
        }
    }
}

/// The `http_calls` row of one exchange.
fn row(request: &HttpRequest, response: &HttpResponse) -> serde_json::Value {
    json!({
        "method": request.method.to_ascii_uppercase(),
        "url": recordable_url(&request.url),
        "status": response.status,
        "ok": response.ok,
        "latency_ms": response.latency_ms,
        "response_bytes": response.text.len(),
        "error": response.error,
        "kind": response.kind,
    })
}

#[async_trait::async_trait]
impl Http for MeteredHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        // A request that cannot be sent is a script error, not a call: nothing to record.
        request.validate()?;
        let response = self.inner.send(request.clone()).await?;
        self.record(&request, &response);
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::http::{FailureKind, RequestOptions};

    #[test]
    fn a_row_names_no_header_and_no_query_string() {
        let mut options = RequestOptions { timeout_s: 1.0, ..RequestOptions::default() };
        options.headers.insert("x-api-key".into(), "SECRET-KEY".into());
        let request = HttpRequest::new("post", "http://localhost:9/v1/retrieve?token=SECRET-TOKEN", None, options);
        let response = HttpResponse::failed(FailureKind::Timeout, "no answer".into(), 12.5);
        let row = row(&request, &response);
        assert_eq!(
            row,
            json!({
                "method": "POST", "url": "http://localhost:9/v1/retrieve", "status": 0, "ok": false,
                "latency_ms": 12.5, "response_bytes": 0, "error": "no answer", "kind": "timeout"
            })
        );
        assert!(!row.to_string().contains("SECRET"));
    }
}
