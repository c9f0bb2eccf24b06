//! OpenAI-compatible `POST {base}/embeddings`, configured as the original benchmark did:
//! `OC_EMBED_MODEL` (default `text-embedding-3-small`), `OC_EMBED_BASE_URL` and
//! `OC_EMBED_API_KEY`, falling back to `LLM_BASE_URL` and `LLM_API_KEY`. At most 100 texts per
//! request, results put back in order by `index`, a timeout, and retries.

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use serde_json::{Value, json};

use super::{EmbedError, Embedder, Embeddings};
use crate::capabilities::http::SharedClient;
use crate::capabilities::llm::{ApiKey, ErrorKind, OPENAI_BASE_URL, setting};

/// The original's batch size.
pub const MAX_BATCH: usize = 100;
pub const TIMEOUT: Duration = Duration::from_secs(60);
pub const MAX_RETRIES: usize = 5;

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
        let mut backoff = ExponentialBuilder::default().with_jitter().with_max_times(MAX_RETRIES).build();
        let client = crate::capabilities::llm::http::client(&self.client, "openai").map_err(EmbedError::Remote)?;
        let reply = loop {
            let request = client.post(&url).bearer_auth(key.expose()).json(&body);
            match crate::capabilities::llm::http::exchange("openai", request, TIMEOUT).await {
                Ok(reply) => break reply,
                Err(error) => match backoff.next() {
                    Some(delay) if error.is_retryable() => {
                        tokio::time::sleep(error.retry_after().map_or(delay, |asked| asked.max(delay))).await;
                    }
                    _ => return Err(EmbedError::Remote(error)),
                },
            }
        };
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
