//! The Rhai namespace `search::` and the `Corpus` and `TextIndex` values it returns.

use std::sync::Arc;

use rhai::{Array, Dynamic, Engine, EvalAltResult, FLOAT, INT, Map, Module, NativeCallContext};
use serde_json::Value;

use super::text_index::{TextIndex, TextIndexOptions};
use super::{Search, SearchError};
use crate::capabilities::docs::function;
use crate::capabilities::fs::Files;
use crate::capabilities::results::Results;
use crate::capabilities::{script_error, script_options};
use algorithms::search::chunk::{self, CharWindowOptions, LineChunkOptions};
use algorithms::search::corpus::{Corpus, Document, Hit, KeywordOptions};
use algorithms::search::decay;
use algorithms::search::fusion::Leg;
use algorithms::search::mmr::{self, MmrOptions};
use algorithms::search::pipeline::{self, QueryOptions};
use algorithms::search::snippet::{SNIPPET_MAX_CHARS, snippet};
use algorithms::search::stored::{FieldIndex, StoredFields};
use algorithms::search::tokenize::Tokenizer;

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// A corpus as scripts hold it: the documents' own fields, and the model that embedded them.
#[derive(Clone)]
pub struct CorpusHandle {
    pub(super) corpus: Arc<Corpus>,
    pub(super) fields: Arc<Fields>,
    pub(super) model: Option<String>,
    pub(super) search: Arc<dyn Search>,
}

/// A tantivy index as scripts hold it.
#[derive(Clone)]
pub struct TextIndexHandle {
    index: Arc<TextIndex>,
    fields: Arc<Fields>,
}

/// The documents' own fields, which hits return: as the script gave them, or still encoded in a
/// corpus file and decoded one document at a time (a hook reads only what it injects).
pub(super) enum Fields {
    Given(Vec<Map>),
    Stored { path: String, fields: StoredFields, index: FieldIndex },
}

impl Fields {
    pub(super) fn len(&self) -> usize {
        match self {
            Fields::Given(maps) => maps.len(),
            Fields::Stored { fields, .. } => fields.len(),
        }
    }

    /// Document `doc`'s fields (empty past the end).
    pub(super) fn get(&self, doc: usize) -> std::result::Result<Map, SearchError> {
        match self {
            Fields::Given(maps) => Ok(maps.get(doc).cloned().unwrap_or_default()),
            Fields::Stored { path, fields, .. } => match fields.get(doc) {
                None => Ok(Map::new()),
                Some(Err(source)) => Err(SearchError::StoredFields { path: path.clone(), doc, source }),
                Some(Ok(object)) => {
                    let value = rhai::serde::to_dynamic(Value::Object(object)).unwrap_or_default();
                    Ok(value.try_cast::<Map>().unwrap_or_default())
                }
            },
        }
    }

    /// The documents whose `field` is `value`, or is a list holding it, ascending: from the
    /// corpus file's index when the field was indexed on saving, else by reading every document.
    pub(super) fn lookup(&self, field: &str, value: &str) -> std::result::Result<Vec<usize>, SearchError> {
        if let Fields::Stored { index, .. } = self
            && let Some(postings) = index.get(field)
        {
            return Ok(postings.get(value).cloned().unwrap_or_default());
        }
        let mut found = Vec::new();
        for doc in 0..self.len() {
            let fields = self.get(doc)?;
            let holds = match fields.get(field) {
                Some(item) if item.is_string() => item.to_string() == value,
                Some(item) => item
                    .clone()
                    .try_cast::<Array>()
                    .is_some_and(|items| items.iter().any(|item| item.is_string() && item.to_string() == value)),
                None => false,
            };
            if holds {
                found.push(doc);
            }
        }
        Ok(found)
    }
}

pub fn register_types(engine: &mut Engine) {
    engine.register_type_with_name::<CorpusHandle>("Corpus").register_type_with_name::<TextIndexHandle>("TextIndex");
}

