//! The outermost layer: normalises requests, enforces the budget and a quota stop, prices
//! each call and writes it to the `llm_calls` table.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use super::{ChatRequest, ChatResponse, ErrorKind, Llm, LlmConfig, LlmError, Pricing};
use crate::capabilities::log::{Level, Log};
use crate::capabilities::results::Results;

pub const CALLS_TABLE: &str = "llm_calls";

pub struct MeteredLlm {
    inner: Arc<dyn Llm>,
    config: LlmConfig,
    pricing: Pricing,
    max_cost: Option<f64>,
    spent: Mutex<f64>,
    /// Set by a quota error: later calls fail at once instead of spending requests.
    quota: OnceLock<LlmError>,
    budget_announced: AtomicBool,
    declared: OnceLock<()>,
    results: Arc<dyn Results>,
    log: Arc<dyn Log>,
}

impl MeteredLlm {
    pub fn new(
        inner: Arc<dyn Llm>,
        config: LlmConfig,
        pricing: Pricing,
        max_cost: Option<f64>,
        results: Arc<dyn Results>,
        log: Arc<dyn Log>,
    ) -> Self {
        MeteredLlm {
            inner,
            config,
            pricing,
            max_cost,
            spent: Mutex::new(0.0),
            quota: OnceLock::new(),
            budget_announced: AtomicBool::new(false),
            declared: OnceLock::new(),
            results,
            log,
        }
    }

    fn spent(&self) -> f64 {
        self.spent.lock().map(|spent| *spent).unwrap_or(0.0)
    }

    fn check_budget(&self) -> Result<(), LlmError> {
        let Some(limit) = self.max_cost else { return Ok(()) };
        let spent = self.spent();
        if spent < limit {
            return Ok(());
        }
        let error = ErrorKind::Budget { limit, spent };
        if !self.budget_announced.swap(true, Ordering::Relaxed) {
            self.log.write(Level::Warn, &error.to_string());
        }
        Err(error.into())
    }

    fn record(&self, request: &ChatRequest, outcome: &Result<ChatResponse, LlmError>) {
        self.declared.get_or_init(|| {
            let columns = json!([
                ["call_id", "string"],
                ["role", "string"],
                ["key", "string"],
                ["provider", "string"],
                ["model", "string"],
                ["prompt_tokens", "int"],
                ["completion_tokens", "int"],
                ["latency_ms", "int"],
                ["retries", "int"],
                ["cache_hit", "bool"],
                ["cost_usd", "float"],
                ["error_kind", "string"],
                ["error", "string"]
            ]);
            if let Err(error) = self.results.declare(CALLS_TABLE, &columns) {
                self.log.write(Level::Warn, &format!("cannot declare `{CALLS_TABLE}`: {error}"));
            }
        });
        let (provider, model) = request.provider_and_model();
        let mut row = json!({
            "call_id": request.call_id(),
            "role": request.role,
            "key": request.key,
            "provider": provider,
            "model": model,
        });
        match outcome {
            Ok(response) => {
                let usage = response.usage;
                let cost = self.pricing.cost(provider, model, usage.prompt_tokens, usage.completion_tokens);
                if !response.cached
                    && let (Some(cost), Ok(mut spent)) = (cost, self.spent.lock())
                {
                    *spent += cost;
                }
                row["prompt_tokens"] = json!(usage.prompt_tokens);
                row["completion_tokens"] = json!(usage.completion_tokens);
                row["latency_ms"] = json!(response.latency_ms);
                row["retries"] = json!(response.retries);
                row["cache_hit"] = json!(response.cached);
                row["cost_usd"] = cost.map_or(Value::Null, |cost| json!(cost));
            }
            Err(error) => {
                row["retries"] = json!(error.retries);
                row["cache_hit"] = json!(false);
                row["error_kind"] = json!(error.kind.name());
                row["error"] = json!(error.to_string());
            }
        }
        if let Err(error) = self.results.append(CALLS_TABLE, row) {
            self.log.write(Level::Warn, &format!("cannot record an LLM call in `{CALLS_TABLE}`: {error}"));
        }
    }
}

#[async_trait::async_trait]
impl Llm for MeteredLlm {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let request = self.config.normalize(request)?;
        if let Some(error) = self.quota.get() {
            return Err(error.clone());
        }
        if let Err(error) = self.check_budget() {
            self.record(&request, &Err(error.clone()));
            return Err(error);
        }
        let outcome = self.inner.chat(request.clone()).await;
        self.record(&request, &outcome);
        if let Err(error) = &outcome
            && error.kind.is_fatal()
        {
            let _ = self.quota.set(error.clone());
        }
        outcome
    }
}
