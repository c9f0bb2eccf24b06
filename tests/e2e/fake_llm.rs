//! A model on loopback that plays both LLM providers, OpenAI-compatible Chat Completions at
//! `/v1/chat/completions` (and loopback's `/v1/embeddings`) and Anthropic Messages at
//! `/v1/messages`: a test's play on host's loopback server. Answers echo the last user message
//! (`answer to: <prompt>`), so a test can tell every answer apart; a request whose system message
//! asks for an evaluation judge gets a verdict in a JSON code fence. A test queues loopback's
//! faults by prompt (`fail`) or for every request (`always`), and other answers the same ways
//! (`replies`, `always_reply`): another answer is the play's, a fault the server's. A `latency`
//! delays every chat answer that no fault pre-empts (a `delay` fault in the log).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use host::capabilities::loopback::{self, Answer, Incoming, Play};
use reqwest::Method;
use reqwest::StatusCode;
use serde_json::{Value, json};

pub use host::capabilities::loopback::Fault;

use crate::fake_server::Served;

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    /// The headers loopback's log keeps (`anthropic-version`, `user-agent`, …), never a key.
    pub headers: BTreeMap<String, String>,
    /// Whether an `authorization` or `x-api-key` header was sent.
    pub key_present: bool,
    /// What was answered; `None` when nothing was (a request given up).
    pub status: Option<u16>,
    pub body: Value,
    /// The last message's text.
    pub prompt: String,
}

/// OpenAI's error for exhausted credit: a 429 with the code `insufficient_quota`.
pub fn quota() -> Fault {
    Fault::status(StatusCode::TOO_MANY_REQUESTS).code("insufficient_quota")
}

/// The vector the fake server returns for `text`: loopback's.
pub fn fake_embedding(text: &str) -> Vec<f32> {
    loopback::embedding(text)
}

#[derive(Default)]
struct Script {
    /// Faults to serve, in order, for requests whose last message is the key; then answers.
    faults: HashMap<String, VecDeque<Fault>>,
    /// The fault for every request, once the prompt's own ran out.
    always: Option<Fault>,
    /// Texts to answer with, in order, for requests whose last message is the key.
    replies: HashMap<String, VecDeque<String>>,
    /// The text of every answer, once the prompt's own ran out.
    always_reply: Option<String>,
    /// The key requests must send; any when `None`.
    key: Option<String>,
    /// How long every chat answer that no fault pre-empts waits.
    latency: Duration,
}

#[derive(Default)]
struct EchoPlay {
    script: Mutex<Script>,
}

#[derive(Clone)]
pub struct FakeLlm {
    served: Served,
    play: Arc<EchoPlay>,
}

impl FakeLlm {
    /// Starts the server; it stops when the last clone is dropped.
    pub fn start() -> Self {
        let play = Arc::new(EchoPlay::default());
        FakeLlm { served: Served::start(play.clone()), play }
    }

    pub fn openai_base(&self) -> String {
        format!("{}/v1", self.served.url())
    }

    pub fn anthropic_base(&self) -> String {
        self.served.url()
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.play.script.lock().expect("script")
    }

    /// Serves `faults` in order to requests whose last message is `prompt`, then answers.
    pub fn fail(&self, prompt: &str, faults: Vec<Fault>) -> &Self {
        self.script().faults.insert(prompt.to_string(), faults.into());
        self
    }

    /// Serves `fault` to every request whose prompt has no fault of its own left.
    pub fn always(&self, fault: Fault) -> &Self {
        self.script().always = Some(fault);
        self
    }

    /// Answers requests whose last message is `prompt` with `texts` in order, then echoes.
    pub fn replies(&self, prompt: &str, texts: &[&str]) -> &Self {
        self.script().replies.insert(prompt.to_string(), texts.iter().map(|text| text.to_string()).collect());
        self
    }

    /// Answers every request whose prompt has no reply of its own left with `text`.
    pub fn always_reply(&self, text: &str) -> &Self {
        self.script().always_reply = Some(text.to_string());
        self
    }

    /// Answers 401 to requests that do not send `key`.
    pub fn require_key(&self, key: &str) -> &Self {
        self.script().key = Some(key.to_string());
        self
    }