/// The options of `search::corpus`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusOptions {
    #[serde(default)]
    embed: Option<EmbedChoice>,
}

/// `embed: true` (the local model), `false`, or a model's name.
#[derive(Debug, serde::Deserialize)]
#[serde(untagged)]
enum EmbedChoice {
    Local(bool),
    Model(String),
}

/// `limit` of `corpus.keyword`, read apart from the keyword options.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct LimitOption {
    #[serde(default)]
    limit: Option<usize>,
}

/// Reads `#{ id, text, vector, age_days, ... }` maps; other fields travel with hits as `meta`.
fn documents(context: &NativeCallContext, items: &Array) -> Result<(Vec<Document>, Vec<Map>)> {
    let mut parsed = Vec::with_capacity(items.len());
    let mut maps = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let bad = |message: String| script_error(context, &SearchError::BadDocument { index, message });
        let map = item.clone().try_cast::<Map>().ok_or_else(|| bad(format!("is {}, not a map", item.type_name())))?;
        let text = map
            .get("text")
            .and_then(|text| text.clone().into_string().ok())
            .ok_or_else(|| bad("has no `text` string".into()))?;
        let id = map.get("id").map_or_else(|| index.to_string(), ToString::to_string);
        let vector = match map.get("vector") {
            None => None,
            Some(value) if value.is_unit() => None,
            Some(value) => Some(floats(value).ok_or_else(|| bad("`vector` is not an array of numbers".into()))?),
        };
        let age_days = map.get("age_days").and_then(number);
        let mut meta = serde_json::Map::new();
        for (key, value) in &map {
            if !matches!(key.as_str(), "id" | "text" | "vector" | "age_days") {
                meta.insert(key.to_string(), rhai::serde::from_dynamic::<Value>(value).unwrap_or(Value::Null));
            }
        }
        let mut shown = map.clone();
        shown.remove("vector");
        maps.push(shown);
        parsed.push(Document { id, text, vector, age_days, meta });
    }
    Ok((parsed, maps))
}

fn number(value: &Dynamic) -> Option<f64> {
    value.as_float().ok().or_else(|| value.as_int().ok().map(|n| n as f64))
}

fn floats(value: &Dynamic) -> Option<Vec<f32>> {
    let items = value.clone().try_cast::<Array>()?;
    items.iter().map(|item| number(item).map(|n| n as f32)).collect()
}

fn leg(score: Option<algorithms::search::fusion::LegScore>) -> Dynamic {
    match score {
        None => Dynamic::UNIT,
        Some(score) => {
            let mut map = Map::new();
            map.insert("raw".into(), Dynamic::from_float(score.raw));
            map.insert("normalized".into(), Dynamic::from_float(score.normalized));
            map.into()
        }
    }
}

/// A hit as a map: `#{ id, doc, rank, score, vector, keyword, text, ... }` where `vector` and
/// `keyword` are `#{ raw, normalized }` or `()`, followed by the document's own fields.
fn hit_map(rank: usize, hit: &Hit, fields: &Fields) -> std::result::Result<Dynamic, SearchError> {
    let mut map = fields.get(hit.doc)?;
    map.insert("id".into(), hit.id.clone().into());
    map.insert("doc".into(), (hit.doc as INT).into());
    map.insert("rank".into(), (rank as INT + 1).into());
    map.insert("score".into(), Dynamic::from_float(hit.score));
    map.insert("vector".into(), leg(hit.vector));
    map.insert("keyword".into(), leg(hit.keyword));
    Ok(map.into())
}

fn hits(context: &NativeCallContext, found: &[Hit], fields: &Fields) -> Result<Array> {
    found
        .iter()
        .enumerate()
        .map(|(rank, hit)| hit_map(rank, hit, fields).map_err(|error| script_error(context, &error)))
        .collect()
}

