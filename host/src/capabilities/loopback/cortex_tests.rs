//! Specification of the Cortex play and of modes, driven over real HTTP as the OpenClaw plugin
//! drives it: retrieval and recall by word overlap, capture as jobs, the small endpoints, every
//! mode a script can switch to (and `paths`), what the log says of each request, and the Rhai
//! namespace's `set_mode` and `memories`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::tests::{client, json_of, wait_until};
use super::{CortexPlay, CortexScript, LocalLoopback, Loopback, Mode, ModeSpec, Server};

const FACTS: [&str; 4] = [
    "The deploy key rotates every month.",
    "Staging deploys run from the main branch.",
    "The cafeteria serves soup on Fridays.",
    "Rotate the deploy key before the audit.",
];

/// A Cortex server with the loopback that started it, which stops it when dropped.
struct Cortex {
    _loopback: LocalLoopback,
    server: Arc<Server>,
    play: Arc<CortexPlay>,
}

impl Cortex {
    async fn start(script: Value) -> Self {
        let loopback = LocalLoopback::new();
        let script: CortexScript = serde_json::from_value(script).expect("a valid script");
        let (server, play) = loopback.cortex(script).await.expect("the server starts");
        Self { _loopback: loopback, server, play }
    }

    async fn seeded() -> Self {
        Self::start(json!({"facts": FACTS})).await
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.url())
    }

    async fn post(&self, path: &str, body: &Value) -> Result<reqwest::Response, reqwest::Error> {
        client().post(self.url(path)).json(body).send().await
    }

    async fn get(&self, path: &str) -> Result<reqwest::Response, reqwest::Error> {
        client().get(self.url(path)).send().await
    }

    async fn set_mode(&self, mode: Value) {
        self.server.set_mode(checked(mode).expect("a valid mode")).await.expect("the mode is set");
    }

    /// The node ids `/v1/retrieve` answers `query` with, best first.
    async fn retrieved(&self, query: &str, top_k: u64) -> Vec<String> {
        let body = json!({"query": query, "top_k": top_k, "mode": "fast", "user_id": "u"});
        let answer = json_of(self.post("/v1/retrieve", &body).await.expect("an answer")).await;
        let results = answer["results"].as_array().expect("results").iter();
        results.map(|result| result["node_id"].as_str().expect("an id").to_string()).collect()
    }

    /// What polling job `id` answers.
    async fn poll(&self, id: &str) -> Value {
        json_of(self.get(&format!("/v1/jobs/{id}")).await.expect("an answer")).await
    }

    /// The log as (path, mode, status) triples.
    fn log(&self) -> Vec<(String, &'static str, Option<u16>)> {
        self.server.requests().into_iter().map(|record| (record.path, record.mode, record.status)).collect()
    }
}

