//! Specification of the `loopback` capability, driven over real HTTP: the Anthropic play's
//! protocol (streamed and whole), how a reply is chosen, side requests, every fault kind, the
//! request log, stopping, and the Rhai namespace.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Client;
use serde_json::{Value, json};

use super::anthropic::AnthropicPlay;
use super::replies::{Reply, ToolCall, reply_for};
use super::{AnthropicScript, LocalLoopback, Loopback, LoopbackError, Server};

const MODEL: &str = "claude-loopback-test";

async fn start(script: Value) -> Arc<Server> {
    let script: AnthropicScript = serde_json::from_value(script).expect("a valid script");
    let (play, faults) = AnthropicPlay::new(script).expect("a valid script");
    Server::start(Arc::new(play), faults).await.expect("the server starts")
}

pub(super) fn client() -> Client {
    // Generous: only a server that never closes a stalled request could reach it.
    Client::builder().timeout(Duration::from_secs(60)).build().expect("client")
}

/// A request of the agent (it offers a tool) whose conversation holds `turns` assistant messages.
fn agent(turns: usize, stream: bool) -> Value {
    let mut messages = vec![json!({"role": "user", "content": "write the file"})];
    for turn in 0..turns {
        messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("turn {turn}")}]}));
        messages
            .push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}]}));
    }
    json!({
        "model": MODEL, "max_tokens": 1024, "stream": stream, "system": "You are a coding agent.",
        "tools": [{"name": "Write", "input_schema": {"type": "object"}}], "messages": messages,
        "metadata": {"user_id": "u"}, "thinking": {"type": "disabled"},
    })
}

async fn post(client: &Client, server: &Server, path: &str, body: &Value) -> reqwest::Response {
    client.post(format!("{}{path}", server.url())).json(body).send().await.expect("an answer")
}

pub(super) async fn json_of(response: reqwest::Response) -> Value {
    response.json().await.expect("a JSON body")
}

/// A stream's events as (name, data), checking each is `event: …\ndata: …` with a matching type.
fn events(text: &str) -> Vec<(String, Value)> {
    text.split_terminator("\n\n")
        .map(|event| {
            let (name, data) = event.split_once('\n').expect("two lines");
            let name = name.strip_prefix("event: ").expect("an event line").to_string();
            let data: Value = serde_json::from_str(data.strip_prefix("data: ").expect("a data line")).expect("JSON");
            assert_eq!(data["type"], name.as_str(), "{event}");
            (name, data)
        })
        .collect()
}

/// The text of block `index`, reassembled from its deltas as a client does.
fn reassembled(events: &[(String, Value)], index: usize, field: &str) -> (String, usize) {
    let deltas: Vec<&Value> = events
        .iter()
        .filter(|(name, data)| name == "content_block_delta" && data["index"] == index)
        .map(|(_, data)| &data["delta"][field])
        .collect();
    (deltas.iter().map(|delta| delta.as_str().expect("a string delta")).collect(), deltas.len())
}

