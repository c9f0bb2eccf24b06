//! An in-memory corpus that scripts and guests query by keyword, by vector, or both, with the
//! OpenClaw pipeline or the benchmark's simulation of it (`pipeline.rs`).
//!
//! Documents keep their order; hits name documents by that position and by their id. BM25
//! statistics are built once per tokenizer, on first use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::SearchError;
use super::bm25::{Bm25Index, Bm25Params, Bm25Query, IdfVariant, QueryMode};
use super::fusion::{LegHit, LegScore};
use super::tokenize::{QueryTokenPattern, Tokenizer, fts_query};
use super::vector::{VectorHit, VectorStore};

/// One searchable document.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub id: String,
    pub text: String,
    pub vector: Option<Vec<f32>>,
    /// Days since the document was written, for temporal decay; `None` never decays.
    pub age_days: Option<f64>,
    /// Every other field the script gave, returned with each hit.
    pub meta: Map<String, Value>,
}

/// How the keyword leg reads a query and scores documents.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KeywordOptions {
    /// `openclaw` (FTS5: unicode61, quoted AND query, k1 1.2, FTS5 IDF) or `benchmark` (the
    /// original simulation: its tokenizer, OR over terms, k1 1.5, IDF + 1). Fields below override.
    pub profile: KeywordProfile,
    pub tokenizer: Option<Tokenizer>,
    pub k1: Option<f64>,
    pub b: Option<f64>,
    pub idf: Option<IdfVariant>,
    pub mode: Option<QueryMode>,
    /// OpenClaw's query token pattern (`unicode`, or `ascii` before 2026.2.15).
    pub pattern: QueryTokenPattern,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeywordProfile {
    #[default]
    Openclaw,
    Benchmark,
}

impl Default for KeywordOptions {
    fn default() -> Self {
        KeywordOptions {
            profile: KeywordProfile::Openclaw,
            tokenizer: None,
            k1: None,
            b: None,
            idf: None,
            mode: None,
            pattern: QueryTokenPattern::Unicode,
        }
    }
}

impl KeywordOptions {
    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer.unwrap_or(match self.profile {
            KeywordProfile::Openclaw => Tokenizer::Unicode61,
            KeywordProfile::Benchmark => Tokenizer::Benchmark,
        })
    }

    pub fn params(&self) -> Bm25Params {
        let base = match self.profile {
            KeywordProfile::Openclaw => Bm25Params::fts5(),
            KeywordProfile::Benchmark => Bm25Params::benchmark(),
        };
        Bm25Params {
            k1: self.k1.unwrap_or(base.k1),
            b: self.b.unwrap_or(base.b),
            idf: self.idf.unwrap_or(base.idf),
            mode: self.mode.unwrap_or(base.mode),
        }
    }

    /// The query as BM25 terms; `None` when it has no tokens (then there is no keyword leg).
    pub fn query(&self, text: &str) -> Option<Bm25Query> {
        match self.profile {
            KeywordProfile::Openclaw => fts_query(text, self.pattern, self.tokenizer()).map(Bm25Query::from),
            KeywordProfile::Benchmark => {
                let query = Bm25Query::from_text(text, self.tokenizer());
                (!query.phrases.is_empty()).then_some(query)
            }
        }
    }
}

/// A document found by a query, with each leg's score where the leg found it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// Position of the document in the corpus.
    pub doc: usize,
    pub id: String,
    pub score: f64,
    pub vector: Option<LegScore>,
    pub keyword: Option<LegScore>,
}

impl Hit {
    /// A hit found by one leg alone, whose raw score is also its normalised one.
    pub fn single_leg(doc: usize, id: String, score: f64, leg: super::fusion::Leg) -> Self {
        let scored = Some(LegScore { raw: score, normalized: score });
        let (vector, keyword) = match leg {
            super::fusion::Leg::Vector => (scored, None),
            super::fusion::Leg::Keyword => (None, scored),
        };
        Hit { doc, id, score, vector, keyword }
    }
}

pub struct Corpus {
    documents: Vec<Document>,
    vectors: Option<VectorStore>,
    keyword: Mutex<HashMap<Tokenizer, Arc<Bm25Index>>>,
}

