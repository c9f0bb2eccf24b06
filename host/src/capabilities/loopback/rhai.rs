//! The Rhai namespace `loopback::` and the `LoopbackServer` type it returns: thin, on the run's
//! async runtime. The plays, faults and the request log live beside it.

use std::sync::Arc;

use rhai::{Dynamic, Engine, EvalAltResult, Map, Module, NativeCallContext};
use serde_json::json;
use tokio::runtime::Handle;

use super::{AnthropicScript, Loopback, Server};
use crate::capabilities::docs::function;
use crate::capabilities::{script_error, script_value};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// A running loopback server, as scripts hold it.
#[derive(Clone)]
pub struct LoopbackServer(Arc<Server>);

pub fn register_types(engine: &mut Engine) {
    engine.register_type_with_name::<LoopbackServer>("LoopbackServer");
}

pub fn module(loopback: Arc<dyn Loopback>, runtime: Handle) -> Module {
    let mut module = Module::new();

    let handle = runtime.clone();
    function(
        "anthropic",
        &["script: Map", "LoopbackServer"],
        "
Starts a server on 127.0.0.1 (a free port) playing the Anthropic Messages API for a scripted
agent, and returns it once it listens; set a client's `ANTHROPIC_BASE_URL` to its `url()`.
`replies` (required): the agent's turns in order, each `#{ text }` (ends the turn), `#{ tools:
[#{ name, input }] }` (one `tool_use` block each) or both. A request offering tools that holds
i assistant messages gets reply i, so the same conversation sent again gets the same reply;
past the end it gets the last reply if that calls no tools, else the text `Done.`.
`side_reply` (`\"[]\"`): the text answering requests without tools (a hook's reranker).
`faults` (`[]`): `#{ request: n, kind }` for the nth request to `/v1/messages`, from 1: kind
`stall` (never answered until the client leaves or the server stops), `status` with `status`
(Anthropic's error body; 429 adds `retry-after: 1`), `cut` (the first piece, a stream's
`message_start`, then the connection breaks) or `delay` with `seconds`. Streams as Claude Code
asks (`stream: true`); answers `/v1/messages/count_tokens`; any other path is a 404. Ids and
token counts depend only on the request. The server stops when the run ends.
Methods: `url()`, `requests()`, `stop()`.
Example: `let model = loopback::anthropic(#{ replies: [#{ tools: [#{ name: \"Write\", input: #{ file_path: path, content: \"hi\" } }] }, #{ text: \"Done.\" }] });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, script: Map| -> Result<LoopbackServer> {
        let minimal = json!({"replies": []});
        let script: AnthropicScript =
            script_value(&context, "script for `loopback::anthropic`", &script.into(), &minimal)?;
        let server = handle.block_on(loopback.anthropic(script)).map_err(|error| script_error(&context, &error))?;
        Ok(LoopbackServer(server))
    });

    function(
        "url",
        &["server: &mut LoopbackServer", "String"],
        "
The server's base URL, `http://127.0.0.1:<port>`, without a trailing slash.
Example: `proc::run(#{ argv: [\"claude\", \"-p\", task], env: #{ ANTHROPIC_BASE_URL: model.url() } });`",
    )
    .in_global_namespace()
    .set_into_module(&mut module, |server: &mut LoopbackServer| server.0.url());

    function(
        "requests",
        &["server: &mut LoopbackServer", "Array"],
        "
Every request so far, in arrival order: `#{ seq, at_ms, method, path, query, stream, agent,
reply, fault, status, headers, key_present, body }`. `seq` counts from 1; `at_ms` is since
the server started; `agent` is true when the request offered tools; `reply` is the turn
answered, the number of assistant messages the request held (`()` for side requests, other
paths and faults but `delay`); `fault` is the fault's kind or `()`; `status` is `()` when
nothing was answered (a stall, a delay the stop cut short); `headers` holds only
`anthropic-version`, `anthropic-beta` and `user-agent` (never a key: `key_present` says whether
one was sent); `body` is the request's JSON, or its text when it is not JSON.
Example: `let turns = model.requests().filter(|r| r.agent).len();`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, |server: &mut LoopbackServer| -> Result<Dynamic> {
        rhai::serde::to_dynamic(server.0.requests())
    });

    function(
        "stop",
        &["server: &mut LoopbackServer", "()"],
        "
Stops the server now: it no longer listens, and every connection, a stalled one included,
closes without an answer. Calling it again does nothing.
Example: `model.stop();`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, move |server: &mut LoopbackServer| runtime.block_on(server.0.stop()));

    module
}
