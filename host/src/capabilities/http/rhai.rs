//! The Rhai namespace `http::`: one request at a time, on the run's async runtime.

use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext};
use serde_json::{Value, json};
use tokio::runtime::Handle;

use super::{Http, HttpError, HttpRequest, RequestOptions};
use crate::capabilities::docs::function;
use crate::capabilities::{script_error, script_options, script_value};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// A script value as JSON; only values JSON cannot hold (functions, custom types) fail.
fn to_json(context: &NativeCallContext, what: &str, value: &Dynamic) -> Result<Value> {
    rhai::serde::from_dynamic(value).map_err(|error| {
        let message = format!("`{what}` cannot be sent as JSON: {}", error.unwrap_inner());
        script_error(context, &HttpError::Fields { message })
    })
}

fn send(http: &Arc<dyn Http>, runtime: &Handle, context: &NativeCallContext, request: HttpRequest) -> Result<Dynamic> {
    match runtime.block_on(http.send(request)) {
        Ok(response) => rhai::serde::to_dynamic(response),
        Err(error) => Err(script_error(context, &error)),
    }
}

pub fn module(http: Arc<dyn Http>, runtime: Handle) -> Module {
    let mut module = Module::new();

    let (client, handle) = (http.clone(), runtime.clone());
    function(
        "request",
        &["request: Map", "Map"],
        "
Sends one HTTP request and returns `#{ ok, status, text, json, latency_ms, error, kind }`.
Request fields: `url` (required, `http://` or `https://`), `method` (`GET`), `headers` (a map
of strings), `json` (a body sent as JSON) or `body` (a body sent as text), `timeout_s` (30).
`ok` is true for a complete 2xx answer; `json` is the body parsed when it is JSON, else `()`.
A timeout, a lost connection or a non-2xx status is not an error: `ok` is false, `status` is
0 when no answer came, `kind` is `timeout`, `connect`, `status`, `body` or `invalid` (a body
that says it is JSON and is not), and `error` says what happened. Only a request that cannot
be sent as written is a catchable error naming the field. Every request is a row of the
`http_calls` table (without query string); header values are never recorded.
Example: `let reply = http::request(#{ method: \"DELETE\", url: base + \"/v1/items/7\", headers: #{ \"x-api-key\": key } });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, request: Map| -> Result<Dynamic> {
        let request = script_value(&context, "`http::request` request", &request.into(), &json!({"url": "http://localhost/"}))?;
        send(&client, &handle, &context, request)
    });

    let (client, handle) = (http.clone(), runtime.clone());
    function(
        "get",
        &["url: &str", "Map"],
        "
`http::get(url, #{})`: a `GET` without headers and with a 30 s timeout.
Example: `let health = http::get(base + \"/health\");`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, url: &str| -> Result<Dynamic> {
        send(&client, &handle, &context, HttpRequest::new("GET", url, None, RequestOptions::default()))
    });

    let (client, handle) = (http.clone(), runtime.clone());
    function(
        "get",
        &["url: &str", "options: Map", "Map"],
        "
Sends a `GET` and returns what `http::request` returns. Options: `headers` (a map of
strings), `timeout_s` (30).
Example: `let stats = http::get(base + \"/v1/knowledge\", #{ headers: #{ \"x-api-key\": key }, timeout_s: 10 });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, url: &str, options: Map| -> Result<Dynamic> {
        let options = script_options(&context, "http::get", options)?;
        send(&client, &handle, &context, HttpRequest::new("GET", url, None, options))
    });

    let (client, handle) = (http.clone(), runtime.clone());
    function(
        "post",
        &["url: &str", "json: Dynamic", "Map"],
        "
`http::post(url, json, #{})`: a `POST` of `json` without headers and with a 30 s timeout.
Example: `let reply = http::post(base + \"/v1/warmup\", #{});`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, url: &str, json: Dynamic| -> Result<Dynamic> {
        let json = to_json(&context, "json", &json)?;
        send(&client, &handle, &context, HttpRequest::new("POST", url, Some(json), RequestOptions::default()))
    });

    let (client, handle) = (http, runtime);
    function(
        "post",
        &["url: &str", "json: Dynamic", "options: Map", "Map"],
        "
Sends a `POST` with `json` as its body (`content-type: application/json`) and returns what
`http::request` returns. Options: `headers` (a map of strings), `timeout_s` (30).
Example: `let reply = http::post(base + \"/v1/retrieve\", #{ query: text, top_k: 8 }, #{ headers: #{ \"x-api-key\": key } });`",
    )
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, url: &str, json: Dynamic, options: Map| -> Result<Dynamic> {
            let json = to_json(&context, "json", &json)?;
            let options = script_options(&context, "http::post", options)?;
            send(&client, &handle, &context, HttpRequest::new("POST", url, Some(json), options))
        },
    );

    module
}
