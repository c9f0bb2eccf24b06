//! The Rhai side of corpus files (`stored.rs`): `corpus.save`, `search::open_corpus`, and reading
//! one document or an indexed field's documents without decoding the others.

use std::sync::Arc;

use rhai::{Array, Dynamic, INT, Map, Module, NativeCallContext};
use serde_json::Value;

use super::rhai::{CorpusHandle, Fields};
use super::{Search, SearchError};
use crate::capabilities::docs::function;
use crate::capabilities::fs::Files;
use crate::capabilities::results::{FileContent, Results};
use crate::capabilities::{script_error, script_options};
use algorithms::search::stored::{self, StoredCorpus};
use algorithms::search::tokenize::Tokenizer;

type Result<T> = std::result::Result<T, Box<rhai::EvalAltResult>>;

/// The options of `corpus.save`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveOptions {
    /// Fields to index for `corpus.lookup`.
    #[serde(default)]
    index: Vec<String>,
    /// Tokenizers whose BM25 index the file keeps.
    #[serde(default)]
    keyword_index: Vec<Tokenizer>,
}

/// Document `doc`'s fields as JSON, for saving.
fn json_fields(fields: &Fields, doc: usize) -> std::result::Result<serde_json::Map<String, Value>, SearchError> {
    let map = fields.get(doc)?;
    match rhai::serde::from_dynamic::<Value>(&Dynamic::from_map(map)) {
        Ok(Value::Object(object)) => Ok(object),
        _ => Err(SearchError::BadDocument { index: doc, message: "its fields are not plain data".into() }),
    }
}

fn encode(corpus: &CorpusHandle, path: &str, options: &SaveOptions) -> std::result::Result<Vec<u8>, SearchError> {
    let fields = (0..corpus.fields.len())
        .map(|doc| json_fields(&corpus.fields, doc))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    stored::encode(&corpus.corpus, &fields, corpus.model.as_deref(), &options.index, &options.keyword_index)
        .map_err(|source| SearchError::CorpusFile { path: path.to_string(), source })
}

