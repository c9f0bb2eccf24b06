//! The Rhai namespace `loopback::` and the `LoopbackServer` type it returns: thin, on the run's
//! async runtime. The plays, modes, faults and the request log live beside it.

use std::sync::Arc;

use rhai::{Dynamic, Engine, EvalAltResult, Map, Module, NativeCallContext};
use serde_json::json;
use tokio::runtime::Handle;

use super::{
    AnthropicScript, CortexPlay, CortexScript, Loopback, LoopbackError, Mode, ModeSpec, ModelsScript, OpenAiScript,
    Server,
};
use crate::capabilities::docs::function;
use crate::capabilities::embed::{EmbedRouter, Embedder, RoutedEmbedder};
use crate::capabilities::llm::Llm;
use crate::capabilities::{script_error, script_value};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// A running loopback server, as scripts hold it; a Cortex server keeps its play, for
/// `memories()`.
#[derive(Clone)]
pub struct LoopbackServer {
    server: Arc<Server>,
    cortex: Option<Arc<CortexPlay>>,
}

impl LoopbackServer {
    fn plain(server: Arc<Server>) -> Self {
        Self { server, cortex: None }
    }
}

pub fn register_types(engine: &mut Engine) {
    engine.register_type_with_name::<LoopbackServer>("LoopbackServer");
}

/// The embedder a `loopback::models` server answers with, for a model choice as `embed::` takes
/// it (`None`: the local model).
pub type EmbedderFor = Arc<dyn Fn(Option<String>) -> Arc<dyn Embedder> + Send + Sync>;

/// The run's embedders, by choice: what `embed::` gives, cached and named in the manifest.
pub fn run_embedders(router: Arc<EmbedRouter>) -> EmbedderFor {
    Arc::new(move |model| Arc::new(RoutedEmbedder { router: router.clone(), model }))
}

