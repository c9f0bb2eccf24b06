//! The `llm` capability: chat completions from OpenAI-compatible servers and Anthropic.
//!
//! One async trait, [`Llm`]. Providers implement it over HTTP; every policy is a wrapper that
//! implements it too, so scripts and guests get the same behaviour. The stack, outermost first:
//! [`MeteredLlm`] (budget, call log, cost) → [`CachedLlm`] (record/replay) → [`RetryingLlm`]
//! (backoff, `Retry-After`, the batch's window) → [`LimitedLlm`] (concurrency, requests and
//! tokens per minute, each attempt counted) → [`ProviderRouter`] → [`OpenAiLlm`] /
//! [`AnthropicLlm`].

mod anthropic;
mod cache;
pub mod carried;
mod config;
mod error;
pub(crate) mod http;
mod limits;
mod metered;
mod openai;
mod pricing;
mod retry;
pub mod rhai;
mod router;
pub mod wasm;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use anthropic::AnthropicLlm;
pub use cache::{CacheMode, CachedLlm};
pub use config::{ANTHROPIC_BASE_URL, ApiKey, Endpoint, LlmConfig, OPENAI_BASE_URL, setting};
pub use error::{ErrorKind, LlmError};
pub use limits::{LimitedLlm, RateLimits};
pub use metered::MeteredLlm;
pub use openai::OpenAiLlm;
pub use pricing::{Price, Pricing};
pub use retry::{RetryPolicy, RetryingLlm, retrying};
pub use router::{ProviderRouter, Route};

/// Defaults from the original benchmark's generic LLM call.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
pub const DEFAULT_TEMPERATURE: f64 = 0.0;
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 60.0;

/// One chat message.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    pub content: String,
}

/// What a script or guest asks for. Only `messages` is required.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct ChatRequest {
    /// `openai:<model>`, `anthropic:<model>`, or a bare name for the OpenAI-compatible server;
    /// default `LLM_MODEL` (or `JUDGE_MODEL` when `role` is `judge`).
    #[serde(default)]
    pub model: Option<String>,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Tells otherwise identical calls apart in the cache (judge pass 1, 2, 3, ...).
    #[serde(default)]
    pub key: Option<String>,
    /// What the call is for (`extractor`, `answerer`, `judge`, ...): recorded in `llm_calls`;
    /// `judge` also selects the `JUDGE_*` settings.
    #[serde(default)]
    pub role: Option<String>,
    /// Seconds before the call is abandoned (and retried); default 60.
    #[serde(default)]
    pub timeout_s: Option<f64>,
    /// Nucleus sampling, sent to the provider only when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// OpenAI's `response_format` (as `{"type": "json_object"}`), sent as given to
    /// OpenAI-compatible servers; Anthropic's API has none, so it is not sent there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<serde_json::Value>,
}

impl ChatRequest {
    /// The content-address of this call: provider, model, messages, sampling and `key`. Role
    /// and timeout do not change the answer, so they are not part of it.
    pub fn fingerprint(&self) -> String {
        let mut identity = serde_json::json!({
            "model": self.model,
            "messages": self.messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "key": self.key,
        });
        // Only when set, so that every call made before these fields existed keeps its key.
        if let Some(top_p) = self.top_p {
            identity["top_p"] = serde_json::json!(top_p);
        }
        if let Some(format) = &self.response_format {
            identity["response_format"] = format.clone();
        }
        hex::encode(Sha256::digest(identity.to_string().as_bytes()))
    }

    /// The record/replay key: [`Self::fingerprint`] and the base URL of the server that answers,
    /// so that pointing `LLM_BASE_URL` at another server never replays the first one's answers.
    pub fn cache_key(&self, base_url: &str) -> String {
        let identity = serde_json::json!({ "fingerprint": self.fingerprint(), "base_url": base_url });
        hex::encode(Sha256::digest(identity.to_string().as_bytes()))
    }

    /// A stable id for logs and tables: the first 16 hex digits of the fingerprint.
    pub fn call_id(&self) -> String {
        self.fingerprint().chars().take(16).collect()
    }