pub(super) fn corpus_file_functions(
    module: &mut Module,
    search: Arc<dyn Search>,
    files: Arc<dyn Files>,
    results: Arc<dyn Results>,
) {
    let sink = results.clone();
    function(
        "save",
        &["corpus: &mut Corpus", "path: &str", "()"],
        "
Writes the corpus, its vectors and its documents' fields to `path` in the run directory
(atomically), for `search::open_corpus` in a later run.
Example: `corpus.save(\"memories.corpus\");`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(
        module,
        move |context: NativeCallContext, corpus: &mut CorpusHandle, path: &str| -> Result<()> {
            let bytes =
                encode(corpus, path, &SaveOptions::default()).map_err(|error| script_error(&context, &error))?;
            sink.write_file(path, FileContent::Bytes(bytes)).map_err(|error| script_error(&context, &error))
        },
    );

    let sink = results;
    function(
        "save",
        &["corpus: &mut Corpus", "path: &str", "options: Map", "()"],
        "
`corpus.save(path)` with options: `index`, the fields to index so that `corpus.lookup` answers
from the file without reading every document; `keyword_index`, the tokenizers (`benchmark`,
`unicode61`, …) whose BM25 index the file keeps, so that a process that opens it searches by
keyword without tokenizing every document (keyword profile `benchmark` uses the `benchmark`
tokenizer, `openclaw` uses `unicode61`).
Example: `memories.save(\"memories.corpus\", #{ index: [\"imports\"], keyword_index: [\"benchmark\"] });`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(
        module,
        move |context: NativeCallContext, corpus: &mut CorpusHandle, path: &str, options: Map| -> Result<()> {
            let options: SaveOptions = script_options(&context, "corpus.save", options)?;
            let bytes = encode(corpus, path, &options).map_err(|error| script_error(&context, &error))?;
            sink.write_file(path, FileContent::Bytes(bytes)).map_err(|error| script_error(&context, &error))
        },
    );

    function(
        "open_corpus",
        &["path: &str", "Corpus"],
        "
A corpus saved by `corpus.save`, with its vectors: nothing is embedded again, and a document's
fields are decoded only when a hit, `document` or `lookup` needs them. Queries given as text are
embedded with the model that embedded the corpus.
Example: `let memories = search::open_corpus(`${store}/memories.corpus`);`",
    )
    .with_volatility(true)
    .set_into_module(module, move |context: NativeCallContext, path: &str| -> Result<CorpusHandle> {
        // Permission-checked on every call; read, decoded and its BM25 index built once per
        // process for the same file, so that a warm hook server answers from memory.
        let resolved = files.resolve(path).map_err(|error| script_error(&context, &error))?;
        let key = opened::key(&resolved);
        if let Some(hit) = key.as_ref().and_then(opened::get) {
            files.record_read(path, &hit.sha256, hit.bytes).map_err(|error| script_error(&context, &error))?;
            return Ok(CorpusHandle {
                corpus: hit.corpus,
                fields: hit.fields,
                model: hit.model,
                search: search.clone(),
            });
        }
        let bytes = files.read_bytes(path).map_err(|error| script_error(&context, &error))?;
        let (sha256, size) = (crate::capabilities::fs::sha256_hex(&bytes), bytes.len() as u64);
        let StoredCorpus { model, corpus, fields, index } = stored::decode(bytes)
            .map_err(|source| script_error(&context, &SearchError::CorpusFile { path: path.to_string(), source }))?;
        let corpus = Arc::new(corpus);
        let fields = Arc::new(Fields::Stored { path: path.to_string(), fields, index });
        if let Some(key) = key {
            opened::put(
                key,
                opened::Opened {
                    corpus: corpus.clone(),
                    fields: fields.clone(),
                    model: model.clone(),
                    sha256,
                    bytes: size,
                },
            );
        }
        Ok(CorpusHandle { corpus, fields, model, search: search.clone() })
    });

    function(
        "document",
        &["corpus: &mut Corpus", "doc: INT", "Map"],
        "
The fields of the document at position `doc` (a hit's `doc`), as they were given.
Example: `let memory = memories.document(hit.doc);`",
    )
    .in_global_namespace()
    .set_into_module(module, |context: NativeCallContext, corpus: &mut CorpusHandle, doc: INT| -> Result<Map> {
        let count = corpus.fields.len();
        let position = usize::try_from(doc).ok().filter(|&position| position < count);
        let position = position.ok_or_else(|| script_error(&context, &SearchError::NoDocument { doc, count }))?;
        corpus.fields.get(position).map_err(|error| script_error(&context, &error))
    });

    function(
        "lookup",
        &["corpus: &mut Corpus", "field: &str", "value: &str", "Array"],
        "
The positions of the documents whose `field` is `value` or a list holding it, ascending; from
the corpus file's index when `field` was indexed on saving, else by reading every document.
Example: `let boosted = memories.lookup(\"imports\", \"next/cache\");`",
    )
    .in_global_namespace()
    .set_into_module(
        module,
        |context: NativeCallContext, corpus: &mut CorpusHandle, field: &str, value: &str| -> Result<Array> {
            let found = corpus.fields.lookup(field, value).map_err(|error| script_error(&context, &error))?;
            Ok(found.into_iter().map(|doc| Dynamic::from(doc as INT)).collect())
        },
    );
}

/// Corpus files opened in this process, by path, size and modification time: a hook server runs
/// its script afresh for every event, and reading, hashing and decoding a store and building its
/// BM25 index again each time would cost more than the rest of the answer.
mod opened {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::SystemTime;

    use super::Fields;
    use algorithms::search::corpus::Corpus;

    /// The most files kept; past it the cache starts again (a hook opens a handful).
    const MAX_FILES: usize = 16;

    pub(super) type Key = (PathBuf, u64, SystemTime);

    /// A decoded corpus file, with what the run's record of its inputs needs.
    #[derive(Clone)]
    pub(super) struct Opened {
        pub corpus: Arc<Corpus>,
        pub fields: Arc<Fields>,
        pub model: Option<String>,
        pub sha256: String,
        pub bytes: u64,
    }

    fn cache() -> &'static Mutex<HashMap<Key, Opened>> {
        static CACHE: OnceLock<Mutex<HashMap<Key, Opened>>> = OnceLock::new();
        CACHE.get_or_init(Default::default)
    }

    /// The key of the file at `path` as it is now; `None` when its size or modification time is
    /// unknown.
    pub(super) fn key(path: &Path) -> Option<Key> {
        let metadata = std::fs::metadata(path).ok()?;
        Some((path.to_path_buf(), metadata.len(), metadata.modified().ok()?))
    }

    pub(super) fn get(key: &Key) -> Option<Opened> {
        cache().lock().ok()?.get(key).cloned()
    }

    pub(super) fn put(key: Key, opened: Opened) {
        if let Ok(mut cache) = cache().lock() {
            if cache.len() >= MAX_FILES {
                cache.clear();
            }
            cache.insert(key, opened);
        }
    }
}
