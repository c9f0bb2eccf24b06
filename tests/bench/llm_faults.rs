//! Benchmark (not a test): one `llm::chat_many` batch under faults, as a script makes it. 400
//! calls at concurrency 16 against the loopback fake (`tests/e2e/fake_llm.rs`, 250 ms per
//! answer) where, on first attempts, every 10th call answers 429 with `Retry-After: 1`, every
//! 10th answers 500 and every 10th hangs past the 3 s request timeout. Prints the batch's wall
//! time beside the ideal (each call's least time, its waits included, summed and divided by 16),
//! and checks that every call answered, in input order.
//!
//! Run: `cargo bench --profile dev --bench llm_faults`.

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

#[path = "../e2e/fake_llm.rs"]
#[allow(dead_code, reason = "the fake serves the tests too; the bench uses part of it")]
mod fake_llm;
#[path = "../e2e/fake_server.rs"]
#[allow(dead_code, reason = "the fake serves the tests too; the bench uses part of it")]
mod fake_server;

use std::process::Command;
use std::time::Duration;

use fake_llm::{FakeLlm, Fault};
use reqwest::StatusCode;

const CALLS: usize = 400;
const CONCURRENCY: usize = 16;
const LATENCY_S: f64 = 0.25;
const TIMEOUT_S: f64 = 3.0;

fn main() {
    let llm = FakeLlm::start();
    llm.latency(Duration::from_secs_f64(LATENCY_S));
    let mut slot_seconds = 0.0;
    for i in 0..CALLS {
        let prompt = format!("call {i}");
        slot_seconds += LATENCY_S;
        match i % 10 {
            0 => {
                llm.fail(&prompt, vec![Fault::status(StatusCode::TOO_MANY_REQUESTS).retry_after(1)]);
                slot_seconds += 1.0;
            }
            1 => {
                llm.fail(&prompt, vec![Fault::status(StatusCode::INTERNAL_SERVER_ERROR)]);
                // The first retry's least delay (RetryPolicy's min_delay).
                slot_seconds += 0.5;
            }
            2 => {
                llm.fail(&prompt, vec![Fault::Delay(Duration::from_secs(6))]);
                slot_seconds += TIMEOUT_S;
            }
            _ => {}
        }
    }
    let project = tempfile::tempdir().expect("temporary directory");
    std::fs::create_dir_all(project.path().join("scripts")).expect("scripts folder");
    std::fs::write(
        project.path().join("scripts/faults.rhai"),
        format!(
            r#"let requests = [];
for i in 0..{CALLS} {{ requests.push(#{{ model: "fake", messages: [#{{ role: "user", content: `call ${{i}}` }}], timeout_s: {TIMEOUT_S:.1}, key: `${{i}}` }}); }}
let started = time::now_ms();
let replies = llm::chat_many(requests, #{{ concurrency: {CONCURRENCY}, label: "faults" }});
let wall = time::now_ms() - started;
let in_order = true;
for (reply, i) in replies {{ if !reply.ok || !reply.text.ends_with(`call ${{i}}`) {{ in_order = false; }} }}
results::write_json("out.json", #{{ wall_ms: wall, answered: replies.filter(|r| r.ok).len(), in_order: in_order }});
"#
        ),
    )
    .expect("write the script");
    let out = project.path().join("run");
    let status = Command::new(env!("CARGO_BIN_EXE_host"))
        .args(["run", "scripts/faults.rhai", "--llm-cache", "off", "--out"])
        .arg(&out)
        .current_dir(project.path())
        .env("CI", "1")
        .env("LLM_API_KEY", "k")
        .env("LLM_BASE_URL", llm.openai_base())
        .status()
        .expect("run host");
    assert!(status.success(), "the script failed");
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("out.json")).expect("out.json")).expect("JSON");
    let wall = result["wall_ms"].as_f64().expect("wall") / 1000.0;
    let ideal = slot_seconds / CONCURRENCY as f64;
    println!(
        "| `llm::chat_many`, {CALLS} calls, concurrency {CONCURRENCY}, 30% faulted | wall | ideal | wall / ideal | answered | in order |"
    );
    println!("|---|---:|---:|---:|---:|---|");
    println!(
        "| 250 ms answers; 429 + Retry-After 1, 500, hang past 3 s | {wall:.1} s | {ideal:.1} s | {:.2}× | {} | {} |",
        wall / ideal,
        result["answered"],
        result["in_order"]
    );
}
