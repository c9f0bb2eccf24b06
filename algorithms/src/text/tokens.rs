//! Tokens as a model counts them: OpenAI's BPE encodings (`o200k_base`, GPT-4o's and later;
//! `cl100k_base`, GPT-4's), whose ranks ship inside `tiktoken-rs`, so counting needs no download.
//! Each encoding is built once per process, on first use.

use super::{Result, TextError};

/// The encodings `token_count` knows, by name.
pub const ENCODINGS: [&str; 2] = ["o200k_base", "cl100k_base"];

/// How many tokens `text` is in `encoding` (special tokens counted as ordinary text).
pub fn token_count(text: &str, encoding: &str) -> Result<usize> {
    let bpe = match encoding {
        "o200k_base" => tiktoken_rs::o200k_base_singleton(),
        "cl100k_base" => tiktoken_rs::cl100k_base_singleton(),
        other => return Err(TextError::Encoding { encoding: other.to_string(), known: ENCODINGS.join(", ") }),
    };
    Ok(bpe.encode_ordinary(text).len())
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
