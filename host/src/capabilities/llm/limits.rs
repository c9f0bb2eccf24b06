//! Per-provider throttles: requests in flight, requests per minute and tokens per minute.
//!
//! Tokens are estimated before the call (prompt characters / 4 + `max_tokens`), since the real
//! count is only known afterwards; the estimate errs on the side of waiting.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use tokio::sync::Semaphore;

use super::{ChatRequest, ChatResponse, Llm, LlmError};

/// Limits applied to each provider separately. `None` means unlimited.
#[derive(Debug, Clone, Copy)]
pub struct RateLimits {
    pub concurrency: usize,
    pub requests_per_minute: Option<NonZeroU32>,
    pub tokens_per_minute: Option<NonZeroU32>,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits { concurrency: 32, requests_per_minute: None, tokens_per_minute: None }
    }
}

struct Throttle {
    in_flight: Semaphore,
    requests: Option<DefaultDirectRateLimiter>,
    tokens: Option<(DefaultDirectRateLimiter, NonZeroU32)>,
}

pub struct LimitedLlm {
    inner: Arc<dyn Llm>,
    throttles: HashMap<&'static str, Throttle>,
}

impl LimitedLlm {
    pub fn new(inner: Arc<dyn Llm>, limits: RateLimits) -> Self {
        let throttle = || Throttle {
            in_flight: Semaphore::new(limits.concurrency.max(1)),
            requests: limits.requests_per_minute.map(|rpm| RateLimiter::direct(Quota::per_minute(rpm))),
            tokens: limits.tokens_per_minute.map(|tpm| (RateLimiter::direct(Quota::per_minute(tpm)), tpm)),
        };
        let throttles = HashMap::from([("openai", throttle()), ("anthropic", throttle())]);
        LimitedLlm { inner, throttles }
    }
}

fn estimated_tokens(request: &ChatRequest) -> u32 {
    let characters: usize = request.messages.iter().map(|message| message.content.len()).sum();
    let estimate = characters / 4 + request.max_tokens.unwrap_or(0) as usize;
    u32::try_from(estimate).unwrap_or(u32::MAX).max(1)
}

#[async_trait::async_trait]
impl Llm for LimitedLlm {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let provider = request.provider_and_model().0;
        let Some(throttle) = self.throttles.get(provider) else {
            return self.inner.chat(request).await;
        };
        // The semaphore is never closed, so acquiring only fails if that invariant breaks;
        // then the call simply goes ahead unthrottled.
        let _permit = throttle.in_flight.acquire().await.ok();
        if let Some(requests) = &throttle.requests {
            requests.until_ready().await;
        }
        if let Some((tokens, capacity)) = &throttle.tokens {
            // A single call larger than a minute's budget waits for a full minute's worth.
            let wanted = NonZeroU32::new(estimated_tokens(&request).min(capacity.get())).unwrap_or(NonZeroU32::MIN);
            let _ = tokens.until_n_ready(wanted).await;
        }
        self.inner.chat(request).await
    }
}
