//! The scripted agent of a chat play (Anthropic's, OpenAI's): its turns in order, the side reply,
//! and which one answers a request. A reply is chosen by the conversation alone (how many
//! assistant turns it already holds), so a client that sends the same conversation again gets the
//! same reply, and the server keeps no state per conversation. The wire format is the play's.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::LoopbackError;
use super::faults::{FaultSpec, Faults};
use super::server::Incoming;

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

/// The text answering side requests when a script gives none: an empty JSON list, what a hook's
/// reranker reads as "nothing relevant".
pub fn default_side_reply() -> String {
    "[]".to_string()
}

/// A chat play's script, checked.
pub struct Agent {
    replies: Vec<Reply>,
    side_reply: String,
}

impl Agent {
    /// Checks the script of `loopback::<play>`; an error names the field at fault.
    pub fn new(
        play: &'static str,
        replies: Vec<Reply>,
        side_reply: String,
        faults: &[FaultSpec],
    ) -> Result<(Self, Faults), LoopbackError> {
        let invalid = |field: String, message: String| LoopbackError::Script { play, field, message };
        check(&replies).map_err(|(index, message)| invalid(format!("replies[{index}]"), message.to_string()))?;
        let faults =
            Faults::new(faults).map_err(|problem| invalid(format!("faults[{}]", problem.index), problem.message))?;
        Ok((Self { replies, side_reply }, faults))
    }

    /// The reply to `request`, whose JSON body is `body`, and the turn it answers: a request
    /// offering tools gets the agent's turn for its conversation; any other gets the side reply,
    /// answering no turn.
    pub fn reply(&self, request: &Incoming, body: &Value) -> (Reply, Option<usize>) {
        if request.agent() {
            let turn = assistant_turns(body);
            (reply_for(&self.replies, turn).into_owned(), Some(turn))
        } else {
            (Reply { text: Some(self.side_reply.clone()), tools: Vec::new() }, None)
        }
    }
}

/// The replies a script gave, checked: each says something.
fn check(replies: &[Reply]) -> Result<(), (usize, &'static str)> {
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