    pub fn timeout(&self) -> std::time::Duration {
        let seconds = self.timeout_s.filter(|seconds| seconds.is_finite() && *seconds > 0.0);
        std::time::Duration::from_secs_f64(seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS))
    }

    /// `(provider, model)` of a normalised request (`openai:gpt-4o-mini` → `("openai", "gpt-4o-mini")`).
    pub fn provider_and_model(&self) -> (&str, &str) {
        let model = self.model.as_deref().unwrap_or_default();
        model.split_once(':').unwrap_or(("openai", model))
    }
}

/// Token counts as the provider reported them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// A model's answer and what it took.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ChatResponse {
    pub text: String,
    pub usage: Usage,
    pub latency_ms: u64,
    pub provider: String,
    pub model: String,
    pub call_id: String,
    /// Served from the record/replay cache, without a request.
    pub cached: bool,
    pub retries: u32,
}

/// Chat completions. Object safe; providers and policies implement it alike.
#[async_trait::async_trait]
pub trait Llm: Send + Sync {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError>;
}

/// Everything that shapes the stack besides the environment.
#[derive(Debug, Clone)]
pub struct LlmSettings {
    pub cache_dir: std::path::PathBuf,
    pub cache_mode: CacheMode,
    pub limits: RateLimits,
    pub retry: RetryPolicy,
    pub max_cost: Option<f64>,
    pub pricing: Pricing,
    /// Finished runs' answers, replayed before the cache (`--llm-seed`).
    pub seeds: std::sync::Arc<carried::Seeds>,
}

/// The full stack, outermost first: metered → cached → retrying → limited → provider router.
/// The limits sit below the retries so that a call waiting to retry holds no permit, and every
/// attempt counts against the requests and tokens per minute.
pub fn stack(
    config: LlmConfig,
    settings: &LlmSettings,
    results: std::sync::Arc<dyn crate::capabilities::results::Results>,
    log: std::sync::Arc<dyn crate::capabilities::log::Log>,
    client: crate::capabilities::http::SharedClient,
) -> std::sync::Arc<dyn Llm> {
    use std::sync::Arc;
    let router: Arc<dyn Llm> = Arc::new(ProviderRouter::new(&config, client));
    let limited: Arc<dyn Llm> = Arc::new(LimitedLlm::new(router, settings.limits));
    let retrying: Arc<dyn Llm> = Arc::new(RetryingLlm::new(limited, settings.retry));
    let carried = carried::Carried::new(results.clone(), log.clone());
    let cached: Arc<dyn Llm> = Arc::new(
        CachedLlm::new(retrying, &settings.cache_dir, settings.cache_mode, config.clone(), log.clone())
            .with_runs(settings.seeds.clone(), carried),
    );
    Arc::new(MeteredLlm::new(cached, config, settings.pricing.clone(), settings.max_cost, results, log))
}

/// `llm::` for scripts, and `host:llm` for guests.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "llm",
    rhai: |capabilities| {
        rhai::module(capabilities.llm.clone(), capabilities.progress.clone(), capabilities.runtime.clone())
    },
    types: |_| {},
    guest: Some(|imports, guest, op, input| Box::pin(wasm::call(imports.llm.as_ref(), guest, op, input))),
    finish: |_, _| {},
    scratch: None,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(text: &str) -> ChatRequest {
        ChatRequest { messages: vec![Message { role: "user".into(), content: text.into() }], ..ChatRequest::default() }
    }

    #[test]
    fn a_request_without_a_response_format_keeps_the_cache_key_it_had_before_the_field_existed() {
        let request = asking("hi");
        let before = serde_json::json!({
            "model": null, "messages": [{"role": "user", "content": "hi"}], "temperature": null, "max_tokens": null, "key": null,
        });
        assert_eq!(request.fingerprint(), hex::encode(Sha256::digest(before.to_string().as_bytes())));
    }

    #[test]
    fn a_response_format_or_top_p_is_part_of_what_tells_calls_apart() {
        let json = ChatRequest { response_format: Some(serde_json::json!({"type": "json_object"})), ..asking("hi") };
        assert_ne!(json.fingerprint(), asking("hi").fingerprint());
        let nucleus = ChatRequest { top_p: Some(0.1), ..asking("hi") };
        assert_ne!(nucleus.fingerprint(), asking("hi").fingerprint());
    }
}