pub fn module(loopback: Arc<dyn Loopback>, runtime: Handle, embedder_for: EmbedderFor, llm: Arc<dyn Llm>) -> Module {
    let mut module = Module::new();

    let (handle, anthropic) = (runtime.clone(), loopback.clone());
    function(
        "anthropic",
        &["script: Map", "LoopbackServer"],
        "
Starts a server on 127.0.0.1 (a free port) playing the Anthropic Messages API for a scripted
agent, and returns it once it listens; set a client's `ANTHROPIC_BASE_URL` to its `url()`.
`replies` (required): the agent's turns in order, each `#{ text }` (ends the turn), `#{ tools:
[#{ name, input }] }` (one `tool_use` block each) or both. A request offering tools that holds
i assistant messages gets reply i, so the same conversation sent again gets the same reply;
past the end it gets the last reply if that calls no tools, else the text `Done.`. A tool
input's string `{{user}}` becomes the user's words of the request's last user message (its text
without `<tag>…</tag>` blocks a client or plugin put around them), so one script serves every
question.
`side_reply` (`\"[]\"`): the text answering requests without tools (a hook's reranker).
`faults` (`[]`): `#{ request: n, kind }` for the nth request to `/v1/messages`, from 1: kind
`stall` (never answered until the client leaves or the server stops), `status` with `status`
(Anthropic's error body; `retry_after` seconds sets that header, which a 429 gets as 1 when left
out; `code` replaces the error's type, OpenAI's code: `insufficient_quota`), `cut` (the first
piece, a stream's `message_start`, then the connection breaks), `reset` (the connection is
reset before any answer), `delay` with `seconds`, or `malformed` (a 200 with the first half of
the body, sent as if whole). Streams as Claude Code
asks (`stream: true`); answers `/v1/messages/count_tokens`; any other path is a 404. Ids and
token counts depend only on the request. The server stops when the run ends.
Methods: `url()`, `requests()`, `requests(after)`, `request_count()`, `set_mode(mode)`, `stop()`.
Example: `let model = loopback::anthropic(#{ replies: [#{ tools: [#{ name: \"Write\", input: #{ file_path: path, content: \"hi\" } }] }, #{ text: \"Done.\" }] });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, script: Map| -> Result<LoopbackServer> {
        let minimal = json!({"replies": []});
        let script: AnthropicScript =
            script_value(&context, "script for `loopback::anthropic`", &script.into(), &minimal)?;
        let server = handle.block_on(anthropic.anthropic(script)).map_err(|error| script_error(&context, &error))?;
        Ok(LoopbackServer::plain(server))
    });

    let (handle, openai) = (runtime.clone(), loopback.clone());
    function(
        "openai",
        &["script: Map", "LoopbackServer"],
        "
Starts a server on 127.0.0.1 (a free port) playing the OpenAI Chat Completions API for a
scripted agent, and returns it once it listens; point an OpenAI-compatible client at
`url() + \"/v1\"` (OpenClaw: a provider `#{ baseUrl, api: \"openai-completions\" }`).
`replies`, `side_reply` and `faults` as for `loopback::anthropic` (faults number the requests to
`/v1/chat/completions`; a `cut` sends the first chunk). `models` (`[\"canned\"]`): the ids
`GET /v1/models` lists. `POST /v1/chat/completions` streams as asked (`stream: true`): a chunk
with the role, the text in a few `content` deltas, each tool call (id, type and name, then its
`arguments` JSON in pieces), a chunk with `finish_reason` (`stop`, or `tool_calls` when the
reply calls tools), the usage chunk (`choices: []`) when `stream_options.include_usage`, then
`data: [DONE]`. Not streamed, it answers a whole `chat.completion`. `POST /v1/embeddings`
answers one vector per `input` (a string or a list), `[bytes, first byte, 1]` of its text,
listed last input first (clients order them by `index`); faults never number it. Errors are
OpenAI's `#{ error: #{ message, type, param, code } }`; other paths are a 404. Ids, token
counts and vectors depend only on the request. The server stops when the run ends.
OpenClaw's two compaction requests are answered apart from the script, taking no turn, as an
extractive offline model would; a user message's facts are its sentences (cut as
`loopback::cortex` captures them) but questions, without OpenClaw's `[Sun 2026-05-10 12:34 UTC]`
stamp and `<tag>…</tag>` blocks. Pi's summarisation request (no tools; a system prompt starting
`You are a context summarization assistant.` or a user message starting `<conversation>`) gets
a summary with the headings OpenClaw's quality guard requires, so it is not asked again:
`## Decisions` (the facts of the conversation's `[User]:` messages, a previous summary's
decisions first, in order, each once, as many `- <fact>` lines as fit in `summary_chars`
(1200) characters), `## Open TODOs` and `## Constraints/Rules` (`None.`), `## Pending user asks`
(the latest user message, at most 600 characters) and `## Exact identifiers` (the hex ids, URLs,
paths, `host:port`s and long numbers of its last 10 messages). The pre-compaction memory flush (a
request offering `write` whose system prompt holds `Pre-compaction memory flush`, or whose last
user message starts so) gets one `write` call `#{ path, content }`: `path` the file the prompt
names (`memory/<YYYY-MM-DD>.md`, dated as OpenClaw stamped it), `content` the facts of the
session's user messages, each once, as many `- <fact>` lines as fit in `flush_chars` (2000)
characters; once a tool result follows the last user message, or with nothing to store, it
answers `NO_REPLY`.
Methods: `url()`, `requests()`, `requests(after)`, `request_count()`, `set_mode(mode)`, `stop()`.
Example: `let model = loopback::openai(#{ models: [\"canned\"], replies: [#{ tools: [#{ name: \"memory_search\", input: #{ query: \"deploy\" } }] }, #{ text: \"Done.\" }], summary_chars: 600, flush_chars: 1000 });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, script: Map| -> Result<LoopbackServer> {
        let minimal = json!({"replies": []});
        let script: OpenAiScript = script_value(&context, "script for `loopback::openai`", &script.into(), &minimal)?;
        let server = handle.block_on(openai.openai(script)).map_err(|error| script_error(&context, &error))?;
        Ok(LoopbackServer::plain(server))
    });

    let (handle, models) = (runtime.clone(), loopback.clone());
    function(
        "models",
        &["script: Map", "LoopbackServer"],
        "
Starts a server on 127.0.0.1 (a free port) answering OpenAI's API with host's own models, for a
memory system that needs an LLM and an embedder (mem0), and returns it once it listens; point
the program's OpenAI base URL at `url() + \"/v1\"`. `POST /v1/embeddings` embeds each `input` (a
string or a list of strings) with `embedding_model` (`\"local\"`: the run's local model, as
`embed::texts` gives it, cached and named in the manifest; or any model `embed::` takes), in the
OpenAI shape ordered by `index`; a `dimensions` other than the model's is a 400.
`POST /v1/chat/completions` is answered by `chat`: `\"memory-extractor\"` (the default), a
stand-in for the memory system's extraction LLM that answers mem0's extraction request with one
memory per `user:` message of its `## New Messages` section, as said (`#{ memory: [#{ id, text,
attributed_to: \"user\", linked_memory_ids }] }` as the message content; any other request is a
400 saying why), or `\"llm:<model>\"`: the request's messages, temperature, top_p, token limit and
`response_format` sent to that model through `llm::` (cached, retried, rate limited, a
`llm_calls` row with role `memory-system`), its text and usage answered; a failed call is a 502.
Not streamed. `chat_model` (`\"memory-extractor\"`) is the id `GET /v1/models` lists beside the
embedding model. `faults` as for `loopback::openai`, numbering both POST endpoints. Token counts
depend only on the request. The server stops when the run ends.
Methods: `url()`, `requests()`, `requests(after)`, `request_count()`, `set_mode(mode)`, `stop()`.
Example: `let models = loopback::models(#{}); let base = models.url() + \"/v1\";`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, script: Map| -> Result<LoopbackServer> {
        let script: ModelsScript = script_value(&context, "script for `loopback::models`", &script.into(), &json!({}))?;
        let choice = script.embedding_model.clone().filter(|model| model != "local");
        let embedder = embedder_for(choice);
        let server = handle
            .block_on(models.models(script, embedder, llm.clone()))
            .map_err(|error| script_error(&context, &error))?;
        Ok(LoopbackServer::plain(server))
    });

    let handle = runtime.clone();
    function(
        "cortex",
        &["script: Map", "LoopbackServer"],
        "
Starts a server on 127.0.0.1 (a free port) playing the Cortex memory API as its OpenClaw
plugin and host's `--cortex http` backend call it, and returns it once it is in its starting
mode; set the client's base URL to `url()`. `facts` (`[]`): memories held from the start (node
ids `seed-0`, `seed-1`, …, source `seed`). `tier` (1): the `pipeline_tier` of `GET /v1/stats`.
`mode` (`#{ kind: \"ok\" }`): the mode it starts in, as `set_mode` takes it. `api_key` (none):
the key every request must send in `x-api-key`, else a 401. `polls_to_complete` (0): the poll
of a job at which it ends (`processing` before); 0 ends it at its submission. `fail_jobs`
(`#{}`): session ids with how many of their next jobs fail (status `failed` with an `error`).
Answers `GET /health`, `/v1/stats` (with the `user_id` of the query and the memory count),
`/v1/knowledge` (the same, with `total_memories` and `total_sessions`), `/v1/auth/link`,
`/v1/jobs/{id}` (its status, or a 404), `POST /v1/warmup` and `POST /v1/reflect` (for a
`session_id`; creates nothing); `POST /v1/retrieve` and `/v1/recall` rank the memories sharing
a word (lowercase, 3 or more characters) with `query` by the share of the query's words they
hold, ties in the order stored, at most `top_k` (or `limit`; 10): `#{ results: [#{ node_id,
content, score, type: \"FACT\", source, session_id, confidence: 0.9, metadata: #{ tier:
\"episodic\", node } }] }` and `#{ memories: [#{ content, score }] }`.
`POST /v1/jobs/ingest/conversation` answers `#{ job_id: \"job-<n>\", status: \"queued\" }`; when
the job completes, each sentence of its user and assistant `messages` (cut at new lines and
after `. `, `! `, `? `; 12 characters or more) becomes a memory (`cap-1`, `cap-2`, …, source
`capture`, the request's `session_id` and `reference_date`). Errors are `#{ error: message }`;
other paths are a 404. The server stops when the run ends.
Methods: `url()`, `requests()`, `requests(after)`, `request_count()`, `set_mode(mode)`, `memories()`, `stop()`.
Example: `let cortex = loopback::cortex(#{ facts: [\"The deploy key rotates every month.\"], mode: #{ kind: \"status\", status: 503, paths: [\"/v1/retrieve\"] } });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, script: Map| -> Result<LoopbackServer> {
        let script: CortexScript = script_value(&context, "script for `loopback::cortex`", &script.into(), &json!({}))?;
        let (server, play) = handle.block_on(loopback.cortex(script)).map_err(|error| script_error(&context, &error))?;
        Ok(LoopbackServer { server, cortex: Some(play) })
    });

    function(
        "url",
        &["server: &mut LoopbackServer", "String"],
        "
The server's base URL, `http://127.0.0.1:<port>`, without a trailing slash.
Example: `proc::run(#{ argv: [\"claude\", \"-p\", task], env: #{ ANTHROPIC_BASE_URL: model.url() } });`",
    )
    .in_global_namespace()
    .set_into_module(&mut module, |server: &mut LoopbackServer| server.server.url());

    function(
        "requests",
        &["server: &mut LoopbackServer", "Array"],
        "
Every request so far, in arrival order: `#{ seq, at_ms, method, path, query, stream, agent,
kind, reply, fault, status, mode, duration_ms, headers, key_present, body }`. `seq` counts from
1; `at_ms` is since the server started; `agent` is true when the request offered tools; `kind`
is what a chat play took a request to its main endpoint for: `agent` (the script's turn),
`side`, and for `loopback::openai` `compaction` (Pi's summary) or `flush` (the pre-compaction
memory flush), `()` for other paths and plays; `reply` is the turn answered, the number of
assistant messages the request held (`()` for side, compaction and flush requests, other paths
and faults but `delay`); `fault` is the fault's kind or `()`; `status` is
`()` when nothing was answered (a stall, a hang, a reset, a wait the stop cut short); `mode` is
the kind of the mode applied (`ok` when none covered the path); `duration_ms` runs from arrival
until the answer was ready or the connection was reset (`()` when neither happened); `headers`
holds only `anthropic-version`, `anthropic-beta` and `user-agent` (never a key: `key_present`
says whether one was sent); `body` is the request's JSON, or its text when it is not JSON.
Example: `let turns = model.requests().filter(|r| r.kind == \"agent\").len();`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, |server: &mut LoopbackServer| -> Result<Dynamic> {
        rhai::serde::to_dynamic(server.server.requests())
    });

    function(
        "requests",
        &["server: &mut LoopbackServer", "after: i64", "Array"],
        "
The requests whose `seq` is above `after`, as `requests()` gives them: what arrived since a
mark taken with `request_count()`, without copying the whole log.
Example: `let mark = model.request_count(); /* a turn */ let calls = model.requests(mark);`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, |server: &mut LoopbackServer, after: i64| -> Result<Dynamic> {
        rhai::serde::to_dynamic(server.server.requests_after(u64::try_from(after).unwrap_or(0)))
    });

    function(
        "request_count",
        &["server: &mut LoopbackServer", "i64"],
        "
How many requests the server has received so far (the `seq` of the last one).
Example: `let mark = cortex.request_count();`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, |server: &mut LoopbackServer| -> i64 {
        i64::try_from(server.server.request_count()).unwrap_or(i64::MAX)
    });

    let handle = runtime.clone();
    function(
        "set_mode",
        &["server: &mut LoopbackServer", "mode: Map", "()"],
        "
Switches how the server treats the requests that arrive from now on, until the next
`set_mode`: `#{ kind: \"ok\" }` (answer as the play does), `#{ kind: \"latency\", seconds }`
(answer after the wait), `#{ kind: \"status\", status }` (an HTTP error status with the play's
error body), `#{ kind: \"reset\" }` (read the request, then reset the connection without an
answer: a client sees a connection reset, Node's fetch `fetch failed`), `#{ kind: \"hang\" }`
(never answer: the request is held until the client gives up or the server stops; a later mode
does not release it) or `#{ kind: \"refuse\" }` (stop listening: connections are refused and
open ones break; any other mode listens again on the same port, so `url()` stays valid).
`paths` (every path): the request paths, without the query, that a mode other than `ok` and
`refuse` applies to; the others are answered as usual. Scripted `faults` apply only to
requests the mode leaves alone. A stopped server stays stopped.
Example: `cortex.set_mode(#{ kind: \"status\", status: 503, paths: [\"/v1/retrieve\", \"/v1/recall\"] });`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, server: &mut LoopbackServer, mode: Map| -> Result<()> {
            let spec: ModeSpec = script_value(&context, "mode for `set_mode`", &mode.into(), &json!({"kind": "ok"}))?;
            let mode = Mode::new(&spec).map_err(|message| script_error(&context, &LoopbackError::Mode(message)))?;
            handle.block_on(server.server.set_mode(mode)).map_err(|error| script_error(&context, &error))
        },
    );

    function(
        "memories",
        &["server: &mut LoopbackServer", "Array"],
        "
Every memory a `loopback::cortex` server holds now, seeds first, then captures in the order
stored: `#{ node_id, content, source, session_id, reference_date }` (`source` is `seed` or
`capture`; `session_id` and `reference_date` are `()` for seeds). An error for a server of
another play.
Example: `let captured = cortex.memories().filter(|m| m.source == \"capture\");`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, |context: NativeCallContext, server: &mut LoopbackServer| -> Result<Dynamic> {
        match &server.cortex {
            Some(cortex) => rhai::serde::to_dynamic(cortex.memories()),
            None => Err(Box::new(EvalAltResult::ErrorRuntime(
                "`memories()` is for servers of `loopback::cortex`".into(),
                context.call_position(),
            ))),
        }
    });

    function(
        "stop",
        &["server: &mut LoopbackServer", "()"],
        "
Stops the server now: it no longer listens, and every connection, a stalled or hung one
included, closes without an answer. Calling it again does nothing.
Example: `model.stop();`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, move |server: &mut LoopbackServer| runtime.block_on(server.server.stop()));

    module
}
