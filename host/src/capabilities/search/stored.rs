//! The corpus file: a corpus saved with its vectors, so that a later run (a hook answering in
//! milliseconds) searches it without embedding or decoding every document again.
//!
//! Layout, written whole and atomically by `corpus.save`:
//! 1. the line `host-corpus 1`;
//! 2. one line of JSON, the [`Header`]: what embedded the documents, the vectors' dimension, each
//!    document's id, text and age, and for each indexed field which documents hold each value;
//! 3. each document's fields as the script gave them, one JSON object per line, decoded only
//!    when a document is asked for;
//! 4. the vectors, `count × dimension` little-endian `f32`, normalised.
//!
//! Pure: bytes in, bytes out; reading and writing files is the adapter's.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::corpus::{Corpus, Document};
use super::vector::VectorStore;

/// The first line of every corpus file; the number is the format's version.
pub const MAGIC: &str = "host-corpus 1";

/// For each indexed field, each value's documents, ascending.
pub type FieldIndex = BTreeMap<String, BTreeMap<String, Vec<usize>>>;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    /// The model that embedded the documents (`local`, `openai:<model>`), so queries are
    /// embedded alike; `None` when the script gave the vectors without naming one.
    model: Option<String>,
    /// 0 when the corpus has no vectors.
    dimension: usize,
    ids: Vec<String>,
    texts: Vec<String>,
    /// Empty when no document has an age.
    ages: Vec<Option<f64>>,
    fields_bytes: usize,
    index: FieldIndex,
}