impl std::fmt::Debug for Corpus {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Corpus").field("documents", &self.documents.len()).finish_non_exhaustive()
    }
}

impl Corpus {
    /// A corpus over `documents`; if any has a vector, all must, with one dimension.
    pub fn new(documents: Vec<Document>) -> Result<Self, SearchError> {
        let with_vectors = documents.iter().filter(|document| document.vector.is_some()).count();
        let vectors = if with_vectors == 0 {
            None
        } else {
            if let Some(missing) = documents.iter().find(|document| document.vector.is_none()) {
                return Err(SearchError::MissingVector { id: missing.id.clone() });
            }
            let dimension = documents.first().and_then(|d| d.vector.as_ref()).map_or(0, Vec::len);
            let mut store = VectorStore::with_capacity(dimension, documents.len())?;
            for document in &documents {
                let vector = document.vector.as_deref().unwrap_or_default();
                store.push(vector).map_err(|source| SearchError::BadVector { id: document.id.clone(), source })?;
            }
            Some(store)
        };
        Ok(Corpus { documents, vectors, keyword: Mutex::new(HashMap::new()) })
    }

    /// A corpus over `documents` whose vectors, in document order, are already in `vectors`
    /// (a corpus file read back); the caller has checked that the counts agree.
    pub(super) fn with_store(documents: Vec<Document>, vectors: Option<VectorStore>) -> Self {
        Corpus { documents, vectors, keyword: Mutex::new(HashMap::new()) }
    }

    pub fn len(&self) -> usize {
        self.documents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }

    pub fn document(&self, doc: usize) -> Option<&Document> {
        self.documents.get(doc)
    }

    pub fn has_vectors(&self) -> bool {
        self.vectors.is_some()
    }

    pub fn vector(&self, doc: usize) -> Option<&[f32]> {
        self.vectors.as_ref().and_then(|store| store.get(doc))
    }

    /// The documents' vectors, in document order; `None` when the corpus has none.
    pub fn vectors(&self) -> Option<&VectorStore> {
        self.vectors.as_ref()
    }

    /// The BM25 index of the documents' texts under `tokenizer`, built on first use.
    pub(super) fn bm25(&self, tokenizer: Tokenizer) -> Arc<Bm25Index> {
        let build = || {
            Arc::new(Bm25Index::build(&self.documents.iter().map(|d| d.text.as_str()).collect::<Vec<_>>(), tokenizer))
        };
        match self.keyword.lock() {
            Ok(mut cache) => cache.entry(tokenizer).or_insert_with(build).clone(),
            Err(_) => build(),
        }
    }

    /// Takes `index` (read from a corpus file) as the BM25 index of its tokenizer, so that no
    /// query builds it again.
    pub(super) fn adopt_bm25(&self, index: Bm25Index) {
        if let Ok(mut cache) = self.keyword.lock() {
            cache.insert(index.tokenizer(), Arc::new(index));
        }
    }

    /// Keyword leg: documents matching `text`, best first, at most `limit`. Scores are BM25
    /// (positive, higher is better).
    pub fn keyword(
        &self,
        text: &str,
        options: &KeywordOptions,
        limit: Option<usize>,
    ) -> Result<Vec<LegHit>, SearchError> {
        let Some(query) = options.query(text) else { return Ok(Vec::new()) };
        let hits = self.bm25(options.tokenizer()).search(&query, &options.params(), limit)?;
        Ok(hits.into_iter().map(|hit| LegHit { doc: hit.doc, score: hit.score }).collect())
    }

    /// The cosine of `query` with every document, in document order (what [`Self::nearest`]
    /// ranks).
    pub fn similarities(&self, query: &[f32]) -> Result<Vec<f32>, SearchError> {
        let store = self.vectors.as_ref().ok_or(SearchError::NoVectors)?;
        Ok(store.scores(query)?)
    }

    /// Vector leg: cosine top `limit` (all documents when `None`).
    pub fn nearest(&self, query: &[f32], limit: Option<usize>) -> Result<Vec<VectorHit>, SearchError> {
        let store = self.vectors.as_ref().ok_or(SearchError::NoVectors)?;
        Ok(store.top_k(query, limit.unwrap_or(store.len()))?)
    }
}
