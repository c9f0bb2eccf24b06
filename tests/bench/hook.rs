//! Benchmark (not a test): the latency of a spawned `host hook` call with the memories of the
//! whole docs corpus, as Claude Code runs it on every prompt and every edit.
//!
//! Builds the memory store once (`scripts/docs_to_memories.rhai -- extract`, the next@16.2.0
//! package, rule extractor), then sends each mini-eval's hook events (its prompt, then the Writes
//! and Edits of its reference edit; `fixtures/memory-hook/evals/`) to
//! `host hook scripts/hook_memory.rhai -- --memories <store> --no-rerank`, one process per event,
//! each in a new agent session. Prompts are new text to the embedding cache the first time
//! through and cached the second (`warm`).
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
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    for (round, times) in [&mut cold, &mut warm].into_iter().enumerate() {
        for (i, event) in events.iter().enumerate() {
            let mut event = event.clone();
            event["session_id"] = json!(format!("bench-{round}-{i}"));
            times.push(hook(&root, &store, &hooks, &event));
        }
    }
    println!("| `host hook`, {} events, `--no-rerank` | p50 | p95 | max |\n|---|---:|---:|---:|", events.len());
    for (name, times) in [("new text (model load + embedding)", &mut cold), ("warm (embedding cached)", &mut warm)] {
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((q * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1];
        println!("| {name} | {:.0} ms | {:.0} ms | {:.0} ms |", at(0.5), at(0.95), at(1.0));
    }
}

/// One `host hook` process on `event`; its wall time in milliseconds.
fn hook(root: &Path, store: &Path, hooks: &Path, event: &Value) -> f64 {
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_host"))
        .args(["hook", "scripts/hook_memory.rhai", "--", "--memories"])
        .arg(store)
        .arg("--no-rerank")
        .current_dir(root)
        .env("CI", "1")
        .env("HOST_HOOK_DIR", hooks)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start host hook");
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
