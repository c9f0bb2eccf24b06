//! Benchmark (not a test): what `proc::run` costs on top of starting a program. 500 sequential
//! runs of `/bin/true`, each way:
//! - bare `std::process::Command::status()` (inherits stdio, captures nothing);
//! - bare `std::process::Command::output()` (pipes and reads stdout and stderr, as we do);
//! - `LocalProcesses::run` (tokio, a process group, bounded captures, reader and waiter tasks,
//!   the group killed after the leader exits);
//! - the whole capability, `Proc::run` (policy, `PATH` lookup, environment, metering into the
//!   `proc_calls` Parquet table);
//! - a script calling `proc::run` in a loop under `host run`, timed inside the script.
//!
//! Run: `cargo bench --profile dev --bench proc` (process start-up is the kernel's work, so the
//! dev profile measures the same overhead as a release build would).

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use host::capabilities::fs::{ReadPolicy, SandboxFiles};
use host::capabilities::log::ConsoleLog;
use host::capabilities::proc::{
    Groups, Launch, LocalProcesses, MeteredProcesses, Proc, ProcPolicy, ProcRequest, Processes, ScenarioProc,
};
use host::capabilities::results::RunResults;
use host::console::{Console, Style};

const RUNS: usize = 500;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let rows = [
        ("std `Command::status()` (no capture)", per_call(bare_status)),
        ("std `Command::output()` (pipes read)", per_call(bare_output)),
        ("`LocalProcesses::run`", local(&runtime)),
        ("`Proc::run` (policy + metering + Parquet row)", capability(&runtime)),
        ("`proc::run` from a script under `host run`", script()),
    ];
    let baseline = rows[1].1;
    println!("| path | µs per run of /bin/true | vs `Command::output()` |");
    println!("|---|---:|---:|");
    for (name, micros) in rows {
        println!("| {name} | {micros:.0} | {:+.0} µs ({:.2}x) |", micros - baseline, micros / baseline);
    }
}

/// Mean microseconds of `call` over [`RUNS`] calls, after a few to warm up.
fn per_call(mut call: impl FnMut()) -> f64 {
    for _ in 0..20 {
        call();
    }
    let started = Instant::now();
    for _ in 0..RUNS {
        call();
    }
    started.elapsed().as_secs_f64() * 1e6 / RUNS as f64
}

fn bare_status() {
    let status = std::process::Command::new("/bin/true").status().expect("run /bin/true");
    assert!(status.success());
}

fn bare_output() {
    let output = std::process::Command::new("/bin/true").output().expect("run /bin/true");
    assert!(output.status.success());
}

fn launch() -> Launch {
    Launch {
        program: "/bin/true".into(),
        argv: vec!["true".into()],
        cwd: None,
        env: BTreeMap::from([("PATH".into(), "/usr/bin:/bin".into())]),
        stdin: None,
        grace: Duration::from_secs(5),
        output_limit_bytes: 1 << 20,
        secrets: Vec::new(),
    }
}

fn local(runtime: &tokio::runtime::Runtime) -> f64 {
    let processes = LocalProcesses::new(Arc::new(Groups::new()), Arc::new(AtomicBool::new(false)));
    per_call(|| {
        let output = runtime.block_on(processes.run(launch(), Duration::from_secs(10)));
        assert!(output.ok, "{:?}", output.error);
    })
}

fn capability(runtime: &tokio::runtime::Runtime) -> f64 {
    let dir = tempfile::tempdir().expect("temporary directory");
    let files = Arc::new(SandboxFiles::new(ReadPolicy::new(dir.path()).expect("read policy")));
    let results = Arc::new(RunResults::new(dir.path(), "bench").expect("results"));
    let log = Arc::new(ConsoleLog::new(Arc::new(Console::new(Style::Plain, false))));
    let local = Arc::new(LocalProcesses::new(Arc::new(Groups::new()), Arc::new(AtomicBool::new(false))));
    let scenario = ScenarioProc { allow: vec!["true".into()], env: Vec::new() };
    let policy = ProcPolicy::new(scenario, None, files, std::env::vars().collect());
    let proc = Proc { policy, processes: Arc::new(MeteredProcesses::new(local, results.clone(), log)) };
    let request: ProcRequest = serde_json::from_value(serde_json::json!({"argv": ["true"]})).expect("request");
    let micros = per_call(|| {
        let output = runtime.block_on(proc.run(request.clone())).expect("allowed");
        assert!(output.ok, "{:?}", output.error);
    });
    let outputs = results.finish();
    assert_eq!(outputs.tables.first().map(|table| table.rows), Some(RUNS as u64 + 20), "every run is a row");
    micros
}

fn script() -> f64 {
    let project = tempfile::tempdir().expect("temporary directory");
    std::fs::create_dir(project.path().join("scripts")).expect("scripts");
    let script = format!(
        "proc::allow([\"true\"]);\nfor i in 0..20 {{ proc::run(#{{ argv: [\"true\"] }}); }}\nlet started = time::now_ms();\nfor i in 0..{RUNS} {{ proc::run(#{{ argv: [\"true\"] }}); }}\nresults::write_json(\"timing.json\", #{{ micros: (time::now_ms() - started) * 1000.0 / {RUNS}.0 }});\n"
    );
    std::fs::write(project.path().join("scripts/bench.rhai"), script).expect("script");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_host"))
        .args(["run", "scripts/bench.rhai", "--run-id", "bench"])
        .current_dir(project.path())
        .env("CI", "1")
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run host");
    assert!(status.success(), "the benchmark script failed");
    let timing = std::fs::read_to_string(project.path().join("runs/bench/bench/timing.json")).expect("timing.json");
    let timing: serde_json::Value = serde_json::from_str(&timing).expect("JSON");
    timing["micros"].as_f64().expect("micros")
}
