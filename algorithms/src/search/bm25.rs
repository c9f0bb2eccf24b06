//! Exact Okapi BM25 over an in-memory corpus: built once (document frequencies, lengths, average
//! length), then scored for many queries. Two named parameter sets reproduce the systems we
//! simulate: SQLite FTS5's `bm25()` as OpenClaw uses it (openclaw-memory.md §3.2) and the Cortex
//! benchmark's own BM25 (cortex-benchmark-original.md §2, Phase 3).
//!
//! Scores here are positive, higher is better. FTS5 reports the same number negated (its `rank`,
//! ascending is better): [`Bm25Hit::fts5_rank`] gives that form. Ties are broken by document
//! index, lower first, which is what a stable sort over the corpus order does.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::best::best_k;
use super::postings::{self, Postings};
use super::tokenize::{FtsQuery, Tokenizer};

/// FTS5's hard-coded `k1` (openclaw-memory.md §3.2, §6 "Hard-coded").
pub const FTS5_K1: f64 = 1.2;
/// FTS5's hard-coded `b`.
pub const FTS5_B: f64 = 0.75;
/// What FTS5 uses instead of an IDF that is zero or negative (a term in half or more of the rows).
pub const FTS5_IDF_FLOOR: f64 = 1e-6;
/// The Cortex benchmark's `k1` (cortex-benchmark-original.md §2, Phase 3).
pub const BENCHMARK_K1: f64 = 1.5;
/// The Cortex benchmark's `b`.
pub const BENCHMARK_B: f64 = 0.75;

/// How the inverse document frequency of a term found in `n` of `N` documents is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdfVariant {
    /// `ln((N − n + 0.5)/(n + 0.5) + 1)`, always positive (the Cortex benchmark, Lucene).
    Plus1,
    /// `ln((N − n + 0.5)/(n + 0.5))`, replaced by 1e-6 when ≤ 0 (SQLite FTS5).
    #[default]
    Fts5,
}

/// Which documents a query matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryMode {
    /// A document must contain at least one query phrase.
    Or,
    /// A document must contain every query phrase (FTS5 `"a" AND "b"`, OpenClaw's query).
    #[default]
    And,
}

/// BM25 parameters. The default is FTS5 as OpenClaw uses it; [`Bm25Params::benchmark`] is the
/// Cortex benchmark's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Bm25Params {
    pub k1: f64,
    pub b: f64,
    pub idf: IdfVariant,
    pub mode: QueryMode,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Self::fts5()
    }
}

impl Bm25Params {
    /// SQLite FTS5 `bm25()` with all column weights 1, AND semantics (openclaw-memory.md §3.2).
    pub fn fts5() -> Self {
        Self { k1: FTS5_K1, b: FTS5_B, idf: IdfVariant::Fts5, mode: QueryMode::And }
    }

    /// The Cortex benchmark's scorer: k1 1.5, b 0.75, `+1` IDF, every document scored (OR).
    pub fn benchmark() -> Self {
        Self { k1: BENCHMARK_K1, b: BENCHMARK_B, idf: IdfVariant::Plus1, mode: QueryMode::Or }
    }

    fn validate(&self) -> Result<(), Bm25Error> {
        if !(self.k1.is_finite() && self.k1 >= 0.0) {
            return Err(Bm25Error::InvalidK1 { value: self.k1 });
        }
        if !(self.b.is_finite() && (0.0..=1.0).contains(&self.b)) {
            return Err(Bm25Error::InvalidB { value: self.b });
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum Bm25Error {
    #[error("BM25 parameter `k1` must be a finite number ≥ 0, got `{value}`")]
    InvalidK1 { value: f64 },
    #[error("BM25 parameter `b` must be a number in [0, 1], got `{value}`")]
    InvalidB { value: f64 },
}

/// The IDF of a term found in `containing` of `documents` documents.
pub fn idf(variant: IdfVariant, documents: usize, containing: usize) -> f64 {
    let ratio = (documents as f64 - containing as f64 + 0.5) / (containing as f64 + 0.5);
    match variant {
        IdfVariant::Plus1 => (ratio + 1.0).ln(),
        IdfVariant::Fts5 => {
            let raw = ratio.ln();
            if raw <= 0.0 { FTS5_IDF_FLOOR } else { raw }
        }
    }
}

/// A query: phrases, each a sequence of already tokenized terms that must appear adjacent and in
/// order. Repeated phrases count repeatedly, as in both reference systems.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bm25Query {
    pub phrases: Vec<Vec<String>>,
}

impl Bm25Query {
    /// One single-term phrase per token (the benchmark's query: its tokens, duplicates kept).
    pub fn from_terms(terms: Vec<String>) -> Self {
        Self { phrases: terms.into_iter().map(|term| vec![term]).collect() }
    }

    /// The query text tokenized the way the index tokenized its documents.
    pub fn from_text(text: &str, tokenizer: Tokenizer) -> Self {
        Self::from_terms(tokenizer.tokenize(text))
    }
}

impl From<FtsQuery> for Bm25Query {
    fn from(query: FtsQuery) -> Self {
        Self { phrases: query.phrases }
    }
}

/// One scored document.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bm25Hit {
    pub doc: usize,
    pub score: f64,
}

impl Bm25Hit {
    /// The score as FTS5's `bm25()`/`rank` reports it: negated, so that ascending is better.
    pub fn fts5_rank(&self) -> f64 {
        -self.score
    }
}

/// An immutable BM25 index over a list of documents, addressed by their position.
#[derive(Debug, Clone)]
pub struct Bm25Index {
    tokenizer: Tokenizer,
    vocabulary: HashMap<String, usize>,
    /// Per term: (document, term frequency), documents ascending.
    postings: Vec<Vec<(usize, usize)>>,
    /// Per document: its term ids in order, kept for phrase matching.
    documents: Vec<Vec<usize>>,
    total_tokens: usize,
}

impl Bm25Index {
    pub fn build<S: AsRef<str>>(documents: &[S], tokenizer: Tokenizer) -> Self {
        let mut vocabulary: HashMap<String, usize> = HashMap::new();
        let documents = documents
            .iter()
            .map(|text| {
                let tokens = tokenizer.tokenize(text.as_ref());
                tokens
                    .into_iter()
                    .map(|token| {
                        let next_id = vocabulary.len();
                        *vocabulary.entry(token).or_insert(next_id)
                    })
                    .collect()
            })
            .collect();
        Self::indexed(tokenizer, vocabulary, documents)
    }

