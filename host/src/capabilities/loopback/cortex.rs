//! The Cortex memory API, played as its OpenClaw plugin and host's `--cortex http` backend call
//! it: health, stats, knowledge, the account link, warmup and reflect; retrieval and recall
//! ranked by word overlap ([`Memories`]); and capture, a conversation ingested as a job
//! ([`Jobs`]) that ends after the script's number of polls. With an `api_key`, every request
//! must send it in `x-api-key`. Faults are the server's modes (`set_mode`), not numbered
//! requests; error bodies are Cortex's `{"error": …}`.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use axum::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::LoopbackError;
use super::jobs::Jobs;
use super::memories::{Memories, Memory, conversation_sentences};
use super::modes::{Mode, ModeSpec};
use super::server::{Answer, Incoming, Play};
use super::wire::{JSON, bytes};

const INGEST: &str = "/v1/jobs/ingest/conversation";
const JOBS: &str = "/v1/jobs/";

/// How many memories `/v1/retrieve` and `/v1/recall` return when the request does not say.
const DEFAULT_TOP_K: usize = 10;

/// The `confidence` of every retrieved memory: the API sends one, and no client here weighs it.
const CONFIDENCE: f64 = 0.9;

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
    /// The key every request must send in `x-api-key`; any request is let in when it is `None`.
    #[serde(default)]
    pub api_key: Option<String>,
    /// The poll of a job at which it ends; 0 ends it at its submission.
    #[serde(default)]
    pub polls_to_complete: u64,
    /// Sessions whose next jobs fail, with how many: `#{ "s-2": 1 }`.
    #[serde(default)]
    pub fail_jobs: BTreeMap<String, u64>,
}

fn default_tier() -> u32 {
    1
}

/// What the play holds: the memories and the jobs that store into them, under one lock.
struct Held {
    memories: Memories,
    jobs: Jobs,
}

pub struct CortexPlay {
    tier: u32,
    api_key: Option<String>,
    held: Mutex<Held>,
}

impl CortexPlay {
    /// The play and the mode it starts in.
    pub fn new(script: CortexScript) -> Result<(Self, Mode), LoopbackError> {
        let invalid =
            |field: &str, message: String| LoopbackError::Script { play: "cortex", field: field.into(), message };
        let mode = Mode::new(&script.mode).map_err(|message| invalid("mode", message))?;
        if script.api_key.as_deref().is_some_and(str::is_empty) {
            return Err(invalid("api_key", "the key is empty: leave it out to let every request in".into()));
        }
        let held = Held {
            memories: Memories::seeded(script.facts),
            jobs: Jobs::new(script.polls_to_complete, script.fail_jobs),
        };
        Ok((Self { tier: script.tier, api_key: script.api_key, held: Mutex::new(held) }, mode))
    }

    /// Every memory held now, seeds first, then captures in the order stored.
    pub fn memories(&self) -> Vec<Memory> {
        self.held().memories.all().to_vec()
    }

    /// From now on, a job ends at its `polls`-th poll (0: at its submission).
    pub fn set_polls_to_complete(&self, polls: u64) {
        self.held().jobs.set_polls_to_complete(polls);
    }

    /// The next `times` jobs submitted for `session_id` fail.
    pub fn fail_jobs(&self, session_id: &str, times: u64) {
        self.held().jobs.fail(session_id, times);
    }

    fn held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn retrieve(&self, request: &Incoming, recall: bool) -> Answer {
        let body = request.json.as_ref().unwrap_or(&Value::Null);
        let Some(query) = body["query"].as_str() else {
            return bad_request("expected a JSON object with `query`, a string");
        };
        let top = body["top_k"].as_u64().or_else(|| body["limit"].as_u64());
        let top = top.map_or(DEFAULT_TOP_K, |top| usize::try_from(top).unwrap_or(usize::MAX));
        let held = self.held();
        let ranked = held.memories.ranked(query, top).into_iter();
        let answer = if recall {
            let memories: Vec<Value> =
                ranked.map(|(score, memory)| json!({"content": memory.content, "score": score})).collect();
            json!({"memories": memories})
        } else {
            let results: Vec<Value> = ranked
                .map(|(score, memory)| {
                    json!({"node_id": memory.node_id, "content": memory.content, "score": score, "type": "FACT",
                        "source": memory.source, "session_id": memory.session_id, "confidence": CONFIDENCE,
                        "metadata": {"tier": "episodic", "node": memory.node_id}})
                })
                .collect();
            json!({"results": results})
        };
        ok(&answer)
    }

