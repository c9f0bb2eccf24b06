//! Retries transient failures with exponential backoff and jitter, waiting at least as long as
//! the server asked (`Retry-After`, `x-ratelimit-reset*`). In a batch, each attempt holds a slot
//! of the batch's [`Window`] and a wait holds none.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};

use super::{ChatRequest, ChatResponse, ErrorKind, Llm, LlmError};
use crate::capabilities::batch::Window;

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
        let (outcome, retries) = retrying(&self.policy, || self.inner.chat(request.clone()), |error| &error.kind).await;
        match outcome {
            Ok(mut response) => {
                response.retries = retries;
                Ok(response)
            }
            Err(mut error) => {
                error.retries = retries;
                Err(error)
            }
        }
    }
}

/// Calls `attempt` until it succeeds, fails in a way retrying cannot mend, or `policy`'s retries
/// run out, and says how many retries that took. Between attempts it waits the backoff's delay,
/// or the wait the server asked for (`kind` reads it from the error) when that is longer. The
/// one retry loop of the providers: chat calls and remote embeddings.
pub async fn retrying<T, E, F>(
    policy: &RetryPolicy,
    mut attempt: impl FnMut() -> F,
    kind: impl Fn(&E) -> &ErrorKind,
) -> (Result<T, E>, u32)
where
    F: Future<Output = Result<T, E>>,
{
    let mut backoff = ExponentialBuilder::default()
        .with_min_delay(policy.min_delay)
        .with_max_delay(policy.max_delay)
        .with_jitter()
        .with_max_times(policy.max_retries as usize)
        .build();
    let mut retries = 0;
    let window = Window::current();
    loop {
        let slot = match &window {
            Some(window) => Some(window.slot().await),
            None => None,
        };
        let outcome = attempt().await;
        drop(slot);
        let error = match outcome {
            Ok(value) => return (Ok(value), retries),
            Err(error) => error,
        };
        let delay = match backoff.next() {
            Some(delay) if kind(&error).is_retryable() => delay,
            _ => return (Err(error), retries),
        };
        let asked = kind(&error).retry_after().map(|wait| wait.min(policy.max_server_wait));
        let waiting = window.as_ref().map(Window::wait);
        tokio::time::sleep(asked.map_or(delay, |asked| asked.max(delay))).await;
        drop(waiting);
        retries += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::capabilities::llm::{ErrorKind, Message};

    /// Answers every call at once, except the first attempt of the call saying "limited":
    /// a 429 that asks for a wait of 2 s. Records the order calls were answered in.
    #[derive(Default)]
    struct RateLimitedOnce {
        limited: Mutex<bool>,
        answered: Mutex<Vec<String>>,
    }

    #[async_trait::async_trait]
    impl Llm for RateLimitedOnce {
        async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
            let text = request.messages[0].content.clone();
            if text == "limited" && !std::mem::replace(&mut *self.limited.lock().expect("lock"), true) {
                let retry_after = Some(Duration::from_secs(2));
                return Err(ErrorKind::Http {
                    provider: "openai".into(),
                    status: 429,
                    body: String::new(),
                    retry_after,
                }
                .into());
            }
            self.answered.lock().expect("lock").push(text.clone());
            Ok(ChatResponse { text, ..ChatResponse::default() })
        }
    }

    fn asking(text: &str) -> ChatRequest {
        ChatRequest { messages: vec![Message { role: "user".into(), content: text.into() }], ..ChatRequest::default() }
    }

    #[tokio::test]
    async fn in_a_batch_a_call_waiting_on_retry_after_lets_the_next_call_through() {
        let inner = Arc::new(RateLimitedOnce::default());
        let retrying = RetryingLlm::new(inner.clone(), RetryPolicy::default());
        let window = Window::new(1, None);
        let (first, second) =
            tokio::join!(window.scope(retrying.chat(asking("limited"))), window.scope(retrying.chat(asking("next"))));
        assert_eq!(first.expect("answered after its retry").retries, 1);
        assert_eq!(second.expect("answered").retries, 0);
        let answered = inner.answered.lock().expect("lock").clone();
        assert_eq!(answered, ["next", "limited"], "the second call ran while the first waited");
    }
}
