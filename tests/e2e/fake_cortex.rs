//! The Cortex memory API on loopback, as host's `--cortex http` backend calls it: loopback's own
//! Cortex play (api key, ingestion as jobs completing after polls, failing jobs per session,
//! warmup, knowledge, reflect, retrieval by word overlap) on host's loopback server, with
//! loopback's faults queued per endpoint. It records every request for assertions.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use host::capabilities::loopback::{Answer, CortexPlay, CortexScript, Incoming, Memory, Play};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

pub use host::capabilities::loopback::Fault;

use crate::fake_server::Served;

/// The endpoints, as faults are keyed.
pub const INGEST: &str = "/v1/jobs/ingest/conversation";
pub const JOB: &str = "/v1/jobs/{id}";
pub const WARMUP: &str = "/v1/warmup";
pub const KNOWLEDGE: &str = "/v1/knowledge";
pub const REFLECT: &str = "/v1/reflect";
pub const RETRIEVE: &str = "/v1/retrieve";

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The path as requested (`/v1/jobs/job-3`).
    pub path: String,
    /// The endpoint it matched (`/v1/jobs/{id}`).
    pub endpoint: String,
    /// Whether an `x-api-key` (or `authorization`) header was sent; the play answers 401 unless it
    /// is the key.
    pub key_present: bool,
    /// What was answered; `None` when nothing was (a request given up).
    pub status: Option<u16>,
    pub body: Value,
}

/// The endpoint a request's path matched.
fn endpoint(path: &str) -> &str {
    if path.starts_with("/v1/jobs/") && path != INGEST { JOB } else { path }
}

/// Loopback's Cortex play, with faults queued per endpoint.
struct ByEndpoint {
    cortex: CortexPlay,
    faults: Mutex<HashMap<String, VecDeque<Fault>>>,
}

impl Play for ByEndpoint {
    fn numbered(&self, method: &Method, path: &str) -> bool {
        self.cortex.numbered(method, path)
    }

    fn answer(&self, request: &Incoming) -> Answer {
        self.cortex.answer(request)
    }

    fn error(&self, status: StatusCode, message: &str, code: Option<&str>) -> Answer {
        self.cortex.error(status, message, code)
    }

    fn fault(&self, request: &Incoming) -> Option<Fault> {
        let mut faults = self.faults.lock().expect("faults");
        faults.get_mut(endpoint(&request.path)).and_then(VecDeque::pop_front)
    }
}

#[derive(Clone)]
pub struct FakeCortex {
    served: Served,
    play: Arc<ByEndpoint>,
}

impl FakeCortex {
    /// Starts the server, accepting `api_key`; a job completes at its first poll. It stops when
    /// the last clone is dropped.
    pub fn start(api_key: &str) -> Self {
        let script: CortexScript =
            serde_json::from_value(json!({"api_key": api_key, "polls_to_complete": 1})).expect("a Cortex script");
        let (cortex, _mode) = CortexPlay::new(script).expect("a valid Cortex script");
        let play = Arc::new(ByEndpoint { cortex, faults: Mutex::default() });
        FakeCortex { served: Served::start(play.clone()), play }
    }

    pub fn base_url(&self) -> String {
        self.served.url()
    }

    /// Serves `faults` in order to the next requests for `endpoint` (one of the constants).
    pub fn fail(&self, endpoint: &str, faults: Vec<Fault>) -> &Self {
        self.play.faults.lock().expect("faults").insert(endpoint.to_string(), faults.into());
        self
    }

    /// The next `times` jobs submitted for `session_id` (as sent, `<namespace>:session:<id>`) fail.
    pub fn fail_jobs(&self, session_id: &str, times: u64) -> &Self {
        self.play.cortex.fail_jobs(session_id, times);
        self
    }

    /// A job completes (or fails) at its `polls`-th poll; 1 unless set.
    pub fn polls_to_complete(&self, polls: u64) -> &Self {
        self.play.cortex.set_polls_to_complete(polls.max(1));
        self
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.served
            .requests()
            .into_iter()
            .map(|record| Seen {
                method: record.method,
                endpoint: endpoint(&record.path).to_string(),
                path: record.path,
                key_present: record.key_present,
                status: record.status,
                body: record.body,
            })
            .collect()
    }

    /// The requests that reached `endpoint`.
    pub fn seen_at(&self, endpoint: &str) -> Vec<Seen> {
        self.seen().into_iter().filter(|seen| seen.endpoint == endpoint).collect()
    }

    /// Every memory the completed jobs stored, in the order stored.
    pub fn memories(&self) -> Vec<Memory> {
        self.play.cortex.memories()
    }
}
