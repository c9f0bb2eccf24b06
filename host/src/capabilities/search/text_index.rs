//! A tantivy full-text index in memory, for corpora too large for the exact scorer to rescan
//! per query. Scores are tantivy's BM25 (k1 1.2, b 0.75), not a reproduction of another system.

use serde::{Deserialize, Serialize};
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{Field, INDEXED, STORED, Schema, TextFieldIndexing, TextOptions, Value};
use tantivy::{Index, IndexReader, IndexWriter, TantivyDocument};

#[derive(Debug, thiserror::Error)]
pub enum TextIndexError {
    #[error("full-text index failed: {message}")]
    Tantivy { message: String },
}

impl From<tantivy::TantivyError> for TextIndexError {
    fn from(error: tantivy::TantivyError) -> Self {
        TextIndexError::Tantivy { message: error.to_string() }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TextIndexOptions {
    /// English stemming (`memories` matches `memory`); off gives plain lowercase terms.
    pub stem: bool,
}

impl Default for TextIndexOptions {
    fn default() -> Self {
        TextIndexOptions { stem: true }
    }
}

/// One hit: the document's position in the indexed list, and its BM25 score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TextHit {
    pub doc: usize,
    pub score: f32,
}

pub struct TextIndex {
    index: Index,
    reader: IndexReader,
    text: Field,
    position: Field,
    documents: usize,
}

impl std::fmt::Debug for TextIndex {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("TextIndex").field("documents", &self.documents).finish_non_exhaustive()
    }
}

/// Indexing memory: tantivy's minimum per thread is 15 MB; one thread leaves a core for the script.
const WRITER_BYTES: usize = 64 << 20;

impl TextIndex {
    pub fn build<S: AsRef<str>>(texts: &[S], options: TextIndexOptions) -> Result<Self, TextIndexError> {
        let mut builder = Schema::builder();
        let tokenizer = if options.stem { "en_stem" } else { "default" };
        let indexing = TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            .set_index_option(tantivy::schema::IndexRecordOption::WithFreqsAndPositions);
        let text = builder.add_text_field("text", TextOptions::default().set_indexing_options(indexing));
        let position = builder.add_u64_field("position", STORED | INDEXED);
        let index = Index::create_in_ram(builder.build());
        let mut writer: IndexWriter = index.writer_with_num_threads(1, WRITER_BYTES)?;
        for (number, content) in texts.iter().enumerate() {
            let mut document = TantivyDocument::default();
            document.add_text(text, content.as_ref());
            document.add_u64(position, number as u64);
            writer.add_document(document)?;
        }
        writer.commit()?;
        let reader = index.reader()?;
        Ok(TextIndex { index, reader, text, position, documents: texts.len() })
    }

    pub fn len(&self) -> usize {
        self.documents
    }

    pub fn is_empty(&self) -> bool {
        self.documents == 0
    }

    /// The best `limit` documents for `query` (tantivy query syntax, read leniently: a stray
    /// quote or colon does not fail the query). Ties keep document order.
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<TextHit>, TextIndexError> {
        if query.trim().is_empty() || limit == 0 || self.documents == 0 {
            return Ok(Vec::new());
        }
        let parser = QueryParser::for_index(&self.index, vec![self.text]);
        let (parsed, _ignored) = parser.parse_query_lenient(query);
        let searcher = self.reader.searcher();
        let found = searcher.search(&parsed, &TopDocs::with_limit(limit).order_by_score())?;
        let mut hits = Vec::with_capacity(found.len());
        for (score, address) in found {
            let stored: TantivyDocument = searcher.doc(address)?;
            if let Some(doc) = stored.get_first(self.position).and_then(|value| value.as_u64()) {
                hits.push(TextHit { doc: doc as usize, score });
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stemmed_terms_match_and_the_better_document_ranks_first() {
        let index = TextIndex::build(
            &["The cache TTL is 600 seconds", "memories of caching: cache cache cache", "unrelated text"],
            TextIndexOptions::default(),
        )
        .unwrap();
        let hits = index.search("caches", 10).unwrap();
        let docs: Vec<usize> = hits.iter().map(|hit| hit.doc).collect();
        assert_eq!(docs, vec![1, 0]);
        assert!(
            index.search("memory", 10).unwrap().iter().any(|hit| hit.doc == 1),
            "stemming joins memories and memory"
        );
    }

    #[test]
    fn odd_queries_and_empty_indexes_give_defined_results() {
        let index = TextIndex::build(&["a \"quoted\" text: with colons"], TextIndexOptions::default()).unwrap();
        assert!(index.search("\"unbalanced quote: AND (", 5).is_ok());
        assert!(index.search("   ", 5).unwrap().is_empty());
        let empty = TextIndex::build::<&str>(&[], TextIndexOptions::default()).unwrap();
        assert!(empty.search("anything", 5).unwrap().is_empty());
    }
}
