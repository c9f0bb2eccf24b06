//! Benchmark (not a test): the latency of a spawned `host hook` call with the memories of the
//! whole docs corpus, as Claude Code runs it on every prompt and every edit.
//!
//! Builds the memory store once (`scripts/docs_to_memories.rhai -- extract`, the next@16.2.0
//! package, rule extractor), then sends each mini-eval's hook events (its prompt, then the Writes
//! and Edits of its reference edit; `fixtures/memory-hook/evals/`) to
//! `host hook scripts/hook_memory.rhai -- --memories <store> --no-rerank`, one process per event,
//! each in a new agent session, in three rounds:
//! - `--no-server`: every call answers in its own process (model load and all);
//! - the warm server (`host hook`'s default), each event's text new to the embedding cache;
//! - the warm server again on the same texts, their embeddings cached.
//!
//! Run: `cargo bench --profile dev --bench hook` (the build `cargo run` makes). Prints a Markdown
//! table for BENCHMARKS.md.

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = tempfile::tempdir().expect("temporary directory");
    let store = out.path().join("store");
    let status = Command::new(env!("CARGO_BIN_EXE_host"))
        .args(["run", "scripts/docs_to_memories.rhai", "--out"])
        .arg(&store)
        .args(["--", "extract"])
        .current_dir(&root)
        .env("CI", "1")
        .status()
        .expect("run docs_to_memories");
    assert!(status.success(), "docs_to_memories failed");
    let events = events(&root.join("fixtures/memory-hook/evals"));
    let hooks = out.path().join("hooks");
    // Each run's texts differ from the last run's, so "new text" is new to the embedding cache.
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs();
    let rounds = [
        ("one process per event (`--no-server`), new text", true),
        ("warm server, new text", false),
        ("warm server, embedding cached", false),
    ];
    let mut table = Vec::new();
    let mut by_kind = Vec::new();
    for (round, (name, no_server)) in rounds.iter().enumerate() {
        if round == 1 {
            assert!(warm_up(&root, &store, &hooks), "the hook server did not start");
        }
        // The cached round repeats the texts of the round before it.
        let variant = if round == 2 { 1 } else { round };
        let timed: Vec<(String, f64)> = events
            .iter()
            .enumerate()
            .map(|(i, event)| {
                let kind = event["tool_name"].as_str().unwrap_or("prompt").to_string();
                let event = with_variant(event, &format!("{stamp}-{variant}"), &format!("bench-{round}-{i}"));
                (kind, hook(&root, &store, &hooks, &event, *no_server))
            })
            .collect();
        table.push(row(name, timed.iter().map(|(_, ms)| *ms).collect()));
        if round == 1 {
            for kind in ["prompt", "Write", "Edit"] {
                let times = timed.iter().filter(|(k, _)| k == kind).map(|(_, ms)| *ms).collect::<Vec<_>>();
                by_kind.push(row(&format!("{kind} ({})", times.len()), times));
            }
        }
    }
    let answered = std::fs::read_to_string(hooks.join("events.jsonl")).expect("the hook log");
    let by_server = answered.lines().filter(|line| line.contains("\"answered_by\":\"server\"")).count();
    println!("| `host hook`, {} events, `--no-rerank` | p50 | p95 | max |\n|---|---:|---:|---:|", events.len());
    for line in table {
        println!("{line}");
    }
    println!("\n| warm server, new text, by event | p50 | p95 | max |\n|---|---:|---:|---:|");
    for line in by_kind {
        println!("{line}");
    }
    println!("\n{by_server} of {} events were answered by the server.", answered.lines().count());
}

/// A table row: `name`, then the p50, p95 and max of `times` (nearest rank).
fn row(name: &str, mut times: Vec<f64>) -> String {
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((q * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1];
    format!("| {name} | {:.0} ms | {:.0} ms | {:.0} ms |", at(0.5), at(0.95), at(1.0))
}

/// Starts the warm server with one event and waits until it answers; whether it did.
fn warm_up(root: &Path, store: &Path, hooks: &Path) -> bool {
    let event =
        json!({ "hook_event_name": "UserPromptSubmit", "cwd": "/", "prompt": "warm up", "session_id": "warm-up" });
    for _ in 0..600 {
        hook(root, store, hooks, &event, false);
        let log = std::fs::read_to_string(hooks.join("events.jsonl")).unwrap_or_default();
        if log.lines().last().is_some_and(|line| line.contains("\"answered_by\":\"server\"")) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// `event` in session `session`, its text made new with `variant` (a prompt gets a suffix, a
/// Write or an Edit a trailing comment line).
fn with_variant(event: &Value, variant: &str, session: &str) -> Value {
    let mut event = event.clone();
    event["session_id"] = json!(session);
    for pointer in ["/prompt", "/tool_input/content", "/tool_input/new_string"] {
        if let Some(Value::String(text)) = event.pointer_mut(pointer) {
            text.push_str(&format!("\n// {variant}\n"));
        }
    }
    event
}

/// One `host hook` process on `event`; its wall time in milliseconds.
fn hook(root: &Path, store: &Path, hooks: &Path, event: &Value, no_server: bool) -> f64 {
    let started = Instant::now();
    let mut command = Command::new(env!("CARGO_BIN_EXE_host"));
    command
        .args(["hook", "--server-idle", "10", "scripts/hook_memory.rhai", "--", "--memories"])
        .arg(store)
        .arg("--no-rerank")
        .current_dir(root)
        .env("CI", "1")
        .env("HOST_HOOK_DIR", hooks)
        .env("HOST_HOOK_NO_SERVER", if no_server { "1" } else { "0" })
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = command.spawn().expect("start host hook");
    child.stdin.take().expect("stdin").write_all(event.to_string().as_bytes()).expect("write the event");
    assert!(child.wait().expect("wait").success(), "host hook exits 0");
    started.elapsed().as_secs_f64() * 1000.0
}

/// Each eval's events as Claude Code sends them: the prompt, then a Write per new file and an
/// Edit per change of its reference edit.
fn events(folder: &Path) -> Vec<Value> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(folder).expect("the evals").flatten().map(|e| e.path()).collect();
    dirs.sort();
    let mut out = Vec::new();
    for dir in dirs.iter().filter(|dir| dir.join("PROMPT.md").is_file()) {
        let cwd = dir.display().to_string();
        let prompt = std::fs::read_to_string(dir.join("PROMPT.md")).expect("PROMPT.md");
        out.push(json!({ "hook_event_name": "UserPromptSubmit", "cwd": cwd, "prompt": prompt }));
        let ops: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(dir.join("reference.json")).expect("reference.json"))
                .expect("JSON");
        for op in ops {
            let path = op["path"].as_str().expect("a path");
            let file = dir.join(path).display().to_string();
            out.push(if op["kind"] == "write" {
                let content = std::fs::read_to_string(dir.join("reference").join(path)).expect("the reference file");
                json!({ "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Write",
                        "tool_input": { "file_path": file, "content": content } })
            } else {
                json!({ "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "Edit",
                        "tool_input": { "file_path": file, "old_string": op["old_string"], "new_string": op["new_string"], "replace_all": false } })
            });
        }
    }
    out
}
