//! A real HTTP server on loopback that plays both LLM providers: OpenAI-compatible Chat
//! Completions at `/v1/chat/completions` and Anthropic Messages at `/v1/messages`, with scripted
//! faults. Answers echo the last user message, so a test can tell every answer apart; a request
//! whose system message asks for an evaluation judge gets a verdict in a JSON code fence.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// What the server does with one request, instead of answering.
#[derive(Debug, Clone)]
pub enum Fault {
    Status(u16),
    RetryAfter {
        status: u16,
        seconds: u64,
    },
    /// Wait this long before answering normally (longer than the client's timeout).
    Hang(Duration),
    Malformed,
    Truncated,
    EmptyContent,
    Quota,
    /// Answer normally, but with this text as the reply.
    Reply(String),
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
    pub prompt: String,
}

#[derive(Default)]
struct Script {
    /// Faults to serve, in order, for requests whose last message is the key; then answers.
    faults: HashMap<String, Vec<Fault>>,
    /// Faults for every request (used after per-prompt ones run out).
    always: Option<Fault>,
    latency: Duration,
    seen: Vec<Seen>,
    in_flight: usize,
    most_in_flight: usize,
}

#[derive(Clone)]
pub struct FakeLlm {
    pub address: SocketAddr,
    script: Arc<Mutex<Script>>,
}

impl FakeLlm {
    /// Starts the server on a background thread; it lives until the test process ends.
    pub fn start() -> Self {
        let script = Arc::new(Mutex::new(Script::default()));
        let state = script.clone();
        let (ready, address) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime =
                tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
                ready.send(listener.local_addr().expect("address")).expect("report address");
                let app = Router::new()
                    .route("/v1/chat/completions", post(openai))
                    .route("/v1/messages", post(anthropic))
                    .route("/v1/embeddings", post(embeddings))
                    .with_state(state);
                axum::serve(listener, app).await.expect("serve");
            });
        });
        FakeLlm { address: address.recv().expect("server address"), script }
    }

    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.address)
    }

    pub fn anthropic_base(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Serves `faults` in order to requests whose last message is `prompt`, then answers.
    pub fn fail(&self, prompt: &str, faults: Vec<Fault>) -> &Self {
        self.script.lock().expect("script").faults.insert(prompt.to_string(), faults);
        self
    }

    pub fn always(&self, fault: Fault) -> &Self {
        self.script.lock().expect("script").always = Some(fault);
        self
    }

    pub fn latency(&self, latency: Duration) -> &Self {
        self.script.lock().expect("script").latency = latency;
        self
    }

    /// The most requests the server was answering at one time.
    pub fn most_in_flight(&self) -> usize {
        self.script.lock().expect("script").most_in_flight
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.script.lock().expect("script").seen.clone()
    }
}

type Shared = Arc<Mutex<Script>>;

/// The vector the fake server returns for `text`: its length and its first byte.
pub fn fake_embedding(text: &str) -> Vec<f32> {
    vec![text.len() as f32, f32::from(text.bytes().next().unwrap_or(0)), 1.0]
}

/// OpenAI's `/embeddings`, answering with the items in reverse order, as a server may.
async fn embeddings(State(script): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    script.lock().expect("script").seen.push(Seen {
        path: "/v1/embeddings".into(),
        headers,
        body: body.clone(),
        prompt: String::new(),
    });
    let inputs: Vec<String> =
        body["input"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": fake_embedding(text)}))
        .collect();
    axum::Json(json!({"object": "list", "data": data, "model": body["model"]})).into_response()
}

async fn openai(State(script): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    if !headers.get("authorization").and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("Bearer ")) {
        return (StatusCode::UNAUTHORIZED, "missing bearer key").into_response();
    }
    respond(script, "/v1/chat/completions", headers, body, |prompt, body| {
        json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply_text(prompt, body)}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt.len(), "completion_tokens": 5, "total_tokens": prompt.len() + 5}
        })
    })
    .await
}