impl CorpusHandle {
    fn id(&self, doc: usize) -> String {
        self.corpus.document(doc).map(|document| document.id.clone()).unwrap_or_default()
    }

    /// The vector of a query given as a vector, or as text embedded with the corpus's model.
    fn vector_of(&self, context: &NativeCallContext, query: &Dynamic) -> Result<Vec<f32>> {
        match floats(query) {
            Some(vector) => Ok(vector),
            None => self
                .query_vector(query, &query_text(query))
                .map_err(|error| script_error(context, &error))?
                .ok_or_else(|| script_error(context, &algorithms::search::SearchError::NoVectors)),
        }
    }

    fn query_vector(&self, query: &Dynamic, text: &str) -> std::result::Result<Option<Vec<f32>>, SearchError> {
        if let Some(map) = query.clone().try_cast::<Map>()
            && let Some(vector) = map.get("vector").and_then(floats)
        {
            return Ok(Some(vector));
        }
        match &self.model {
            Some(model) if self.corpus.has_vectors() => Ok(Some(self.search.embed_query(text, model)?)),
            _ => Ok(None),
        }
    }
}

fn query_text(query: &Dynamic) -> String {
    match query.clone().try_cast::<Map>() {
        Some(map) => map.get("text").map(ToString::to_string).unwrap_or_default(),
        None => query.to_string(),
    }
}

pub fn module(search: Arc<dyn Search>, files: Arc<dyn Files>, results: Arc<dyn Results>) -> Module {
    let mut module = Module::new();
    corpus_functions(&mut module, search.clone());
    super::rhai_files::corpus_file_functions(&mut module, search, files, results);
    text_index_functions(&mut module);
    helper_functions(&mut module);
    module
}

