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

/// serde_json's message without the " at line L column C" its `Display` appends, for errors
/// that report the location themselves.
pub fn message(error: &serde_json::Error) -> String {
    let full = error.to_string();
    full.rsplit_once(" at line ").map_or(full.as_str(), |(message, _)| message).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parse_error_gives_line_and_column_once() {
        let error = parse("[1,\n 2,,]").unwrap_err();
        assert_eq!(error.to_string(), "invalid JSON at line 2, column 4: expected value");
    }
}
