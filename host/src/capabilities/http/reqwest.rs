//! [`ReqwestHttp`]: requests over the network with reqwest (rustls), each with its own timeout.
//!
//! Classifies what went wrong into a [`FailureKind`]; it does not retry (a script decides
//! whether a failed call is worth repeating) and records nothing (that is [`super::MeteredHttp`]).

use std::time::{Duration, Instant};

use super::{
    FailureKind, Http, HttpError, HttpRequest, HttpResponse, MAX_RESPONSE_BYTES, SharedClient, recordable_url,
};
use crate::capabilities::error_chain;

pub struct ReqwestHttp {
    client: SharedClient,
}

impl ReqwestHttp {
    pub fn new(client: SharedClient) -> Self {
        ReqwestHttp { client }
    }
}

#[async_trait::async_trait]
impl Http for ReqwestHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let valid = request.validate()?;
        let shown = recordable_url(valid.url.as_str());
        let client = self.client.get().map_err(|message| HttpError::Client { message })?;
        let mut builder = client.request(valid.method, valid.url).headers(valid.headers).timeout(valid.timeout);
        if let Some(json) = &request.json {
            builder = builder.json(json);
        } else if let Some(body) = request.body {
            builder = builder.body(body);
        }
        let started = Instant::now();
        let elapsed = || started.elapsed().as_secs_f64() * 1000.0;
        let mut response = match builder.send().await {
            Ok(response) => response,
            Err(error) => return Ok(transport_failure(error, &shown, valid.timeout, elapsed())),
        };
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(::reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        let mut bytes = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                        let message = format!("the response body is larger than {} MiB", MAX_RESPONSE_BYTES >> 20);
                        return Ok(with_status(HttpResponse::failed(FailureKind::Body, message, elapsed()), status));
                    }
                    bytes.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(error) => {
                    let failure = transport_failure(error, &shown, valid.timeout, elapsed());
                    return Ok(with_status(failure, status));
                }
            }
        }
        Ok(HttpResponse::answered(status, content_type.as_deref(), &bytes, elapsed()))
    }
}

/// A body that broke off still came with a status; keep it, it helps to tell servers apart.
fn with_status(mut response: HttpResponse, status: u16) -> HttpResponse {
    response.status = status;
    response
}

fn transport_failure(error: ::reqwest::Error, url: &str, timeout: Duration, latency_ms: f64) -> HttpResponse {
    // Our own message names the URL without its query string; reqwest's would name all of it.
    let error = error.without_url();
    let (kind, message) = if error.is_timeout() {
        (FailureKind::Timeout, format!("no answer from `{url}` within {} s", timeout.as_secs_f64()))
    } else if error.is_body() || error.is_decode() {
        (FailureKind::Body, format!("the response body from `{url}` was cut short: {}", error_chain(&error)))
    } else {
        (FailureKind::Connect, format!("cannot reach `{url}`: {}", error_chain(&error)))
    };
    HttpResponse::failed(kind, message, latency_ms)
}