fn checked(mode: Value) -> Result<Mode, String> {
    let spec: ModeSpec = serde_json::from_value(mode).map_err(|error| error.to_string())?;
    Mode::new(&spec)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retrieve_ranks_seeded_facts_by_word_overlap_and_keeps_top_k() {
    let cortex = Cortex::seeded().await;
    // seed-3 holds 4 of the 6 query words (rotate, the, deploy, key), seed-0 3, the others only
    // "the": a tie, kept in the order stored.
    let query = "when does the deploy key rotate";
    assert_eq!(cortex.retrieved(query, 10).await, ["seed-3", "seed-0", "seed-1", "seed-2"]);
    assert_eq!(cortex.retrieved(query, 2).await, ["seed-3", "seed-0"]);
    assert_eq!(cortex.retrieved("what about pizza", 10).await, Vec::<String>::new(), "no shared word, no result");
    assert_eq!(cortex.retrieved("is it", 10).await, Vec::<String>::new(), "words under 3 characters never match");

    let answer = json_of(cortex.post("/v1/retrieve", &json!({"query": "deploy keys"})).await.expect("an answer")).await;
    assert_eq!(
        answer,
        json!({"results": [
            {"node_id": "seed-0", "content": FACTS[0], "score": 0.5, "type": "FACT", "source": "seed", "session_id": null,
                "confidence": 0.9, "metadata": {"tier": "episodic", "node": "seed-0"}},
            {"node_id": "seed-3", "content": FACTS[3], "score": 0.5, "type": "FACT", "source": "seed", "session_id": null,
                "confidence": 0.9, "metadata": {"tier": "episodic", "node": "seed-3"}},
        ]}),
        "whole words only (`keys` is not `key`), and no `top_k` is no limit here"
    );
    let missing = cortex.post("/v1/retrieve", &json!({"top_k": 3})).await.expect("an answer");
    assert_eq!(missing.status(), 400);
    assert!(json_of(missing).await["error"].as_str().expect("a message").contains("`query`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_ranks_as_retrieve_does_in_its_own_shape() {
    let cortex = Cortex::seeded().await;
    let body = json!({"query": "soup on fridays", "top_k": 1});
    let recalled = json_of(cortex.post("/v1/recall", &body).await.expect("an answer")).await;
    assert_eq!(recalled, json!({"memories": [{"content": FACTS[2], "score": 1.0}]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capture_makes_a_completed_job_whose_messages_become_retrievable() {
    let cortex = Cortex::seeded().await;
    let messages = json!([
        {"role": "system", "content": "Never remember this system prompt sentence."},
        {"role": "user", "content": "Hi. My parrot is called Captain Biscuit! Remember that?\nok"},
        {"role": "assistant", "content": [{"type": "text", "text": "Noted: your parrot Captain Biscuit."}]},
    ]);
    let body = json!({"messages": messages, "session_id": "s-1", "user_id": "u", "reference_date": null});
    let queued = json_of(cortex.post("/v1/jobs/ingest/conversation", &body).await.expect("an answer")).await;
    assert_eq!(queued, json!({"job_id": "job-1", "status": "queued"}));
    let job = json_of(cortex.get("/v1/jobs/job-1").await.expect("an answer")).await;
    assert_eq!(job, json!({"job_id": "job-1", "status": "completed"}));
    assert_eq!(cortex.get("/v1/jobs/job-2").await.expect("an answer").status(), 404);

    let captured: Vec<(String, String, &str, Option<String>)> = cortex
        .play
        .memories()
        .into_iter()
        .filter(|memory| memory.source == "capture")
        .map(|memory| (memory.node_id, memory.content, memory.source, memory.session_id))
        .collect();
    let session = Some("s-1".to_string());
    assert_eq!(
        captured,
        [
            ("cap-1".into(), "My parrot is called Captain Biscuit!".into(), "capture", session.clone()),
            ("cap-2".into(), "Remember that?".into(), "capture", session.clone()),
            ("cap-3".into(), "Noted: your parrot Captain Biscuit.".into(), "capture", session),
        ]
    );
    assert_eq!(cortex.retrieved("parrot called", 10).await, ["cap-1", "cap-3"]);
    let stats = json_of(cortex.get("/v1/stats?user_id=u").await.expect("an answer")).await;
    assert_eq!(stats["memory_count"], FACTS.len() + 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_small_endpoints_answer_as_the_plugin_expects_and_the_key_is_not_logged() {
    let cortex = Cortex::start(json!({"facts": ["one fact to count"], "tier": 3})).await;
    let health = client().get(cortex.url("/health")).header("x-api-key", "ctx-secret").send().await.expect("an answer");
    assert_eq!(json_of(health).await, json!({"status": "ok"}));
    let stats = json_of(cortex.get("/v1/stats?user_id=openclaw%20user").await.expect("an answer")).await;
    assert_eq!(stats, json!({"pipeline_tier": 3, "memory_count": 1, "user_id": "openclaw user"}));
    let knowledge = json_of(cortex.get("/v1/knowledge?user_id=u").await.expect("an answer")).await;
    assert_eq!(knowledge, json!({"memories": 1, "total_memories": 1, "total_sessions": 0, "user_id": "u"}));
    assert_eq!(json_of(cortex.get("/v1/auth/link").await.expect("an answer")).await, json!({"linked": true}));
    let warm = json_of(cortex.post("/v1/warmup", &json!({})).await.expect("an answer")).await;
    assert_eq!(warm, json!({"ok": true}));
    let missing = cortex.get("/v1/reflect").await.expect("an answer");
    assert_eq!(missing.status(), 404);
    assert_eq!(json_of(missing).await, json!({"error": "no route for GET /v1/reflect"}));

    let log = cortex.server.requests();
    assert!(log[0].key_present && !log[1].key_present);
    assert_eq!(log[1].query, "user_id=openclaw%20user");
    let everything = serde_json::to_string(&log).expect("the log as JSON");
    assert!(!everything.contains("ctx-secret"), "{everything}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_api_key_a_request_without_it_is_a_401_and_one_with_it_is_answered() {
    let cortex = Cortex::start(json!({"api_key": "ctx-key"})).await;
    let with = |key: &'static str| client().get(cortex.url("/v1/knowledge")).header("x-api-key", key).send();
    assert_eq!(cortex.get("/health").await.expect("an answer").status(), 401);
    let wrong = with("another-key").await.expect("an answer");
    assert_eq!(wrong.status(), 401);
    assert!(json_of(wrong).await["error"].as_str().expect("a message").starts_with("unauthorized"));
    assert_eq!(with("ctx-key").await.expect("an answer").status(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_end_at_their_poll_keep_their_date_and_a_failed_session_stores_nothing() {
    let script = json!({"polls_to_complete": 2, "fail_jobs": {"s-2": 1}});
    let cortex = Cortex::start(script).await;
    let ingest = |session: &str, date: Value| {
        let messages = json!([{"role": "user", "content": format!("The deploy key of {session} rotates monthly.")}]);
        json!({"messages": messages, "session_id": session, "reference_date": date})
    };
    for (session, date) in [("s-1", json!("2026-01-05")), ("s-2", Value::Null)] {
        cortex.post("/v1/jobs/ingest/conversation", &ingest(session, date)).await.expect("an answer");
    }
    assert_eq!(cortex.poll("job-1").await, json!({"job_id": "job-1", "status": "processing"}));
    assert!(cortex.play.memories().is_empty(), "nothing is stored before its job completes");
    assert_eq!(cortex.poll("job-1").await["status"], "completed");
    assert_eq!(cortex.poll("job-2").await["status"], "processing");
    let failed = cortex.poll("job-2").await;
    assert_eq!(failed["status"], "failed");
    assert!(failed["error"].as_str().expect("a reason").contains("loopback fault"), "{failed}");

    cortex.play.set_polls_to_complete(0);
    cortex.post("/v1/jobs/ingest/conversation", &ingest("s-2", Value::Null)).await.expect("an answer");
    let stored: Vec<(String, Option<String>, Option<String>)> = cortex
        .play
        .memories()
        .into_iter()
        .map(|memory| (memory.content, memory.session_id, memory.reference_date))
        .collect();
    assert_eq!(
        stored,
        [
            ("The deploy key of s-1 rotates monthly.".into(), Some("s-1".into()), Some("2026-01-05".into())),
            ("The deploy key of s-2 rotates monthly.".into(), Some("s-2".into()), None),
        ],
        "the failing session's next job completes at once"
    );
    let knowledge = json_of(cortex.get("/v1/knowledge").await.expect("an answer")).await;
    assert_eq!((&knowledge["total_memories"], &knowledge["total_sessions"]), (&json!(2), &json!(2)));
    cortex.play.fail_jobs("s-1", 1);
    cortex.post("/v1/jobs/ingest/conversation", &ingest("s-1", Value::Null)).await.expect("an answer");
    assert_eq!(cortex.poll("job-4").await["status"], "failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflect_creates_nothing_for_a_session_and_asks_for_one() {
    let cortex = Cortex::seeded().await;
    let reflected = cortex.post("/v1/reflect", &json!({"session_id": "trial"})).await.expect("an answer");
    assert_eq!(json_of(reflected).await, json!({"nodes_created": 0, "edges_created": 0, "entities_processed": 0}));
    let missing = cortex.post("/v1/reflect", &json!({})).await.expect("an answer");
    assert_eq!(missing.status(), 400);
    assert!(json_of(missing).await["error"].as_str().expect("a message").contains("`session_id`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_latency_mode_answers_after_its_wait() {
    let cortex = Cortex::start(json!({"mode": {"kind": "latency", "seconds": 0.2}})).await;
    assert_eq!(json_of(cortex.get("/health").await.expect("an answer")).await, json!({"status": "ok"}));
    let record = &cortex.server.requests()[0];
    assert_eq!((record.mode, record.status), ("latency", Some(200)));
    // A floor the wait guarantees, not a timing: the answer cannot be ready sooner.
    assert!(record.duration_ms.expect("a duration") >= 200.0, "{:?}", record.duration_ms);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_mode_answers_cortex_errors_until_the_script_switches_back() {
    let cortex = Cortex::seeded().await;
    cortex.set_mode(json!({"kind": "status", "status": 503})).await;
    let down = cortex.post("/v1/retrieve", &json!({"query": "deploy"})).await.expect("an answer");
    assert_eq!(down.status(), 503);
    assert_eq!(json_of(down).await, json!({"error": "Service Unavailable (a loopback fault)"}));
    assert_eq!(cortex.get("/health").await.expect("an answer").status(), 503, "health too, with no `paths`");
    cortex.set_mode(json!({"kind": "ok"})).await;
    assert_eq!(cortex.retrieved("deploy", 1).await, ["seed-0"]);
    assert_eq!(
        cortex.log(),
        [
            ("/v1/retrieve".into(), "status", Some(503)),
            ("/health".into(), "status", Some(503)),
            ("/v1/retrieve".into(), "ok", Some(200))
        ]
    );
    assert!(cortex.server.requests().iter().all(|record| record.duration_ms.is_some()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_mode_reads_the_request_and_gives_the_client_an_error_without_a_response() {
    let cortex = Cortex::seeded().await;
    cortex.set_mode(json!({"kind": "reset"})).await;
    let error = cortex.post("/v1/retrieve", &json!({"query": "deploy"})).await.expect_err("no response");
    assert!(!error.is_timeout() && error.status().is_none(), "{error}");
    let record = &cortex.server.requests()[0];
    assert_eq!((record.mode, record.status, &record.body["query"]), ("reset", None, &json!("deploy")));
    assert!(record.duration_ms.is_some(), "a reset ends the request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_mode_holds_requests_past_a_later_mode_until_stop() {
    let cortex = Cortex::seeded().await;
    cortex.set_mode(json!({"kind": "hang"})).await;
    let url = cortex.url("/v1/retrieve");
    let held = tokio::spawn(async move { client().post(url).json(&json!({"query": "deploy"})).send().await });
    wait_until(|| !cortex.server.requests().is_empty()).await;
    cortex.set_mode(json!({"kind": "ok"})).await;
    assert_eq!(cortex.retrieved("deploy", 1).await, ["seed-0"]);
    assert!(!held.is_finished(), "a hung request stays hung");

    cortex.server.stop().await;
    let error = held.await.expect("the client task").expect_err("a hung request gets no answer");
    assert!(!error.is_timeout(), "the stop closed it: {error}");
    let record = &cortex.server.requests()[0];
    assert_eq!((record.mode, record.status, record.duration_ms), ("hang", None, None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refuse_mode_refuses_connections_breaks_open_ones_and_a_later_mode_listens_on_the_same_port() {
    let cortex = Cortex::seeded().await;
    let url = cortex.server.url();
    cortex.set_mode(json!({"kind": "hang"})).await;
    let hung_url = cortex.url("/v1/retrieve");
    let held = tokio::spawn(async move { client().post(hung_url).json(&json!({"query": "x"})).send().await });
    wait_until(|| !cortex.server.requests().is_empty()).await;

    cortex.set_mode(json!({"kind": "refuse"})).await;
    let broken = held.await.expect("the client task").expect_err("the open connection breaks");
    assert!(!broken.is_timeout(), "{broken}");
    let refused = cortex.get("/health").await.expect_err("no one listens");
    assert!(refused.is_connect(), "connection refused: {refused}");
    assert_eq!(cortex.server.url(), url);

    cortex.set_mode(json!({"kind": "ok"})).await;
    assert_eq!(cortex.server.url(), url, "the same port");
    let health = client().get(format!("{url}/health")).send().await.expect("it listens again");
    assert_eq!(json_of(health).await, json!({"status": "ok"}));
    assert_eq!(cortex.log(), [("/v1/retrieve".into(), "hang", None), ("/health".into(), "ok", Some(200))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_can_start_refusing_and_stays_stopped_after_stop() {
    let cortex = Cortex::start(json!({"mode": {"kind": "refuse"}})).await;
    assert!(cortex.get("/health").await.expect_err("refused").is_connect());
    cortex.set_mode(json!({"kind": "ok"})).await;
    assert_eq!(cortex.get("/health").await.expect("it listens").status(), 200);
    cortex.server.stop().await;
    cortex.set_mode(json!({"kind": "ok"})).await;
    assert!(cortex.get("/health").await.is_err(), "a stopped server stays stopped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_limit_a_mode_to_the_paths_named() {
    let cortex = Cortex::seeded().await;
    cortex.set_mode(json!({"kind": "status", "status": 500, "paths": ["/v1/retrieve", "/v1/recall"]})).await;
    assert_eq!(cortex.post("/v1/retrieve?x=1", &json!({"query": "deploy"})).await.expect("an answer").status(), 500);
    assert_eq!(cortex.get("/health").await.expect("an answer").status(), 200);
    let ingest = json!({"messages": [{"role": "user", "content": "A sentence long enough to keep."}]});
    assert_eq!(cortex.post("/v1/jobs/ingest/conversation", &ingest).await.expect("an answer").status(), 200);
    assert_eq!(
        cortex.log(),
        [
            ("/v1/retrieve".into(), "status", Some(500)),
            ("/health".into(), "ok", Some(200)),
            ("/v1/jobs/ingest/conversation".into(), "ok", Some(200))
        ]
    );
}

#[test]
fn modes_that_cannot_apply_are_refused_naming_the_field() {
    let refused = |mode: Value| checked(mode).err().unwrap_or_else(|| "accepted".into());
    assert_eq!(
        refused(json!({"kind": "status", "status": 200})),
        "`status` must be an HTTP error status (400 to 599), got 200"
    );
    assert!(refused(json!({"kind": "latency", "seconds": -1})).starts_with("`seconds` must be"));
    assert!(refused(json!({"kind": "refuse", "paths": ["/health"]})).starts_with("`paths` cannot limit `refuse`"));
    assert!(refused(json!({"kind": "hang", "paths": []})).starts_with("`paths` is empty"));
    assert!(refused(json!({"kind": "reset", "paths": ["v1/retrieve"]})).contains("`v1/retrieve` is not a path"));
    assert!(refused(json!({"kind": "ok", "paths": ["/health"]})).contains("unknown field `paths`"));
    assert!(refused(json!({"kind": "down"})).contains("unknown variant `down`"));
    assert_eq!(refused(json!({"kind": "latency", "seconds": 2, "paths": ["/v1/retrieve"]})), "accepted");
}

mod script {
    use rhai::{Array, Scope};

    use super::*;
    use crate::capabilities::loopback::tests::script::{caught, engine, runtime};

    fn get(runtime: &tokio::runtime::Runtime, url: String) -> Result<u16, String> {
        runtime.block_on(async {
            let client = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().expect("client");
            client.get(url).send().await.map(|response| response.status().as_u16()).map_err(|error| error.to_string())
        })
    }

    #[test]
    fn a_script_seeds_cortex_switches_its_mode_and_reads_its_memories() {
        let runtime = runtime();
        let engine = engine(&runtime);
        let mut scope = Scope::new();
        let start = r#"
            let cortex = loopback::cortex(#{ facts: ["The deploy key rotates every month."],
                                             mode: #{ kind: "status", status: 503, paths: ["/health"] } });
            cortex.url()
        "#;
        let url: String = engine.eval_with_scope(&mut scope, start).expect("the server starts");
        assert_eq!(get(&runtime, format!("{url}/health")), Ok(503));
        engine.eval_with_scope::<()>(&mut scope, r#"cortex.set_mode(#{ kind: "ok" })"#).expect("the mode is set");
        assert_eq!(get(&runtime, format!("{url}/health")), Ok(200));

        let read = r#"
            let log = cortex.requests();
            let m = cortex.memories()[0];
            [log.len(), log[0].mode, log[1].mode, type_of(log[1].duration_ms), m.node_id, m.source, m.session_id, m.content]
        "#;
        let shown: Vec<String> = engine
            .eval_with_scope::<Array>(&mut scope, read)
            .expect("the log and the memories")
            .iter()
            .map(ToString::to_string)
            .collect();
        let expected = ["2", "status", "ok", "f64", "seed-0", "seed", "", "The deploy key rotates every month."];
        assert_eq!(shown, expected);
    }

    #[test]
    fn bad_scripts_and_modes_are_catchable_errors_naming_the_field() {
        let runtime = runtime();
        let engine = engine(&runtime);
        let caught = |script: &str| caught(&engine, script);
        let unknown = caught(r#"loopback::cortex(#{ fact: [] })"#);
        assert!(unknown.starts_with("invalid script for `loopback::cortex`: unknown field `fact`"), "{unknown}");
        let facts = caught(r#"loopback::cortex(#{ facts: "one" })"#);
        assert!(facts.starts_with("invalid script for `loopback::cortex`: `facts`: invalid type: string"), "{facts}");
        let mode = caught(r#"loopback::cortex(#{ mode: #{ kind: "down" } })"#);
        assert!(mode.starts_with("invalid script for `loopback::cortex`: `mode`: unknown variant `down`"), "{mode}");
        let status = caught(r#"loopback::cortex(#{ mode: #{ kind: "status", status: 302 } })"#);
        assert!(status.starts_with("invalid script for `loopback::cortex`: `mode`: `status` must be"), "{status}");
        let models = caught(r#"loopback::openai(#{ replies: [], models: "gpt" })"#);
        assert!(models.starts_with("invalid script for `loopback::openai`: `models`: invalid type"), "{models}");

        let set = |mode: &str| caught(&format!("loopback::cortex(#{{}}).set_mode({mode})"));
        let seconds = set(r#"#{ kind: "latency" }"#);
        assert!(seconds.starts_with("invalid mode for `set_mode`:") && seconds.contains("missing field `seconds`"));
        let paths = set(r#"#{ kind: "refuse", paths: ["/health"] }"#);
        assert!(paths.starts_with("invalid mode for `set_mode`: `paths` cannot limit `refuse`"), "{paths}");
        let key = caught(r#"loopback::cortex(#{ api_key: "" })"#);
        assert!(key.starts_with("invalid script for `loopback::cortex`: `api_key`: the key is empty"), "{key}");
        let polls = caught(r#"loopback::cortex(#{ polls_to_complete: -1 })"#);
        assert!(polls.starts_with("invalid script for `loopback::cortex`: `polls_to_complete`:"), "{polls}");
        let jobs = r#"loopback::cortex(#{ api_key: "k", polls_to_complete: 2, fail_jobs: #{ "trial:s02": 1 } }).url()"#;
        assert!(engine.eval::<String>(jobs).expect("a script with jobs").starts_with("http://127.0.0.1:"));
        let memories = caught(r#"loopback::openai(#{ replies: [] }).memories()"#);
        assert_eq!(memories, "`memories()` is for servers of `loopback::cortex`");
    }
}
