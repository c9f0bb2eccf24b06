//! Record/replay: every answer is stored under the key of its request (provider, model,
//! messages, sampling, caller key, and the base URL of the server that answers it), so a rerun
//! gets identical answers without a request, an interrupted run resumes where it stopped, and
//! `--offline` replays a recorded run exactly.
//!
//! Entries are written atomically (temporary file, then rename); an entry that does not parse is
//! reported once, then treated as a miss and rewritten. API keys are never part of an entry.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::carried::{Carried, Seeds};
use super::{ChatRequest, ChatResponse, ErrorKind, Llm, LlmConfig, LlmError, Route};
use crate::capabilities::log::{Level, Log};

/// How the cache is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheMode {
    /// Replay hits, record misses (the default).
    ReadWrite,
    /// Replay hits; misses go to the network and are not recorded.
    ReadOnly,
    /// Neither replay nor record.
    Off,
    /// Replay hits; a miss is an error, and nothing goes to the network.
    Offline,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    request: ChatRequest,
    response: ChatResponse,
}

pub struct CachedLlm {
    inner: Arc<dyn Llm>,
    dir: PathBuf,
    mode: CacheMode,
    /// Where each request would go: its server's base URL is part of the key.
    config: LlmConfig,
    log: Arc<dyn Log>,
    /// Finished runs' answers, asked before the cache (`--llm-seed`).
    seeds: Arc<Seeds>,
    /// The run's own record of every answer it used.
    carried: Option<Carried>,
}

impl CachedLlm {
    pub fn new(inner: Arc<dyn Llm>, dir: &Path, mode: CacheMode, config: LlmConfig, log: Arc<dyn Log>) -> Self {
        CachedLlm { inner, dir: dir.to_path_buf(), mode, config, log, seeds: Arc::default(), carried: None }
    }

    /// Answers from `seeds` first, and each answer the run uses written to its `llm_answers` table.
    pub fn with_runs(mut self, seeds: Arc<Seeds>, carried: Carried) -> Self {
        self.seeds = seeds;
        self.carried = Some(carried);
        self
    }

    fn carry(&self, key: &str, request: &ChatRequest, response: &ChatResponse) {
        if let Some(carried) = &self.carried {
            carried.record(key, request, response);
        }
    }

    fn path(&self, fingerprint: &str) -> PathBuf {
        let shard: String = fingerprint.chars().take(2).collect();
        self.dir.join(shard).join(format!("{fingerprint}.json"))
    }

    fn lookup(&self, path: &Path) -> Option<ChatResponse> {
        let bytes = std::fs::read(path).ok()?;
        match serde_json::from_slice::<Entry>(&bytes) {
            Ok(entry) => Some(entry.response),
            Err(error) => {
                self.log.write(
                    Level::Warn,
                    &format!("corrupt LLM cache entry `{}` ({error}); calling again", path.display()),
                );
                None
            }
        }
    }

    fn record(&self, path: &Path, request: &ChatRequest, response: &ChatResponse) {
        let entry = Entry {
            request: request.clone(),
            response: ChatResponse { cached: false, retries: 0, ..response.clone() },
        };
        let written = serde_json::to_vec_pretty(&entry)
            .map_err(std::io::Error::other)
            .and_then(|bytes| crate::atomic::write(path, &bytes));
        if let Err(error) = written {
            self.log.write(Level::Warn, &format!("cannot record LLM answer in `{}`: {error}", path.display()));
        }
    }
}

#[async_trait::async_trait]
impl Llm for CachedLlm {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let base_url = &Route::of(&request).endpoint(&self.config).base_url;
        let key = request.cache_key(base_url);
        if self.mode == CacheMode::Off {
            let response = self.inner.chat(request.clone()).await?;
            self.carry(&key, &request, &response);
            return Ok(response);
        }
        if let Some(response) = self.seeds.get(&key) {
            self.carry(&key, &request, response);
            return Ok(ChatResponse { cached: true, retries: 0, ..response.clone() });
        }
        let path = self.path(&key);
        if let Some(response) = self.lookup(&path) {
            self.carry(&key, &request, &response);
            return Ok(ChatResponse { cached: true, retries: 0, ..response });
        }
        if self.mode == CacheMode::Offline {
            let preview: String =
                request.messages.last().map(|m| m.content.chars().take(60).collect()).unwrap_or_default();
            let model = request.model.clone().unwrap_or_default();
            return Err(ErrorKind::OfflineMiss { call_id: request.call_id(), model, preview }.into());
        }
        let response = self.inner.chat(request.clone()).await?;
        if self.mode == CacheMode::ReadWrite {
            self.record(&path, &request, &response);
        }
        self.carry(&key, &request, &response);
        Ok(response)
    }
}
