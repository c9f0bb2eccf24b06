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
    /// A reply of `text` alone.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: Some(text.into()), tools: Vec::new() }
    }

    fn done() -> Self {
        Self::text(DONE)
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
            let mut reply = reply_for(&self.replies, turn).into_owned();
            fill_user_words(&mut reply, body);
            (reply, Some(turn))
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

/// What a tool call's input may ask for in a string value: the user's own words of the
/// conversation's last user message, so that one script serves every question (a model that
/// searches memory with the question it was asked).
pub const USER_WORDS: &str = "{{user}}";

/// Replaces [`USER_WORDS`] in the string values of `reply`'s tool inputs with the user's words
/// of `body`'s last user message.
fn fill_user_words(reply: &mut Reply, body: &Value) {
    if !reply
        .tools
        .iter()
        .any(|tool| tool.input.values().any(|value| value.as_str().is_some_and(|s| s.contains(USER_WORDS))))
    {
        return;
    }
    let words = user_words(body);
    for tool in &mut reply.tools {
        for value in tool.input.values_mut() {
            if let Some(text) = value.as_str().filter(|text| text.contains(USER_WORDS)) {
                *value = Value::String(text.replace(USER_WORDS, &words));
            }
        }
    }
}

/// The last user message's text (a string, or its text parts joined) without the tagged blocks
/// a client or plugin wrapped around the user's words (`<tag>…</tag>` from a line's start), trimmed.
pub fn user_words(body: &Value) -> String {
    let Some(message) =
        body["messages"].as_array().and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    without_tagged_blocks(&message_text(&message["content"]))
}

/// A chat message's text: its `content` string, or its text parts joined by new lines.
pub fn message_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// `text` without the blocks tagged `<tag>…</tag>` from a line's start (a plugin's recalled
/// memories, a client's metadata), trimmed.
pub fn without_tagged_blocks(text: &str) -> String {
    let mut out = String::new();
    let mut closing: Option<String> = None;
    for line in text.lines() {
        if let Some(tag) = &closing {
            if line.trim_end().ends_with(tag.as_str()) {
                closing = None;
            }
            continue;
        }
        let trimmed = line.trim_start();
        if let Some(name) = trimmed.strip_prefix('<').and_then(|rest| rest.split('>').next())
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            let tag = format!("</{name}>");
            if !trimmed.trim_end().ends_with(tag.as_str()) {
                closing = Some(tag);
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

/// How many assistant turns a chat conversation holds (Anthropic's and OpenAI's `messages`).
pub fn assistant_turns(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map_or(0, |messages| messages.iter().filter(|message| message["role"] == "assistant").count())
}

#[cfg(test)]
mod user_words_tests {
    use serde_json::json;

    use super::{Reply, ToolCall, fill_user_words, user_words};

    #[test]
    fn the_users_words_leave_out_a_block_a_plugin_prepended() {
        let body = json!({"messages": [
            {"role": "user", "content": "an earlier question"},
            {"role": "assistant", "content": "an answer"},
            {"role": "user", "content": [{"type": "text", "text": "<cortex_memories>\n- a memory\n</cortex_memories>\n\nWhat is the TTL?"}]},
        ]});
        assert_eq!(user_words(&body), "What is the TTL?");
        assert_eq!(user_words(&json!({"messages": [{"role": "user", "content": "<b>one line</b>\nplain"}]})), "plain");
        assert_eq!(user_words(&json!({"messages": []})), "");
    }

    #[test]
    fn a_tool_input_asking_for_the_users_words_gets_them() {
        let mut input = serde_json::Map::new();
        input.insert("query".into(), json!("{{user}}"));
        input.insert("maxResults".into(), json!(6));
        let mut reply = Reply { text: None, tools: vec![ToolCall { name: "memory_search".into(), input }] };
        fill_user_words(&mut reply, &json!({"messages": [{"role": "user", "content": "Which port?"}]}));
        assert_eq!(reply.tools[0].input["query"], "Which port?");
        assert_eq!(reply.tools[0].input["maxResults"], 6);
    }
}
