//! The pure libraries under `host`'s capabilities: retrieval ([`search`]), text work ([`text`]),
//! statistics ([`stats`]) and question-answering scores ([`qa`]).
//!
//! Nothing here knows about Rhai, guests, the command line or async: each function is a plain
//! function of its inputs (apart from `search::stored`, which reads and writes corpus files), so
//! the host's capabilities wrap it thinly and a benchmark or a test calls it directly.

pub mod qa;
pub mod search;
pub mod stats;
pub mod text;