pub(super) async fn wait_until(condition: impl Fn() -> bool) {
    for _ in 0..1000 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(condition(), "the condition never held");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_turn_reassembles_into_the_scripted_text_and_tool_input() {
    let input = json!({"file_path": "/abs/notes.md", "content": "héllo wörld ✓\nline two \"quoted\"\n"});
    let server =
        start(json!({"replies": [{"text": "Writing it now.", "tools": [{"name": "Write", "input": input}]}]})).await;
    let request = agent(0, true);
    let response = post(&client(), &server, "/v1/messages?beta=true", &request).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["request-id"], "req_1");
    let events = events(&response.text().await.expect("the stream"));
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(names[names.len() - 2..], ["message_delta", "message_stop"]);
    let start = &events[0].1["message"];
    assert_eq!(start["model"], MODEL);
    assert_eq!(start["content"], json!([]));
    assert_eq!(start["stop_reason"], Value::Null);
    assert_eq!(start["usage"]["input_tokens"], request.to_string().len().div_ceil(4));
    assert!(start["id"].as_str().expect("an id").starts_with("msg_"));

    let starts: Vec<&Value> =
        events.iter().filter(|(name, _)| name == "content_block_start").map(|(_, data)| data).collect();
    assert_eq!(
        starts[0],
        &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    );
    let tool = &starts[1]["content_block"];
    assert_eq!((&tool["type"], &tool["name"], &tool["input"]), (&json!("tool_use"), &json!("Write"), &json!({})));
    assert!(tool["id"].as_str().expect("a tool use id").starts_with("toolu_"));
    assert_eq!(reassembled(&events, 0, "text").0, "Writing it now.");
    let (partial_json, deltas) = reassembled(&events, 1, "partial_json");
    assert_eq!(serde_json::from_str::<Value>(&partial_json).expect("the input's JSON"), input);
    assert!(deltas > 1, "the input arrives in pieces");
    let stops = events.iter().filter(|(name, _)| name == "content_block_stop").count();
    assert_eq!(stops, 2);
    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"], json!({"stop_reason": "tool_use", "stop_sequence": null}));
    assert!(delta["usage"]["output_tokens"].as_u64().expect("output tokens") > 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_are_chosen_by_the_assistant_turns_a_conversation_holds() {
    let server = start(json!({"replies": [{"text": "first"}, {"text": "second"}]})).await;
    let client = client();
    let mut texts = Vec::new();
    for turns in [0, 0, 1] {
        let message = json_of(post(&client, &server, "/v1/messages", &agent(turns, false)).await).await;
        texts.push(message["content"][0]["text"].clone());
    }
    assert_eq!(texts, ["first", "first", "second"]);
    let replies: Vec<Option<u64>> = server.requests().iter().map(|record| record.reply).collect();
    assert_eq!(replies, [Some(0), Some(0), Some(1)]);
}

#[test]
fn past_the_last_reply_the_agent_hears_it_again_unless_it_calls_tools() {
    let text = |text: &str| Reply { text: Some(text.into()), tools: Vec::new() };
    let call = Reply { text: None, tools: vec![ToolCall { name: "Bash".into(), input: Default::default() }] };
    assert_eq!(*reply_for(&[text("a"), text("b")], 1), text("b"));
    assert_eq!(*reply_for(&[text("a"), text("b")], 7), text("b"));
    assert_eq!(*reply_for(&[text("a"), call.clone()], 2), text("Done."));
    assert_eq!(reply_for(std::slice::from_ref(&call), 0).into_owned(), call);
    assert_eq!(*reply_for(&[], 0), text("Done."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_request_gets_the_side_reply_whole() {
    let server =
        start(json!({"replies": [{"tools": [{"name": "Bash", "input": {"command": "ls"}}]}], "side_reply": "[2, 0]"}))
            .await;
    let request = json!({"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": "rank these"}]});
    let message = json_of(post(&client(), &server, "/v1/messages", &request).await).await;
    let content = json!([{"type": "text", "text": "[2, 0]"}]);
    let expected = json!({
        "id": "msg_loopback_1", "type": "message", "role": "assistant", "model": MODEL, "content": content,
        "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": request.to_string().len().div_ceil(4), "output_tokens": content.to_string().len().div_ceil(4)},
    });
    assert_eq!(message, expected);
    let record = &server.requests()[0];
    assert_eq!((record.agent, record.stream, record.reply, record.status), (false, false, None, Some(200)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_requests_get_the_same_ids_and_token_counts() {
    let script = json!({"replies": [{"tools": [{"name": "Write", "input": {"file_path": "/a"}}, {"name": "Write", "input": {"file_path": "/b"}}]}]});
    let mut runs = Vec::new();
    for _ in 0..2 {
        let server = start(script.clone()).await;
        let response = post(&client(), &server, "/v1/messages", &agent(0, true)).await;
        runs.push(response.text().await.expect("the stream"));
    }
    assert_eq!(runs[0], runs[1]);
    let ids: Vec<Value> = events(&runs[0])
        .into_iter()
        .filter(|(name, _)| name == "content_block_start")
        .map(|(_, data)| data["content_block"]["id"].clone())
        .collect();
    assert_ne!(ids[0], ids[1], "each tool use block has its own id");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_request_is_held_until_stop_and_then_closed_without_an_answer() {
    let server = start(json!({"replies": [{"text": "hi"}], "faults": [{"request": 1, "kind": "stall"}]})).await;
    let (holder, url) = (client(), format!("{}/v1/messages", server.url()));
    let held = tokio::spawn(async move { holder.post(url).json(&agent(0, true)).send().await });
    wait_until(|| !server.requests().is_empty()).await;
    let record = &server.requests()[0];
    assert_eq!((record.fault, record.status, record.reply), (Some("stall"), None, None));
    assert!(!held.is_finished());

    server.stop().await;
    let error = held.await.expect("the client task").expect_err("a stalled request gets no answer");
    assert!(!error.is_timeout(), "the stop closed it: {error}");
    server.stop().await;
    let after = client().post(format!("{}/v1/messages", server.url())).json(&agent(0, false)).send().await;
    assert!(after.is_err(), "a stopped server no longer listens");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_delay_ends_at_the_stop_and_a_short_one_answers() {
    let faults =
        json!([{"request": 1, "kind": "delay", "seconds": 0.05}, {"request": 2, "kind": "delay", "seconds": 3600}]);
    let server = start(json!({"replies": [{"text": "late"}], "faults": faults})).await;
    let client = client();
    let message = json_of(post(&client, &server, "/v1/messages", &agent(0, false)).await).await;
    assert_eq!(message["content"][0]["text"], "late");
    let url = format!("{}/v1/messages", server.url());
    let delayed = tokio::spawn(async move { client.post(url).json(&agent(0, false)).send().await });
    wait_until(|| server.requests().len() == 2).await;
    server.stop().await;
    assert!(delayed.await.expect("the client task").is_err());
    let log: Vec<_> = server.requests().into_iter().map(|record| (record.fault, record.status, record.reply)).collect();
    assert_eq!(log, [(Some("delay"), Some(200), Some(0)), (Some("delay"), None, None)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_faults_answer_anthropic_error_bodies_counting_only_messages_requests() {
    let faults =
        json!([{"request": 2, "kind": "status", "status": 529}, {"request": 3, "kind": "status", "status": 429}]);
    let server = start(json!({"replies": [{"text": "ok"}], "faults": faults})).await;
    let client = client();
    let counted = post(&client, &server, "/v1/messages/count_tokens", &agent(0, false)).await;
    assert_eq!(counted.status(), 200);
    assert_eq!(post(&client, &server, "/v1/messages", &agent(0, true)).await.status(), 200);

    let overloaded = post(&client, &server, "/v1/messages", &agent(0, true)).await;
    assert_eq!(overloaded.status(), 529);
    assert_eq!(overloaded.headers()["request-id"], "req_3");
    let body = json_of(overloaded).await;
    assert_eq!((&body["type"], &body["error"]["type"]), (&json!("error"), &json!("overloaded_error")));
    assert!(body["error"]["message"].is_string());

    let limited = post(&client, &server, "/v1/messages", &agent(0, true)).await;
    assert_eq!((limited.status().as_u16(), &limited.headers()["retry-after"]), (429, &"1".parse().expect("a header")));
    assert_eq!(json_of(limited).await["error"]["type"], "rate_limit_error");
    let log: Vec<_> = server.requests().into_iter().map(|record| (record.fault, record.status)).collect();
    assert_eq!(log, [(None, Some(200)), (None, Some(200)), (Some("status"), Some(529)), (Some("status"), Some(429))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_stream_breaks_after_message_start_without_message_stop() {
    let server =
        start(json!({"replies": [{"text": "never finished"}], "faults": [{"request": 1, "kind": "cut"}]})).await;
    let mut response = post(&client(), &server, "/v1/messages", &agent(0, true)).await;
    assert_eq!(response.status(), 200);
    let mut received = Vec::new();
    let ended = loop {
        match response.chunk().await {
            Ok(Some(chunk)) => received.extend_from_slice(&chunk),
            Ok(None) => break Ok(()),
            Err(error) => break Err(error),
        }
    };
    let text = String::from_utf8(received).expect("text");
    assert!(text.starts_with("event: message_start\n"), "{text}");
    assert!(!text.contains("message_stop"), "{text}");
    assert!(ended.is_err(), "the client sees a broken stream, not an ended one");
    assert_eq!(server.requests()[0].fault, Some("cut"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_keeps_chosen_headers_and_only_whether_a_key_was_sent() {
    let server = start(json!({"replies": [{"text": "ok"}]})).await;
    let client = client();
    client
        .post(format!("{}/v1/messages?beta=true", server.url()))
        .header("x-api-key", "sk-ant-secret")
        .header("anthropic-version", "2023-06-01")
        .header("anthropic-beta", "claude-code-20250219")
        .header("user-agent", "claude-cli/2.1.330 (external, cli)")
        .header("x-stainless-os", "Linux")
        .json(&agent(0, true))
        .send()
        .await
        .expect("an answer");
    client.post(format!("{}/elsewhere", server.url())).body("not json").send().await.expect("an answer");
    client
        .post(format!("{}/v1/messages", server.url()))
        .header("authorization", "Bearer sk-ant-token")
        .json(&agent(0, false))
        .send()
        .await
        .expect("an answer");

    let log = server.requests();
    let first = &log[0];
    assert_eq!(
        (first.seq, first.method.as_str(), first.path.as_str(), first.query.as_str()),
        (1, "POST", "/v1/messages", "beta=true")
    );
    let headers: Vec<(&str, &str)> =
        first.headers.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    assert_eq!(
        headers,
        [
            ("anthropic-beta", "claude-code-20250219"),
            ("anthropic-version", "2023-06-01"),
            ("user-agent", "claude-cli/2.1.330 (external, cli)")
        ]
    );
    assert!(first.key_present && first.stream && first.agent);
    assert_eq!(first.body["model"], MODEL);
    let other = &log[1];
    assert_eq!(
        (other.path.as_str(), other.query.as_str(), other.status, other.key_present),
        ("/elsewhere", "", Some(404), false)
    );
    assert_eq!(other.body, "not json");
    assert!(log[2].key_present);
    assert!(log.windows(2).all(|pair| pair[0].at_ms <= pair[1].at_ms));
    let everything = serde_json::to_string(&log).expect("the log as JSON");
    assert!(!everything.contains("sk-ant"), "{everything}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_tokens_and_unknown_paths_answer_as_anthropic_does() {
    let server = start(json!({"replies": []})).await;
    let client = client();
    let request = agent(2, false);
    let counted = json_of(post(&client, &server, "/v1/messages/count_tokens?beta=true", &request).await).await;
    assert_eq!(counted, json!({"input_tokens": request.to_string().len().div_ceil(4)}));
    let missing = post(&client, &server, "/v1/complete", &request).await;
    assert_eq!(missing.status(), 404);
    assert_eq!(json_of(missing).await["error"]["type"], "not_found_error");
    let done = json_of(post(&client, &server, "/v1/messages", &agent(0, false)).await).await;
    assert_eq!(done["content"][0]["text"], "Done.", "a script without replies ends the agent's turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_loopback_stops_every_server_it_started() {
    let loopback = LocalLoopback::new();
    let script: AnthropicScript = serde_json::from_value(json!({"replies": [{"text": "hi"}]})).expect("script");
    let server = loopback.anthropic(script).await.expect("the server starts");
    let client = client();
    assert_eq!(post(&client, &server, "/v1/messages", &agent(0, false)).await.status(), 200);
    drop(loopback);
    let url = format!("{}/v1/messages", server.url());
    let mut refused = false;
    for _ in 0..100 {
        if Client::new().post(&url).json(&agent(0, false)).send().await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "the server still answers");
}

#[test]
fn faults_that_cannot_apply_are_refused_naming_them() {
    let refused = |script: Value| -> String {
        let script: AnthropicScript = serde_json::from_value(script).expect("decodes");
        match AnthropicPlay::new(script) {
            Err(error @ LoopbackError::Script { .. }) => error.to_string(),
            Err(other) => format!("another error: {other}"),
            Ok(_) => "accepted".into(),
        }
    };
    let fault = |fault: Value| json!({"replies": [{"text": "x"}], "faults": [fault]});
    assert_eq!(
        refused(fault(json!({"request": 1, "kind": "status", "status": 200}))),
        "invalid script for `loopback::anthropic`: `faults[0]`: `status` must be an HTTP error status (400 to 599), got 200"
    );
    assert!(refused(fault(json!({"request": 0, "kind": "cut"}))).contains("`faults[0]`: `request` counts from 1"));
    assert!(refused(fault(json!({"request": 1, "kind": "delay", "seconds": -1}))).contains("`seconds` must be"));
    let twice = json!({"replies": [], "faults": [{"request": 2, "kind": "cut"}, {"request": 2, "kind": "stall"}]});
    assert!(refused(twice).contains("`faults[1]`: request 2 already has a fault"));
    assert!(
        refused(json!({"replies": [{"text": "x"}, {}]}))
            .contains("`replies[1]`: a reply needs `text`, `tools` or both")
    );
}

pub(super) mod script {
    use rhai::{Array, Engine, Scope};

    use super::*;
    use crate::capabilities::embed::{EmbedError, Embedder, Embeddings};
    use crate::capabilities::llm::{ChatRequest, ChatResponse, ErrorKind, Llm, LlmError};
    use crate::capabilities::loopback::rhai::{EmbedderFor, module, register_types};

    /// The scripts here start no `loopback::models` server that embeds or chats.
    struct NoEmbedder;

    #[async_trait::async_trait]
    impl Llm for NoEmbedder {
        async fn chat(&self, _request: ChatRequest) -> Result<ChatResponse, LlmError> {
            Err(ErrorKind::InvalidRequest { message: "no model in these tests".into() }.into())
        }
    }

    #[async_trait::async_trait]
    impl Embedder for NoEmbedder {
        fn model_id(&self) -> String {
            "none".into()
        }

        async fn embed(&self, _texts: Vec<String>, _batch: Option<usize>) -> Result<Embeddings, EmbedError> {
            Err(EmbedError::Model("no embedder in these tests".into()))
        }
    }

    /// An engine with `loopback::` on `runtime`, as a run registers it.
    pub(in crate::capabilities::loopback) fn engine(runtime: &tokio::runtime::Runtime) -> Engine {
        let mut engine = Engine::new();
        let loopback: Arc<dyn Loopback> = Arc::new(LocalLoopback::new());
        let embedders: EmbedderFor = Arc::new(|_| Arc::new(NoEmbedder));
        let llm: Arc<dyn Llm> = Arc::new(NoEmbedder);
        engine.register_static_module("loopback", module(loopback, runtime.handle().clone(), embedders, llm).into());
        register_types(&mut engine);
        engine
    }

    pub(in crate::capabilities::loopback) fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime")
    }

    /// The error `script` throws, as a script's `catch` sees it; "no error" when it throws none.
    pub(in crate::capabilities::loopback) fn caught(engine: &Engine, script: &str) -> String {
        let wrapped =
            format!("let caught = \"no error\"; try {{ {script}; }} catch (error) {{ caught = error; }} caught");
        engine.eval::<String>(&wrapped).expect("script runs")
    }

    #[test]
    fn a_script_starts_a_server_reads_its_log_and_stops_it() {
        let runtime = runtime();
        let engine = engine(&runtime);
        let mut scope = Scope::new();
        let start =
            r#"let model = loopback::anthropic(#{ replies: [#{ text: "hi" }], side_reply: "[1]" }); model.url()"#;
        let url: String = engine.eval_with_scope(&mut scope, start).expect("the server starts");
        assert!(url.starts_with("http://127.0.0.1:") && !url.ends_with('/'), "{url}");
        let request = agent(0, false);
        let answer: Value = runtime.block_on(async {
            let response = client().post(format!("{url}/v1/messages")).json(&request).send().await.expect("an answer");
            response.json().await.expect("JSON")
        });
        assert_eq!(answer["content"][0]["text"], "hi");

        let read = r#"
            let log = model.requests();
            let since = [model.request_count(), model.requests(0).len(), model.requests(1).len()];
            model.stop();
            model.stop();
            let r = log[0];
            since + [log.len(), r.seq, r.method, r.path, r.query, r.stream, r.agent, r.reply, r.fault, r.status,
             r.key_present, r.body.model, r.headers.len(), type_of(r.at_ms)]
        "#;
        let shown: Vec<String> = engine
            .eval_with_scope::<Array>(&mut scope, read)
            .expect("the log")
            .iter()
            .map(ToString::to_string)
            .collect();
        let expected = [
            "1",
            "1",
            "0",
            "1",
            "1",
            "POST",
            "/v1/messages",
            "",
            "false",
            "true",
            "0",
            "",
            "200",
            "false",
            MODEL,
            "0",
            "f64",
        ];
        assert_eq!(shown, expected);
    }

    #[test]
    fn bad_scripts_are_catchable_errors_naming_the_field() {
        let runtime = runtime();
        let engine = engine(&runtime);
        let caught = |script: &str| caught(&engine, script);
        let unknown = caught(r#"loopback::anthropic(#{ replies: [], repiles: [] })"#);
        assert!(unknown.starts_with("invalid script for `loopback::anthropic`: unknown field `repiles`"), "{unknown}");
        let wrong = caught(r#"loopback::anthropic(#{ replies: "hi" })"#);
        assert!(
            wrong.starts_with("invalid script for `loopback::anthropic`: `replies`: invalid type: string"),
            "{wrong}"
        );
        assert!(caught(r#"loopback::anthropic(#{})"#).contains("missing field `replies`"));
        assert!(caught(r#"loopback::anthropic(#{ replies: [#{ txt: "x" }] })"#).contains("unknown field `txt`"));
        let input = caught(r#"loopback::anthropic(#{ replies: [#{ tools: [#{ name: "Bash", input: "ls" }] }] })"#);
        assert!(input.contains("`replies`: invalid type: string \"ls\", expected a map"), "{input}");
        let status = caught(r#"loopback::anthropic(#{ replies: [], faults: [#{ request: 1, kind: "status" }] })"#);
        assert!(status.contains("`faults`: missing field `status`"), "{status}");
        let kind = caught(r#"loopback::anthropic(#{ replies: [], faults: [#{ request: 1, kind: "hang" }] })"#);
        assert!(kind.contains("`faults`: unknown variant `hang`"), "{kind}");
        let extra =
            caught(r#"loopback::anthropic(#{ replies: [], faults: [#{ request: 1, kind: "stall", seconds: 2 }] })"#);
        assert!(extra.contains("unknown field `seconds`"), "{extra}");
        let whole =
            r#"loopback::anthropic(#{ replies: [], faults: [#{ request: 1, kind: "delay", seconds: 2 }] }).url()"#;
        let url = engine.eval::<String>(whole).expect("whole seconds are seconds too");
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    }
}
