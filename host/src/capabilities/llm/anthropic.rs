//! Anthropic Messages: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`.
//! System messages go to the top-level `system` field, as the protocol requires.

use serde_json::{Value, json};

use super::http::{client, exchange};
use super::{ChatRequest, ChatResponse, Endpoint, ErrorKind, Llm, LlmError, Usage};
use crate::capabilities::http::SharedClient;

pub const ANTHROPIC_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone)]
pub struct AnthropicLlm {
    client: SharedClient,
    endpoint: Endpoint,
}

impl AnthropicLlm {
    pub fn new(client: SharedClient, endpoint: Endpoint) -> Self {
        AnthropicLlm { client, endpoint }
    }
}

#[async_trait::async_trait]
impl Llm for AnthropicLlm {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let key = self
            .endpoint
            .api_key
            .as_ref()
            .ok_or(ErrorKind::NoKey { provider: "Anthropic".into(), variable: self.endpoint.key_variable })?;
        let (_, model) = request.provider_and_model();
        let system: Vec<&str> =
            request.messages.iter().filter(|m| m.role == "system").map(|m| m.content.as_str()).collect();
        let turns: Vec<&super::Message> = request.messages.iter().filter(|m| m.role != "system").collect();
        let mut body = json!({
            "model": model,
            "messages": turns,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        });
        if !system.is_empty() {
            body["system"] = Value::String(system.join("\n\n"));
        }
        if let Some(top_p) = request.top_p {
            body["top_p"] = json!(top_p);
        }
        let url = format!("{}/v1/messages", self.endpoint.base_url.trim_end_matches('/'));
        let http = client(&self.client, "anthropic")?
            .post(url)
            .header("x-api-key", key.expose())
            .header("anthropic-version", ANTHROPIC_VERSION)
            .json(&body);
        let reply = exchange("anthropic", http, request.timeout()).await?;
        let blocks = reply.body.get("content").and_then(Value::as_array).cloned().unwrap_or_default();
        let text: String = blocks
            .iter()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        if text.is_empty() {
            return Err(ErrorKind::NoContent { provider: "anthropic".into() }.into());
        }
        let count = |pointer: &str| reply.body.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        Ok(ChatResponse {
            text,
            usage: Usage {
                prompt_tokens: count("/usage/input_tokens"),
                completion_tokens: count("/usage/output_tokens"),
            },
            latency_ms: reply.latency_ms,
            provider: "anthropic".into(),
            model: model.to_string(),
            call_id: request.call_id(),
            cached: false,
            retries: 0,
        })
    }
}
