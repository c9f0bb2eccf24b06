//! The Rhai namespace `llm::`: one call, or many in flight at once, on the run's async runtime.

use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, Map, Module, NativeCallContext, Position};
use tokio::runtime::Handle;

use super::{ChatRequest, ChatResponse, Llm, LlmError};
use crate::capabilities::docs::function;
use crate::capabilities::progress::Progress;
use crate::capabilities::{BatchOptions, script_options};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// Requests in flight for `llm::chat_many` when the script does not say.
pub const DEFAULT_CONCURRENCY: usize = 4;

fn request(value: Dynamic, position: Position, function: &str) -> Result<ChatRequest> {
    rhai::serde::from_dynamic(&value).map_err(|error| {
        let message = format!("invalid LLM request for `{function}`: {}", error.unwrap_inner());
        Box::new(EvalAltResult::ErrorRuntime(message.into(), position))
    })
}

fn success(response: ChatResponse) -> Result<Dynamic> {
    let mut map: Map = rhai::serde::to_dynamic(response)?.cast();
    map.insert("ok".into(), Dynamic::TRUE);
    Ok(map.into())
}

fn failure(error: &LlmError) -> Dynamic {
    let mut map = Map::new();
    map.insert("ok".into(), Dynamic::FALSE);
    map.insert("kind".into(), error.kind.name().into());
    map.insert("error".into(), error.to_string().into());
    map.insert("retries".into(), (error.retries as rhai::INT).into());
    map.into()
}

/// A quota error ends the run (no later call can succeed); other errors are catchable.
fn raise(error: &LlmError, position: Position) -> Box<EvalAltResult> {
    if error.kind.is_fatal() {
        Box::new(EvalAltResult::ErrorTerminated(error.to_string().into(), position))
    } else {
        Box::new(EvalAltResult::ErrorRuntime(error.to_string().into(), position))
    }
}

pub fn module(llm: Arc<dyn Llm>, progress: Arc<dyn Progress>, runtime: Handle) -> Module {
    let mut module = Module::new();

    let (model, handle) = (llm.clone(), runtime.clone());
    function(
        "chat",
        &["request: Map", "Map"],
        "
Sends one chat request and returns `#{ ok, text, usage: #{ prompt_tokens, completion_tokens },
latency_ms, provider, model, call_id, cached, retries }`. Request fields: `messages` (required,
`[#{ role, content }]`), `model` (`openai:<name>`, `anthropic:<name>` or a bare name for the
OpenAI-compatible server; default `LLM_MODEL`, or `JUDGE_MODEL` for role `judge`),
`temperature` (0), `top_p` (not sent unless given), `max_tokens` (1024), `key` (tells identical calls apart in the cache),
`role` (recorded in `llm_calls`; `judge` uses the `JUDGE_*` settings), `timeout_s` (60),
`response_format` (OpenAI's, as `#{ type: \"json_object\" }`; not sent to Anthropic).
Failures are catchable errors; a quota error ends the run.
Example: `let reply = llm::chat(#{ role: \"answerer\", messages: [#{ role: \"user\", content: question }] });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, value: Map| -> Result<Dynamic> {
        let position = context.call_position();
        let request = request(value.into(), position, "llm::chat")?;
        match handle.block_on(model.chat(request)) {
            Ok(response) => success(response),
            Err(error) => Err(raise(&error, position)),
        }
    });

    let (model, handle, bars) = (llm.clone(), runtime.clone(), progress.clone());
    function(
        "chat_many",
        &["requests: Array", "options: Map", "Array"],
        "
Sends many requests with up to `options.concurrency` (default 4) in flight and a progress bar
labelled `options.label`; returns one result per request, in input order. A failed request
does not stop the batch: its slot is `#{ ok: false, kind, error, retries }`.
Example: `let replies = llm::chat_many(requests, #{ concurrency: 8, label: \"judge\" });`",
    )
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, requests: Array, options: Map| -> Result<Array> {
            let options: BatchOptions = script_options(&context, "llm::chat_many", options)?;
            let concurrency = options.concurrency.filter(|n| *n > 0).unwrap_or(DEFAULT_CONCURRENCY);
            let label = options.label.unwrap_or_else(|| "llm".to_string());
            chat_many(&model, &*bars, &handle, &context, requests, concurrency, &label)
        },
    );

    let (model, handle, bars) = (llm, runtime, progress);
    function(
        "chat_many",
        &["requests: Array", "Array"],
        "
`llm::chat_many(requests, #{})`: up to 4 requests in flight.
Example: `let replies = llm::chat_many(requests);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, requests: Array| -> Result<Array> {
        chat_many(&model, &*bars, &handle, &context, requests, DEFAULT_CONCURRENCY, "llm")
    });

    module
}

fn chat_many(
    llm: &Arc<dyn Llm>,
    progress: &dyn Progress,
    runtime: &Handle,
    context: &NativeCallContext,
    requests: Array,
    concurrency: usize,
    label: &str,
) -> Result<Array> {
    let position = context.call_position();
    let requests =
        requests.into_iter().map(|value| request(value, position, "llm::chat_many")).collect::<Result<Vec<_>>>()?;
    let outcomes: Vec<std::result::Result<ChatResponse, LlmError>> =
        crate::capabilities::batch::in_a_window(runtime, progress, label, requests, concurrency, |request| {
            let llm = llm.clone();
            async move { llm.chat(request).await }
        });
    if let Some(fatal) =
        outcomes.iter().filter_map(|outcome| outcome.as_ref().err()).find(|error| error.kind.is_fatal())
    {
        return Err(raise(fatal, position));
    }
    outcomes
        .into_iter()
        .map(|outcome| match outcome {
            Ok(response) => success(response),
            Err(error) => Ok(failure(&error)),
        })
        .collect()
}
