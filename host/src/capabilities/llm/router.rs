//! Sends a normalised request to the provider its model names.

use super::{AnthropicLlm, ChatRequest, ChatResponse, Llm, LlmConfig, LlmError, OpenAiLlm};

/// The bottom of the stack: one backend per endpoint.
#[derive(Debug)]
pub struct ProviderRouter {
    llm: OpenAiLlm,
    judge: OpenAiLlm,
    anthropic: AnthropicLlm,
}

impl ProviderRouter {
    pub fn new(config: &LlmConfig, client: reqwest::Client) -> Self {
        ProviderRouter {
            llm: OpenAiLlm::new(client.clone(), config.llm.clone()),
            judge: OpenAiLlm::new(client.clone(), config.judge.clone()),
            anthropic: AnthropicLlm::new(client, config.anthropic.clone()),
        }
    }
}

#[async_trait::async_trait]
impl Llm for ProviderRouter {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        match (request.provider_and_model().0, request.role.as_deref()) {
            ("anthropic", _) => self.anthropic.chat(request).await,
            (_, Some("judge")) => self.judge.chat(request).await,
            _ => self.llm.chat(request).await,
        }
    }
}
