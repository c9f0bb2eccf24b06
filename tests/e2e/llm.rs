//! The `llm` capability against a real HTTP server on loopback that plays OpenAI and Anthropic,
//! faults included: first the stack as a library, then scripts through the real binary.

use std::sync::Arc;
use std::time::{Duration, Instant};

use host::capabilities::llm::{
    CacheMode, ChatRequest, ErrorKind, Llm, LlmConfig, LlmSettings, Message, Pricing, RateLimits, RetryPolicy, stack,
};
use host::capabilities::log::ConsoleLog;
use host::capabilities::results::RunResults;
use host::console::{Console, Style};
use serde_json::{Value, json};

use reqwest::StatusCode;

use crate::fake_llm::{FakeLlm, Fault, quota};
use crate::support::{TempProject, duckdb};

const FAKE_KEY: &str = "sk-host-test-SECRET-7f3a9c";

/// A full stack pointed at `server`, with quick retries so tests stay fast.
struct Harness {
    llm: Arc<dyn Llm>,
    runtime: tokio::runtime::Runtime,
    results: Arc<RunResults>,
    _dir: tempfile::TempDir,
}

fn harness(server: &FakeLlm, mode: CacheMode, max_cost: Option<f64>) -> Harness {
    harness_with(server, mode, max_cost, RateLimits::default())
}

fn harness_with(server: &FakeLlm, mode: CacheMode, max_cost: Option<f64>, limits: RateLimits) -> Harness {
    let dir = tempfile::tempdir().expect("temporary directory");
    let base = server.openai_base();
    let anthropic = server.anthropic_base();
    let config = LlmConfig::from_lookup(move |name| match name {
        "LLM_BASE_URL" => Some(base.clone()),
        "LLM_API_KEY" | "ANTHROPIC_API_KEY" => Some(FAKE_KEY.to_string()),
        "ANTHROPIC_BASE_URL" => Some(anthropic.clone()),
        _ => None,
    });
    let settings = LlmSettings {
        cache_dir: dir.path().join("cache"),
        cache_mode: mode,
        limits,
        retry: RetryPolicy {
            min_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(50),
            ..RetryPolicy::default()
        },
        max_cost,
        pricing: Pricing::parse("[\"openai:fake\"]\ninput_per_million = 1000000.0\noutput_per_million = 0.0\n")
            .expect("pricing"),
        seeds: Default::default(),
    };
    std::fs::create_dir(dir.path().join("run")).expect("run dir");
    let results = Arc::new(RunResults::new(&dir.path().join("run"), "lib").expect("results"));
    let log = Arc::new(ConsoleLog::new(Arc::new(Console::new(Style::Plain, false))));
    let llm = stack(config, &settings, results.clone(), log, Default::default());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    Harness { llm, runtime, results, _dir: dir }
}

fn ask(prompt: &str) -> ChatRequest {
    ChatRequest {
        model: Some("fake".into()),
        messages: vec![
            Message { role: "system".into(), content: "be brief".into() },
            Message { role: "user".into(), content: prompt.into() },
        ],
        ..ChatRequest::default()
    }
}

impl Harness {
    fn chat(
        &self,
        request: ChatRequest,
    ) -> Result<host::capabilities::llm::ChatResponse, host::capabilities::llm::LlmError> {
        self.runtime.block_on(self.llm.chat(request))
    }
}

