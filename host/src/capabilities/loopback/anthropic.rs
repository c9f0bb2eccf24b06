//! The Anthropic Messages API, played: `POST /v1/messages` answered with the scripted agent's
//! turns (streamed as server-sent events when asked, as Claude Code does) or the side reply,
//! `POST /v1/messages/count_tokens`, and Anthropic's error bodies. Ids and token counts are
//! derived from the request alone, so runs are reproducible.

use axum::body::Bytes;
use axum::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::LoopbackError;
use super::faults::{FaultSpec, Faults};
use super::replies::{self, Agent, Reply};
use super::server::{Answer, Incoming, Play};
use super::wire::{EVENT_STREAM, JSON, bytes, halves, split, tokens};

const MESSAGES: &str = "/v1/messages";
const COUNT_TOKENS: &str = "/v1/messages/count_tokens";

/// What `loopback::anthropic` is given.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnthropicScript {
    /// The agent's turns, in order.
    pub replies: Vec<Reply>,
    /// The text answering side requests (those offering no tools).
    #[serde(default = "replies::default_side_reply")]
    pub side_reply: String,
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
}

pub struct AnthropicPlay {
    agent: Agent,
}

impl AnthropicPlay {
    pub fn new(script: AnthropicScript) -> Result<(Self, Faults), LoopbackError> {
        let (agent, faults) = Agent::new("anthropic", script.replies, script.side_reply, &script.faults)?;
        Ok((Self { agent }, faults))
    }

    fn messages(&self, request: &Incoming) -> Answer {
        let Some(body) = request.json.as_ref().filter(|body| body.is_object()) else {
            return self.error(StatusCode::BAD_REQUEST, "the request body is not a JSON object", None);
        };
        let (reply, turn) = self.agent.reply(request, body);
        let message = Message {
            id: format!("msg_loopback_{}", request.seq),
            model: body.get("model").cloned().unwrap_or_else(|| json!("loopback")),
            content: content(&reply, turn.unwrap_or(0)),
            stop_reason: if reply.ends_turn() { "end_turn" } else { "tool_use" },
            input_tokens: tokens(request.size),
        };
        let (content_type, pieces) =
            if request.stream() { (EVENT_STREAM, message.events()) } else { (JSON, halves(&message.whole())) };
        let turn = turn.map(|turn| turn as u64);
        Answer { status: StatusCode::OK, content_type, headers: Vec::new(), pieces, reply: turn }
    }
}

impl Play for AnthropicPlay {
    fn numbered(&self, method: &Method, path: &str) -> bool {
        method == Method::POST && path == MESSAGES
    }

    fn kind(&self, request: &Incoming) -> Option<&'static str> {
        let messages = request.method == Method::POST && request.path == MESSAGES;
        messages.then(|| if request.agent() { "agent" } else { "side" })
    }

    fn answer(&self, request: &Incoming) -> Answer {
        match (&request.method, request.path.as_str()) {
            (&Method::POST, MESSAGES) => self.messages(request),
            (&Method::POST, COUNT_TOKENS) => {
                let body = json!({"input_tokens": tokens(request.size)});
                Answer {
                    status: StatusCode::OK,
                    content_type: JSON,
                    headers: Vec::new(),
                    pieces: vec![bytes(&body)],
                    reply: None,
                }
            }
            (method, path) => self.error(StatusCode::NOT_FOUND, &format!("no route for {method} {path}"), None),
        }
    }

    /// Anthropic's error body; a fault's `code` is its error `type`.
    fn error(&self, status: StatusCode, message: &str, code: Option<&str>) -> Answer {
        let kind = code.unwrap_or_else(|| error_type(status));
        let body = json!({"type": "error", "error": {"type": kind, "message": message}});
        Answer { status, content_type: JSON, headers: Vec::new(), pieces: vec![bytes(&body)], reply: None }
    }
}

/// Anthropic's error type for an HTTP status.
fn error_type(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

/// A reply's content blocks with their whole inputs. Tool use ids are unique per turn and block,
/// and the same when a conversation is sent again.
fn content(reply: &Reply, turn: usize) -> Vec<Value> {
    let text = reply.text.iter().map(|text| json!({"type": "text", "text": text}));
    let tools = reply.tools.iter().enumerate().map(|(block, tool)| {
        json!({"type": "tool_use", "id": format!("toolu_loopback_{turn}_{block}"), "name": tool.name, "input": tool.input})
    });
    text.chain(tools).collect()
}

/// One assistant message, sent whole or as a stream.
struct Message {
    id: String,
    model: Value,
    content: Vec<Value>,
    stop_reason: &'static str,
    input_tokens: usize,
}

impl Message {
    fn output_tokens(&self) -> usize {
        tokens(Value::Array(self.content.clone()).to_string().len())
    }

    fn whole(&self) -> Value {
        json!({
            "id": self.id, "type": "message", "role": "assistant", "model": self.model,
            "content": self.content, "stop_reason": self.stop_reason, "stop_sequence": null,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens()},
        })
    }

    /// The stream's events, one piece each, `message_start` first.
    fn events(&self) -> Vec<Bytes> {
        let usage = json!({"input_tokens": self.input_tokens, "output_tokens": 1,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
        let start = json!({"type": "message_start", "message": {
            "id": self.id, "type": "message", "role": "assistant", "model": self.model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": usage}});
        let mut events = vec![event("message_start", &start), event("ping", &json!({"type": "ping"}))];
        for (index, block) in self.content.iter().enumerate() {
            events.extend(block_events(index, block));
        }
        let delta = json!({"type": "message_delta", "delta": {"stop_reason": self.stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": self.output_tokens()}});
        events.push(event("message_delta", &delta));
        events.push(event("message_stop", &json!({"type": "message_stop"})));
        events
    }
}

/// A content block as `content_block_start` (empty), deltas, `content_block_stop`.
fn block_events(index: usize, block: &Value) -> Vec<Bytes> {
    let (start, deltas) = if block["type"] == "tool_use" {
        let start = json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}});
        let input = block["input"].to_string();
        let deltas: Vec<Value> =
            split(&input).into_iter().map(|chunk| json!({"type": "input_json_delta", "partial_json": chunk})).collect();
        (start, deltas)
    } else {
        let text = block["text"].as_str().unwrap_or_default();
        let deltas = split(text).into_iter().map(|chunk| json!({"type": "text_delta", "text": chunk})).collect();
        (json!({"type": "text", "text": ""}), deltas)
    };
    let mut events = vec![event(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index, "content_block": start}),
    )];
    for delta in deltas {
        events.push(event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
    }
    events.push(event("content_block_stop", &json!({"type": "content_block_stop", "index": index})));
    events
}

fn event(name: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}
