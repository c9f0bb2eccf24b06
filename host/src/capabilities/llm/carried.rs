//! The answers a run carries. Every LLM answer a run used, fresh or replayed, is a row of its
//! `llm_answers` table (the request's cache key, the request and the answer as JSON), so a run
//! directory can be replayed without the cache it was made with: `--llm-seed RUN_DIR` serves a
//! finished run's answers before the cache is asked. A merged run's table is every shard's, so
//! one folder seeds a rerun of the whole sharded run anywhere.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::json;

use super::{ChatRequest, ChatResponse};
use crate::capabilities::log::{Level, Log};
use crate::capabilities::results::Results;

pub const ANSWERS_TABLE: &str = "llm_answers";

#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error(
        "`{run}` has no `{ANSWERS_TABLE}.parquet`; hint: seed from a run that made LLM calls, with host 0.1 or later"
    )]
    NoAnswers { run: PathBuf },
    #[error("cannot read the answers of `{run}`")]
    Read {
        run: PathBuf,
        #[source]
        source: crate::capabilities::results::TableError,
    },
    #[error("`{run}`'s `{ANSWERS_TABLE}` row {row}: {problem}")]
    Row { run: PathBuf, row: usize, problem: String },
}

/// Answers recorded by finished runs, by cache key; the first run given wins a key.
#[derive(Debug, Default)]
pub struct Seeds(HashMap<String, ChatResponse>);

impl Seeds {
    pub fn load(runs: &[PathBuf]) -> Result<Seeds, SeedError> {
        let mut answers = HashMap::new();
        for run in runs {
            let path = run.join(format!("{ANSWERS_TABLE}.parquet"));
            if !path.is_file() {
                return Err(SeedError::NoAnswers { run: run.clone() });
            }
            let rows = crate::capabilities::results::read_rows(ANSWERS_TABLE, &path)
                .map_err(|source| SeedError::Read { run: run.clone(), source })?;
            for (index, row) in rows.into_iter().enumerate() {
                let problem = |problem: String| SeedError::Row { run: run.clone(), row: index + 1, problem };
                let key = row["key"].as_str().ok_or_else(|| problem("no `key`".into()))?.to_string();
                let text = row["response"].as_str().ok_or_else(|| problem("no `response`".into()))?;
                let response: ChatResponse = serde_json::from_str(text)
                    .map_err(|error| problem(format!("`response` is not an answer: {error}")))?;
                answers.entry(key).or_insert(response);
            }
        }
        Ok(Seeds(answers))
    }

    pub fn get(&self, key: &str) -> Option<&ChatResponse> {
        self.0.get(key)
    }
}

/// Writes each answer the run used into its `llm_answers` table, once per key.
pub struct Carried {
    results: Arc<dyn Results>,
    log: Arc<dyn Log>,
    declared: OnceLock<()>,
    seen: Mutex<HashSet<String>>,
}

impl Carried {
    pub fn new(results: Arc<dyn Results>, log: Arc<dyn Log>) -> Self {
        Carried { results, log, declared: OnceLock::new(), seen: Mutex::new(HashSet::new()) }
    }

    pub fn record(&self, key: &str, request: &ChatRequest, response: &ChatResponse) {
        let first = self.seen.lock().map(|mut seen| seen.insert(key.to_string())).unwrap_or(false);
        if !first {
            return;
        }
        self.declared.get_or_init(|| {
            let columns =
                json!([["key", "string"], ["call_id", "string"], ["request", "string"], ["response", "string"]]);
            if let Err(error) = self.results.declare(ANSWERS_TABLE, &columns) {
                self.log.write(Level::Warn, &format!("cannot declare `{ANSWERS_TABLE}`: {error}"));
            }
        });
        let stored = ChatResponse { cached: false, retries: 0, ..response.clone() };
        let row = json!({
            "key": key,
            "call_id": request.call_id(),
            "request": serde_json::to_string(request).unwrap_or_default(),
            "response": serde_json::to_string(&stored).unwrap_or_default(),
        });
        if let Err(error) = self.results.append(ANSWERS_TABLE, row) {
            self.log.write(Level::Warn, &format!("cannot carry an LLM answer in `{ANSWERS_TABLE}`: {error}"));
        }
    }
}
