//! The scripted agent of a chat play: its turns in order, and which one answers a conversation.
//! A reply is chosen by the conversation alone (how many assistant turns it already holds), so a
//! client that sends the same conversation again gets the same reply, and the server keeps no
//! state per conversation.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One assistant turn: text, tool calls, or text and then tool calls.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub tools: Vec<ToolCall>,
}

/// A call of one of the client's tools, with its whole input.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    pub name: String,
    pub input: Map<String, Value>,
}

/// What answers a conversation once the script has no more turns that fit.
const DONE: &str = "Done.";

impl Reply {
    fn done() -> Self {
        Self { text: Some(DONE.to_string()), tools: Vec::new() }
    }

    /// Whether it ends the agent's turn (no tool calls to run).
    pub fn ends_turn(&self) -> bool {
        self.tools.is_empty()
    }
}

/// The replies a script gave, checked: each says something.
pub fn check(replies: &[Reply]) -> Result<(), (usize, &'static str)> {
    match replies.iter().position(|reply| reply.text.is_none() && reply.tools.is_empty()) {
        Some(index) => Err((index, "a reply needs `text`, `tools` or both")),
        None => Ok(()),
    }
}

/// The reply to a conversation that already holds `turn` assistant messages: reply number
/// `turn`; past the end, the last reply again if it calls no tools (an agent that keeps asking
/// gets the same final answer), else a plain "Done." so that no tool runs twice.
pub fn reply_for(replies: &[Reply], turn: usize) -> Cow<'_, Reply> {
    match replies.get(turn) {
        Some(reply) => Cow::Borrowed(reply),
        None => match replies.last() {
            Some(last) if last.ends_turn() => Cow::Borrowed(last),
            _ => Cow::Owned(Reply::done()),
        },
    }
}

/// How many assistant turns a chat conversation holds (Anthropic's and OpenAI's `messages`).
pub fn assistant_turns(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map_or(0, |messages| messages.iter().filter(|message| message["role"] == "assistant").count())
}