    /// The index as [`Bm25Index::parts`] gave it (a corpus file keeps it so that a later process
    /// does not tokenize every document again). Fails when a document names a term the
    /// vocabulary does not have, or the vocabulary repeats a term.
    pub fn from_parts(tokenizer: Tokenizer, terms: Vec<String>, documents: Vec<Vec<usize>>) -> Result<Self, String> {
        let count = terms.len();
        if let Some((doc, id)) =
            documents.iter().enumerate().find_map(|(doc, ids)| ids.iter().find(|&&id| id >= count).map(|&id| (doc, id)))
        {
            return Err(format!("document {doc} has term {id} of a vocabulary of {count}"));
        }
        let vocabulary: HashMap<String, usize> = terms.into_iter().enumerate().map(|(id, term)| (term, id)).collect();
        if vocabulary.len() != count {
            return Err("the vocabulary repeats a term".into());
        }
        Ok(Self::indexed(tokenizer, vocabulary, documents))
    }

    /// What the index is made of: its terms (a term's position is its id) and each document's
    /// term ids in order; everything else follows from them.
    pub fn parts(&self) -> (Vec<&str>, &[Vec<usize>]) {
        let mut terms = vec![""; self.vocabulary.len()];
        for (term, &id) in &self.vocabulary {
            if let Some(slot) = terms.get_mut(id) {
                *slot = term.as_str();
            }
        }
        (terms, &self.documents)
    }

    /// The postings and lengths of documents given as term ids, every id below the
    /// vocabulary's size.
    fn indexed(tokenizer: Tokenizer, vocabulary: HashMap<String, usize>, documents: Vec<Vec<usize>>) -> Self {
        let mut postings: Vec<Vec<(usize, usize)>> = vec![Vec::new(); vocabulary.len()];
        // Per term, its count in the current document; the terms met in it, in order.
        let mut counts = vec![0usize; vocabulary.len()];
        let mut met = Vec::new();
        for (doc, ids) in documents.iter().enumerate() {
            for &id in ids {
                if let Some(count) = counts.get_mut(id) {
                    if *count == 0 {
                        met.push(id);
                    }
                    *count += 1;
                }
            }
            for id in met.drain(..) {
                if let (Some(list), Some(count)) = (postings.get_mut(id), counts.get_mut(id)) {
                    list.push((doc, *count));
                    *count = 0;
                }
            }
        }
        let total_tokens = documents.iter().map(Vec::len).sum();
        Self { tokenizer, vocabulary, postings, documents, total_tokens }
    }

    pub fn tokenizer(&self) -> Tokenizer {
        self.tokenizer
    }

    pub fn len(&self) -> usize {
        self.documents.len()
    }

    pub fn is_empty(&self) -> bool {
        self.documents.is_empty()
    }

    /// Mean document length in tokens; 0 for an empty corpus.
    pub fn average_length(&self) -> f64 {
        if self.documents.is_empty() { 0.0 } else { self.total_tokens as f64 / self.documents.len() as f64 }
    }

    pub fn document_length(&self, doc: usize) -> Option<usize> {
        self.documents.get(doc).map(Vec::len)
    }

    /// In how many documents `term` (an already tokenized term) occurs.
    pub fn document_frequency(&self, term: &str) -> usize {
        self.vocabulary.get(term).and_then(|&id| self.postings.get(id)).map_or(0, Vec::len)
    }

    /// The matching documents, best first, at most `limit` of them.
    pub fn search(
        &self,
        query: &Bm25Query,
        params: &Bm25Params,
        limit: Option<usize>,
    ) -> Result<Vec<Bm25Hit>, Bm25Error> {
        self.search_filtered(query, params, limit, |_| true)
    }

