//! Specification of the OpenAI play, driven over real HTTP as the OpenClaw gateway drives it:
//! `/v1/models`, streamed chunks that reassemble into the scripted turn, the usage chunk and
//! `[DONE]`, the whole completion, side requests, OpenAI's error bodies, its script's checks, and
//! OpenClaw's compaction requests answered apart from the script.

use std::sync::Arc;

use serde_json::{Value, json};

use super::compaction::{FLUSH_CHARS, SUMMARY_CHARS};
use super::compaction_tests::{compaction_request, flush_request};
use super::openai::OpenAiPlay;
use super::tests::{client, json_of};
use super::{LoopbackError, OpenAiScript, Server};
use crate::capabilities::decode::decode;

const MODEL: &str = "canned";

async fn start(script: Value) -> Arc<Server> {
    let script: OpenAiScript = serde_json::from_value(script).expect("a valid script");
    let (play, faults) = OpenAiPlay::new(script).expect("a valid script");
    Server::start(Arc::new(play), faults).await.expect("the server starts")
}

/// A request of the agent (it offers tools) whose conversation holds `turns` assistant messages,
/// each followed by its tool's result, as OpenAI's clients send them.
fn agent(turns: usize, stream: bool) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a personal assistant with a memory."}),
        json!({"role": "user", "content": "What did we decide about the deploy key?"}),
    ];
    for turn in 0..turns {
        let call = json!({"id": format!("call_{turn}"), "type": "function",
            "function": {"name": "memory_search", "arguments": "{}"}});
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
        messages.push(json!({"role": "tool", "tool_call_id": format!("call_{turn}"), "content": "[]"}));
    }
    let tool = json!({"type": "function", "function": {"name": "memory_search", "parameters": {"type": "object"}}});
    json!({"model": MODEL, "messages": messages, "tools": [tool], "stream": stream})
}

fn with_usage(mut request: Value) -> Value {
    request["stream_options"] = json!({"include_usage": true});
    request
}

async fn post(server: &Server, path: &str, body: &Value) -> reqwest::Response {
    client().post(format!("{}{path}", server.url())).json(body).send().await.expect("an answer")
}

/// A stream's `data:` payloads, checking each event is one `data: …` line.
fn payloads(text: &str) -> Vec<String> {
    text.split_terminator("\n\n")
        .map(|event| event.strip_prefix("data: ").expect("a data line").to_string())
        .inspect(|payload| assert!(!payload.contains('\n'), "{payload}"))
        .collect()
}

/// The chunks of a stream before `[DONE]`, which must end it.
fn chunks(text: &str) -> Vec<Value> {
    let mut payloads = payloads(text);
    assert_eq!(payloads.pop().as_deref(), Some("[DONE]"), "{text}");
    payloads.iter().map(|payload| serde_json::from_str(payload).expect("a JSON chunk")).collect()
}

