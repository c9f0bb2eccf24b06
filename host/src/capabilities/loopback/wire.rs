//! What every play's answers are made of: JSON bodies, deterministic token counts, and text cut
//! into the deltas of a stream. Nothing here knows one API from another.

use axum::body::Bytes;
use serde_json::Value;

pub const JSON: &str = "application/json";
pub const EVENT_STREAM: &str = "text/event-stream";

/// How many deltas a text or a tool's input JSON is streamed in, at most: more than one, as the
/// real APIs stream, so a client's reassembly is exercised.
const DELTAS: usize = 3;

/// The deterministic token count of `size` bytes: about four bytes a token.
pub fn tokens(size: usize) -> usize {
    size.div_ceil(4)
}

/// `text` in at most [`DELTAS`] pieces, cut at character boundaries; one piece, empty, for empty
/// text.
pub fn split(text: &str) -> Vec<&str> {
    let size = text.len().div_ceil(DELTAS).max(1);
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    if pieces.is_empty() {
        pieces.push("");
    }
    pieces
}

pub fn bytes(value: &Value) -> Bytes {
    Bytes::from(value.to_string())
}

/// A whole JSON body in two pieces, so that a `cut` breaks it in the middle.
pub fn halves(value: &Value) -> Vec<Bytes> {
    let whole = bytes(value);
    let middle = whole.len() / 2;
    vec![whole.slice(..middle), whole.slice(middle..)]
}