    fn ingest(&self, request: &Incoming) -> Answer {
        let body = request.json.as_ref().unwrap_or(&Value::Null);
        let Some(messages) = body["messages"].as_array() else {
            return bad_request("expected a JSON object with `messages`, a list");
        };
        let held = &mut *self.held();
        let sentences = conversation_sentences(messages);
        let (session_id, date) = (body["session_id"].as_str(), body["reference_date"].as_str());
        let job_id = held.jobs.submit(sentences, session_id, date, &mut held.memories);
        ok(&json!({"job_id": job_id, "status": "queued"}))
    }

    fn job(&self, id: &str) -> Answer {
        let held = &mut *self.held();
        match held.jobs.poll(id, &mut held.memories) {
            Some(status) => {
                let mut answer = json!({"job_id": id, "status": status.name()});
                if status == super::jobs::JobStatus::Failed {
                    answer["error"] = json!("the script failed this session's job (a loopback fault)");
                }
                ok(&answer)
            }
            None => self.error(StatusCode::NOT_FOUND, &format!("no job `{id}`"), None),
        }
    }

    fn knowledge(&self, request: &Incoming) -> Answer {
        let held = self.held();
        let count = held.memories.all().len();
        let user_id = query_value(&request.query, "user_id");
        ok(&json!({"memories": count, "total_memories": count, "total_sessions": held.memories.sessions(),
            "user_id": user_id}))
    }

    /// Whether `request` may be answered: it sends the key, when the script gave one.
    fn authorised(&self, request: &Incoming) -> bool {
        self.api_key
            .as_deref()
            .is_none_or(|key| request.headers.get("x-api-key").and_then(|sent| sent.to_str().ok()) == Some(key))
    }
}

impl Play for CortexPlay {
    fn numbered(&self, _method: &Method, _path: &str) -> bool {
        false
    }

    fn answer(&self, request: &Incoming) -> Answer {
        if !self.authorised(request) {
            return self.error(StatusCode::UNAUTHORIZED, "unauthorized: `x-api-key` is missing or wrong", None);
        }
        match (&request.method, request.path.as_str()) {
            (&Method::GET, "/health") => ok(&json!({"status": "ok"})),
            (&Method::GET, "/v1/stats") => {
                let count = self.held().memories.all().len();
                let user_id = query_value(&request.query, "user_id");
                ok(&json!({"pipeline_tier": self.tier, "memory_count": count, "user_id": user_id}))
            }
            (&Method::GET, "/v1/knowledge") => self.knowledge(request),
            (&Method::GET, "/v1/auth/link") => ok(&json!({"linked": true})),
            (&Method::POST, "/v1/warmup") => ok(&json!({"ok": true})),
            (&Method::POST, "/v1/reflect") => reflect(request),
            (&Method::POST, "/v1/retrieve") => self.retrieve(request, false),
            (&Method::POST, "/v1/recall") => self.retrieve(request, true),
            (&Method::POST, INGEST) => self.ingest(request),
            (method, path) => match path.strip_prefix(JOBS) {
                Some(id) if method == Method::GET => self.job(id),
                _ => self.error(StatusCode::NOT_FOUND, &format!("no route for {method} {path}"), None),
            },
        }
    }

    /// Cortex's error body; a fault's `code` is added as `code`.
    fn error(&self, status: StatusCode, message: &str, code: Option<&str>) -> Answer {
        let mut body = json!({"error": message});
        if let Some(code) = code {
            body["code"] = json!(code);
        }
        Answer { status, content_type: JSON, headers: Vec::new(), pieces: vec![bytes(&body)], reply: None }
    }
}

/// `POST /v1/reflect` for a `session_id`: nothing to consolidate in a play, so nothing created.
fn reflect(request: &Incoming) -> Answer {
    let body = request.json.as_ref().unwrap_or(&Value::Null);
    if !body["session_id"].is_string() {
        return bad_request("expected a JSON object with `session_id`, a string");
    }
    ok(&json!({"nodes_created": 0, "edges_created": 0, "entities_processed": 0}))
}

fn ok(body: &Value) -> Answer {
    Answer::json(StatusCode::OK, body)
}

fn bad_request(message: &str) -> Answer {
    Answer::json(StatusCode::BAD_REQUEST, &json!({"error": message}))
}

/// The value of `name` in a query string, percent-decoded; `None` when it is not there.
fn query_value(query: &str, name: &str) -> Option<String> {
    // The `url` crate's form decoding, reached through reqwest, which re-exports it.
    let mut url = reqwest::Url::parse("http://127.0.0.1/").ok()?;
    url.set_query(Some(query));
    url.query_pairs().find(|(key, _)| key == name).map(|(_, value)| value.into_owned())
}
