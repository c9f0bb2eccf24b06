//! Specification of the models play, over real HTTP as mem0's OpenAI client calls it: embeddings
//! from the embedder it is given, in the OpenAI shape; chat completions answered by the memory
//! extractor with the user's statements, or forwarded to a model through `llm`; and the requests
//! it refuses, each saying why.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::extractor;
use super::tests::{client, json_of};
use super::{LoopbackError, ModelsPlay, ModelsScript, Server};
use crate::capabilities::embed::{EmbedError, Embedder, Embeddings};
use crate::capabilities::llm::{ChatRequest, ChatResponse, ErrorKind, Llm, LlmError, Usage};

/// Vectors of three numbers: the text's length, its word count and 1; counts its calls.
#[derive(Default)]
struct CountingEmbedder {
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl Embedder for CountingEmbedder {
    fn model_id(&self) -> String {
        "counting".into()
    }

    async fn embed(&self, texts: Vec<String>, _batch: Option<usize>) -> Result<Embeddings, EmbedError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let vectors =
            texts.iter().map(|text| vec![text.len() as f32, text.split_whitespace().count() as f32, 1.0]).collect();
        Ok(Embeddings { model: "counting".into(), dimension: 3, vectors, cached: 0 })
    }
}

/// A model that keeps each request and answers `{"memory": []}` with fixed usage, or fails
/// when `fail` is set.
#[derive(Default)]
struct RecordingModel {
    asked: Mutex<Vec<ChatRequest>>,
    fail: bool,
}

#[async_trait::async_trait]
impl Llm for RecordingModel {
    async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
        self.asked.lock().expect("lock").push(request);
        if self.fail {
            return Err(ErrorKind::Http {
                provider: "openai".into(),
                status: 500,
                body: "down".into(),
                retry_after: None,
            }
            .into());
        }
        let usage = Usage { prompt_tokens: 900, completion_tokens: 12 };
        Ok(ChatResponse { text: "{\"memory\": []}".into(), usage, ..ChatResponse::default() })
    }
}

async fn start(script: Value) -> (Arc<Server>, Arc<CountingEmbedder>) {
    let (server, embedder, _) = start_with(script, RecordingModel::default()).await;
    (server, embedder)
}

async fn start_with(script: Value, model: RecordingModel) -> (Arc<Server>, Arc<CountingEmbedder>, Arc<RecordingModel>) {
    let embedder = Arc::new(CountingEmbedder::default());
    let model = Arc::new(model);
    let script: ModelsScript = serde_json::from_value(script).expect("a valid script");
    let (play, faults) = ModelsPlay::new(script, embedder.clone(), model.clone()).expect("a valid script");
    (Server::start(Arc::new(play), faults).await.expect("the server starts"), embedder, model)
}

async fn post(server: &Server, path: &str, body: &Value) -> reqwest::Response {
    client().post(format!("{}{path}", server.url())).json(body).send().await.expect("an answer")
}

/// An extraction request laid out as mem0 2.2.1 lays it out: instructions, then the user message
/// of sections, the new messages among them.
fn extraction(new_messages: &str) -> Value {
    let user = format!(
        "## Summary\n\n\n## Last k Messages\nuser: Ines: earlier words\n\n## Recently Extracted Memories\n[]\n\n\
         ## Existing Memories\n[]\n\n## New Messages\n{new_messages}\n\n## Observation Date\n2026-11-29\n\n\
         ## Current Date\n2026-11-29\n\n## Custom Instructions\nThe user is Ines.\n\n# Output:"
    );
    json!({"model": "memory-extractor", "temperature": 0.1, "response_format": {"type": "json_object"},
        "messages": [{"role": "system", "content": "You extract memories."}, {"role": "user", "content": user}]})
}

