//! A real HTTP server on loopback that plays the Cortex memory API: conversation ingestion as
//! jobs, warmup, knowledge, reflect and retrieval by word overlap, with scripted faults per
//! endpoint and per session. It records every request for assertions.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// The endpoints, as faults are keyed.
pub const INGEST: &str = "/v1/jobs/ingest/conversation";
pub const JOB: &str = "/v1/jobs/{id}";
pub const WARMUP: &str = "/v1/warmup";
pub const KNOWLEDGE: &str = "/v1/knowledge";
pub const REFLECT: &str = "/v1/reflect";
pub const RETRIEVE: &str = "/v1/retrieve";

/// What the server does with one request, instead of answering.
#[derive(Debug, Clone)]
pub enum Fault {
    Status(u16),
    /// Wait this long before answering normally (longer than the client's timeout).
    Hang(Duration),
    /// A 200 whose JSON body is cut off.
    Malformed,
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    /// The path as requested (`/v1/jobs/job-3`).
    pub path: String,
    /// The endpoint it matched (`/v1/jobs/{id}`).
    pub endpoint: String,
    pub headers: HeaderMap,
    pub body: Value,
}

/// One stored memory: a sentence of an ingested message.
#[derive(Debug, Clone)]
pub struct Memory {
    pub node_id: String,
    pub content: String,
    pub session_id: String,
    /// `None` when the job was ingested without a date (`"reference_date": null`).
    pub reference_date: Option<String>,
}

struct Job {
    session_id: String,
    messages: Vec<String>,
    reference_date: Option<String>,
    polls: usize,
    fails: bool,
    status: &'static str,
}

struct Script {
    api_key: String,
    polls_to_complete: usize,
    faults: HashMap<String, Vec<Fault>>,
    /// How many more submissions of a session (its namespaced id) end in a failed job.
    failing_sessions: HashMap<String, usize>,
    jobs: HashMap<String, Job>,
    submitted: usize,
    memories: Vec<Memory>,
    seen: Vec<Seen>,
}

#[derive(Clone)]
pub struct FakeCortex {
    pub address: SocketAddr,
    script: Arc<Mutex<Script>>,
}

type Shared = Arc<Mutex<Script>>;

impl FakeCortex {
    /// Starts the server on a background thread, accepting `api_key`; it lives until the test
    /// process ends.
    pub fn start(api_key: &str) -> Self {
        let script = Arc::new(Mutex::new(Script {
            api_key: api_key.to_string(),
            polls_to_complete: 1,
            faults: HashMap::new(),
            failing_sessions: HashMap::new(),
            jobs: HashMap::new(),
            submitted: 0,
            memories: Vec::new(),
            seen: Vec::new(),
        }));
        let state = script.clone();
        let (ready, address) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime =
                tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
                ready.send(listener.local_addr().expect("address")).expect("report address");
                let app = Router::new()
                    .route(INGEST, post(ingest))
                    .route(JOB, get(job))
                    .route(WARMUP, post(warmup))
                    .route(KNOWLEDGE, get(knowledge))
                    .route(REFLECT, post(reflect))
                    .route(RETRIEVE, post(retrieve))
                    .with_state(state);
                axum::serve(listener, app).await.expect("serve");
            });
        });
        FakeCortex { address: address.recv().expect("server address"), script }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Serves `faults` in order to the next requests for `endpoint` (one of the constants).
    pub fn fail(&self, endpoint: &str, faults: Vec<Fault>) -> &Self {
        self.script.lock().expect("script").faults.insert(endpoint.to_string(), faults);
        self
    }

    /// The next `times` jobs submitted for `session_id` (as sent, `<namespace>:session:<id>`) fail.
    pub fn fail_jobs(&self, session_id: &str, times: usize) -> &Self {
        self.script.lock().expect("script").failing_sessions.insert(session_id.to_string(), times);
        self
    }

    /// A job completes (or fails) at its `polls`-th poll; 1 unless set.
    pub fn polls_to_complete(&self, polls: usize) -> &Self {
        self.script.lock().expect("script").polls_to_complete = polls.max(1);
        self
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.script.lock().expect("script").seen.clone()
    }

    /// The requests that reached `endpoint`.
    pub fn seen_at(&self, endpoint: &str) -> Vec<Seen> {
        self.seen().into_iter().filter(|seen| seen.endpoint == endpoint).collect()
    }

    pub fn memories(&self) -> Vec<Memory> {
        self.script.lock().expect("script").memories.clone()
    }
}

/// Records the request, checks the key and serves a scripted fault; `Err` is the response to
/// send instead of the endpoint's own.
async fn gate(
    script: &Shared,
    method: &str,
    endpoint: &str,
    path: String,
    headers: HeaderMap,
    body: &Bytes,
) -> Result<Value, Response> {
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let fault = {
        let mut script = script.lock().expect("script");
        let authorised = headers.get("x-api-key").and_then(|key| key.to_str().ok()) == Some(script.api_key.as_str());
        script.seen.push(Seen {
            method: method.to_string(),
            path,
            endpoint: endpoint.to_string(),
            headers,
            body: body.clone(),
        });
        if !authorised {
            return Err((StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "unauthorized"}))).into_response());
        }
        script.faults.get_mut(endpoint).and_then(|faults| (!faults.is_empty()).then(|| faults.remove(0)))
    };
    match fault {
        None => Ok(body),
        Some(Fault::Status(status)) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            Err((status, axum::Json(json!({"error": "scripted failure"}))).into_response())
        }
        Some(Fault::Hang(wait)) => {
            tokio::time::sleep(wait).await;
            Ok(body)
        }
        Some(Fault::Malformed) => {
            Err((StatusCode::OK, [("content-type", "application/json")], "{\"results\": [").into_response())
        }
    }
}