/// The deltas of the first choice of each chunk that has one.
fn deltas(chunks: &[Value]) -> Vec<&Value> {
    chunks.iter().filter_map(|chunk| chunk["choices"].get(0)).map(|choice| &choice["delta"]).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_turn_reassembles_into_the_scripted_text_and_tool_call_arguments() {
    let input = json!({"query": "deploy key \"rotation\"", "note": "héllo wörld ✓\nline two"});
    let other = json!({"path": "memory/2025-01-01.md"});
    let reply = json!({"text": "Let me look that up.", "tools": [{"name": "memory_search", "input": input},
        {"name": "memory_get", "input": other}]});
    let server = start(json!({"replies": [reply]})).await;
    let request = with_usage(agent(0, true));
    let response = post(&server, "/v1/chat/completions", &request).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let chunks = chunks(&response.text().await.expect("the stream"));

    assert!(chunks.iter().all(|chunk| chunk["object"] == "chat.completion.chunk" && chunk["model"] == MODEL));
    assert!(chunks.iter().all(|chunk| chunk["id"] == "chatcmpl-loopback-1"), "one id for the whole stream");
    let deltas = deltas(&chunks);
    assert_eq!(deltas[0], &json!({"role": "assistant", "content": ""}));
    let texts: Vec<&str> = deltas[1..].iter().filter_map(|delta| delta["content"].as_str()).collect();
    assert!(texts.len() > 1, "the text comes in several deltas: {texts:?}");
    assert_eq!(texts.concat(), "Let me look that up.");

    let calls: Vec<&Value> = deltas.iter().filter_map(|delta| delta["tool_calls"].as_array()).flatten().collect();
    for (index, (name, input)) in [("memory_search", &input), ("memory_get", &other)].into_iter().enumerate() {
        let pieces: Vec<&&Value> = calls.iter().filter(|call| call["index"] == index).collect();
        assert_eq!(pieces[0]["id"], format!("call_loopback_0_{index}"));
        assert_eq!((&pieces[0]["type"], &pieces[0]["function"]["name"]), (&json!("function"), &json!(name)));
        assert!(pieces[1..].iter().all(|piece| piece.get("id").is_none() && piece["function"].get("name").is_none()));
        let arguments: String =
            pieces.iter().map(|piece| piece["function"]["arguments"].as_str().expect("a string piece")).collect();
        assert!(pieces.len() > 2, "the arguments come in several pieces");
        assert_eq!(&serde_json::from_str::<Value>(&arguments).expect("the arguments are JSON"), input);
    }

    let finish: Vec<&Value> = chunks.iter().map(|chunk| &chunk["choices"][0]["finish_reason"]).collect();
    let last_choice = chunks.len() - 2;
    assert_eq!(finish[last_choice], "tool_calls");
    assert!(finish[..last_choice].iter().all(|reason| reason.is_null()));
    assert_eq!(chunks[last_choice]["choices"][0]["delta"], json!({}));
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    let prompt = request.to_string().len().div_ceil(4);
    assert_eq!(usage["usage"]["prompt_tokens"], prompt);
    let completion = usage["usage"]["completion_tokens"].as_u64().expect("a count");
    assert!(completion > 0);
    assert_eq!(usage["usage"]["total_tokens"], prompt as u64 + completion);
    let record = &server.requests()[0];
    assert_eq!((record.stream, record.agent, record.reply, record.status), (true, true, Some(0), Some(200)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_without_include_usage_has_no_usage_chunk_and_a_final_text_stops() {
    let server =
        start(json!({"replies": [{"tools": [{"name": "memory_search", "input": {}}]}, {"text": "Monthly."}]})).await;
    let text = post(&server, "/v1/chat/completions", &agent(1, true)).await.text().await.expect("the stream");
    let chunks = chunks(&text);
    assert!(
        chunks
            .iter()
            .all(|chunk| chunk.get("usage").is_none() && chunk["choices"].as_array().is_some_and(|c| c.len() == 1))
    );
    let last = &chunks[chunks.len() - 1]["choices"][0];
    assert_eq!((&last["delta"], &last["finish_reason"]), (&json!({}), &json!("stop")));
    let content: String = deltas(&chunks).iter().filter_map(|delta| delta["content"].as_str()).collect();
    assert_eq!(content, "Monthly.", "one assistant message in the conversation: the second reply");
    assert!(deltas(&chunks).iter().all(|delta| delta.get("tool_calls").is_none()));
    assert_eq!(server.requests()[0].reply, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_completion_has_the_chat_completion_shape() {
    let input = json!({"query": "deploy key"});
    let server =
        start(json!({"replies": [{"tools": [{"name": "memory_search", "input": input}]}, {"text": "Monthly."}]})).await;
    let request = agent(0, false);
    let called = json_of(post(&server, "/v1/chat/completions", &request).await).await;
    let arguments = json!(input.to_string());
    let call = json!({"id": "call_loopback_0_0", "type": "function",
        "function": {"name": "memory_search", "arguments": arguments}});
    let prompt = request.to_string().len().div_ceil(4);
    let message = json!({"role": "assistant", "content": null, "tool_calls": [call]});
    let completion = message.to_string().len().div_ceil(4);
    assert_eq!(
        called,
        json!({"id": "chatcmpl-loopback-1", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}})
    );
    let answered = json_of(post(&server, "/v1/chat/completions", &agent(1, false)).await).await;
    assert_eq!(answered["choices"][0]["message"], json!({"role": "assistant", "content": "Monthly."}));
    assert_eq!(answered["choices"][0]["finish_reason"], "stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_lists_the_scripted_ids_or_canned() {
    let listed = |models: Value| async move {
        let server = start(models).await;
        let response = client().get(format!("{}/v1/models", server.url())).send().await.expect("an answer");
        assert_eq!(response.status(), 200);
        json_of(response).await
    };
    let canned = listed(json!({"replies": []})).await;
    assert_eq!(
        canned,
        json!({"object": "list", "data": [{"id": "canned", "object": "model", "created": 0, "owned_by": "loopback"}]})
    );
    let scripted = listed(json!({"replies": [], "models": ["gpt-loopback", "mini"]})).await;
    let ids: Vec<&Value> = scripted["data"].as_array().expect("a list").iter().map(|model| &model["id"]).collect();
    assert_eq!(ids, [&json!("gpt-loopback"), &json!("mini")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn side_requests_get_the_side_reply_and_errors_come_in_openai_shape() {
    let faults =
        json!([{"request": 2, "kind": "status", "status": 429}, {"request": 3, "kind": "status", "status": 503}]);
    let server = start(json!({"replies": [{"text": "agent"}], "side_reply": "[2, 0]", "faults": faults})).await;
    let mut side = agent(0, false);
    side["tools"] = json!([]);
    let answered = json_of(post(&server, "/v1/chat/completions", &side).await).await;
    assert_eq!(answered["choices"][0]["message"]["content"], "[2, 0]");

    let limited = post(&server, "/v1/chat/completions", &agent(0, false)).await;
    assert_eq!((limited.status().as_u16(), &limited.headers()["retry-after"]), (429, &"1".parse().expect("a header")));
    let error = json_of(limited).await["error"].clone();
    assert_eq!((&error["type"], &error["code"]), (&json!("requests"), &json!("rate_limit_exceeded")));
    assert!(error["message"].is_string());
    let unavailable = post(&server, "/v1/chat/completions", &agent(0, false)).await;
    assert_eq!(unavailable.status(), 503);
    assert_eq!(json_of(unavailable).await["error"]["type"], "server_error");
    let missing = post(&server, "/v1/completions", &agent(0, false)).await;
    assert_eq!(missing.status(), 404);
    assert_eq!(json_of(missing).await["error"]["code"], "unknown_url");
    let log: Vec<_> = server.requests().into_iter().map(|record| (record.agent, record.reply, record.fault)).collect();
    assert_eq!(
        log,
        [(false, None, None), (true, None, Some("status")), (true, None, Some("status")), (true, None, None)]
    );
}

#[test]
fn scripts_that_cannot_play_are_refused_naming_the_field() {
    let refused = |script: Value| -> String {
        let script: OpenAiScript = serde_json::from_value(script).expect("decodes");
        match OpenAiPlay::new(script) {
            Err(error @ LoopbackError::Script { .. }) => error.to_string(),
            Err(other) => format!("another error: {other}"),
            Ok(_) => "accepted".into(),
        }
    };
    assert_eq!(
        refused(json!({"replies": [], "models": []})),
        "invalid script for `loopback::openai`: `models`: list at least one model: clients pick theirs from `/v1/models`"
    );
    assert!(refused(json!({"replies": [{}]})).starts_with("invalid script for `loopback::openai`: `replies[0]`"));
    let fault = json!({"replies": [], "faults": [{"request": 0, "kind": "cut"}]});
    assert!(refused(fault).contains("`faults[0]`: `request` counts from 1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeddings_are_deterministic_vectors_listed_last_input_first_and_never_numbered() {
    let server =
        start(json!({"replies": [{"text": "agent"}], "faults": [{"request": 1, "kind": "status", "status": 500}]}))
            .await;
    let body = json!({"model": "small", "input": ["a", "bbb"]});
    let answer = json_of(post(&server, "/v1/embeddings", &body).await).await;
    let listed: Vec<(u64, Value)> = answer["data"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|item| (item["index"].as_u64().expect("an index"), item["embedding"].clone()))
        .collect();
    assert_eq!(listed, [(1, json!([3.0, 98.0, 1.0])), (0, json!([1.0, 97.0, 1.0]))]);
    assert_eq!((&answer["object"], &answer["model"]), (&json!("list"), &json!("small")));
    assert_eq!(super::embedding("bbb"), [3.0, 98.0, 1.0]);
    let one = json_of(post(&server, "/v1/embeddings", &json!({"model": "small", "input": "a"})).await).await;
    assert_eq!(one["data"][0]["embedding"], json!([1.0, 97.0, 1.0]), "a single string is one input");
    let refused = post(&server, "/v1/embeddings", &json!({"model": "small", "input": [1]})).await;
    assert_eq!(refused.status(), 400);
    assert!(json_of(refused).await["error"]["message"].as_str().expect("a message").contains("`input`"));
    assert_eq!(post(&server, "/v1/chat/completions", &agent(0, false)).await.status(), 500, "the first numbered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_fault_with_a_code_is_openais_quota_error_and_may_say_when_to_retry() {
    let faults = json!([
        {"request": 1, "kind": "status", "status": 429, "code": "insufficient_quota"},
        {"request": 2, "kind": "status", "status": 503, "retry_after": 7},
    ]);
    let server = start(json!({"replies": [{"text": "agent"}], "faults": faults})).await;
    let quota = post(&server, "/v1/chat/completions", &agent(0, false)).await;
    assert_eq!(quota.status(), 429);
    let error = json_of(quota).await["error"].clone();
    assert_eq!((&error["type"], &error["code"]), (&json!("insufficient_quota"), &json!("insufficient_quota")));
    let busy = post(&server, "/v1/chat/completions", &agent(0, false)).await;
    assert_eq!((busy.status().as_u16(), &busy.headers()["retry-after"]), (503, &"7".parse().expect("a header")));
}

/// The text and tool calls a stream reassembles into, with its finish reason.
fn reassembled(text: &str) -> (String, Vec<Value>, Value) {
    let chunks = chunks(text);
    let deltas = deltas(&chunks);
    let content: String = deltas.iter().filter_map(|delta| delta["content"].as_str()).collect();
    let calls: Vec<Value> =
        deltas.iter().filter_map(|delta| delta["tool_calls"].as_array()).flatten().cloned().collect();
    let finish = chunks.iter().rev().find_map(|chunk| chunk["choices"][0]["finish_reason"].as_str());
    (content, calls, json!(finish))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_request_gets_an_extractive_summary_streamed_or_whole_and_takes_no_turn() {
    let server = start(json!({"replies": [{"text": "agent"}], "side_reply": "[]", "summary_chars": 40})).await;
    let streamed = post(&server, "/v1/chat/completions", &compaction_request()).await.text().await.expect("a stream");
    let (summary, calls, finish) = reassembled(&streamed);
    assert!(calls.is_empty());
    assert_eq!(finish, "stop");
    assert!(summary.starts_with("## Decisions\n- The deploy key rotates every month.\n\n## Open TODOs\n"), "{summary}");
    assert!(!summary.contains("Staging runs on"), "past the budget of 40: {summary}");
    assert!(chunks(&streamed).last().is_some_and(|usage| usage["usage"]["prompt_tokens"].as_u64() > Some(0)));

    let mut whole = compaction_request();
    whole["stream"] = json!(false);
    let answered = json_of(post(&server, "/v1/chat/completions", &whole).await).await;
    assert_eq!(answered["choices"][0]["message"]["content"], json!(summary), "the same summary, whole");
    let log: Vec<_> = server.requests().into_iter().map(|r| (r.kind, r.agent, r.reply)).collect();
    assert_eq!(log, [(Some("compaction"), false, None), (Some("compaction"), false, None)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_writes_its_dated_note_then_answers_no_reply_and_agent_turns_are_unaffected() {
    let replies = json!([{"tools": [{"name": "memory_search", "input": {"query": "{{user}}"}}]}, {"text": "Monthly."}]);
    let server = start(json!({"replies": replies})).await;
    let first = post(&server, "/v1/chat/completions", &agent(0, true)).await.text().await.expect("a stream");
    assert_eq!(reassembled(&first).1[0]["function"]["name"], "memory_search");

    let flushed = post(&server, "/v1/chat/completions", &flush_request(false)).await.text().await.expect("a stream");
    let (text, calls, finish) = reassembled(&flushed);
    assert_eq!((text.as_str(), &finish), ("", &json!("tool_calls")));
    assert_eq!((&calls[0]["id"], &calls[0]["function"]["name"]), (&json!("call_loopback_flush_0"), &json!("write")));
    let arguments: String = calls.iter().filter_map(|call| call["function"]["arguments"].as_str()).collect();
    let arguments: Value = serde_json::from_str(&arguments).expect("the arguments are JSON");
    assert_eq!(arguments["path"], "memory/2026-05-10.md");
    assert!(
        arguments["content"].as_str().is_some_and(|note| note.starts_with("- The deploy key rotates every month.\n"))
    );

    let written = post(&server, "/v1/chat/completions", &flush_request(true)).await.text().await.expect("a stream");
    assert_eq!(reassembled(&written), ("NO_REPLY".to_string(), Vec::new(), json!("stop")));

    let second = json_of(post(&server, "/v1/chat/completions", &agent(1, false)).await).await;
    assert_eq!(second["choices"][0]["message"]["content"], "Monthly.", "the flush took no turn");
    let mut side = agent(0, false);
    side["tools"] = json!([]);
    assert_eq!(
        json_of(post(&server, "/v1/chat/completions", &side).await).await["choices"][0]["message"]["content"],
        "[]"
    );
    post(&server, "/v1/models", &json!({})).await;
    let log: Vec<_> = server.requests().into_iter().map(|r| (r.kind, r.agent, r.reply)).collect();
    assert_eq!(
        log,
        [
            (Some("agent"), true, Some(0)),
            (Some("flush"), true, None),
            (Some("flush"), true, None),
            (Some("agent"), true, Some(1)),
            (Some("side"), false, None),
            (None, false, None),
        ]
    );
}

#[test]
fn the_budgets_default_and_are_decoded_naming_the_field() {
    let script: OpenAiScript = serde_json::from_value(json!({"replies": []})).expect("decodes");
    assert_eq!((script.summary_chars, script.flush_chars), (SUMMARY_CHARS, FLUSH_CHARS));
    let minimal = json!({"replies": []});
    let wrong = decode::<OpenAiScript>(json!({"replies": [], "summary_chars": -1}), &minimal).expect_err("refused");
    assert_eq!(wrong.field.as_deref(), Some("summary_chars"));
    let unknown = decode::<OpenAiScript>(json!({"replies": [], "flush_char": 10}), &minimal).expect_err("refused");
    assert!(unknown.to_string().contains("unknown field `flush_char`"), "{unknown}");
}
