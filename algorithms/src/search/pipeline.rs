//! A whole retrieval query, as OpenClaw runs it or as the original benchmark simulated it:
//! keyword and vector legs → fusion → temporal decay → stable sort → candidate cut → MMR →
//! selection. Each step is one of the exact algorithms next to this file.

use serde::{Deserialize, Serialize};

use super::SearchError;
use super::corpus::{Corpus, Hit, KeywordOptions};
use super::decay;
use super::fusion::{self, FusedHit, LegHit, LinearFusionOptions, RrfOptions};
use super::hybrid;
use super::mmr::{self, MmrOptions};
use super::snippet::{SNIPPET_MAX_CHARS, snippet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fusion {
    /// OpenClaw's merge: K candidates per leg, weighted sum with |r|/(1+|r|) text scores,
    /// minScore with the relaxed keyword floor (`openclaw` options).
    #[default]
    Openclaw,
    /// Weighted sum with per-leg normalisation (`linear` options); the benchmark's simulation.
    Linear,
    /// Reciprocal rank fusion (`rrf` options).
    Rrf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Similarity {
    /// Jaccard over lowercase `[a-z0-9_]+` token sets of each hit's 700-character snippet (OpenClaw).
    #[default]
    Jaccard,
    /// Cosine between the documents' vectors (the benchmark).
    Cosine,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MmrStep {
    pub lambda: f64,
    pub normalize_relevance: bool,
    pub similarity: Similarity,
}

impl Default for MmrStep {
    fn default() -> Self {
        MmrStep { lambda: mmr::DEFAULT_LAMBDA, normalize_relevance: true, similarity: Similarity::Jaccard }
    }
}

/// Everything a query can ask for. Defaults are OpenClaw's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct QueryOptions {
    pub fusion: Fusion,
    /// Results to return for `linear` and `rrf` (OpenClaw uses `openclaw.max_results`); default 6.
    pub limit: Option<usize>,
    pub keyword: KeywordOptions,
    pub openclaw: hybrid::HybridOptions,
    pub linear: LinearFusionOptions,
    pub rrf: RrfOptions,
    /// Apply `score × exp(−ln2 × age_days / half_life_days)` to documents with an age.
    pub decay: Option<decay::DecayOptions>,
    /// Keep only this many hits after sorting and before MMR (the benchmark's 24).
    pub candidates: Option<usize>,
    pub mmr: Option<MmrStep>,
}

/// Runs one query. `vector` is the query's embedding; without it only the keyword leg runs.
pub fn query(
    corpus: &Corpus,
    text: &str,
    vector: Option<&[f32]>,
    options: &QueryOptions,
) -> Result<Vec<Hit>, SearchError> {
    if text.trim().is_empty() || corpus.is_empty() {
        return Ok(Vec::new());
    }
    let pool = match options.fusion {
        Fusion::Openclaw => Some(options.openclaw.candidate_pool()),
        Fusion::Linear => options.linear.pool_size,
        Fusion::Rrf => options.rrf.pool_size,
    };
    let vector = match (vector, corpus.has_vectors()) {
        (Some(query), true) if query.iter().any(|value| *value != 0.0) => Some(query),
        _ => None,
    };
    let (mut keyword, vector_leg) = legs(corpus, text, vector, &options.keyword, pool)?;
    if options.fusion == Fusion::Linear && options.linear.rank_every_document {
        keyword = with_every_document(keyword, corpus.len());
    }
    let mut fused = match options.fusion {
        Fusion::Openclaw => {
            // The keyword leg carries FTS5's rank (negative BM25), as OpenClaw's merge reads it.
            let ranks: Vec<LegHit> = keyword.iter().map(|hit| LegHit { doc: hit.doc, score: -hit.score }).collect();
            hybrid::merge(&vector_leg, &ranks, &options.openclaw)
        }
        Fusion::Linear => fusion::fuse_linear(&vector_leg, &keyword, &options.linear)?,
        Fusion::Rrf => fusion::fuse_rrf(&vector_leg, &keyword, &options.rrf)?,
    };
    if let Some(decay) = options.decay {
        for hit in &mut fused {
            if let Some(age) = corpus.document(hit.doc).and_then(|document| document.age_days) {
                hit.score = decay::apply(hit.score, age, false, decay.half_life_days);
            }
        }
    }
    fusion::sort_by_score(&mut fused);
    if let Some(candidates) = options.candidates {
        fused.truncate(candidates);
    }
    if let Some(step) = options.mmr {
        fused = rerank(corpus, fused, &step)?;
    }
    let selected = match options.fusion {
        Fusion::Openclaw => hybrid::select(&fused, &options.openclaw),
        _ => fused.into_iter().take(options.limit.unwrap_or(hybrid::DEFAULT_MAX_RESULTS)).collect(),
    };
    Ok(selected.into_iter().map(|hit| to_hit(corpus, hit)).collect())
}

/// Corpora at least this big run the keyword leg on a thread of its own while the vector leg
/// runs; below it, starting a thread costs about what the keyword leg does.
const CONCURRENT_LEGS_FROM: usize = 8_192;

/// The keyword leg (BM25 hits, best first) and the vector leg (cosine top `pool`, empty without
/// a query vector). Either way each leg is what it would be alone; errors come keyword first.
fn legs(
    corpus: &Corpus,
    text: &str,
    vector: Option<&[f32]>,
    keyword_options: &KeywordOptions,
    pool: Option<usize>,
) -> Result<(Vec<LegHit>, Vec<LegHit>), SearchError> {
    let keyword = || corpus.keyword(text, keyword_options, pool);
    let nearest = |query: &[f32]| -> Result<Vec<LegHit>, SearchError> {
        let hits = corpus.nearest(query, pool)?;
        Ok(hits.into_iter().map(|hit| LegHit { doc: hit.doc, score: f64::from(hit.score) }).collect())
    };
    match vector {
        None => Ok((keyword()?, Vec::new())),
        Some(query) if corpus.len() < CONCURRENT_LEGS_FROM => Ok((keyword()?, nearest(query)?)),
        Some(query) => std::thread::scope(|scope| {
            let keyword_leg = scope.spawn(keyword);
            let vector_leg = nearest(query);
            // A keyword thread that died is run again here.
            let keyword_leg = keyword_leg.join().unwrap_or_else(|_| keyword());
            Ok((keyword_leg?, vector_leg?))
        }),
    }
}

/// The keyword leg followed by every document it does not hold, in corpus order, with score 0:
/// the original benchmark sorts all documents by BM25 (a stable sort, so zero-score documents
/// keep their order) and ranks them all.
fn with_every_document(mut leg: Vec<LegHit>, documents: usize) -> Vec<LegHit> {
    let present: std::collections::HashSet<usize> = leg.iter().map(|hit| hit.doc).collect();
    leg.extend((0..documents).filter(|doc| !present.contains(doc)).map(|doc| LegHit { doc, score: 0.0 }));
    leg
}

fn rerank(corpus: &Corpus, fused: Vec<FusedHit>, step: &MmrStep) -> Result<Vec<FusedHit>, SearchError> {
    let scores: Vec<f64> = fused.iter().map(|hit| hit.score).collect();
    let options = MmrOptions { lambda: step.lambda, normalize_relevance: step.normalize_relevance, limit: None };
    let order = match step.similarity {
        Similarity::Jaccard => {
            let texts: Vec<&str> = fused
                .iter()
                .map(|hit| corpus.document(hit.doc).map_or("", |document| snippet(&document.text, SNIPPET_MAX_CHARS)))
                .collect();
            mmr::rerank_by_text(&scores, &texts, &options)?
        }
        Similarity::Cosine => {
            let vectors: Vec<&[f32]> = fused.iter().map(|hit| corpus.vector(hit.doc).unwrap_or_default()).collect();
            if vectors.iter().any(|vector| vector.is_empty()) {
                return Err(SearchError::NoVectors);
            }
            mmr::rerank_by_embedding(&scores, &vectors, &options)?
        }
    };
    Ok(order.into_iter().filter_map(|index| fused.get(index).copied()).collect())
}

fn to_hit(corpus: &Corpus, hit: FusedHit) -> Hit {
    let id = corpus.document(hit.doc).map(|document| document.id.clone()).unwrap_or_default();
    Hit { doc: hit.doc, id, score: hit.score, vector: hit.vector, keyword: hit.keyword }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::corpus::Document;

    fn document(id: &str, text: &str, vector: [f32; 2]) -> Document {
        Document {
            id: id.into(),
            text: text.into(),
            vector: Some(vector.to_vec()),
            age_days: None,
            meta: Default::default(),
        }
    }

    #[test]
    fn the_legs_of_a_big_corpus_run_side_by_side_and_are_each_what_they_are_alone() {
        let words = ["cache", "port", "redis", "deploy", "schema", "queue", "token", "index"];
        let documents: Vec<Document> = (0..CONCURRENT_LEGS_FROM + 10)
            .map(|i| Document {
                id: format!("d{i}"),
                text: format!("{} {} {}", words[i % 8], words[(i / 8) % 8], words[(i / 64) % 8]),
                vector: Some((0..8).map(|j| ((i * 7 + j * 13) % 17) as f32 - 8.0).collect()),
                age_days: None,
                meta: Default::default(),
            })
            .collect();
        let corpus = Corpus::new(documents).expect("corpus");
        let (text, vector, options) =
            ("cache port", [1.0, -2.0, 0.5, 3.0, 0.0, 1.0, -1.0, 2.0], KeywordOptions::default());
        let (keyword, vector_leg) = legs(&corpus, text, Some(&vector), &options, Some(24)).expect("legs");
        assert_eq!(keyword, corpus.keyword(text, &options, Some(24)).expect("keyword leg"));
        assert_eq!(keyword.len(), 24);
        let alone: Vec<LegHit> = corpus
            .nearest(&vector, Some(24))
            .expect("vector leg")
            .into_iter()
            .map(|hit| LegHit { doc: hit.doc, score: f64::from(hit.score) })
            .collect();
        assert_eq!(vector_leg, alone);
        assert_eq!(vector_leg.len(), 24);
    }

    /// A note that shares no word with the query still has a BM25 rank in the original benchmark,
    /// after the matching notes and in corpus order, and so a keyword share of `1/(1 + rank)`.
    #[test]
    fn linear_fusion_ranks_documents_that_match_no_query_term_as_the_original_did() {
        let corpus = Corpus::new(vec![
            document("a", "nothing in common", [1.0, 0.0]),
            document("b", "the cache ttl is 600 seconds", [0.0, 1.0]),
            document("c", "still nothing here", [1.0, 0.0]),
        ])
        .expect("corpus");
        let options = QueryOptions { fusion: Fusion::Linear, limit: Some(3), ..QueryOptions::default() };
        let hits = query(&corpus, "cache ttl", Some(&[1.0, 0.0]), &options).expect("query");
        let keyword =
            |id: &str| hits.iter().find(|hit| hit.id == id).and_then(|hit| hit.keyword).map(|leg| leg.normalized);
        assert_eq!((keyword("b"), keyword("a"), keyword("c")), (Some(1.0), Some(0.5), Some(1.0 / 3.0)));

        let left_out = QueryOptions {
            linear: LinearFusionOptions { rank_every_document: false, ..LinearFusionOptions::default() },
            ..options
        };
        let hits = query(&corpus, "cache ttl", Some(&[1.0, 0.0]), &left_out).expect("query");
        assert_eq!(hits.iter().find(|hit| hit.id == "a").and_then(|hit| hit.keyword), None);
    }
}
