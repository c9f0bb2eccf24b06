//! The OpenAI Chat Completions API, played as OpenAI-compatible clients read it (the OpenClaw
//! gateway's `openai-completions` provider): `GET /v1/models`, `POST /v1/chat/completions`
//! answered with the scripted agent's turns (streamed as `chat.completion.chunk` events when
//! asked, with a usage chunk when `stream_options.include_usage`) or the side reply (OpenClaw's
//! compaction summary and memory flush answered apart, by `compaction`), and OpenAI's error
//! bodies; and `POST /v1/embeddings`, answered with deterministic vectors, so that an embedding
//! client runs offline too. Ids, token counts and vectors are derived from the request alone, so
//! runs are reproducible.

use axum::body::Bytes;
use axum::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::LoopbackError;
use super::compaction::{self, FLUSH_CHARS, Kind, SUMMARY_CHARS};
use super::faults::{FaultSpec, Faults};
use super::replies::{self, Agent, Reply};
use super::server::{Answer, Incoming, Play};
use super::wire::{EVENT_STREAM, JSON, bytes, halves, split, tokens};

const MODELS: &str = "/v1/models";
const COMPLETIONS: &str = "/v1/chat/completions";
const EMBEDDINGS: &str = "/v1/embeddings";

/// What `loopback::openai` is given.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenAiScript {
    /// The agent's turns, in order.
    pub replies: Vec<Reply>,
    /// The text answering side requests (those offering no tools).
    #[serde(default = "replies::default_side_reply")]
    pub side_reply: String,
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
    /// The model ids `/v1/models` lists.
    #[serde(default = "default_models")]
    pub models: Vec<String>,
    /// The characters of a compaction summary's `## Decisions` body.
    #[serde(default = "default_summary_chars")]
    pub summary_chars: usize,
    /// The characters of a pre-compaction memory flush's note.
    #[serde(default = "default_flush_chars")]
    pub flush_chars: usize,
}

fn default_models() -> Vec<String> {
    vec!["canned".to_string()]
}

fn default_summary_chars() -> usize {
    SUMMARY_CHARS
}

fn default_flush_chars() -> usize {
    FLUSH_CHARS
}

pub struct OpenAiPlay {
    agent: Agent,
    models: Vec<String>,
    summary_chars: usize,
    flush_chars: usize,
}

impl OpenAiPlay {
    pub fn new(script: OpenAiScript) -> Result<(Self, Faults), LoopbackError> {
        if script.models.is_empty() {
            let message = "list at least one model: clients pick theirs from `/v1/models`".to_string();
            return Err(LoopbackError::Script { play: "openai", field: "models".into(), message });
        }
        let (agent, faults) = Agent::new("openai", script.replies, script.side_reply, &script.faults)?;
        let play =
            Self { agent, models: script.models, summary_chars: script.summary_chars, flush_chars: script.flush_chars };
        Ok((play, faults))
    }

    fn models(&self) -> Answer {
        let data: Vec<Value> = self
            .models
            .iter()
            .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "loopback"}))
            .collect();
        ok(JSON, vec![bytes(&json!({"object": "list", "data": data}))], None)
    }

    fn completions(&self, request: &Incoming) -> Answer {
        let Some(body) = request.json.as_ref().filter(|body| body.is_object()) else {
            return self.error(StatusCode::BAD_REQUEST, "the request body is not a JSON object", None);
        };
        // OpenClaw's compaction requests are answered apart from the script: they take no turn.
        let (reply, turn) = match Kind::of(body) {
            Kind::Compaction => (Reply::text(compaction::summary(body, self.summary_chars)), None),
            Kind::Flush => (compaction::flush(body, self.flush_chars), None),
            Kind::Agent | Kind::Side => self.agent.reply(request, body),
        };
        let label = turn.map_or_else(|| "flush".to_string(), |turn| turn.to_string());
        let completion = Completion {
            id: format!("chatcmpl-loopback-{}", request.seq),
            model: body.get("model").cloned().unwrap_or_else(|| json!(self.models.first())),
            tool_calls: tool_calls(&reply, &label),
            finish_reason: if reply.ends_turn() { "stop" } else { "tool_calls" },
            text: reply.text,
            prompt_tokens: tokens(request.size),
        };
        let (content_type, pieces) = if request.stream() {
            (EVENT_STREAM, completion.chunks(body["stream_options"]["include_usage"] == true))
        } else {
            (JSON, halves(&completion.whole()))
        };
        ok(content_type, pieces, turn.map(|turn| turn as u64))
    }
}