    /// Like [`Bm25Index::search`], but only documents for which `keep` holds are returned. The
    /// statistics (N, document frequencies, average length) still cover the whole corpus, as in
    /// OpenClaw, whose FTS table mixes every source and model (openclaw-memory.md §2.3).
    pub fn search_filtered(
        &self,
        query: &Bm25Query,
        params: &Bm25Params,
        limit: Option<usize>,
        keep: impl Fn(usize) -> bool,
    ) -> Result<Vec<Bm25Hit>, Bm25Error> {
        let hits: Vec<Bm25Hit> = self.accumulate(query, params)?.into_iter().filter(|hit| keep(hit.doc)).collect();
        // The order is total (documents differ), so the best `limit` are what sorting would keep.
        let limit = limit.unwrap_or(hits.len());
        Ok(best_k(hits, limit, hit_order))
    }

    /// Every document, matching or not (a non-match scores 0), best first and ties by index.
    /// This is the Cortex benchmark's ranking, which it then normalised by rank.
    pub fn rank_all(&self, query: &Bm25Query, params: &Bm25Params) -> Result<Vec<Bm25Hit>, Bm25Error> {
        let mut hits: Vec<Bm25Hit> =
            self.scores(query, params)?.into_iter().enumerate().map(|(doc, score)| Bm25Hit { doc, score }).collect();
        sort_hits(&mut hits);
        Ok(hits)
    }

    /// One score per document in corpus order; documents that do not match score 0.
    pub fn scores(&self, query: &Bm25Query, params: &Bm25Params) -> Result<Vec<f64>, Bm25Error> {
        let mut scores = vec![0.0; self.documents.len()];
        for hit in self.accumulate(query, params)? {
            if let Some(score) = scores.get_mut(hit.doc) {
                *score = hit.score;
            }
        }
        Ok(scores)
    }

    /// The documents that match under `params.mode`, ascending, with their scores (only the
    /// query's postings are visited; see `postings.rs`).
    fn accumulate(&self, query: &Bm25Query, params: &Bm25Params) -> Result<Vec<Bm25Hit>, Bm25Error> {
        params.validate()?;
        let count = self.documents.len();
        let average_length = self.average_length();
        let mut cache = HashMap::new();
        for phrase in &query.phrases {
            cache.entry(phrase.as_slice()).or_insert_with(|| self.phrase_frequencies(phrase));
        }
        let lists: Vec<Postings<'_>> =
            query.phrases.iter().filter_map(|phrase| cache.get(phrase.as_slice())).map(AsRef::as_ref).collect();
        let idfs: Vec<f64> = lists.iter().map(|list| idf(params.idf, count, list.len())).collect();
        let term = |phrase: usize, doc: usize, frequency: usize| {
            let phrase_idf = idfs.get(phrase).copied().unwrap_or_default();
            let length = self.documents.get(doc).map_or(0, Vec::len) as f64;
            // An empty corpus or one without tokens has no postings, so average_length > 0 here.
            let relative_length = if average_length > 0.0 { length / average_length } else { 1.0 };
            let frequency = frequency as f64;
            // The operation order of FTS5's fts5Bm25Function, so that rounding agrees as well.
            phrase_idf * (frequency * (params.k1 + 1.0))
                / (frequency + params.k1 * (1.0 - params.b + params.b * relative_length))
        };
        let sums = match params.mode {
            QueryMode::Or => postings::union(&lists, term),
            QueryMode::And => postings::intersection(&lists, term),
        };
        Ok(sums.into_iter().map(|(doc, score)| Bm25Hit { doc, score }).collect())
    }

    /// (document, occurrences) for every document containing `phrase`, ascending; empty for an
    /// empty phrase. A single term's list is the postings themselves, borrowed.
    fn phrase_frequencies(&self, phrase: &[String]) -> Cow<'_, [(usize, usize)]> {
        let Some(ids) = phrase.iter().map(|term| self.vocabulary.get(term).copied()).collect::<Option<Vec<usize>>>()
        else {
            return Cow::Borrowed(&[]);
        };
        let Some(&first) = ids.first() else {
            return Cow::Borrowed(&[]);
        };
        let postings = self.postings.get(first).map(Vec::as_slice).unwrap_or_default();
        if ids.len() == 1 {
            return Cow::Borrowed(postings);
        }
        postings
            .iter()
            .filter_map(|&(doc, _)| {
                let tokens = self.documents.get(doc)?;
                // Overlapping occurrences count, as FTS5 counts phrase instances by position.
                let occurrences = tokens.windows(ids.len()).filter(|window| *window == ids.as_slice()).count();
                (occurrences > 0).then_some((doc, occurrences))
            })
            .collect()
    }
}

fn hit_order(left: &Bm25Hit, right: &Bm25Hit) -> std::cmp::Ordering {
    right.score.total_cmp(&left.score).then(left.doc.cmp(&right.doc))
}

fn sort_hits(hits: &mut [Bm25Hit]) {
    hits.sort_unstable_by(hit_order);
}

#[cfg(test)]
#[path = "bm25_tests.rs"]
mod tests;