    /// Answers every chat request that no fault pre-empts after `latency`.
    pub fn latency(&self, latency: Duration) -> &Self {
        self.script().latency = latency;
        self
    }

    /// The most requests the server was answering at one time.
    pub fn most_in_flight(&self) -> usize {
        self.served.most_in_flight()
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.served
            .requests()
            .into_iter()
            .map(|record| Seen {
                prompt: prompt(&record.body),
                path: record.path,
                headers: record.headers,
                key_present: record.key_present,
                status: record.status,
                body: record.body,
            })
            .collect()
    }
}

/// The last message's text.
fn prompt(body: &Value) -> String {
    body["messages"].as_array().and_then(|m| m.last()).and_then(|m| m["content"].as_str()).unwrap_or("").to_string()
}

const COMPLETIONS: &str = "/v1/chat/completions";
const MESSAGES: &str = "/v1/messages";

impl EchoPlay {
    /// Whether `request` sends the key this protocol asks for (the required one, when set).
    fn authorised(&self, request: &Incoming, header: &str, prefix: &str) -> bool {
        let sent =
            request.headers.get(header).and_then(|value| value.to_str().ok()).and_then(|v| v.strip_prefix(prefix));
        let key = self.script.lock().expect("script").key.clone();
        sent.is_some_and(|sent| key.is_none_or(|key| key == sent))
    }

    /// The text answering `prompt`: a queued or standing reply, else the echo or the verdict.
    fn text(&self, prompt: &str, body: &Value) -> String {
        let mut script = self.script.lock().expect("script");
        let queued = script.replies.get_mut(prompt).and_then(VecDeque::pop_front);
        queued.or_else(|| script.always_reply.clone()).unwrap_or_else(|| reply_text(prompt, body))
    }
}

impl Play for EchoPlay {
    fn numbered(&self, _method: &Method, _path: &str) -> bool {
        false
    }

    fn fault(&self, request: &Incoming) -> Option<Fault> {
        if ![COMPLETIONS, MESSAGES].contains(&request.path.as_str()) {
            return None;
        }
        let prompt = prompt(request.json.as_ref().unwrap_or(&Value::Null));
        let mut script = self.script.lock().expect("script");
        let queued = script.faults.get_mut(&prompt).and_then(VecDeque::pop_front);
        let latency = (!script.latency.is_zero()).then_some(Fault::Delay(script.latency));
        queued.or_else(|| script.always.clone()).or(latency)
    }

    fn answer(&self, request: &Incoming) -> Answer {
        let body = request.json.clone().unwrap_or(Value::Null);
        let prompt = prompt(&body);
        match (&request.method, request.path.as_str()) {
            (&Method::POST, COMPLETIONS) if !self.authorised(request, "authorization", "Bearer ") => {
                self.error(StatusCode::UNAUTHORIZED, "missing bearer key", None)
            }
            (&Method::POST, COMPLETIONS) => Answer::json(
                StatusCode::OK,
                &json!({
                    "id": "chatcmpl-fake", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": self.text(&prompt, &body)},
                        "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": prompt.len(), "completion_tokens": 5, "total_tokens": prompt.len() + 5}
                }),
            ),
            (&Method::POST, MESSAGES)
                if !self.authorised(request, "x-api-key", "") || !request.headers.contains_key("anthropic-version") =>
            {
                self.error(StatusCode::UNAUTHORIZED, "missing x-api-key or anthropic-version", None)
            }
            (&Method::POST, MESSAGES) => Answer::json(
                StatusCode::OK,
                &json!({
                    "id": "msg_fake", "type": "message", "role": "assistant", "model": body["model"],
                    "content": [{"type": "text", "text": self.text(&prompt, &body)}], "stop_reason": "end_turn",
                    "usage": {"input_tokens": prompt.len(), "output_tokens": 5}
                }),
            ),
            (&Method::POST, "/v1/embeddings") => loopback::embeddings(request),
            (method, path) => self.error(StatusCode::NOT_FOUND, &format!("no route for {method} {path}"), None),
        }
    }

    fn error(&self, status: StatusCode, message: &str, code: Option<&str>) -> Answer {
        let kind = code.unwrap_or(if status.is_server_error() { "server_error" } else { "invalid_request_error" });
        Answer::json(status, &json!({"error": {"message": message, "type": kind, "code": code}}))
    }
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