impl Play for OpenAiPlay {
    fn numbered(&self, method: &Method, path: &str) -> bool {
        method == Method::POST && path == COMPLETIONS
    }

    fn kind(&self, request: &Incoming) -> Option<&'static str> {
        let body = request.json.as_ref().filter(|body| body.is_object())?;
        (request.method == Method::POST && request.path == COMPLETIONS).then(|| Kind::of(body).name())
    }

    fn answer(&self, request: &Incoming) -> Answer {
        match (&request.method, request.path.as_str()) {
            (&Method::GET, MODELS) => self.models(),
            (&Method::POST, COMPLETIONS) => self.completions(request),
            (&Method::POST, EMBEDDINGS) => embeddings(request),
            (method, path) => self.error(StatusCode::NOT_FOUND, &format!("no route for {method} {path}"), None),
        }
    }

    /// OpenAI's error body; a fault's `code` is its error `code` and `type`, as OpenAI sends
    /// `insufficient_quota`.
    fn error(&self, status: StatusCode, message: &str, code: Option<&str>) -> Answer {
        openai_error(status, message, code)
    }
}

pub(super) fn openai_error(status: StatusCode, message: &str, code: Option<&str>) -> Answer {
    let (kind, code) = match code {
        Some(code) => (code, json!(code)),
        None => error_kind(status),
    };
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    Answer { status, content_type: JSON, headers: Vec::new(), pieces: vec![bytes(&body)], reply: None }
}

/// The answer of `POST /v1/embeddings`: one [`embedding`] per `input` (a string, or a list of
/// strings), listed last input first, as a server may (a client must put them back in order by
/// `index`), with the request's `model` and a usage. A play of a test may answer with it.
pub fn embeddings(request: &Incoming) -> Answer {
    let body = request.json.as_ref().unwrap_or(&Value::Null);
    let inputs = match embedding_inputs(body) {
        Ok(inputs) => inputs,
        Err(message) => return openai_error(StatusCode::BAD_REQUEST, message, None),
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": embedding(text)}))
        .collect();
    let usage = json!({"prompt_tokens": tokens(request.size), "total_tokens": tokens(request.size)});
    Answer::json(StatusCode::OK, &json!({"object": "list", "data": data, "model": body["model"], "usage": usage}))
}

/// The texts of an embeddings request's `input` (a string, or a list of strings); token arrays
/// and anything else are refused with the reason.
pub(super) fn embedding_inputs(body: &Value) -> Result<Vec<&str>, &'static str> {
    let inputs: Option<Vec<&str>> = match &body["input"] {
        Value::String(text) => Some(vec![text.as_str()]),
        Value::Array(items) => items.iter().map(Value::as_str).collect(),
        _ => None,
    };
    inputs.ok_or("`input` must be a string or a list of strings")
}

/// The vector `/v1/embeddings` answers for `text`: its length in bytes, its first byte (0 for
/// the empty text) and 1. Deterministic and different for most texts, which is what a client's
/// batching, ordering and caching need; it says nothing of meaning.
pub fn embedding(text: &str) -> Vec<f32> {
    vec![text.len() as f32, f32::from(text.bytes().next().unwrap_or(0)), 1.0]
}

