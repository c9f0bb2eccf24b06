//! Benchmark (not a test): how long the main job and the smallest script take under `host run`,
//! as a user runs them (`cargo run` builds the dev profile, and so does this):
//! - `scripts/examples/hello.rhai`, 20 runs;
//! - `scripts/cortex_v11.rhai` warm (the embedding cache filled by a first run), 5 runs, with the
//!   per-phase times the script logs;
//! - `scripts/cortex_v11.rhai` cold: an empty cache folder (`HOST_CACHE_DIR`), the model already
//!   downloaded (`HOST_MODEL_DIR`), one run.
//!
//! Run: `cargo bench --profile dev --bench main_job`. Prints Markdown tables for BENCHMARKS.md;
//! each cell is the median over the runs.

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

const PHASES: [&str; 7] = ["extract", "seed", "compact", "retrieve", "answer", "judge", "report"];

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = tempfile::tempdir().expect("temporary directory");

    let hello: Vec<f64> = (0..20).map(|_| run(&root, out.path(), "scripts/examples/hello.rhai", &[]).0).collect();
    println!("| script | runs | median wall |\n|---|---:|---:|");
    println!("| `scripts/examples/hello.rhai` | {} | {:.0} ms |", hello.len(), median(&hello) * 1000.0);

    run(&root, out.path(), "scripts/cortex_v11.rhai", &[]);
    let warm: Vec<(f64, Vec<f64>)> = (0..5).map(|_| run(&root, out.path(), "scripts/cortex_v11.rhai", &[])).collect();

    let cold_cache = tempfile::tempdir().expect("temporary directory");
    let model = model_dir(&root);
    let cold = run(
        &root,
        out.path(),
        "scripts/cortex_v11.rhai",
        &[("HOST_CACHE_DIR", cold_cache.path()), ("HOST_MODEL_DIR", model.as_path())],
    );

    println!("\n| `scripts/cortex_v11.rhai` | wall | {} |", PHASES.join(" | "));
    println!("|---|---:|{}", "---:|".repeat(PHASES.len()));
    let warm_walls: Vec<f64> = warm.iter().map(|(wall, _)| *wall).collect();
    let warm_phases: Vec<f64> = (0..PHASES.len())
        .map(|phase| median(&warm.iter().map(|(_, phases)| phases[phase]).collect::<Vec<_>>()))
        .collect();
    println!("| warm, median of {} | {:.2} s | {} |", warm.len(), median(&warm_walls), seconds(&warm_phases));
    println!("| cold, one run | {:.2} s | {} |", cold.0, seconds(&cold.1));
}

/// Runs `host run <script>` into a new folder under `out` and returns its wall time and the phase times it logged.
fn run(root: &Path, out: &Path, script: &str, env: &[(&str, &Path)]) -> (f64, Vec<f64>) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let folder = out.join(RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string());
    let mut command = Command::new(env!("CARGO_BIN_EXE_host"));
    command.args(["run", script, "--out"]).arg(folder).current_dir(root).env("CI", "1");
    for (name, value) in env {
        command.env(name, value);
    }
    let started = Instant::now();
    let output = command.output().expect("run host");
    let wall = started.elapsed().as_secs_f64();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script} failed:\n{log}");
    let phases = PHASES
        .iter()
        .map(|phase| {
            let prefix = format!("phase {phase}: ");
            log.lines()
                .find_map(|line| line.strip_prefix(&prefix)?.strip_suffix(" s")?.parse().ok())
                .unwrap_or(f64::NAN)
        })
        .collect();
    (wall, phases)
}

/// The folder `host model` prints on stdout for the local embedding model.
fn model_dir(root: &Path) -> PathBuf {
    let output = Command::new(env!("CARGO_BIN_EXE_host")).arg("model").current_dir(root).output().expect("host model");
    let text = String::from_utf8_lossy(&output.stdout);
    PathBuf::from(text.lines().last().expect("a model folder on stdout").trim())
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

fn seconds(values: &[f64]) -> String {
    values.iter().map(|value| format!("{value:.1} s")).collect::<Vec<_>>().join(" | ")
}
