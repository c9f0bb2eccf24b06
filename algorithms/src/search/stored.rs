//! The corpus file: a corpus saved with its vectors, so that a later run (a hook answering in
//! milliseconds) searches it without embedding or decoding every document again.
//!
//! Layout, written whole and atomically by `corpus.save`:
//! 1. the line `host-corpus 1`;
//! 2. one line of JSON, the [`Header`]: what embedded the documents, the vectors' dimension, each
//!    document's id, text and age, and for each indexed field which documents hold each value;
//! 3. each document's fields as the script gave them, one JSON object per line, decoded only
//!    when a document is asked for;
//! 4. the vectors, `count × dimension` little-endian `f32`, normalised;
//! 5. for each BM25 index the file keeps (version 2 only; the header's `keyword` lists them):
//!    its terms, each followed by a newline, then each document's length in terms and then every
//!    document's term ids in order, all little-endian `u32`. A process that opens the file
//!    searches by keyword without tokenizing a document.
//!
//! Pure: bytes in, bytes out; reading and writing files is the adapter's.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::bm25::Bm25Index;
use super::corpus::{Corpus, Document};
use super::tokenize::Tokenizer;
use super::vector::VectorStore;

/// The first line of every corpus file; the number is the format's version.
pub const MAGIC: &str = "host-corpus 1";
/// The first line of a corpus file that keeps BM25 indexes (written only then, so a file
/// without them reads in earlier versions of host too).
pub const MAGIC_KEYWORD: &str = "host-corpus 2";

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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    keyword: Vec<KeywordPart>,
}

/// Where one BM25 index lies in part 5 of the file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeywordPart {
    tokenizer: Tokenizer,
    terms: usize,
    terms_bytes: usize,
    tokens: usize,
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
    #[error("its {tokenizer:?} keyword index cannot be saved: {message}")]
    Keyword { tokenizer: Tokenizer, message: String },
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
/// indexing the fields named in `indexed` and keeping the BM25 index of each of `keyword`.
pub fn encode(
    corpus: &Corpus,
    fields: &[Map<String, Value>],
    model: Option<&str>,
    indexed: &[String],
    keyword: &[Tokenizer],
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
    let mut keyword_parts = Vec::new();
    let mut keyword_bytes = Vec::new();
    for &tokenizer in keyword {
        let index = corpus.bm25(tokenizer);
        keyword_parts.push(encode_keyword(&index, &mut keyword_bytes)?);
    }
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
        keyword: keyword_parts,
    };
    let magic = if header.keyword.is_empty() { MAGIC } else { MAGIC_KEYWORD };
    let header = serde_json::to_string(&header).map_err(|error| StoredError::Header { message: error.to_string() })?;
    let mut bytes =
        Vec::with_capacity(magic.len() + header.len() + lines.len() + count * dimension * 4 + keyword_bytes.len() + 2);
    bytes.extend_from_slice(magic.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(header.as_bytes());
    bytes.push(b'\n');
    bytes.extend_from_slice(lines.as_bytes());
    for doc in 0..count {
        for value in corpus.vector(doc).unwrap_or_default() {
            bytes.extend_from_slice(&value.to_le_bytes());
        }
    }
    bytes.extend_from_slice(&keyword_bytes);
    Ok(bytes)
}

/// Appends `index` as part 5 lays it out, and says where it lies.
fn encode_keyword(index: &Bm25Index, out: &mut Vec<u8>) -> Result<KeywordPart, StoredError> {
    let tokenizer = index.tokenizer();
    let (terms, documents) = index.parts();
    let fail = |message: String| StoredError::Keyword { tokenizer, message };
    let start = out.len();
    for term in &terms {
        if term.contains('\n') {
            return Err(fail(format!("the term {term:?} holds a newline")));
        }
        out.extend_from_slice(term.as_bytes());
        out.push(b'\n');
    }
    let terms_bytes = out.len() - start;
    let as_u32 = |value: usize| u32::try_from(value).map_err(|_| fail(format!("{value} does not fit 32 bits")));
    for ids in documents {
        out.extend_from_slice(&as_u32(ids.len())?.to_le_bytes());
    }
    for &id in documents.iter().flatten() {
        out.extend_from_slice(&as_u32(id)?.to_le_bytes());
    }
    Ok(KeywordPart { tokenizer, terms: terms.len(), terms_bytes, tokens: documents.iter().map(Vec::len).sum() })
}