fn ok(content_type: &'static str, pieces: Vec<Bytes>, reply: Option<u64>) -> Answer {
    Answer { status: StatusCode::OK, content_type, headers: Vec::new(), pieces, reply }
}

/// OpenAI's error `type` and `code` for an HTTP status.
fn error_kind(status: StatusCode) -> (&'static str, Value) {
    match status.as_u16() {
        401 => ("invalid_request_error", json!("invalid_api_key")),
        404 => ("invalid_request_error", json!("unknown_url")),
        429 => ("requests", json!("rate_limit_exceeded")),
        500..=599 => ("server_error", Value::Null),
        _ => ("invalid_request_error", Value::Null),
    }
}

/// A reply's tool calls with their whole arguments (a JSON string, as OpenAI sends them). Ids are
/// unique per turn (`flush` for a flush's write) and call, and the same when a conversation is
/// sent again.
fn tool_calls(reply: &Reply, turn: &str) -> Vec<Value> {
    reply
        .tools
        .iter()
        .enumerate()
        .map(|(index, tool)| {
            let arguments = Value::Object(tool.input.clone()).to_string();
            json!({"id": format!("call_loopback_{turn}_{index}"), "type": "function",
                "function": {"name": tool.name, "arguments": arguments}})
        })
        .collect()
}

/// One completion, sent whole or as a stream of chunks.
struct Completion {
    id: String,
    model: Value,
    text: Option<String>,
    tool_calls: Vec<Value>,
    finish_reason: &'static str,
    prompt_tokens: usize,
}

impl Completion {
    fn message(&self) -> Value {
        let mut message = json!({"role": "assistant", "content": self.text});
        if !self.tool_calls.is_empty() {
            message["tool_calls"] = json!(self.tool_calls);
        }
        message
    }

    fn usage(&self) -> Value {
        let completion_tokens = tokens(self.message().to_string().len());
        json!({"prompt_tokens": self.prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": self.prompt_tokens + completion_tokens})
    }

    fn whole(&self) -> Value {
        json!({
            "id": self.id, "object": "chat.completion", "created": 0, "model": self.model,
            "choices": [{"index": 0, "message": self.message(), "finish_reason": self.finish_reason}],
            "usage": self.usage(),
        })
    }

    /// A `chat.completion.chunk` with one choice.
    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Bytes {
        let choice = json!({"index": 0, "delta": delta, "finish_reason": finish_reason});
        data(&json!({"id": self.id, "object": "chat.completion.chunk", "created": 0, "model": self.model,
            "choices": [choice]}))
    }

    /// The stream's events, one piece each: the role, the text's deltas, each tool call (its id
    /// and name, then its arguments' deltas), the finish reason, the usage when asked, `[DONE]`.
    fn chunks(&self, include_usage: bool) -> Vec<Bytes> {
        let mut chunks = vec![self.chunk(json!({"role": "assistant", "content": ""}), None)];
        if let Some(text) = &self.text {
            chunks.extend(split(text).into_iter().map(|piece| self.chunk(json!({"content": piece}), None)));
        }
        for (index, call) in self.tool_calls.iter().enumerate() {
            let function = &call["function"];
            let start = json!({"index": index, "id": call["id"], "type": "function",
                "function": {"name": function["name"], "arguments": ""}});
            chunks.push(self.chunk(json!({"tool_calls": [start]}), None));
            for piece in split(function["arguments"].as_str().unwrap_or_default()) {
                let delta = json!({"index": index, "function": {"arguments": piece}});
                chunks.push(self.chunk(json!({"tool_calls": [delta]}), None));
            }
        }
        chunks.push(self.chunk(json!({}), Some(self.finish_reason)));
        if include_usage {
            chunks.push(data(&json!({"id": self.id, "object": "chat.completion.chunk", "created": 0,
                "model": self.model, "choices": [], "usage": self.usage()})));
        }
        chunks.push(Bytes::from_static(b"data: [DONE]\n\n"));
        chunks
    }
}

fn data(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}