fn bad_request(message: &str) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": message}))).into_response()
}

async fn ingest(State(script): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let body = match gate(&script, "POST", INGEST, INGEST.into(), headers, &body).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let reference_date = &body["reference_date"];
    let (Some(session_id), true, Some(messages)) = (
        body["session_id"].as_str(),
        reference_date.is_string() || reference_date.is_null(),
        body["messages"].as_array(),
    ) else {
        return bad_request("expected {messages, session_id, reference_date (a date or null)}");
    };
    let messages = messages.iter().filter_map(|message| message["content"].as_str().map(str::to_string)).collect();
    let mut script = script.lock().expect("script");
    script.submitted += 1;
    let job_id = format!("job-{}", script.submitted);
    let fails = match script.failing_sessions.get_mut(session_id) {
        Some(left) if *left > 0 => {
            *left -= 1;
            true
        }
        _ => false,
    };
    let job = Job {
        session_id: session_id.to_string(),
        messages,
        reference_date: reference_date.as_str().map(str::to_string),
        polls: 0,
        fails,
        status: "queued",
    };
    script.jobs.insert(job_id.clone(), job);
    axum::Json(json!({"job_id": job_id, "status": "queued"})).into_response()
}

async fn job(State(script): State<Shared>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if let Err(response) = gate(&script, "GET", JOB, format!("/v1/jobs/{id}"), headers, &Bytes::new()).await {
        return response;
    }
    let mut guard = script.lock().expect("script");
    let script = &mut *guard;
    let Some(job) = script.jobs.get_mut(&id) else {
        return (StatusCode::NOT_FOUND, axum::Json(json!({"error": "job not found"}))).into_response();
    };
    if job.status == "queued" || job.status == "processing" {
        job.polls += 1;
        job.status = if job.polls < script.polls_to_complete {
            "processing"
        } else if job.fails {
            "failed"
        } else {
            for sentence in job.messages.iter().flat_map(|message| sentences(message)) {
                let node_id = format!("mem-{}", script.memories.len() + 1);
                script.memories.push(Memory {
                    node_id,
                    content: sentence,
                    session_id: job.session_id.clone(),
                    reference_date: job.reference_date.clone(),
                });
            }
            "completed"
        };
    }
    let mut answer = json!({"job_id": id, "status": job.status});
    if job.status == "failed" {
        answer["error"] = json!("scripted job failure");
    }
    axum::Json(answer).into_response()
}

async fn warmup(State(script): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    match gate(&script, "POST", WARMUP, WARMUP.into(), headers, &body).await {
        Ok(_) => axum::Json(json!({"status": "ok"})).into_response(),
        Err(response) => response,
    }
}

async fn knowledge(State(script): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(response) = gate(&script, "GET", KNOWLEDGE, KNOWLEDGE.into(), headers, &Bytes::new()).await {
        return response;
    }
    let script = script.lock().expect("script");
    let sessions: BTreeSet<&str> = script.memories.iter().map(|memory| memory.session_id.as_str()).collect();
    axum::Json(json!({"total_memories": script.memories.len(), "total_sessions": sessions.len()})).into_response()
}

async fn reflect(State(script): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    match gate(&script, "POST", REFLECT, REFLECT.into(), headers, &body).await {
        Ok(body) if body["session_id"].is_string() => {
            axum::Json(json!({"nodes_created": 0, "edges_created": 0, "entities_processed": 0})).into_response()
        }
        Ok(_) => bad_request("expected {session_id}"),
        Err(response) => response,
    }
}

async fn retrieve(State(script): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let body = match gate(&script, "POST", RETRIEVE, RETRIEVE.into(), headers, &body).await {
        Ok(body) => body,
        Err(response) => return response,
    };
    let (Some(query), Some(top_k)) = (body["query"].as_str(), body["top_k"].as_u64()) else {
        return bad_request("expected {query, top_k, mode, reference_date}");
    };
    let asked = words(query);
    let script = script.lock().expect("script");
    let mut scored: Vec<(f64, &Memory)> = script
        .memories
        .iter()
        .map(|memory| {
            let shared = words(&memory.content).intersection(&asked).count();
            (shared as f64 / asked.len().max(1) as f64, memory)
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    // A stable sort: equal scores keep the order the memories were stored in.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let results: Vec<Value> = scored
        .into_iter()
        .take(usize::try_from(top_k).unwrap_or(usize::MAX))
        .map(|(score, memory)| {
            json!({
                "node_id": memory.node_id, "type": "FACT", "content": memory.content,
                "score": score, "source": "retrieve", "confidence": 0.9,
                "metadata": {"tier": "episodic", "node": memory.node_id}
            })
        })
        .collect();
    axum::Json(json!({"results": results})).into_response()
}

/// Sentences: split after `.`, `!` or `?`, trimmed, empty ones dropped.
fn sentences(text: &str) -> Vec<String> {
    text.split_inclusive(['.', '!', '?']).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

/// Lowercase words of letters and digits.
fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}