#[test]
fn both_protocols_round_trip_with_their_own_headers() {
    let server = FakeLlm::start();
    server.require_key(FAKE_KEY);
    let harness = harness(&server, CacheMode::Off, None);
    let openai = harness.chat(ask("hello")).expect("openai answer");
    assert_eq!(
        (openai.text.as_str(), openai.provider.as_str(), openai.usage.prompt_tokens),
        ("answer to: hello", "openai", 5)
    );
    let mut claude = ask("bonjour");
    claude.model = Some("anthropic:claude-haiku-4-5".into());
    let anthropic = harness.chat(claude).expect("anthropic answer");
    assert_eq!((anthropic.text.as_str(), anthropic.model.as_str()), ("answer to: bonjour", "claude-haiku-4-5"));

    let seen = server.seen();
    // The server answers 401 to any key but FAKE_KEY, sent as the protocol asks.
    assert!(seen.iter().all(|seen| seen.key_present && seen.status == Some(200)));
    assert_eq!(seen[0].body["messages"][0], json!({"role": "system", "content": "be brief"}));
    assert_eq!((seen[0].body["temperature"].clone(), seen[0].body["max_tokens"].clone()), (json!(0.0), json!(1024)));
    assert_eq!(seen[1].path, "/v1/messages");
    assert_eq!(seen[1].headers["anthropic-version"], "2023-06-01");
    assert_eq!(seen[1].body["system"], "be brief", "system messages move to the top-level field");
    assert_eq!(seen[1].body["messages"], json!([{"role": "user", "content": "bonjour"}]));
}

#[test]
fn no_more_requests_than_the_provider_limit_are_in_flight() {
    use futures::StreamExt;
    let server = FakeLlm::start();
    server.latency(Duration::from_millis(100));
    let limits = RateLimits { concurrency: 3, ..RateLimits::default() };
    let harness = harness_with(&server, CacheMode::Off, None, limits);
    let requests: Vec<ChatRequest> = (0..12).map(|i| ask(&format!("c{i}"))).collect();
    let answered = harness.runtime.block_on(
        futures::stream::iter(requests)
            .map(|request| harness.llm.chat(request))
            .buffered(12)
            .filter(|r| futures::future::ready(r.is_ok()))
            .count(),
    );
    assert_eq!(answered, 12);
    assert_eq!(server.most_in_flight(), 3);
}

#[test]
fn retry_after_is_honoured_before_the_retry() {
    let server = FakeLlm::start();
    server.fail("slow down", vec![Fault::status(StatusCode::TOO_MANY_REQUESTS).retry_after(1)]);
    let harness = harness(&server, CacheMode::Off, None);
    let started = Instant::now();
    let answer = harness.chat(ask("slow down")).expect("answer after one retry");
    assert!(started.elapsed() >= Duration::from_secs(1), "waited only {:?}", started.elapsed());
    assert_eq!(answer.retries, 1);
    assert_eq!(server.seen().len(), 2);
}

#[test]
fn server_errors_and_hangs_are_retried_until_an_answer_comes() {
    let server = FakeLlm::start();
    let flaky = vec![
        Fault::status(StatusCode::INTERNAL_SERVER_ERROR),
        Fault::status(StatusCode::SERVICE_UNAVAILABLE),
        Fault::Delay(Duration::from_secs(5)),
    ];
    server.fail("flaky", flaky);
    let harness = harness(&server, CacheMode::Off, None);
    let mut request = ask("flaky");
    request.timeout_s = Some(0.5);
    let answer = harness.chat(request).expect("answer after three retries");
    assert_eq!((answer.retries, answer.text.as_str()), (3, "answer to: flaky"));
    assert_eq!(server.seen().len(), 4);
}

#[test]
fn client_errors_bad_bodies_and_empty_answers_are_not_retried() {
    let server = FakeLlm::start();
    server.fail("bad request", vec![Fault::status(StatusCode::BAD_REQUEST)]);
    server.fail("garbled", vec![Fault::Malformed]);
    server.replies("silent", &[""]);
    let harness = harness(&server, CacheMode::Off, None);
    let kinds: Vec<&str> = ["bad request", "garbled", "silent"]
        .into_iter()
        .map(|prompt| harness.chat(ask(prompt)).expect_err("a failure").kind.name())
        .collect();
    assert_eq!(kinds, ["http", "invalid_response", "no_content"]);
    assert_eq!(server.seen().len(), 3, "one request each, no retries");
}

