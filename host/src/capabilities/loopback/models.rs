//! An OpenAI-compatible model server for a memory system that needs an LLM and an embedder of its
//! own (mem0): `POST /v1/embeddings` answered with host's embedding model (the run's, so its
//! vectors are cached and the manifest names the model), and `POST /v1/chat/completions`
//! answered either by the memory extractor ([`super::extractor`]: the memory system stores and
//! retrieves for real while its extraction is a stand-in that needs no key) or by a real model
//! through the run's `llm` stack (cached, metered into `llm_calls`, rate limited, retried).
//! `GET /v1/models` lists the two model ids.

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::LoopbackError;
use super::extractor;
use super::faults::{FaultSpec, Faults};
use super::openai::{embedding_inputs, openai_error};
use super::server::{Answer, Incoming, Play};
use super::wire::tokens;
use crate::capabilities::embed::Embedder;
use crate::capabilities::llm::{ChatRequest, Llm, Message};

const MODELS: &str = "/v1/models";
const COMPLETIONS: &str = "/v1/chat/completions";
const EMBEDDINGS: &str = "/v1/embeddings";

/// What `loopback::models` is given.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelsScript {
    /// What answers chat completions: `memory-extractor`, or `llm:<model>` (a model as `llm::chat`
    /// names it, through the run's `llm` stack).
    #[serde(default = "default_chat")]
    pub chat: String,
    /// The embedding model, as `embed::` names it (`local` or none: the run's local model); the
    /// Rhai adapter builds the embedder from it.
    #[serde(default)]
    pub embedding_model: Option<String>,
    /// The model id chat completions are answered under.
    #[serde(default = "default_chat")]
    pub chat_model: String,
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
}

fn default_chat() -> String {
    extractor::NAME.to_string()
}

/// What answers chat completions.
enum Chat {
    Extractor,
    Model { llm: Arc<dyn Llm>, model: String },
}

/// What the `llm_calls` rows of forwarded requests are recorded as.
const ROLE: &str = "memory-system";

pub struct ModelsPlay {
    chat: Chat,
    chat_model: String,
    embedder: Arc<dyn Embedder>,
}

impl ModelsPlay {
    pub fn new(
        script: ModelsScript,
        embedder: Arc<dyn Embedder>,
        llm: Arc<dyn Llm>,
    ) -> Result<(Self, Faults), LoopbackError> {
        let chat = match script.chat.strip_prefix("llm:") {
            _ if script.chat == extractor::NAME => Chat::Extractor,
            Some(model) if !model.is_empty() => Chat::Model { llm, model: model.to_string() },
            _ => {
                let message = format!("`{}` answers no chat; give `{}` or `llm:<model>`", script.chat, extractor::NAME);
                return Err(LoopbackError::Script { play: "models", field: "chat".into(), message });
            }
        };
        let faults = Faults::new(&script.faults).map_err(|problem| LoopbackError::Script {
            play: "models",
            field: format!("faults[{}]", problem.index),
            message: problem.message,
        })?;
        Ok((Self { chat, chat_model: script.chat_model, embedder }, faults))
    }

    fn models(&self) -> Answer {
        let data: Vec<Value> = [self.chat_model.clone(), self.embedder.model_id()]
            .into_iter()
            .map(|id| json!({"id": id, "object": "model", "created": 0, "owned_by": "host"}))
            .collect();
        Answer::json(StatusCode::OK, &json!({"object": "list", "data": data}))
    }

    fn completions(&self, request: &Incoming) -> Answer {
        let Some(body) = request.json.as_ref().filter(|body| body.is_object()) else {
            return self.error(StatusCode::BAD_REQUEST, "the request body is not a JSON object", None);
        };
        if body["stream"] == true {
            return self.error(StatusCode::BAD_REQUEST, "this server does not stream: send `stream: false`", None);
        }
        let (content, usage) = match &self.chat {
            Chat::Extractor => match extractor::extract(body) {
                Ok(memories) => (extractor::answer(&memories).to_string(), None),
                Err(message) => return self.error(StatusCode::BAD_REQUEST, &message, None),
            },
            Chat::Model { llm, model } => {
                let asked = match forwarded(body, model) {
                    Ok(asked) => asked,
                    Err(message) => return self.error(StatusCode::BAD_REQUEST, &message, None),
                };
                let llm = llm.clone();
                let answered = tokio::task::block_in_place(|| {
                    tokio::runtime::Handle::current().block_on(async move { llm.chat(asked).await })
                });
                match answered {
                    Ok(reply) => (reply.text, Some(reply.usage)),
                    Err(error) => {
                        let message = format!("the model failed: {}", crate::capabilities::error_chain(&error));
                        return self.error(StatusCode::BAD_GATEWAY, &message, None);
                    }
                }
            }
        };
        let (prompt_tokens, completion_tokens) = match usage {
            Some(usage) => (usage.prompt_tokens as usize, usage.completion_tokens as usize),
            None => (tokens(request.size), tokens(content.len())),
        };
        Answer::json(
            StatusCode::OK,
            &json!({
                "id": format!("chatcmpl-host-{}", request.seq),
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model").cloned().unwrap_or_else(|| json!(self.chat_model)),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens},
            }),
        )
    }