#[derive(Debug, thiserror::Error)]
pub enum StoredError {
    #[error("it is not a corpus file (it does not start with `{MAGIC}`); hint: write one with `corpus.save(path)`")]
    Magic,
    #[error("its header is not valid: {message}")]
    Header { message: String },
    #[error("it ends early, in {part}")]
    Truncated { part: &'static str },
    #[error("it is inconsistent: {message}")]
    Inconsistent { message: String },
    #[error("document {doc} cannot be saved: its fields are not a JSON object")]
    Fields { doc: usize },
}

/// A corpus read back, with its documents' fields still encoded.
#[derive(Debug)]
pub struct StoredCorpus {
    pub model: Option<String>,
    pub corpus: Corpus,
    pub fields: StoredFields,
    pub index: FieldIndex,
}

/// Each document's fields as JSON text, decoded one document at a time: ranges of the file's
/// own bytes, which are kept rather than copied.
#[derive(Debug)]
pub struct StoredFields {
    bytes: Vec<u8>,
    lines: Vec<Range<usize>>,
}

impl StoredFields {
    /// The fields of document `doc`; `None` past the end.
    pub fn get(&self, doc: usize) -> Option<Result<Map<String, Value>, serde_json::Error>> {
        let line = self.bytes.get(self.lines.get(doc)?.clone())?;
        Some(serde_json::from_slice(line))
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }
}

/// Which documents hold each value of each of `fields`: a string field by its value, a list by
/// each string in it; other values are not indexed.
pub fn index_fields(documents: &[Map<String, Value>], fields: &[String]) -> FieldIndex {
    let mut index = FieldIndex::new();
    for field in fields {
        let postings = index.entry(field.clone()).or_default();
        for (doc, document) in documents.iter().enumerate() {
            let values: Vec<&str> = match document.get(field) {
                Some(Value::String(value)) => vec![value.as_str()],
                Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            for value in values {
                let docs = postings.entry(value.to_string()).or_default();
                if docs.last() != Some(&doc) {
                    docs.push(doc);
                }
            }
        }
    }
    index
}

/// The file for `corpus`, whose documents' fields (as given, without vectors) are `fields`,
/// indexing the fields named in `indexed`.
pub fn encode(
    corpus: &Corpus,
    fields: &[Map<String, Value>],
    model: Option<&str>,
    indexed: &[String],
) -> Result<Vec<u8>, StoredError> {
    let count = corpus.len();
    let mut documents = Vec::with_capacity(count);
    let mut lines = String::new();
    for doc in 0..count {
        let document = corpus.document(doc).ok_or(StoredError::Fields { doc })?;
        documents.push(document);
        let own = fields.get(doc).ok_or(StoredError::Fields { doc })?;
        let line = serde_json::to_string(own).map_err(|_| StoredError::Fields { doc })?;
        lines.push_str(&line);
        lines.push('\n');
    }
    let dimension = if corpus.has_vectors() { corpus.vector(0).map_or(0, <[f32]>::len) } else { 0 };
    let header = Header {
        model: model.map(str::to_string),
        dimension,
        ids: documents.iter().map(|d| d.id.clone()).collect(),
        texts: documents.iter().map(|d| d.text.clone()).collect(),
        ages: if documents.iter().any(|d| d.age_days.is_some()) {
            documents.iter().map(|d| d.age_days).collect()
        } else {
            Vec::new()
        },
        fields_bytes: lines.len(),
        index: index_fields(fields, indexed),
    };
    let header = serde_json::to_string(&header).map_err(|error| StoredError::Header { message: error.to_string() })?;
    let mut bytes = Vec::with_capacity(MAGIC.len() + header.len() + lines.len() + count * dimension * 4 + 2);
    bytes.extend_from_slice(MAGIC.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(header.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(lines.as_bytes());
    for doc in 0..count {
        for value in corpus.vector(doc).unwrap_or_default() {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
    }
    Ok(bytes)
}

/// Reads a corpus file back, checking that its parts agree.
pub fn decode(bytes: Vec<u8>) -> Result<StoredCorpus, StoredError> {
    let rest =
        bytes.strip_prefix(MAGIC.as_bytes()).and_then(|rest| rest.strip_prefix(b"\n")).ok_or(StoredError::Magic)?;
    let end = rest.iter().position(|&byte| byte == b'\n').ok_or(StoredError::Truncated { part: "the header" })?;
    let header: Header =
        serde_json::from_slice(&rest[..end]).map_err(|error| StoredError::Header { message: error.to_string() })?;
    let fields_start = MAGIC.len() + 1 + end + 1;
    let rest = &rest[end + 1..];
    let count = header.ids.len();
    let inconsistent = |message: String| StoredError::Inconsistent { message };
    if header.texts.len() != count || !(header.ages.is_empty() || header.ages.len() == count) {
        return Err(inconsistent(format!("{count} ids, {} texts and {} ages", header.texts.len(), header.ages.len())));
    }
    if let Some((field, value, doc)) = header.index.iter().find_map(|(field, postings)| {
        postings.iter().find_map(|(value, docs)| docs.iter().find(|&&doc| doc >= count).map(|&doc| (field, value, doc)))
    }) {
        return Err(inconsistent(format!("the index of `{field}` lists document {doc} for `{value}`, of {count}")));
    }
    let fields = rest.get(..header.fields_bytes).ok_or(StoredError::Truncated { part: "the documents' fields" })?;
    let text = std::str::from_utf8(fields).map_err(|_| inconsistent("the documents' fields are not UTF-8".into()))?;
    let mut lines = Vec::with_capacity(count);
    let mut start = 0;
    for (offset, _) in text.match_indices('\n') {
        lines.push(fields_start + start..fields_start + offset);
        start = offset + 1;
    }
    if lines.len() != count || start != text.len() {
        return Err(inconsistent(format!("{count} documents but {} lines of fields", lines.len())));
    }
    let vectors = &rest[header.fields_bytes..];
    let expected = count.checked_mul(header.dimension).and_then(|n| n.checked_mul(4));
    if expected != Some(vectors.len()) {
        return Err(if expected.is_some_and(|n| vectors.len() < n) {
            StoredError::Truncated { part: "the vectors" }
        } else {
            inconsistent(format!("{} bytes of vectors for {count} × {} dimensions", vectors.len(), header.dimension))
        });
    }
    let documents: Vec<Document> = header
        .ids
        .into_iter()
        .zip(header.texts)
        .enumerate()
        .map(|(doc, (id, text))| Document {
            id,
            text,
            vector: None,
            age_days: header.ages.get(doc).copied().flatten(),
            meta: Map::new(),
        })
        .collect();
    let store = if header.dimension == 0 || count == 0 {
        None
    } else {
        let data = vectors.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        Some(
            VectorStore::from_normalized_flat(header.dimension, data)
                .map_err(|error| inconsistent(error.to_string()))?,
        )
    };
    Ok(StoredCorpus {
        model: header.model,
        corpus: Corpus::with_store(documents, store),
        fields: StoredFields { bytes, lines },
        index: header.index,
    })
}

#[cfg(test)]
#[path = "stored_tests.rs"]
mod tests;
