//! Sends a normalised request to the provider its model names.

use super::config::Endpoint;
use super::{AnthropicLlm, ChatRequest, ChatResponse, Llm, LlmConfig, LlmError, OpenAiLlm};
use crate::capabilities::http::SharedClient;

/// The bottom of the stack: one backend per endpoint.
#[derive(Debug)]
pub struct ProviderRouter {
    llm: OpenAiLlm,
    judge: OpenAiLlm,
    anthropic: AnthropicLlm,
}

impl ProviderRouter {
    pub fn new(config: &LlmConfig, client: SharedClient) -> Self {
        ProviderRouter {
            llm: OpenAiLlm::new(client.clone(), config.llm.clone()),
            judge: OpenAiLlm::new(client.clone(), config.judge.clone()),
            anthropic: AnthropicLlm::new(client, config.anthropic.clone()),
        }
    }
}

/// Which endpoint serves a normalised request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `LLM_*`: the OpenAI-compatible server.
    Llm,
    /// `JUDGE_*`: the judge's server.
    Judge,
    /// `ANTHROPIC_*`, for `anthropic:` models.
    Anthropic,
}

impl Route {
    pub fn of(request: &ChatRequest) -> Route {
        match (request.provider_and_model().0, request.role.as_deref()) {
            ("anthropic", _) => Route::Anthropic,
            (_, Some("judge")) => Route::Judge,
            _ => Route::Llm,
        }
    }

    pub fn endpoint(self, config: &LlmConfig) -> &Endpoint {
        match self {
            Route::Llm => &config.llm,
            Route::Judge => &config.judge,
            Route::Anthropic => &config.anthropic,
        }
    }
}

#[async_trait::async_trait]
impl Llm for ProviderRouter {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        match Route::of(&request) {
            Route::Anthropic => self.anthropic.chat(request).await,
            Route::Judge => self.judge.chat(request).await,
            Route::Llm => self.llm.chat(request).await,
        }
    }
}
