//! The contract between the host and its guest modules, shared by both sides so that neither can
//! drift: the ABI version, the names of exports and imports, and the JSON types that cross.
//!
//! A guest is a WASI preview 1 core module. Values cross the boundary as UTF-8 JSON in guest
//! memory, passed as a pointer and a length, with one exception for bulk text (below):
//!
//! - the guest exports [`ABI_VERSION_EXPORT`], [`ALLOC_EXPORT`] and [`FREE_EXPORT`], and one
//!   function per callable, named [`FUNCTION_PREFIX`] + its name, of type
//!   `(ptr: i32, json_len: i32, raw_len: i32) -> i64`;
//! - the host writes the input into memory it obtained from [`ALLOC_EXPORT`], calls the
//!   function, which owns and frees the input, and reads the [`Reply`] it returns, packed as
//!   `ptr << 32 | len`; the host then frees it with [`FREE_EXPORT`];
//! - the input is `json_len` bytes of JSON followed by `raw_len` bytes of raw UTF-8: when the
//!   input is an object whose [`RAW_FIELD`] is a string, that string travels as the raw bytes
//!   and the JSON leaves the field out; otherwise `raw_len` is [`NO_RAW`] and the JSON is the
//!   whole input. The guest puts the field back before decoding, so a guest function sees the
//!   same input either way, and can borrow the text instead of unescaping a copy of it. (Source
//!   files are most of what crosses; as JSON, escaping and unescaping them cost more than
//!   scanning them.) The region the guest owns is `json_len + max(raw_len, 0)` bytes;
//! - capabilities are import modules `host:<capability>`, each with one function [`CALL_IMPORT`]
//!   of type `(op_ptr: i32, op_len: i32, in_ptr: i32, in_len: i32) -> i64`, answering a
//!   [`Reply`] in memory the host allocated through [`ALLOC_EXPORT`] and the guest frees.
//!
//! This crate knows nothing of wasmtime or of the guest SDK; it is only names and serde types.

pub mod imports;
pub mod markdown;

use serde::{Deserialize, Serialize};

/// Bumped whenever a change to this contract would make an old guest misbehave on a new host.
/// Version 2 added the raw-text part of a callable's input (a third parameter), so the host
/// refuses version 1 guests instead of calling them with the wrong arity.
pub const ABI_VERSION: u32 = 2;

/// `() -> i32`: the ABI version the guest was built against.
pub const ABI_VERSION_EXPORT: &str = "guest_abi_version";
/// `(len: i32) -> i32`: memory for the host to write into; 0 when it cannot be had.
pub const ALLOC_EXPORT: &str = "guest_alloc";
/// `(ptr: i32, len: i32)`: gives back memory from [`ALLOC_EXPORT`] or a reply.
pub const FREE_EXPORT: &str = "guest_free";
/// Prefix of every callable export: `guest:extract_imports` is called as `extract_imports`.
pub const FUNCTION_PREFIX: &str = "guest:";
/// The input field that crosses as raw UTF-8 after the JSON, when it is a string.
pub const RAW_FIELD: &str = "content";
/// `raw_len` of an input that is all JSON.
pub const NO_RAW: i32 = -1;

/// Prefix of every capability import module: `host:log`, `host:embed`, `host:llm`.
pub const IMPORT_MODULE_PREFIX: &str = "host:";
/// The one function of each capability module.
pub const CALL_IMPORT: &str = "call";
/// The always-available module through which the SDK reports a panic before trapping:
/// `panic(ptr: i32, len: i32)`, a UTF-8 message.
pub const PANIC_MODULE: &str = "host:abi";
pub const PANIC_IMPORT: &str = "panic";

/// Packs a reply's location the way functions return it.
pub fn pack(ptr: u32, len: u32) -> u64 {
    (u64::from(ptr) << 32) | u64::from(len)
}

/// The inverse of [`pack`].
pub fn unpack(packed: u64) -> (u32, u32) {
    ((packed >> 32) as u32, packed as u32)
}

/// What a guest function or a host capability answers: a value, or a failure as a value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply<T> {
    Ok(T),
    Error(Failure),
}

impl<T> From<Result<T, Failure>> for Reply<T> {
    fn from(result: Result<T, Failure>) -> Self {
        match result {
            Ok(value) => Reply::Ok(value),
            Err(failure) => Reply::Error(failure),
        }
    }
}

impl<T> From<Reply<T>> for Result<T, Failure> {
    fn from(reply: Reply<T>) -> Self {
        match reply {
            Reply::Ok(value) => Ok(value),
            Reply::Error(failure) => Err(failure),
        }
    }
}

/// A failure that crosses the boundary as a value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    pub kind: FailureKind,
    pub message: String,
}

impl Failure {
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Failure { kind, message: message.into() }
    }

    pub fn invalid_input(message: impl Into<String>) -> Self {
        Failure::new(FailureKind::InvalidInput, message)
    }

    pub fn failed(message: impl Into<String>) -> Self {
        Failure::new(FailureKind::Failed, message)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{} ({})", self.message, self.kind.as_str())
    }
}

impl std::error::Error for Failure {}

/// Why something failed, for a caller to branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The input did not decode or did not make sense.
    InvalidInput,
    /// The function ran and could not do its job.
    Failed,
    /// No such function, capability or operation.
    Unsupported,
    /// The capability is not granted to this guest.
    NotGranted,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::InvalidInput => "invalid_input",
            FailureKind::Failed => "failed",
            FailureKind::Unsupported => "unsupported",
            FailureKind::NotGranted => "not_granted",
        }
    }
}

/// `host:log`, operation `write`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogRecord {
    pub level: LogLevel,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
}

/// `host:embed`, operation `texts`: one L2-normalised vector per text, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbedTexts {
    pub texts: Vec<String>,
}

/// `host:embed`'s answer to `texts`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedVectors {
    pub vectors: Vec<Vec<f32>>,
}

/// `host:llm`, operation `chat`: one completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chat {
    /// `provider:model`, as scripts write it (`openai:gpt-4o-mini`).
    pub model: String,
    pub messages: Vec<ChatMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

/// `host:llm`'s answer to `chat`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatReply {
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_location_survives_packing() {
        assert_eq!(unpack(pack(0xdead_beef, 17)), (0xdead_beef, 17));
        assert_eq!(unpack(pack(u32::MAX, u32::MAX)), (u32::MAX, u32::MAX));
    }

    #[test]
    fn replies_are_tagged_ok_or_error() {
        let ok: Reply<u32> = Reply::Ok(3);
        assert_eq!(serde_json::to_string(&ok).unwrap(), r#"{"ok":3}"#);
        let error: Reply<u32> = Reply::Error(Failure::invalid_input("bad"));
        assert_eq!(serde_json::to_string(&error).unwrap(), r#"{"error":{"kind":"invalid_input","message":"bad"}}"#);
    }
}
