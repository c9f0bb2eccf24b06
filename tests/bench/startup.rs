//! Benchmark (not a test): how long a user waits for `host --version` and for the smallest run,
//! `host run scripts/examples/hello.rhai` (a table, a file and a check written, manifest and all).
//!
//! Run: `cargo bench --profile dev --bench startup` (the build `cargo run` makes). Prints a
//! Markdown table for BENCHMARKS.md.

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Calls of each command; the first two are dropped as warm-up.
const CALLS: usize = 32;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let runs = tempfile::tempdir().expect("temporary directory");
    println!("| command, {} calls | p50 | p95 | max |\n|---|---:|---:|---:|", CALLS - 2);
    for (name, args) in [
        ("`host --version`", vec!["--version".to_string()]),
        (
            "`host run scripts/examples/hello.rhai`",
            vec!["run".into(), "scripts/examples/hello.rhai".into(), "--out".into(), String::new()],
        ),
    ] {
        let mut times: Vec<f64> = (0..CALLS)
            .map(|call| {
                let mut args = args.clone();
                if let Some(out) = args.last_mut().filter(|arg| arg.is_empty()) {
                    *out = runs.path().join(format!("hello-{call}")).display().to_string();
                }
                let started = Instant::now();
                let status = Command::new(env!("CARGO_BIN_EXE_host"))
                    .args(&args)
                    .current_dir(&root)
                    .env("CI", "1")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .expect("run host");
                assert!(status.success(), "{name} failed");
                started.elapsed().as_secs_f64() * 1000.0
            })
            .skip(2)
            .collect();
        times.sort_by(f64::total_cmp);
        let at = |q: f64| times[((q * times.len() as f64).ceil() as usize).clamp(1, times.len()) - 1];
        println!("| {name} | {:.1} ms | {:.1} ms | {:.1} ms |", at(0.5), at(0.95), at(1.0));
    }
}
