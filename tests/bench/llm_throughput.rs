//! Benchmark (not a test): 400 chat calls at concurrency 16 against the loopback fake server
//! answering after 200 ms, through the whole LLM stack and through a script's
//! `llm::chat_many`. The ideal wall time is 400 × 0.2 s / 16 = 5.0 s.
//!
//! Run: `cargo bench --profile dev --bench llm_throughput` (the work is network-bound, so the
//! dev profile measures the same thing without a release build).

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

#[path = "../e2e/fake_llm.rs"]
#[allow(dead_code, reason = "the benchmark uses only part of the fake server")]
mod fake_llm;
#[path = "../e2e/fake_server.rs"]
#[allow(dead_code, reason = "the benchmark uses only part of the fake server")]
mod fake_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use host::capabilities::llm::{
    CacheMode, ChatRequest, LlmConfig, LlmSettings, Message, Pricing, RateLimits, RetryPolicy, stack,
};
use host::capabilities::log::ConsoleLog;
use host::capabilities::results::RunResults;
use host::console::{Console, Style};

const CALLS: usize = 400;
const CONCURRENCY: usize = 16;
const LATENCY: Duration = Duration::from_millis(200);

fn main() {
    let server = fake_llm::FakeLlm::start();
    server.latency(LATENCY);
    let ideal = CALLS as f64 * LATENCY.as_secs_f64() / CONCURRENCY as f64;

    let library = through_the_stack(&server);
    println!(
        "stack:     {CALLS} calls, concurrency {CONCURRENCY}: {library:.3} s, ideal {ideal:.3} s, ratio {:.3}",
        library / ideal
    );

    let script = through_a_script(&server);
    println!(
        "chat_many: {CALLS} calls, concurrency {CONCURRENCY}: {script:.3} s, ideal {ideal:.3} s, ratio {:.3}",
        script / ideal
    );
}

fn through_the_stack(server: &fake_llm::FakeLlm) -> f64 {
    let dir = tempfile::tempdir().expect("temporary directory");
    let base = server.openai_base();
    let config = LlmConfig::from_lookup(move |name| match name {
        "LLM_BASE_URL" => Some(base.clone()),
        "LLM_API_KEY" => Some("sk-bench".into()),
        _ => None,
    });
    let settings = LlmSettings {
        cache_dir: dir.path().join("cache"),
        cache_mode: CacheMode::Off,
        limits: RateLimits::default(),
        retry: RetryPolicy::default(),
        max_cost: None,
        pricing: Pricing::built_in(),
        seeds: Default::default(),
    };
    let results = Arc::new(RunResults::new(dir.path(), "bench").expect("results"));
    let log = Arc::new(ConsoleLog::new(Arc::new(Console::new(Style::Plain, false))));
    let llm = stack(config, &settings, results, log, Default::default());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let requests: Vec<ChatRequest> = (0..CALLS)
        .map(|i| ChatRequest {
            model: Some("bench".into()),
            messages: vec![Message { role: "user".into(), content: format!("question {i}") }],
            ..ChatRequest::default()
        })
        .collect();
    let started = Instant::now();
    let answered = runtime.block_on(
        futures::stream::iter(requests)
            .map(|request| llm.chat(request))
            .buffered(CONCURRENCY)
            .filter(|r| futures::future::ready(r.is_ok()))
            .count(),
    );
    assert_eq!(answered, CALLS, "every call must succeed for the timing to mean anything");
    started.elapsed().as_secs_f64()
}

fn through_a_script(server: &fake_llm::FakeLlm) -> f64 {
    let project = tempfile::tempdir().expect("temporary directory");
    std::fs::create_dir(project.path().join("scripts")).expect("scripts");
    let script = format!(
        "let requests = [];\nfor i in 0..{CALLS} {{ requests.push(#{{ model: \"bench\", messages: [#{{ role: \"user\", content: `q${{i}}` }}] }}); }}\nlet replies = llm::chat_many(requests, #{{ concurrency: {CONCURRENCY} }});\nresults::check(\"all answered\", replies.filter(|r| r.ok).len() == {CALLS});\n"
    );
    std::fs::write(project.path().join("scripts/bench.rhai"), script).expect("script");
    let started = Instant::now();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_host"))
        .args(["run", "scripts/bench.rhai", "--llm-cache", "off"])
        .current_dir(project.path())
        .env("CI", "1")
        .env("LLM_BASE_URL", server.openai_base())
        .env("LLM_API_KEY", "sk-bench")
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run host");
    assert!(status.success(), "the benchmark script failed");
    started.elapsed().as_secs_f64()
}
