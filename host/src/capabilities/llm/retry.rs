//! Retries transient failures with exponential backoff and jitter, waiting at least as long as
//! the server asked (`Retry-After`, `x-ratelimit-reset*`).

use std::sync::Arc;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};

use super::{ChatRequest, ChatResponse, Llm, LlmError};

#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub min_delay: Duration,
    pub max_delay: Duration,
    /// A server's requested wait is honoured up to this long.
    pub max_server_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 5,
            min_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_server_wait: Duration::from_secs(120),
        }
    }
}

pub struct RetryingLlm {
    inner: Arc<dyn Llm>,
    policy: RetryPolicy,
}

impl RetryingLlm {
    pub fn new(inner: Arc<dyn Llm>, policy: RetryPolicy) -> Self {
        RetryingLlm { inner, policy }
    }
}

#[async_trait::async_trait]
impl Llm for RetryingLlm {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut backoff = ExponentialBuilder::default()
            .with_min_delay(self.policy.min_delay)
            .with_max_delay(self.policy.max_delay)
            .with_jitter()
            .with_max_times(self.policy.max_retries as usize)
            .build();
        let mut retries = 0;
        loop {
            match self.inner.chat(request.clone()).await {
                Ok(mut response) => {
                    response.retries = retries;
                    return Ok(response);
                }
                Err(mut error) => {
                    let delay = match backoff.next() {
                        Some(delay) if error.kind.is_retryable() => delay,
                        _ => {
                            error.retries = retries;
                            return Err(error);
                        }
                    };
                    let asked = error.kind.retry_after().map(|wait| wait.min(self.policy.max_server_wait));
                    tokio::time::sleep(asked.map_or(delay, |asked| asked.max(delay))).await;
                    retries += 1;
                }
            }
        }
    }
}