    fn embeddings(&self, request: &Incoming) -> Answer {
        let body = request.json.as_ref().unwrap_or(&Value::Null);
        let texts: Vec<String> = match embedding_inputs(body) {
            Ok(inputs) => inputs.into_iter().map(str::to_owned).collect(),
            Err(message) => return self.error(StatusCode::BAD_REQUEST, message, None),
        };
        if let Some(format) = body["encoding_format"].as_str().filter(|format| *format != "float") {
            let message = format!("`encoding_format` `{format}` is not served; send `float`");
            return self.error(StatusCode::BAD_REQUEST, &message, None);
        }
        // The play answers on the server's runtime thread; the model runs on the same runtime.
        let embedder = self.embedder.clone();
        let embedded = tokio::task::block_in_place(|| {
            tokio::runtime::Handle::current().block_on(async move { embedder.embed(texts, None).await })
        });
        let embedded = match embedded {
            Ok(embedded) => embedded,
            Err(error) => {
                return self.error(StatusCode::INTERNAL_SERVER_ERROR, &format!("embedding failed: {error}"), None);
            }
        };
        if let Some(asked) = body["dimensions"].as_u64().filter(|asked| *asked != embedded.dimension as u64) {
            let message =
                format!("`dimensions` {asked} is not served: the model's vectors have {}", embedded.dimension);
            return self.error(StatusCode::BAD_REQUEST, &message, None);
        }
        let data: Vec<Value> = embedded
            .vectors
            .iter()
            .enumerate()
            .map(|(index, vector)| json!({"object": "embedding", "index": index, "embedding": vector}))
            .collect();
        let usage = json!({"prompt_tokens": tokens(request.size), "total_tokens": tokens(request.size)});
        Answer::json(StatusCode::OK, &json!({"object": "list", "data": data, "model": embedded.model, "usage": usage}))
    }
}

/// The request `llm::chat` makes of a chat completion: its messages (a content given as parts
/// becomes their text), sampling (temperature, top_p), token limit and response format, for
/// `model`.
fn forwarded(body: &Value, model: &str) -> Result<ChatRequest, String> {
    let messages = body["messages"].as_array().ok_or("`messages` must be a list")?;
    let messages = messages
        .iter()
        .enumerate()
        .map(|(index, message)| {
            let role = message["role"].as_str().ok_or(format!("messages[{index}]: `role` must be a string"))?;
            let content = match &message["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => {
                    parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("")
                }
                _ => return Err(format!("messages[{index}]: `content` must be text or a list of text parts")),
            };
            Ok(Message { role: role.to_string(), content })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let max_tokens = body["max_tokens"].as_u64().or_else(|| body["max_completion_tokens"].as_u64());
    Ok(ChatRequest {
        model: Some(model.to_string()),
        messages,
        temperature: body["temperature"].as_f64(),
        top_p: body["top_p"].as_f64(),
        max_tokens: max_tokens.map(|tokens| u32::try_from(tokens).unwrap_or(u32::MAX)),
        role: Some(ROLE.to_string()),
        response_format: body.get("response_format").filter(|format| !format.is_null()).cloned(),
        ..ChatRequest::default()
    })
}

impl Play for ModelsPlay {
    fn numbered(&self, method: &Method, path: &str) -> bool {
        method == Method::POST && (path == COMPLETIONS || path == EMBEDDINGS)
    }

    fn answer(&self, request: &Incoming) -> Answer {
        match (&request.method, request.path.as_str()) {
            (&Method::GET, MODELS) => self.models(),
            (&Method::POST, COMPLETIONS) => self.completions(request),
            (&Method::POST, EMBEDDINGS) => self.embeddings(request),
            (method, path) => self.error(StatusCode::NOT_FOUND, &format!("no route for {method} {path}"), None),
        }
    }

    fn error(&self, status: StatusCode, message: &str, code: Option<&str>) -> Answer {
        openai_error(status, message, code)
    }
}
