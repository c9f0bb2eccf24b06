//! Retrieval: BM25, exact and int8-prefiltered vector search, hybrid fusion, temporal decay, MMR
//! and chunking, faithful to OpenClaw's memory search (shared/reference/openclaw-memory.md) and to
//! the Cortex benchmark's simplified simulation of it (shared/reference/cortex-benchmark-original.md).
//!
//! A [`Corpus`] holds documents with their keyword index and vectors; [`query`] runs the whole
//! pipeline over one. `stored` writes and reads corpora as files. Vectors come from the caller:
//! embedding is the host's `embed` capability's job.

mod best;
pub mod bm25;
pub mod chunk;
pub mod corpus;
pub mod decay;
pub mod fusion;
pub mod hybrid;
pub mod mmr;
pub mod pipeline;
mod postings;
mod prefilter;
mod quantized;
pub mod snippet;
pub mod stored;
pub mod text;
pub mod tokenize;
pub mod vector;

pub use corpus::{Corpus, Document, Hit, KeywordOptions};
pub use pipeline::{QueryOptions, query};

/// What building or querying a corpus can fail with.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Bm25(#[from] bm25::Bm25Error),
    #[error(transparent)]
    Vector(#[from] vector::VectorError),
    #[error(transparent)]
    Fusion(#[from] fusion::FusionError),
    #[error(transparent)]
    Mmr(#[from] mmr::MmrError),
    #[error(transparent)]
    Chunk(#[from] chunk::ChunkError),
    #[error(
        "document `{id}` has no vector while others do; hint: give every document a `vector`, or none and build with `embed`"
    )]
    MissingVector { id: String },
    #[error("document `{id}` has an unusable vector")]
    BadVector {
        id: String,
        #[source]
        source: vector::VectorError,
    },
    #[error("the corpus has no vectors; hint: build it with `#{{ embed: true }}` or give each document a `vector`")]
    NoVectors,
}
