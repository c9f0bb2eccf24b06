//! OpenAI-compatible `POST {base}/embeddings`, configured as the original benchmark did:
//! `OC_EMBED_MODEL` (default `text-embedding-3-small`), `OC_EMBED_BASE_URL` and
//! `OC_EMBED_API_KEY`, falling back to `LLM_BASE_URL` and `LLM_API_KEY`. At most 100 texts per
//! request, results put back in order by `index`, a timeout, and retries.

use std::time::Duration;

use serde_json::{Value, json};

use super::{EmbedError, Embedder, Embeddings};
use crate::capabilities::http::SharedClient;
use crate::capabilities::llm::{ApiKey, ErrorKind, OPENAI_BASE_URL, RetryPolicy, retrying, setting};

/// The original's batch size.
pub const MAX_BATCH: usize = 100;
pub const TIMEOUT: Duration = Duration::from_secs(60);
/// Five retries, 1 s doubling to at most 60 s with jitter, and any wait a server asks for.
pub const RETRY: RetryPolicy = RetryPolicy {
    max_retries: 5,
    min_delay: Duration::from_secs(1),
    max_delay: Duration::from_secs(60),
    max_server_wait: Duration::MAX,
};

#[derive(Debug, Clone)]
pub struct RemoteConfig {
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    pub model: String,
}

impl RemoteConfig {
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| setting(&lookup, name);
        RemoteConfig {
            base_url: get("OC_EMBED_BASE_URL")
                .or_else(|| get("LLM_BASE_URL"))
                .unwrap_or_else(|| OPENAI_BASE_URL.to_string()),
            api_key: get("OC_EMBED_API_KEY").or_else(|| get("LLM_API_KEY")).map(ApiKey::new),
            model: get("OC_EMBED_MODEL").unwrap_or_else(|| "text-embedding-3-small".to_string()),
        }
    }
}

pub struct OpenAiEmbedder {
    client: SharedClient,
    config: RemoteConfig,
    model: String,
}

impl OpenAiEmbedder {
    pub fn new(client: SharedClient, config: RemoteConfig, model: String) -> Self {
        OpenAiEmbedder { client, config, model }
    }

    async fn batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let key = self.config.api_key.as_ref().ok_or(EmbedError::Remote(ErrorKind::NoKey {
            provider: "the embeddings endpoint".into(),
            variable: "OC_EMBED_API_KEY (or LLM_API_KEY)",
        }))?;
        let url = format!("{}/embeddings", self.config.base_url.trim_end_matches('/'));
        let body = json!({ "model": self.model, "input": texts });
        let client = crate::capabilities::llm::http::client(&self.client, "openai").map_err(EmbedError::Remote)?;
        let exchange = || {
            let request = client.post(&url).bearer_auth(key.expose()).json(&body);
            crate::capabilities::llm::http::exchange("openai", request, TIMEOUT)
        };
        let reply = retrying(&RETRY, exchange, |error| error).await.0.map_err(EmbedError::Remote)?;
        let mut data: Vec<(u64, Vec<f32>)> = reply
            .body
            .get("data")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|item| {
                        let index = item.get("index").and_then(Value::as_u64).unwrap_or(u64::MAX);
                        let vector = item
                            .get("embedding")
                            .and_then(Value::as_array)
                            .map(|values| values.iter().filter_map(Value::as_f64).map(|value| value as f32).collect());
                        (index, vector.unwrap_or_default())
                    })
                    .collect()
            })
            .unwrap_or_default();
        if data.len() != texts.len() {
            return Err(EmbedError::Count { sent: texts.len(), got: data.len() });
        }
        data.sort_by_key(|(index, _)| *index);
        Ok(data.into_iter().map(|(_, vector)| vector).collect())
    }
}

#[async_trait::async_trait]
impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> String {
        format!("openai:{}", self.model)
    }

    fn cache_scope(&self) -> String {
        format!("openai:{}@{}", self.model, self.config.base_url.trim_end_matches('/'))
    }

    async fn embed(&self, texts: Vec<String>, batch: Option<usize>) -> Result<Embeddings, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(batch.unwrap_or(MAX_BATCH).clamp(1, MAX_BATCH)) {
            vectors.extend(self.batch(chunk).await?);
        }
        let dimension = vectors.first().map_or(0, Vec::len);
        Ok(Embeddings { model: self.model_id(), dimension, vectors, cached: 0 })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::http::{Method, StatusCode};

    use super::*;
    use crate::capabilities::loopback::{Answer, Fault, Faults, Incoming, Play, Server, embeddings};

    /// Loopback's `POST /v1/embeddings` (one vector per input, listed last input first), after
    /// `failures` requests answered with `status`.
    struct Flaky {
        failures: usize,
        status: StatusCode,
        seen: AtomicUsize,
    }

    impl Play for Flaky {
        fn numbered(&self, _method: &Method, _path: &str) -> bool {
            false
        }

        fn answer(&self, request: &Incoming) -> Answer {
            embeddings(request)
        }

        fn error(&self, status: StatusCode, message: &str, _code: Option<&str>) -> Answer {
            Answer::json(status, &json!({"error": {"message": message}}))
        }

        fn fault(&self, _request: &Incoming) -> Option<Fault> {
            (self.seen.fetch_add(1, Ordering::SeqCst) < self.failures).then(|| Fault::status(self.status))
        }
    }

    async fn embeddings_server(failures: usize, status: StatusCode) -> Arc<Server> {
        let play = Arc::new(Flaky { failures, status, seen: AtomicUsize::new(0) });
        Server::start(play, Faults::default()).await.expect("the server starts")
    }

    fn embedder(server: &Server) -> OpenAiEmbedder {
        let base_url = format!("{}/v1", server.url());
        let config = RemoteConfig { base_url, api_key: Some(ApiKey::new("test-key")), model: "small".into() };
        OpenAiEmbedder::new(SharedClient::default(), config, "small".into())
    }

    #[tokio::test]
    async fn a_server_error_is_retried_and_the_vectors_come_back_in_the_inputs_order() {
        let server = embeddings_server(1, StatusCode::SERVICE_UNAVAILABLE).await;
        let embedded =
            embedder(&server).embed(vec!["a".into(), "bbb".into()], None).await.expect("embedded on the retry");
        assert_eq!(embedded.vectors, [[1.0, 97.0, 1.0], [3.0, 98.0, 1.0]]);
        assert_eq!(server.request_count(), 2, "one failure, one retry");
        assert!(server.requests().iter().all(|request| request.key_present && request.path == "/v1/embeddings"));
    }

    #[tokio::test]
    async fn a_request_the_server_rejects_is_not_sent_again() {
        let server = embeddings_server(1, StatusCode::BAD_REQUEST).await;
        let error = embedder(&server).embed(vec!["a".into()], None).await.expect_err("a 400 is final");
        assert!(matches!(error, EmbedError::Remote(_)), "{error}");
        assert_eq!(server.request_count(), 1);
    }
}