fn corpus_functions(module: &mut Module, search: Arc<dyn Search>) {
    let builder = search.clone();
    function(
        "corpus",
        &["documents: Array", "Corpus"],
        "
A searchable corpus over `[#{ id, text, vector?, age_days?, ... }]`. Give every document a
`vector` (for the vector leg) or none; other fields come back with each hit.
Example: `let corpus = search::corpus(chunks.map(|c, i| #{ id: `c${i}`, text: c.text, session: c.session }));`",
    )
    .with_volatility(true)
    .set_into_module(module, move |context: NativeCallContext, items: Array| -> Result<CorpusHandle> {
        let (parsed, maps) = documents(&context, &items)?;
        let corpus = builder.corpus(parsed, None).map_err(|error| script_error(&context, &error))?;
        Ok(CorpusHandle {
            corpus: Arc::new(corpus),
            fields: Arc::new(Fields::Given(maps)),
            model: None,
            search: builder.clone(),
        })
    });

    let builder = search;
    function(
        "corpus",
        &["documents: Array", "options: Map", "Corpus"],
        "
A corpus whose documents are embedded when `options.embed` is `true` (the local model) or names
a model (`local`, `remote`, `openai:<model>`); queries given as text are then embedded alike.
Example: `let corpus = search::corpus(chunks, #{ embed: true });`",
    )
    .with_volatility(true)
    .set_into_module(
        module,
        move |context: NativeCallContext, items: Array, options: Map| -> Result<CorpusHandle> {
            let options: CorpusOptions = script_options(&context, "search::corpus", options)?;
            let model = match options.embed {
                None | Some(EmbedChoice::Local(false)) => None,
                Some(EmbedChoice::Local(true)) => Some("local".to_string()),
                Some(EmbedChoice::Model(model)) => Some(model),
            };
            let (parsed, maps) = documents(&context, &items)?;
            let corpus = builder.corpus(parsed, model.as_deref()).map_err(|error| script_error(&context, &error))?;
            Ok(CorpusHandle {
                corpus: Arc::new(corpus),
                fields: Arc::new(Fields::Given(maps)),
                model,
                search: builder.clone(),
            })
        },
    );

    function(
        "len",
        &["corpus: &mut Corpus", "INT"],
        "The number of documents.\nExample: `log::info(`${corpus.len()} chunks`);`",
    )
    .in_global_namespace()
    .set_into_module(module, |corpus: &mut CorpusHandle| corpus.corpus.len() as INT);

    function(
        "query",
        &["corpus: &mut Corpus", "query: Dynamic", "options: Map", "Array"],
        "
Runs a whole retrieval query: keyword and vector legs, fusion, optional decay, candidate cut
and MMR, then selection. `query` is text (embedded if the corpus was) or `#{ text, vector }`.
Options (all optional; defaults are OpenClaw's): `fusion` (`openclaw` | `linear` | `rrf`),
`limit`, `keyword: #{ profile: \"openclaw\" | \"benchmark\", tokenizer, k1, b, idf, mode }`,
`openclaw: #{ max_results, min_score, vector_weight, text_weight, candidate_multiplier }`,
`linear: #{ vector_weight, keyword_weight, vector_normalization, keyword_normalization, pool_size }`,
`rrf: #{ k, pool_size }`, `decay: #{ half_life_days }` (uses each document's `age_days`),
`candidates`, `mmr: #{ lambda, normalize_relevance, similarity: \"jaccard\" | \"cosine\" }`.
Hits: `#{ id, doc, rank, score, vector: #{ raw, normalized }, keyword: #{ raw, normalized }, ...document fields }`.
Example: `let hits = corpus.query(prompt, #{ mmr: #{ lambda: 0.7 }, decay: #{ half_life_days: 30 } });`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(
        module,
        |context: NativeCallContext, corpus: &mut CorpusHandle, query: Dynamic, options: Map| -> Result<Array> {
            let options: QueryOptions = script_options(&context, "corpus.query", options)?;
            let text = query_text(&query);
            let vector = corpus.query_vector(&query, &text).map_err(|error| script_error(&context, &error))?;
            let found = pipeline::query(&corpus.corpus, &text, vector.as_deref(), &options)
                .map_err(|error| script_error(&context, &error))?;
            hits(&context, &found, &corpus.fields)
        },
    );

    function(
        "keyword",
        &["corpus: &mut Corpus", "query: &str", "options: Map", "Array"],
        "
BM25 alone, best first: `options` are the keyword options of `query` plus `limit`. Scores are
positive BM25 (FTS5's rank is its negation).
Example: `let hits = corpus.keyword(\"cache ttl\", #{ profile: \"benchmark\", limit: 10 });`",
    )
    .in_global_namespace()
    .set_into_module(
        module,
        |context: NativeCallContext, corpus: &mut CorpusHandle, query: &str, mut options: Map| -> Result<Array> {
            // `limit` sits beside the keyword options, which refuse any other key.
            let limited: LimitOption = script_options(
                &context,
                "corpus.keyword",
                options.remove("limit").map_or_else(Map::new, |limit| {
                    let mut only = Map::new();
                    only.insert("limit".into(), limit);
                    only
                }),
            )?;
            let limit = limited.limit;
            let keyword: KeywordOptions = script_options(&context, "corpus.keyword", options)?;
            let found =
                corpus.corpus.keyword(query, &keyword, limit).map_err(|error| script_error(&context, &error))?;
            let found: Vec<Hit> = found
                .into_iter()
                .map(|hit| Hit::single_leg(hit.doc, corpus.id(hit.doc), hit.score, Leg::Keyword))
                .collect();
            hits(&context, &found, &corpus.fields)
        },
    );

    function(
        "similarities",
        &["corpus: &mut Corpus", "query: Dynamic", "Array"],
        "
The cosine of `query` (text, embedded with the corpus's model, or a vector) with every document,
in the order the documents were given: the scores `nearest` ranks, without building hits.
Example: `let cosine = corpus.similarities(question_vector); let best = cosine[0];`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(
        module,
        |context: NativeCallContext, corpus: &mut CorpusHandle, query: Dynamic| -> Result<Array> {
            let vector = corpus.vector_of(&context, &query)?;
            let scores = corpus.corpus.similarities(&vector).map_err(|error| script_error(&context, &error))?;
            Ok(scores.into_iter().map(|score| Dynamic::from_float(f64::from(score))).collect())
        },
    );

    function(
        "nearest",
        &["corpus: &mut Corpus", "query: Dynamic", "limit: INT", "Array"],
        "
Exact cosine top `limit`; `query` is text (embedded with the corpus's model) or a vector.
Example: `let hits = corpus.nearest(\"which port does the API use\", 5);`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(
        module,
        |context: NativeCallContext, corpus: &mut CorpusHandle, query: Dynamic, limit: INT| -> Result<Array> {
            let vector = corpus.vector_of(&context, &query)?;
            let limit = usize::try_from(limit).ok();
            let found = corpus.corpus.nearest(&vector, limit).map_err(|error| script_error(&context, &error))?;
            let found: Vec<Hit> = found
                .into_iter()
                .map(|hit| Hit::single_leg(hit.doc, corpus.id(hit.doc), f64::from(hit.score), Leg::Vector))
                .collect();
            hits(&context, &found, &corpus.fields)
        },
    );
}

fn text_index_functions(module: &mut Module) {
    function(
        "text_index",
        &["documents: Array", "options: Map", "TextIndex"],
        "
A tantivy full-text index over `[#{ id, text, ... }]`, for large corpora; `options.stem`
(default `true`) turns English stemming on.
Example: `let index = search::text_index(sections, #{}); let hits = index.search(\"cache invalidation\", 10);`",
    )
    .with_volatility(true)
    .set_into_module(module, |context: NativeCallContext, items: Array, options: Map| -> Result<TextIndexHandle> {
        let options: TextIndexOptions = script_options(&context, "search::text_index", options)?;
        let (parsed, maps) = documents(&context, &items)?;
        let texts: Vec<&str> = parsed.iter().map(|document| document.text.as_str()).collect();
        let index = TextIndex::build(&texts, options).map_err(|error| script_error(&context, &error))?;
        Ok(TextIndexHandle { index: Arc::new(index), fields: Arc::new(Fields::Given(maps)) })
    });

    function(
        "search",
        &["index: &mut TextIndex", "query: &str", "limit: INT", "Array"],
        "
The best `limit` documents for `query` (tantivy syntax, read leniently): `#{ id, doc, rank, score, ... }`.
Example: `for hit in index.search(\"drizzle migrations\", 5) { print(hit.id); }`",
    )
    .in_global_namespace()
    .set_into_module(
        module,
        |context: NativeCallContext, index: &mut TextIndexHandle, query: &str, limit: INT| -> Result<Array> {
            let found = index
                .index
                .search(query, usize::try_from(limit).unwrap_or(0))
                .map_err(|error| script_error(&context, &error))?;
            let found: Vec<Hit> = found
                .into_iter()
                .map(|hit| {
                    let id = match index.fields.as_ref() {
                        Fields::Given(maps) => maps.get(hit.doc).and_then(|d| d.get("id")).map(ToString::to_string),
                        Fields::Stored { .. } => None,
                    };
                    let id = id.unwrap_or_else(|| hit.doc.to_string());
                    Hit::single_leg(hit.doc, id, f64::from(hit.score), Leg::Keyword)
                })
                .collect();
            hits(&context, &found, &index.fields)
        },
    );
}

fn helper_functions(module: &mut Module) {
    function(
        "chunk_chars",
        &["text: &str", "options: Map", "Array"],
        "
Character windows, as the original benchmark chunked: `#{ size: 1600, overlap: 320, min_chars: 20, trim: true }`.
Returns `[#{ index, start, end, text }]`.
Example: `let chunks = search::chunk_chars(notes, #{ size: 1600, overlap: 320 });`",
    )
    .set_into_module(module, |context: NativeCallContext, text: &str, options: Map| -> Result<Dynamic> {
        let options: CharWindowOptions = script_options(&context, "search::chunk_chars", options)?;
        let chunks = chunk::char_windows(text, &options).map_err(|error| script_error(&context, &error))?;
        rhai::serde::to_dynamic(chunks)
    });

    function(
        "chunk_lines",
        &["text: &str", "options: Map", "Array"],
        "
OpenClaw's line-aware chunker with its overlap carry: `#{ tokens: 400, overlap: 80 }`.
Returns `[#{ start_line, end_line, text }]` (lines count from 1).
Example: `let chunks = search::chunk_lines(fs::read_text(\"MEMORY.md\"), #{});`",
    )
    .set_into_module(module, |context: NativeCallContext, text: &str, options: Map| -> Result<Dynamic> {
        let options: LineChunkOptions = script_options(&context, "search::chunk_lines", options)?;
        rhai::serde::to_dynamic(chunk::line_chunks(text, &options))
    });

    function(
        "snippet",
        &["text: &str", "String"],
        "
The first 700 UTF-16 units of a text, cut safely, as OpenClaw shows a hit.
Example: `let shown = search::snippet(hit.text);`",
    )
    .set_into_module(module, |text: &str| snippet(text, SNIPPET_MAX_CHARS).to_string());

    function(
        "decay",
        &["score: FLOAT", "age_days: FLOAT", "half_life_days: FLOAT", "FLOAT"],
        "
`score × exp(−ln2 × age_days / half_life_days)`; ages below 0 count as 0.
Example: `let weighted = search::decay(hit.score, 7.0, 30.0);`",
    )
    .set_into_module(module, |score: FLOAT, age: FLOAT, half_life: FLOAT| decay::apply(score, age, false, half_life));

    function(
        "mmr",
        &["scores: Array", "texts: Array", "options: Map", "Array"],
        "
Greedy MMR over items given by score and text (Jaccard over lowercase `[a-z0-9_]+` tokens):
returns item indices in selection order. Options: `#{ lambda: 0.7, normalize_relevance: true, limit }`.
Example: `let order = search::mmr(hits.map(|h| h.score), hits.map(|h| h.text), #{ lambda: 0.7 });`",
    )
    .set_into_module(
        module,
        |context: NativeCallContext, scores: Array, texts: Array, options: Map| -> Result<Array> {
            let options: MmrOptions = script_options(&context, "search::mmr", options)?;
            let scores: Vec<f64> = scores.iter().map(|score| number(score).unwrap_or(f64::NAN)).collect();
            let texts: Vec<String> = texts.iter().map(ToString::to_string).collect();
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            let order =
                mmr::rerank_by_text(&scores, &texts, &options).map_err(|error| script_error(&context, &error))?;
            Ok(order.into_iter().map(|index| Dynamic::from(index as INT)).collect())
        },
    );

    function(
        "tokens",
        &["text: &str", "tokenizer: &str", "Array"],
        "
The terms a tokenizer makes of a text: `benchmark` (the original simulation's) or `unicode61`
(FTS5's, with diacritics removed).
Example: `let terms = search::tokens(prompt, \"benchmark\");`",
    )
    .set_into_module(module, |context: NativeCallContext, text: &str, tokenizer: &str| -> Result<Array> {
        let tokenizer: Tokenizer =
            rhai::serde::from_dynamic(&Dynamic::from(tokenizer.to_string())).map_err(|error| {
                Box::new(EvalAltResult::ErrorRuntime(
                    format!("unknown tokenizer: {}", error.unwrap_inner()).into(),
                    context.call_position(),
                ))
            })?;
        Ok(tokenizer.tokenize(text).into_iter().map(Dynamic::from).collect())
    });
}