fn memories_of(answer: &Value) -> Value {
    let content = answer["choices"][0]["message"]["content"].as_str().expect("text content");
    serde_json::from_str(content).expect("the content is a JSON object")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeddings_come_from_the_embedder_in_the_order_of_the_inputs() {
    let (server, embedder) = start(json!({})).await;
    let answer = post(
        &server,
        "/v1/embeddings",
        &json!({"input": ["one two", "three"], "model": "x", "encoding_format": "float", "dimensions": 3}),
    )
    .await;
    assert_eq!(answer.status(), 200);
    let body = json_of(answer).await;
    assert_eq!(body["data"][0], json!({"object": "embedding", "index": 0, "embedding": [7.0, 2.0, 1.0]}));
    assert_eq!(body["data"][1]["embedding"], json!([5.0, 1.0, 1.0]));
    assert_eq!(body["model"], "counting");
    let single = json_of(post(&server, "/v1/embeddings", &json!({"input": "solo"})).await).await;
    assert_eq!(single["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(embedder.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeddings_of_another_size_or_format_or_of_tokens_are_refused_with_the_reason() {
    let (server, _) = start(json!({})).await;
    for (body, says) in [
        (json!({"input": ["a"], "dimensions": 384}), "`dimensions` 384 is not served: the model's vectors have 3"),
        (json!({"input": ["a"], "encoding_format": "base64"}), "`encoding_format` `base64` is not served"),
        (json!({"input": [[1, 2, 3]]}), "`input` must be a string or a list of strings"),
    ] {
        let answer = post(&server, "/v1/embeddings", &body).await;
        assert_eq!(answer.status(), 400, "{body}");
        let error = json_of(answer).await;
        assert!(error["error"]["message"].as_str().unwrap_or("").contains(says), "{error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extraction_request_is_answered_with_each_user_statement_as_a_memory() {
    let (server, _) = start(json!({})).await;
    let new = "user: Ines: I adopted a greyhound called Pepper.\nassistant: Tomasz: Lovely!\n\
               user: Ines: She sleeps all day\nand snores.";
    let answer = post(&server, "/v1/chat/completions", &extraction(new)).await;
    assert_eq!(answer.status(), 200);
    let body = json_of(answer).await;
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert!(body["usage"]["prompt_tokens"].as_u64().unwrap_or(0) > 0, "{body}");
    assert_eq!(
        memories_of(&body),
        json!({"memory": [
            {"id": "0", "text": "Ines: I adopted a greyhound called Pepper.", "attributed_to": "user", "linked_memory_ids": []},
            {"id": "1", "text": "Ines: She sleeps all day and snores.", "attributed_to": "user", "linked_memory_ids": []},
        ]})
    );
}

#[test]
fn messages_with_only_the_assistant_speaking_give_no_memories() {
    let body = extraction("assistant: Tomasz: I am building a canoe.");
    assert_eq!(extractor::extract(&body), Ok(vec![]));
    assert_eq!(extractor::answer(&[]), json!({"memory": []}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_request_that_is_not_an_extraction_or_asks_for_a_stream_is_refused_with_the_reason() {
    let (server, _) = start(json!({})).await;
    let plain = json!({"model": "m", "messages": [{"role": "user", "content": "What is the capital of France?"}]});
    let mut streamed = extraction("user: Ines: hi");
    streamed["stream"] = json!(true);
    for (body, says) in [
        (plain, "not a memory-extraction request"),
        (streamed, "does not stream"),
        (json!({"messages": "no"}), "`messages` must be a list"),
    ] {
        let answer = post(&server, "/v1/chat/completions", &body).await;
        assert_eq!(answer.status(), 400, "{body}");
        let error = json_of(answer).await;
        assert!(error["error"]["message"].as_str().unwrap_or("").contains(says), "{error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_lists_the_chat_and_the_embedding_model_and_faults_number_both_endpoints() {
    let (server, _) = start(json!({"faults": [{"request": 2, "kind": "status", "status": 503}]})).await;
    let listed = json_of(client().get(format!("{}/v1/models", server.url())).send().await.expect("an answer")).await;
    let ids: Vec<&str> = listed["data"].as_array().expect("data").iter().filter_map(|m| m["id"].as_str()).collect();
    assert_eq!(ids, ["memory-extractor", "counting"]);
    assert_eq!(post(&server, "/v1/embeddings", &json!({"input": "a"})).await.status(), 200);
    assert_eq!(post(&server, "/v1/chat/completions", &extraction("user: Ines: hi")).await.status(), 503);
}

#[test]
fn a_chat_the_play_does_not_have_is_an_error_naming_the_one_it_has() {
    let script: ModelsScript = serde_json::from_value(json!({"chat": "gpt-4o"})).expect("a script");
    let problem = ModelsPlay::new(script, Arc::new(CountingEmbedder::default()), Arc::new(RecordingModel::default()))
        .err()
        .expect("refused");
    assert!(matches!(&problem, LoopbackError::Script { field, .. } if field == "chat"), "{problem}");
    assert!(problem.to_string().contains("give `memory-extractor` or `llm:<model>`"), "{problem}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_model_a_chat_request_goes_through_llm_and_its_answer_and_usage_come_back() {
    let (server, _, model) = start_with(json!({"chat": "llm:openai:gpt-4o-mini"}), RecordingModel::default()).await;
    let mut request = extraction("user: Ines: I adopted a greyhound.");
    request["max_tokens"] = json!(2000);
    request["top_p"] = json!(0.1);
    let answer = post(&server, "/v1/chat/completions", &request).await;
    assert_eq!(answer.status(), 200);
    let body = json_of(answer).await;
    assert_eq!(memories_of(&body), json!({"memory": []}), "the model's text, as it answered");
    assert_eq!(body["usage"], json!({"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912}));
    let asked = model.asked.lock().expect("lock").clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].model.as_deref(), Some("openai:gpt-4o-mini"));
    assert_eq!(asked[0].messages.len(), 2);
    assert_eq!(asked[0].messages[0].content, "You extract memories.");
    assert_eq!((asked[0].temperature, asked[0].top_p, asked[0].max_tokens), (Some(0.1), Some(0.1), Some(2000)));
    assert_eq!(asked[0].response_format, Some(json!({"type": "json_object"})));
    assert_eq!(asked[0].role.as_deref(), Some("memory-system"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_fails_is_a_502_naming_why() {
    let failing = RecordingModel { fail: true, ..RecordingModel::default() };
    let (server, _, _) = start_with(json!({"chat": "llm:openai:gpt-4o-mini"}), failing).await;
    let answer = post(&server, "/v1/chat/completions", &extraction("user: Ines: hi")).await;
    assert_eq!(answer.status(), 502);
    let error = json_of(answer).await;
    assert!(
        error["error"]["message"].as_str().unwrap_or("").contains("the model failed: openai answered HTTP 500: down"),
        "{error}"
    );
}
