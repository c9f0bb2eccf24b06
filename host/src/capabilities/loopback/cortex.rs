//! The Cortex memory API, played as its OpenClaw plugin calls it: health, stats, knowledge, the
//! account link and warmup; retrieval and recall ranked by word overlap ([`Memories`]); and
//! capture, a conversation ingested as a job that is done at once. Faults are the server's modes
//! (`set_mode`), not numbered requests; error bodies are Cortex's `{"error": …}`.

use std::sync::{Mutex, MutexGuard, PoisonError};

use axum::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::LoopbackError;
use super::memories::{Memories, Memory};
use super::modes::{Mode, ModeSpec};
use super::server::{Answer, Incoming, Play};
use super::wire::{JSON, bytes};

const INGEST: &str = "/v1/jobs/ingest/conversation";
const JOBS: &str = "/v1/jobs/";

/// How many memories `/v1/retrieve` and `/v1/recall` return when the request does not say.
const DEFAULT_TOP_K: usize = 10;

/// What `loopback::cortex` is given.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CortexScript {
    /// Memories held from the start, one fact each.
    #[serde(default)]
    pub facts: Vec<String>,
    /// The `pipeline_tier` that `/v1/stats` reports.
    #[serde(default = "default_tier")]
    pub tier: u32,
    /// The mode the server starts in.
    #[serde(default)]
    pub mode: ModeSpec,
}

fn default_tier() -> u32 {
    1
}

pub struct CortexPlay {
    tier: u32,
    memories: Mutex<Memories>,
}

impl CortexPlay {
    /// The play and the mode it starts in.
    pub fn new(script: CortexScript) -> Result<(Self, Mode), LoopbackError> {
        let mode = Mode::new(&script.mode).map_err(|message| LoopbackError::Script {
            play: "cortex",
            field: "mode".into(),
            message,
        })?;
        Ok((Self { tier: script.tier, memories: Mutex::new(Memories::seeded(script.facts)) }, mode))
    }

    /// Every memory held now, seeds first, then captures in the order stored.
    pub fn memories(&self) -> Vec<Memory> {
        self.held().all().to_vec()
    }

    fn held(&self) -> MutexGuard<'_, Memories> {
        self.memories.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn retrieve(&self, request: &Incoming, recall: bool) -> Answer {
        let body = request.json.as_ref().unwrap_or(&Value::Null);
        let Some(query) = body["query"].as_str() else {
            return self.error(StatusCode::BAD_REQUEST, "expected a JSON object with `query`, a string");
        };
        let top = body["top_k"].as_u64().or_else(|| body["limit"].as_u64());
        let top = top.map_or(DEFAULT_TOP_K, |top| usize::try_from(top).unwrap_or(usize::MAX));
        let held = self.held();
        let ranked = held.ranked(query, top).into_iter();
        let answer = if recall {
            let memories: Vec<Value> =
                ranked.map(|(score, memory)| json!({"content": memory.content, "score": score})).collect();
            json!({"memories": memories})
        } else {
            let results: Vec<Value> = ranked
                .map(|(score, memory)| {
                    json!({"node_id": memory.node_id, "content": memory.content, "score": score, "type": "FACT",
                        "source": memory.source, "session_id": memory.session_id})
                })
                .collect();
            json!({"results": results})
        };
        ok(&answer)
    }

    fn ingest(&self, request: &Incoming) -> Answer {
        let body = request.json.as_ref().unwrap_or(&Value::Null);
        let Some(messages) = body["messages"].as_array() else {
            return self.error(StatusCode::BAD_REQUEST, "expected a JSON object with `messages`, a list");
        };
        let job_id = self.held().capture(messages, body["session_id"].as_str());
        ok(&json!({"job_id": job_id, "status": "queued"}))
    }

    fn job(&self, id: &str) -> Answer {
        if self.held().has_job(id) {
            ok(&json!({"job_id": id, "status": "completed"}))
        } else {
            self.error(StatusCode::NOT_FOUND, &format!("no job `{id}`"))
        }
    }
}

impl Play for CortexPlay {
    fn numbered(&self, _method: &Method, _path: &str) -> bool {
        false
    }

    fn answer(&self, request: &Incoming) -> Answer {
        let user_id = query_value(&request.query, "user_id");
        match (&request.method, request.path.as_str()) {
            (&Method::GET, "/health") => ok(&json!({"status": "ok"})),
            (&Method::GET, "/v1/stats") => {
                let count = self.held().all().len();
                ok(&json!({"pipeline_tier": self.tier, "memory_count": count, "user_id": user_id}))
            }
            (&Method::GET, "/v1/knowledge") => {
                let count = self.held().all().len();
                ok(&json!({"memories": count, "total_memories": count, "user_id": user_id}))
            }
            (&Method::GET, "/v1/auth/link") => ok(&json!({"linked": true})),
            (&Method::POST, "/v1/warmup") => ok(&json!({"ok": true})),
            (&Method::POST, "/v1/retrieve") => self.retrieve(request, false),
            (&Method::POST, "/v1/recall") => self.retrieve(request, true),
            (&Method::POST, INGEST) => self.ingest(request),
            (method, path) => match path.strip_prefix(JOBS) {
                Some(id) if method == Method::GET => self.job(id),
                _ => self.error(StatusCode::NOT_FOUND, &format!("no route for {method} {path}")),
            },
        }
    }

    fn error(&self, status: StatusCode, message: &str) -> Answer {
        let body = bytes(&json!({"error": message}));
        Answer { status, content_type: JSON, headers: Vec::new(), pieces: vec![body], reply: None }
    }
}

fn ok(body: &Value) -> Answer {
    Answer { status: StatusCode::OK, content_type: JSON, headers: Vec::new(), pieces: vec![bytes(body)], reply: None }
}

/// The value of `name` in a query string, percent-decoded; `None` when it is not there.
fn query_value(query: &str, name: &str) -> Option<String> {
    // The `url` crate's form decoding, reached through reqwest, which re-exports it.
    let mut url = reqwest::Url::parse("http://127.0.0.1/").ok()?;
    url.set_query(Some(query));
    url.query_pairs().find(|(key, _)| key == name).map(|(_, value)| value.into_owned())
}
