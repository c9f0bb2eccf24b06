//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions` with a Bearer key. Works
//! with any server that speaks the protocol (vLLM, llama.cpp, LiteLLM, Ollama, ...).

use serde_json::{Value, json};

use super::http::{client, exchange};
use super::{ChatRequest, ChatResponse, Endpoint, ErrorKind, Llm, LlmError, Usage};
use crate::capabilities::http::SharedClient;

#[derive(Debug, Clone)]
pub struct OpenAiLlm {
    client: SharedClient,
    endpoint: Endpoint,
}

impl OpenAiLlm {
    pub fn new(client: SharedClient, endpoint: Endpoint) -> Self {
        OpenAiLlm { client, endpoint }
    }
}

#[async_trait::async_trait]
impl Llm for OpenAiLlm {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let key = self.endpoint.api_key.as_ref().ok_or(ErrorKind::NoKey {
            provider: "the OpenAI-compatible server".into(),
            variable: self.endpoint.key_variable,
        })?;
        let (_, model) = request.provider_and_model();
        let mut body = json!({
            "model": model,
            "messages": request.messages,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        });
        if let Some(top_p) = request.top_p {
            body["top_p"] = json!(top_p);
        }
        if let Some(format) = &request.response_format {
            body["response_format"] = format.clone();
        }
        let url = format!("{}/chat/completions", self.endpoint.base_url.trim_end_matches('/'));
        let http = client(&self.client, "openai")?.post(url).bearer_auth(key.expose()).json(&body);
        let reply = exchange("openai", http, request.timeout()).await?;
        let text = reply.body.pointer("/choices/0/message/content").and_then(Value::as_str);
        let text = text.filter(|text| !text.is_empty()).ok_or(ErrorKind::NoContent { provider: "openai".into() })?;
        let count = |pointer: &str| reply.body.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
        Ok(ChatResponse {
            text: text.to_string(),
            usage: Usage {
                prompt_tokens: count("/usage/prompt_tokens"),
                completion_tokens: count("/usage/completion_tokens"),
            },
            latency_ms: reply.latency_ms,
            provider: "openai".into(),
            model: model.to_string(),
            call_id: request.call_id(),
            cached: false,
            retries: 0,
        })
    }
}
