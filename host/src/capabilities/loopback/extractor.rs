//! The memory extractor: a stand-in for the LLM a memory system asks to turn new messages into
//! memories, so that it runs without a key. It answers mem0's extraction request (2.2.1; the
//! request is described in `scripts/lib/locomo/MEM0.md`) with the user's own statements: one
//! memory per `user:` message of the request's `## New Messages` section, as it was said,
//! in the JSON object mem0 reads. The assistant's messages are not the user's memories and are
//! left out. Deterministic, and blind to the request's dates, so a run is reproducible.

use serde_json::{Value, json};

/// The name `loopback::models` knows the extractor by.
pub const NAME: &str = "memory-extractor";

const NEW_MESSAGES: &str = "## New Messages";

/// The statements the request's new messages hold, one per `user:` message (its lines joined
/// with spaces), in order; an error saying why a request is not an extraction request.
pub fn extract(body: &Value) -> Result<Vec<String>, String> {
    let messages = body["messages"].as_array().ok_or("`messages` must be a list")?;
    let prompt = messages
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .and_then(|message| message["content"].as_str())
        .ok_or("no user message with text content")?;
    let mut lines = prompt.lines().skip_while(|line| line.trim_end() != NEW_MESSAGES);
    if lines.next().is_none() {
        return Err(format!(
            "not a memory-extraction request: the last user message has no `{NEW_MESSAGES}` section (mem0's extraction prompt)"
        ));
    }
    let mut statements: Vec<(bool, String)> = Vec::new();
    for line in lines.take_while(|line| !line.starts_with("## ") && !line.starts_with("# ")) {
        if let Some(text) = line.strip_prefix("user: ") {
            statements.push((true, text.trim().to_string()));
        } else if let Some(text) = line.strip_prefix("assistant: ") {
            statements.push((false, text.trim().to_string()));
        } else if let Some((_, text)) = statements.last_mut().filter(|_| !line.trim().is_empty()) {
            text.push(' ');
            text.push_str(line.trim());
        }
    }
    Ok(statements.into_iter().filter(|(user, text)| *user && !text.is_empty()).map(|(_, text)| text).collect())
}

/// The message content answering with `memories`: `{"memory": [{"id", "text", "attributed_to",
/// "linked_memory_ids"}]}`.
pub fn answer(memories: &[String]) -> Value {
    let memory: Vec<Value> = memories
        .iter()
        .enumerate()
        .map(|(id, text)| json!({"id": id.to_string(), "text": text, "attributed_to": "user", "linked_memory_ids": []}))
        .collect();
    json!({ "memory": memory })
}