#[test]
fn a_connection_lost_before_the_answer_is_retried() {
    let server = FakeLlm::start();
    server.fail("cut short", vec![Fault::Reset]);
    let harness = harness(&server, CacheMode::Off, None);
    let answer = harness.chat(ask("cut short")).expect("answer after a retry");
    assert_eq!((answer.retries, answer.text.as_str()), (1, "answer to: cut short"));

    let broken = FakeLlm::start();
    broken.always(Fault::Reset);
    let harness = self::harness(&broken, CacheMode::Off, None);
    let error = harness.chat(ask("cut short")).expect_err("every attempt loses its connection");
    assert_eq!((error.kind.name(), error.retries), ("connection", RetryPolicy::default().max_retries));
}

#[test]
fn a_body_cut_after_the_headers_is_an_invalid_response_and_is_not_retried() {
    // What `transport_error` decides today: a 200 whose body breaks off is not a lost connection.
    let server = FakeLlm::start();
    server.fail("cut short", vec![Fault::Cut]);
    let harness = harness(&server, CacheMode::Off, None);
    let error = harness.chat(ask("cut short")).expect_err("the body breaks off");
    assert_eq!((error.kind.name(), error.retries), ("invalid_response", 0));
    assert!(error.to_string().contains("incomplete body"), "{error}");
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn a_quota_error_stops_every_later_call_without_a_request() {
    let server = FakeLlm::start();
    server.always(quota());
    let harness = harness(&server, CacheMode::Off, None);
    let first = harness.chat(ask("one")).expect_err("quota");
    assert!(matches!(first.kind, ErrorKind::Quota { .. }), "{first}");
    assert!(first.kind.is_fatal());
    let second = harness.chat(ask("two")).expect_err("still quota");
    assert!(matches!(second.kind, ErrorKind::Quota { .. }));
    assert_eq!(server.seen().len(), 1);
}

#[test]
fn the_budget_stops_new_calls_once_spent() {
    let server = FakeLlm::start();
    // `openai:fake` costs $1 per prompt token here; each prompt below is 2 tokens.
    let harness = harness(&server, CacheMode::Off, Some(3.0));
    assert!(harness.chat(ask("p1")).is_ok());
    assert!(harness.chat(ask("p2")).is_ok());
    let third = harness.chat(ask("p3")).expect_err("over budget");
    assert!(matches!(third.kind, ErrorKind::Budget { .. }), "{third}");
    assert_eq!(server.seen().len(), 2);
    let outputs = harness.results.finish();
    let calls = outputs.tables.iter().find(|t| t.name == "llm_calls").expect("the llm_calls table");
    assert_eq!(calls.rows, 3, "the refused call is logged too");
}

#[test]
fn a_replayed_call_is_identical_and_makes_no_request() {
    let server = FakeLlm::start();
    let harness = harness(&server, CacheMode::ReadWrite, None);
    let mut first_pass = ask("judge this");
    first_pass.key = Some("pass-1".into());
    let mut second_pass = first_pass.clone();
    second_pass.key = Some("pass-2".into());
    let recorded = harness.chat(first_pass.clone()).expect("recorded");
    let other = harness.chat(second_pass).expect("a distinct entry");
    assert_ne!(recorded.call_id, other.call_id, "caller keys make distinct cache entries");
    assert_eq!(server.seen().len(), 2);
    let replayed = harness.chat(first_pass).expect("replayed");
    assert_eq!(server.seen().len(), 2, "replay makes no request");
    assert!(replayed.cached);
    assert_eq!((replayed.text, replayed.call_id, replayed.usage), (recorded.text, recorded.call_id, recorded.usage));
}

/// Writes `scripts/batch.rhai`: 200 requests through `llm::chat_many`, results to a table.
fn batch_project() -> TempProject {
    let project = TempProject::new();
    project.write(
        "scripts/batch.rhai",
        r#"let requests = [];
for i in 0..200 {
    requests.push(#{ model: "fake", role: "answerer", messages: [#{ role: "user", content: `q${i}` }] });
}
let replies = llm::chat_many(requests, #{ concurrency: 16, label: "answers" });
for i in 0..replies.len() {
    let reply = replies[i];
    results::append("replies", #{ index: i, ok: reply.ok, text: reply.text ?? (), kind: reply.kind ?? () });
}
results::write_json("replies.json", replies.map(|r| r.text ?? r.kind));
"#,
    );
    project
}

fn run_batch(project: &TempProject, server: &FakeLlm, run_id: &str, extra: &[&str]) -> crate::support::Run {
    let cache = project.path().join("llm-cache").display().to_string();
    let mut args = vec!["run", "scripts/batch.rhai", "--run-id", run_id, "--llm-cache-dir", &cache];
    args.extend_from_slice(extra);
    let base = server.openai_base();
    project.host_with_env(&args, &[("LLM_BASE_URL", Some(&base)), ("LLM_API_KEY", Some(FAKE_KEY))])
}

#[test]
fn a_batch_of_200_completes_in_order_and_replays_offline_without_requests() {
    let server = FakeLlm::start();
    server.fail("q3", vec![Fault::status(StatusCode::INTERNAL_SERVER_ERROR)]);
    server.fail("q50", vec![Fault::status(StatusCode::TOO_MANY_REQUESTS).retry_after(1)]);
    server.fail("q77", vec![Fault::Malformed]);
    server.fail("q150", vec![Fault::status(StatusCode::BAD_REQUEST)]);
    let project = batch_project();
    run_batch(&project, &server, "live", &[]).expect_code(0);

    let replies = project.path().join("runs/batch/live/replies.parquet").display().to_string();
    let summary =
        duckdb(&format!("SELECT count(*), count(*) FILTER (WHERE ok), min(index), max(index) FROM '{replies}'"));
    assert_eq!(summary["rows"], json!([[200, 198, 0, 199]]));
    let failed = duckdb(&format!("SELECT index, kind FROM '{replies}' WHERE NOT ok ORDER BY index"));
    assert_eq!(failed["rows"], json!([[77, "invalid_response"], [150, "http"]]));
    let in_order = duckdb(&format!("SELECT count(*) FROM '{replies}' WHERE ok AND text <> 'answer to: q' || index"));
    assert_eq!(in_order["rows"], json!([[0]]), "every answer sits in its request's slot");

    let mut per_prompt = std::collections::BTreeMap::new();
    for request in server.seen() {
        *per_prompt.entry(request.prompt).or_insert(0) += 1;
    }
    let repeated: Vec<(&String, &i32)> = per_prompt.iter().filter(|(_, count)| **count > 1).collect();
    assert_eq!(per_prompt.len(), 200);
    assert_eq!(repeated, [(&"q3".to_string(), &2), (&"q50".to_string(), &2)], "only retried requests repeat");
    let calls = project.path().join("runs/batch/live/llm_calls.parquet").display().to_string();
    let logged =
        duckdb(&format!("SELECT count(*), sum(retries), count(*) FILTER (WHERE error IS NOT NULL) FROM '{calls}'"));
    assert_eq!(logged["rows"], json!([[200, 2, 2]]));

    run_batch(&project, &server, "replay", &["--offline"]).expect_code(0);
    assert_eq!(server.seen().len(), 202, "offline replay makes no request");
    let replayed = project.path().join("runs/batch/replay/replies.parquet").display().to_string();
    let misses = duckdb(&format!("SELECT index, kind FROM '{replayed}' WHERE NOT ok ORDER BY index"));
    assert_eq!(misses["rows"], json!([[77, "offline_miss"], [150, "offline_miss"]]), "failed calls are never recorded");
}

#[test]
fn a_recorded_run_replays_offline_with_identical_output() {
    let server = FakeLlm::start();
    let project = batch_project();
    run_batch(&project, &server, "live", &[]).expect_code(0);
    let requests = server.seen().len();
    run_batch(&project, &server, "replay", &["--offline"]).expect_code(0);
    assert_eq!(server.seen().len(), requests, "no request while offline");
    assert_eq!(project.read("runs/batch/live/replies.json"), project.read("runs/batch/replay/replies.json"));
    let replayed = project.path().join("runs/batch/replay/llm_calls.parquet").display().to_string();
    let hits = duckdb(&format!("SELECT count(*) FILTER (WHERE cache_hit), count(*) FROM '{replayed}'"));
    assert_eq!(hits["rows"], json!([[200, 200]]));
}

#[test]
fn an_offline_miss_names_the_request() {
    let server = FakeLlm::start();
    let project = TempProject::new();
    project.write(
        "scripts/one.rhai",
        "let reply = llm::chat(#{ model: \"fake\", messages: [#{ role: \"user\", content: \"never recorded\" }] });\n",
    );
    let cache = project.path().join("llm-cache").display().to_string();
    let run = project.host(&["run", "scripts/one.rhai", "--run-id", "o", "--offline", "--llm-cache-dir", &cache]);
    run.expect_code(2);
    assert!(run.stderr.contains("offline: no recorded answer for call `"), "{}", run.stderr);
    assert!(run.stderr.contains("(openai:fake, first message: never recorded)"), "{}", run.stderr);
    assert!(run.stderr.contains("--> scripts/one.rhai:1:18"), "{}", run.stderr);
    assert!(server.seen().is_empty());
}

#[test]
fn without_a_key_the_error_names_the_variable_to_set() {
    let project = TempProject::new();
    project.write(
        "scripts/nokey.rhai",
        "try {\n    llm::chat(#{ messages: [#{ role: \"user\", content: \"hi\" }] });\n} catch (error) {\n    results::write_text(\"error.txt\", error);\n}\n",
    );
    let args = ["run", "scripts/nokey.rhai", "--run-id", "k", "--llm-cache", "off"];
    project.host_with_env(&args, &[("LLM_API_KEY", None)]).expect_code(0);
    assert_eq!(
        project.read("runs/nokey/k/error.txt"),
        "no API key for the OpenAI-compatible server; hint: set `LLM_API_KEY`"
    );
}

#[test]
fn the_api_key_appears_in_no_output_file() {
    let server = FakeLlm::start();
    server.fail("q5", vec![Fault::status(StatusCode::UNAUTHORIZED)]);
    let project = batch_project();
    let run = run_batch(&project, &server, "secret", &[]);
    run.expect_code(0);
    assert!(!run.stderr.contains(FAKE_KEY) && !run.stdout.contains(FAKE_KEY));
    let mut searched = 0;
    for root in [project.path().join("runs"), project.path().join("llm-cache")] {
        for file in walk(&root) {
            let bytes = std::fs::read(&file).expect("read output");
            assert!(!String::from_utf8_lossy(&bytes).contains(FAKE_KEY), "{} contains the API key", file.display());
            searched += 1;
        }
    }
    assert!(searched > 200, "searched only {searched} files");
}

fn walk(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}

#[test]
fn a_quota_error_ends_the_run_even_inside_try() {
    let server = FakeLlm::start();
    server.always(quota());
    let project = TempProject::new();
    project.write(
        "scripts/quota.rhai",
        "try {\n    llm::chat(#{ model: \"fake\", messages: [#{ role: \"user\", content: \"hi\" }] });\n} catch (error) {\n    results::write_text(\"swallowed.txt\", error);\n}\n",
    );
    let base = server.openai_base();
    let args = ["run", "scripts/quota.rhai", "--run-id", "q", "--llm-cache", "off"];
    let run = project.host_with_env(&args, &[("LLM_BASE_URL", Some(&base)), ("LLM_API_KEY", Some(FAKE_KEY))]);
    run.expect_code(2);
    assert!(run.stderr.contains("openai quota is exhausted"), "{}", run.stderr);
    assert!(!project.path().join("runs/quota/q/swallowed.txt").exists());
    let manifest: Value = serde_json::from_str(&project.read("runs/quota/q/manifest.json")).expect("manifest");
    assert_eq!(manifest["status"], "failed");
}

#[test]
fn a_corrupt_cache_entry_is_called_again_and_rewritten() {
    let server = FakeLlm::start();
    let harness = harness(&server, CacheMode::ReadWrite, None);
    let recorded = harness.chat(ask("remember me")).expect("recorded");
    let entries: Vec<std::path::PathBuf> = walk(&harness._dir.path().join("cache"))
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(entries.len(), 1);
    std::fs::write(&entries[0], b"{\"request\": {\"mess").expect("corrupt the entry");
    let again = harness.chat(ask("remember me")).expect("called again");
    assert!(!again.cached);
    assert_eq!(server.seen().len(), 2);
    let replayed = harness.chat(ask("remember me")).expect("replayed from the rewritten entry");
    assert!(replayed.cached);
    assert_eq!(replayed.text, recorded.text);
    assert_eq!(server.seen().len(), 2);
}

#[test]
fn another_base_url_with_the_same_model_never_replays_the_first_servers_answers() {
    let first = FakeLlm::start();
    let second = FakeLlm::start();
    let project = batch_project();
    run_batch(&project, &first, "first", &[]).expect_code(0);
    assert_eq!(first.seen().len(), 200);
    run_batch(&project, &second, "second", &[]).expect_code(0);
    assert_eq!(second.seen().len(), 200, "the second server answers every request itself");
    run_batch(&project, &first, "again", &[]).expect_code(0);
    assert_eq!(first.seen().len(), 200, "the first server's answers are still replayed for it");
}

#[test]
fn the_answers_of_merged_shards_seed_an_offline_rerun_on_a_machine_with_an_empty_cache() {
    let server = FakeLlm::start();
    let project = TempProject::new();
    project.write(
        "scripts/sharded.rhai",
        r#"let questions = run::shard(["q0", "q1", "q2", "q3", "q4", "q5"]);
if !run::reporting() {
    let replies = llm::chat_many(questions.map(|q| #{ model: "fake", messages: [#{ role: "user", content: q }] }), #{});
    for i in 0..replies.len() { results::append("replies", #{ question: questions[i], text: replies[i].text }); }
}
results::write_json("replies.json", results::rows("replies").map(|r| r.text));
"#,
    );
    let base = server.openai_base();
    let env = [("LLM_BASE_URL", Some(base.as_str())), ("LLM_API_KEY", Some(FAKE_KEY))];
    let path = |name: &str| project.path().join(name).display().to_string();
    // Two machines, each with a cache of its own.
    for (shard, cache) in [("1/2", "cache-a"), ("2/2", "cache-b")] {
        let out = path(&format!("shard-{}", &shard[..1]));
        project
            .host_with_env(
                &["run", "scripts/sharded.rhai", "--shard", shard, "--out", &out, "--llm-cache-dir", &path(cache)],
                &env,
            )
            .expect_code(0);
    }
    project.host(&["merge", &path("shard-1"), &path("shard-2"), "--out", &path("merged")]).expect_code(0);
    let carried =
        duckdb(&format!("SELECT count(DISTINCT key), count(*) FROM '{}'", path("merged/llm_answers.parquet")));
    assert_eq!(carried["rows"], json!([[6, 6]]), "the merged run carries every shard's answers");

    let requests = server.seen().len();
    let rerun =
        &["run", "scripts/sharded.rhai", "--out", &path("rerun"), "--offline", "--llm-cache-dir", &path("empty")];
    let mut args = rerun.to_vec();
    let merged = path("merged");
    args.extend(["--llm-seed", merged.as_str()]);
    project.host_with_env(&args, &env).expect_code(0);
    assert_eq!(server.seen().len(), requests, "the seeded rerun makes no request");
    assert_eq!(project.read("rerun/replies.json"), project.read("merged/replies.json"));

    let unseeded_out = path("unseeded");
    let unseeded = project.host_with_env(
        &["run", "scripts/sharded.rhai", "--out", &unseeded_out, "--offline", "--llm-cache-dir", &path("empty")],
        &env,
    );
    unseeded.expect_code(0);
    let texts: Value = serde_json::from_str(&project.read("unseeded/replies.json")).expect("replies.json");
    assert_eq!(texts, json!([null, null, null, null, null, null]), "without the seed every call is an offline miss");
    let bad = project.host(&["run", "scripts/sharded.rhai", "--llm-seed", &path("empty")]);
    bad.expect_code(2);
    assert!(bad.stderr.contains("has no `llm_answers.parquet`"), "{}", bad.stderr);
}