/// Reads the BM25 index `part` describes from the start of `bytes`; the bytes it took.
fn decode_keyword(part: &KeywordPart, count: usize, bytes: &[u8]) -> Result<(Bm25Index, usize), StoredError> {
    let truncated = StoredError::Truncated { part: "a keyword index" };
    let inconsistent = |message: String| StoredError::Inconsistent { message };
    let text = bytes.get(..part.terms_bytes).ok_or(StoredError::Truncated { part: "a keyword index" })?;
    let text = std::str::from_utf8(text).map_err(|_| inconsistent("a keyword index's terms are not UTF-8".into()))?;
    let terms: Vec<String> = text.split_terminator('\n').map(str::to_string).collect();
    if terms.len() != part.terms || !(text.is_empty() || text.ends_with('\n')) {
        return Err(inconsistent(format!("a keyword index lists {} terms, not {}", terms.len(), part.terms)));
    }
    let numbers = count.checked_add(part.tokens).and_then(|n| n.checked_mul(4)).ok_or(truncated)?;
    let end = part.terms_bytes.checked_add(numbers).ok_or(StoredError::Truncated { part: "a keyword index" })?;
    let numbers = bytes.get(part.terms_bytes..end).ok_or(StoredError::Truncated { part: "a keyword index" })?;
    let mut words = numbers.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    let lengths: Vec<usize> = words.by_ref().take(count).collect();
    if lengths.iter().sum::<usize>() != part.tokens {
        return Err(inconsistent(format!("a keyword index's documents do not hold its {} terms", part.tokens)));
    }
    let documents = lengths.iter().map(|&length| words.by_ref().take(length).collect()).collect();
    let index = Bm25Index::from_parts(part.tokenizer, terms, documents)
        .map_err(|message| inconsistent(format!("a keyword index: {message}")))?;
    Ok((index, end))
}

/// Reads a corpus file back, checking that its parts agree.
pub fn decode(bytes: Vec<u8>) -> Result<StoredCorpus, StoredError> {
    let (magic, rest) = [MAGIC, MAGIC_KEYWORD]
        .into_iter()
        .find_map(|magic| bytes.strip_prefix(magic.as_bytes())?.strip_prefix(b"\n").map(|rest| (magic, rest)))
        .ok_or(StoredError::Magic)?;
    let end = rest.iter().position(|&byte| byte == b'\n').ok_or(StoredError::Truncated { part: "the header" })?;
    let header: Header =
        serde_json::from_slice(&rest[..end]).map_err(|error| StoredError::Header { message: error.to_string() })?;
    if magic == MAGIC && !header.keyword.is_empty() {
        return Err(StoredError::Header { message: format!("keyword indexes need `{MAGIC_KEYWORD}`") });
    }
    let fields_start = magic.len() + 1 + end + 1;
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
    let after_fields = &rest[header.fields_bytes..];
    let expected = count.checked_mul(header.dimension).and_then(|n| n.checked_mul(4));
    let vectors = expected.and_then(|n| after_fields.get(..n)).unwrap_or(after_fields);
    let mut keyword_bytes = &after_fields[vectors.len()..];
    let mut keyword = Vec::with_capacity(header.keyword.len());
    for part in &header.keyword {
        let (index, used) = decode_keyword(part, count, keyword_bytes)?;
        keyword.push(index);
        keyword_bytes = &keyword_bytes[used..];
    }
    if expected != Some(vectors.len()) || !keyword_bytes.is_empty() {
        return Err(if expected.is_some_and(|n| vectors.len() < n) {
            StoredError::Truncated { part: "the vectors" }
        } else {
            inconsistent(format!(
                "{} bytes after the fields for {count} × {} dimensions of vectors and {} keyword indexes",
                after_fields.len(),
                header.dimension,
                header.keyword.len()
            ))
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
    let corpus = Corpus::with_store(documents, store);
    for index in keyword {
        corpus.adopt_bm25(index);
    }
    Ok(StoredCorpus { model: header.model, corpus, fields: StoredFields { bytes, lines }, index: header.index })
}

#[cfg(test)]
#[path = "stored_tests.rs"]
mod tests;
