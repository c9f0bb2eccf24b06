//! Pure retrieval algorithms behind the `search` capability: tokenizers, BM25, exact vector
//! search, score fusion, temporal decay, MMR, chunking and snippets, faithful to OpenClaw's
//! memory search (shared/reference/openclaw-memory.md) and to the Cortex benchmark's simplified
//! simulation of it (shared/reference/cortex-benchmark-original.md). No I/O, no Rhai, no async.

pub mod bm25;
pub mod chunk;
pub mod decay;
pub mod fusion;
pub mod hybrid;
pub mod mmr;
pub mod snippet;
pub mod text;
pub mod tokenize;
pub mod vector;
