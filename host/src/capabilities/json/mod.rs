//! The `json` capability: converting between JSON text and values in memory.
//!
//! Pure functions, so there is no backend to swap and no trait; guests have serde already.

pub mod rhai;

use serde_json::Value;

/// Why a string could not be parsed as JSON; line and column are within the string.
#[derive(Debug, thiserror::Error)]
#[error("invalid JSON at line {line}, column {column}: {message}")]
pub struct JsonError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

pub fn parse(text: &str) -> Result<Value, JsonError> {
    serde_json::from_str(text).map_err(|error| JsonError {
        line: error.line(),
        column: error.column(),
        message: message(&error),
    })
}

/// Every JSON object written in `text`, in order: a model's reply that wraps its answer in
/// prose or a code fence. Objects inside a found object are part of it, not found again; a `{`
/// that starts no valid object is skipped.
pub fn objects_in(text: &str) -> Vec<serde_json::Map<String, Value>> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let start = from + offset;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(Value::Object(object))) => {
                found.push(object);
                from = start + stream.byte_offset();
            }
            _ => from = start + 1,
        }
    }
    found
}

/// serde_json's message without the " at line L column C" its `Display` appends, for errors
/// that report the location themselves.
pub fn message(error: &serde_json::Error) -> String {
    let full = error.to_string();
    full.rsplit_once(" at line ").map_or(full.as_str(), |(message, _)| message).to_string()
}

/// `json::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability::script("json", |_| rhai::module());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_found_in_prose_and_code_fences_in_order() {
        let reply = "Verdict:\n```json\n{\"score\": 2, \"why\": {\"a\": 1}}\n```\nand {\"score\": 3}.";
        let found = objects_in(reply);
        assert_eq!(found.len(), 2, "the nested object is part of the first");
        assert_eq!(found[0]["why"]["a"], 1);
        assert_eq!(found[1]["score"], 3);
    }

    #[test]
    fn a_brace_that_starts_no_object_is_skipped() {
        let found = objects_in("use {braces} like {\"ok\": true} or { broken");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0]["ok"], true);
        assert!(objects_in("no objects here, only [1, 2]").is_empty());
    }

    #[test]
    fn a_parse_error_gives_line_and_column_once() {
        let error = parse("[1,\n 2,,]").unwrap_err();
        assert_eq!(error.to_string(), "invalid JSON at line 2, column 4: expected value");
    }
}
