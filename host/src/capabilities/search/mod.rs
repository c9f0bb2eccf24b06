//! The `search` capability: `search::` for scripts over the retrieval algorithms of
//! [`algorithms::search`] (BM25, vector search, fusion, decay, MMR, chunking), plus a tantivy
//! full-text index for corpora that must scale.
//!
//! [`Search`] builds corpora, embedding texts through the `embed` capability when asked;
//! `rhai.rs` and `rhai_files.rs` adapt it to scripts.

pub mod rhai;
mod rhai_files;
pub mod text_index;

use std::sync::Arc;

use algorithms::search::stored;
use algorithms::search::{Corpus, Document};

use crate::capabilities::embed::{EmbedError, EmbedRequest, EmbedRouter};

/// What `search::` can fail with: the algorithms' errors, and the capability's own.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Corpus(#[from] algorithms::search::SearchError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Text(#[from] text_index::TextIndexError),
    #[error("document {index}: {message}")]
    BadDocument { index: usize, message: String },
    #[error("corpus file `{path}`")]
    CorpusFile {
        path: String,
        #[source]
        source: stored::StoredError,
    },
    #[error("corpus file `{path}`: the fields of document {doc} are not valid JSON")]
    StoredFields {
        path: String,
        doc: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("there is no document {doc} (the corpus has {count})")]
    NoDocument { doc: i64, count: usize },
}

/// Building corpora and embedding queries. Object safe, so guests get what scripts get.
pub trait Search: Send + Sync {
    /// A corpus over `documents`; with `embed_model`, documents without a vector are embedded
    /// with that model (`local`, `remote` or `openai:<model>`).
    fn corpus(&self, documents: Vec<Document>, embed_model: Option<&str>) -> Result<Corpus, SearchError>;
    /// A query's vector, from the model that embedded the corpus.
    fn embed_query(&self, text: &str, model: &str) -> Result<Vec<f32>, SearchError>;
}

/// [`Search`] in this process, embedding through the run's `embed` capability.
pub struct LocalSearch {
    embed: Arc<EmbedRouter>,
    runtime: tokio::runtime::Handle,
}

impl LocalSearch {
    pub fn new(embed: Arc<EmbedRouter>, runtime: tokio::runtime::Handle) -> Self {
        LocalSearch { embed, runtime }
    }

    fn embed(&self, texts: Vec<String>, model: &str) -> Result<Vec<Vec<f32>>, SearchError> {
        let request = EmbedRequest { texts, model: Some(model.to_string()), batch: None };
        Ok(self.runtime.block_on(self.embed.embed(request))?.vectors)
    }
}

impl Search for LocalSearch {
    fn corpus(&self, mut documents: Vec<Document>, embed_model: Option<&str>) -> Result<Corpus, SearchError> {
        if let Some(model) = embed_model {
            let missing: Vec<usize> = (0..documents.len()).filter(|&i| documents[i].vector.is_none()).collect();
            let texts = missing.iter().map(|&i| documents[i].text.clone()).collect();
            for (index, vector) in missing.into_iter().zip(self.embed(texts, model)?) {
                documents[index].vector = Some(vector);
            }
        }
        Ok(Corpus::new(documents)?)
    }

    fn embed_query(&self, text: &str, model: &str) -> Result<Vec<f32>, SearchError> {
        Ok(self.embed(vec![text.to_string()], model)?.into_iter().next().unwrap_or_default())
    }
}

/// `search::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "search",
    rhai: |capabilities| {
        rhai::module(capabilities.search.clone(), capabilities.files.clone(), capabilities.results.clone())
    },
    types: rhai::register_types,
    guest: None,
    finish: |_, _| {},
    scratch: None,
};