async fn anthropic(State(script): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    if headers.get("x-api-key").is_none() || headers.get("anthropic-version").is_none() {
        return (StatusCode::UNAUTHORIZED, "missing x-api-key or anthropic-version").into_response();
    }
    respond(script, "/v1/messages", headers, body, |prompt, body| {
        json!({
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": format!("answer to: {prompt}")}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": prompt.len(), "output_tokens": 5}
        })
    })
    .await
}

/// What the fake model says: a judge verdict (score 2 when the answer repeats the question's ground
/// truth word for word, else 1) for a judge request, else an echo of the prompt.
fn reply_text(prompt: &str, body: &Value) -> String {
    let system = body["messages"][0]["content"].as_str().unwrap_or("");
    if system.contains("evaluation judge") {
        let truth = prompt.split("Ground Truth: ").nth(1).and_then(|rest| rest.split("\n\n").next()).unwrap_or("");
        let answer = prompt.split("AI Response: ").nth(1).unwrap_or("");
        let score = if !truth.is_empty() && answer.contains(truth) { 2 } else { 1 };
        return format!("Here is my verdict:\n```json\n{{\"score\": {score}, \"rationale\": \"fake judge\"}}\n```");
    }
    format!("answer to: {prompt}")
}

async fn respond(
    script: Shared,
    path: &str,
    headers: HeaderMap,
    body: Bytes,
    answer: impl Fn(&str, &Value) -> Value,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let prompt = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string();
    let (fault, latency) = {
        let mut script = script.lock().expect("script");
        script.seen.push(Seen {
            path: path.to_string(),
            headers: headers.clone(),
            body: body.clone(),
            prompt: prompt.clone(),
        });
        let queued = script.faults.get_mut(&prompt).and_then(|faults| (!faults.is_empty()).then(|| faults.remove(0)));
        script.in_flight += 1;
        script.most_in_flight = script.most_in_flight.max(script.in_flight);
        (queued.or_else(|| script.always.clone()), script.latency)
    };
    tokio::time::sleep(latency).await;
    script.lock().expect("script").in_flight -= 1;
    let content = answer(&prompt, &body);
    match fault {
        None => (StatusCode::OK, axum::Json(content)).into_response(),
        Some(Fault::Reply(text)) => {
            let mut content = content;
            content["choices"][0]["message"]["content"] = Value::String(text.clone());
            content["content"] = json!([{"type": "text", "text": text}]);
            (StatusCode::OK, axum::Json(content)).into_response()
        }
        Some(Fault::Status(status)) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (status, axum::Json(json!({"error": {"message": "scripted failure", "type": "server_error"}})))
                .into_response()
        }
        Some(Fault::RetryAfter { status, seconds }) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::TOO_MANY_REQUESTS);
            let body = json!({"error": {"message": "rate limited", "code": "rate_limit_exceeded"}});
            (status, [("retry-after", seconds.to_string())], axum::Json(body)).into_response()
        }
        Some(Fault::Hang(wait)) => {
            tokio::time::sleep(wait).await;
            (StatusCode::OK, axum::Json(content)).into_response()
        }
        Some(Fault::Malformed) => {
            (StatusCode::OK, [("content-type", "application/json")], "{\"choices\": [").into_response()
        }
        Some(Fault::Truncated) => {
            let start = Bytes::from_static(b"{\"choices\": [{\"message\": {\"content\": \"cut");
            let chunks: Vec<Result<Bytes, std::io::Error>> =
                vec![Ok(start), Err(std::io::Error::other("connection lost"))];
            Response::builder()
                .status(StatusCode::OK)
                .header("content-type", "application/json")
                .body(Body::from_stream(futures::stream::iter(chunks)))
                .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
        }
        Some(Fault::EmptyContent) => {
            let body = json!({"choices": [{"message": {"role": "assistant", "content": ""}}], "content": []});
            (StatusCode::OK, axum::Json(body)).into_response()
        }
        Some(Fault::Quota) => {
            let body = json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}});
            (StatusCode::TOO_MANY_REQUESTS, axum::Json(body)).into_response()
        }
    }
}
