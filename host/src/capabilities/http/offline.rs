//! [`OfflineHttp`]: the backend of `host check` and `host api`, which sends nothing.
//!
//! Module top-level code runs while imports are resolved; a check must not ingest into a
//! remote service, so every valid request fails as a `connect` failure, without a connection.

use super::{FailureKind, Http, HttpError, HttpRequest, HttpResponse};

#[derive(Debug, Default)]
pub struct OfflineHttp;

#[async_trait::async_trait]
impl Http for OfflineHttp {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        request.validate()?;
        let message = "HTTP requests are not sent while checking a script".to_string();
        Ok(HttpResponse::failed(FailureKind::Connect, message, 0.0))
    }
}
