//! Set-by-set verification (`scripts/verify_set.rhai`, `scripts/verify_all_sets.rhai`) driving the
//! reference benchmark (`fixtures/ghx-bench/ghxbench.py`) as real subprocesses, with the faults it
//! can be told to make: a scenario that fails once or always, no rows, a row with an error, a
//! crash, a failing report gate and a missing program; and a driver run killed between sets and
//! resumed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::resume::KillTest;
use crate::support::{Run, TempProject, duckdb, host_in, repo_root};

/// A verification run in a temporary folder: its exit, and where it wrote.
struct Verification {
    run: Run,
    dir: PathBuf,
    _keep: tempfile::TempDir,
}

impl Verification {
    /// `host run scripts/<script>.rhai --out <a temporary folder> <host_args> -- <args>`, from the
    /// repository root; the folder lives as long as the returned guard.
    fn command(script: &str, host_args: &[&str], args: &[&str]) -> (tempfile::TempDir, PathBuf, Vec<String>) {
        let keep = tempfile::tempdir().expect("temporary folder");
        let dir = keep.path().join("run");
        let mut all =
            vec!["run".to_string(), format!("scripts/{script}.rhai"), "--out".into(), dir.display().to_string()];
        all.extend(host_args.iter().map(|arg| arg.to_string()));
        all.push("--".into());
        all.extend(args.iter().map(|arg| arg.to_string()));
        (keep, dir, all)
    }

    /// Starts a verification and returns at once.
    fn start(script: &str, host_args: &[&str], args: &[&str]) -> (std::process::Child, tempfile::TempDir) {
        let (keep, _, all) = Verification::command(script, host_args, args);
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_host"))
            .args(&all)
            .current_dir(repo_root())
            .env("CI", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start host");
        (child, keep)
    }

    fn run(script: &str, host_args: &[&str], args: &[&str]) -> Self {
        let (keep, dir, all) = Verification::command(script, host_args, args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        Verification { run: host_in(&repo_root(), &all), dir, _keep: keep }
    }

    /// The folder that holds the set folders.
    fn base(&self) -> PathBuf {
        verification_folder(&self.dir)
    }

    fn tracking(&self, set: &str) -> Value {
        read_json(&self.base().join(set).join("tracking.json"))
    }

    fn table(&self, name: &str) -> String {
        self.dir.join(format!("{name}.parquet")).display().to_string()
    }

    /// Every argv this run started, as space-joined lines.
    fn commands(&self) -> Vec<String> {
        let rows = duckdb(&format!("SELECT array_to_string(argv, ' ') FROM '{}'", self.table("proc_calls")));
        rows["rows"].as_array().expect("rows").iter().filter_map(|row| row[0].as_str().map(String::from)).collect()
    }
}

/// The `verification-<date>-<model>-by-set` folder in `parent`.
pub(crate) fn verification_folder(parent: &Path) -> PathBuf {
    let found = std::fs::read_dir(parent)
        .expect("the folder that holds the verification folder")
        .flatten()
        .map(|entry| entry.path())
        .find(|path| path.file_name().is_some_and(|name| name.to_string_lossy().starts_with("verification-")));
    found.expect("a verification-<date>-<model>-by-set folder")
}

pub(crate) fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("a JSON file the run wrote");
    serde_json::from_str(&text).expect("JSON")
}

fn attempts(tracking: &Value) -> Vec<(i64, Vec<String>, String)> {
    let reruns = tracking["reruns"].as_array().expect("reruns");
    reruns
        .iter()
        .map(|rerun| {
            let ids = rerun["scenario_ids"]
                .as_array()
                .expect("ids")
                .iter()
                .filter_map(|id| id.as_str().map(String::from))
                .collect();
            (rerun["attempt"].as_i64().unwrap_or(-1), ids, rerun["result"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

#[test]
fn a_clean_set_passes_with_its_rows_counted_and_its_seed_named_after_the_run() {
    let verification =
        Verification::run("verify_set", &["--run-id", "v1"], &["--set", "pr-thread-mutations", "--provider", "openai"]);
    verification.run.expect_code(0);
    let tracking = verification.tracking("pr-thread-mutations");
    assert_eq!(tracking["final_status"], "pass");
    assert_eq!(tracking["resolved_scenarios"].as_array().map(Vec::len), Some(4));
    assert_eq!(tracking["rows_expected"], serde_json::json!({"agent_direct": 4, "ghx": 4}));
    assert_eq!(tracking["rows_actual"], serde_json::json!({"agent_direct": 4, "ghx": 4}));
    assert_eq!(tracking["checks"]["error_null"], serde_json::json!({"pass": 8, "fail": 0}));
    assert_eq!(attempts(&tracking), [(1, vec![], "pass".to_string())]);
    let commands = verification.commands();
    assert!(
        commands.iter().any(|line| line.contains("fixtures seed --seed-id v1-pr-thread-mutations-seed")),
        "{commands:?}"
    );
    for file in
        ["agent_direct-suite.jsonl", "ghx-suite.jsonl", "latest-summary.json", "latest-summary.md", "tracking.json"]
    {
        assert!(verification.base().join("pr-thread-mutations").join(file).is_file(), "{file}");
    }
}

#[test]
fn a_scenario_that_fails_once_is_rerun_alone_and_the_set_passes() {
    let verification = Verification::run(
        "verify_set",
        &[],
        &["--set", "pr-exec", "--provider", "openai", "--inject", "pr-merge-execute-001=fail-once"],
    );
    verification.run.expect_code(0);
    let tracking = verification.tracking("pr-exec");
    assert_eq!(tracking["final_status"], "pass");
    assert_eq!(
        attempts(&tracking),
        [(1, vec![], "fail".into()), (2, vec!["pr-merge-execute-001".into()], "pass".into())]
    );
    let lines = std::fs::read_to_string(verification.base().join("pr-exec/agent_direct-suite.jsonl")).expect("suite");
    assert_eq!(lines.lines().count(), 9, "the final file holds every scenario's final row, the rerun's included");
}

#[test]
fn a_scenario_that_always_fails_stops_the_driver_after_two_reruns_with_tracking_complete() {
    let verification = Verification::run(
        "verify_all_sets",
        &[],
        &["--provider", "openai", "--inject", "pr-comment-reply-001=fail-always", "--cleanup-on-failure"],
    );
    verification.run.expect_code(1);
    let cleanups = verification.commands().into_iter().filter(|line| line.contains("fixtures cleanup")).count();
    assert_eq!(cleanups, 1, "--cleanup-on-failure cleans up once after the stop");
    let tracking = verification.tracking("pr-thread-mutations");
    assert_eq!(tracking["final_status"], "terminal_fail");
    let expected: Vec<(i64, Vec<String>, String)> = vec![
        (1, vec![], "fail".into()),
        (2, vec!["pr-comment-reply-001".into()], "fail".into()),
        (3, vec!["pr-comment-reply-001".into()], "fail".into()),
    ];
    assert_eq!(attempts(&tracking), expected);
    assert_eq!(tracking["failing_scenarios"], serde_json::json!(["pr-comment-reply-001"]));
    assert_eq!(tracking["rows_actual"], serde_json::json!({"agent_direct": 4, "ghx": 4}));
    assert!(!verification.base().join("issues").exists(), "the driver went on after a terminal failure");
    let summary = read_json(&verification.base().join("summary.json"));
    assert_eq!((summary["sets_verified"].as_i64(), summary["sets_passed"].as_i64()), (Some(2), Some(1)));
    assert!(
        verification.run.stderr.contains("check failed: set pr-thread-mutations passes blocking validation"),
        "{}",
        verification.run.stderr
    );
}

#[test]
fn zero_rows_are_terminal_at_once() {
    let verification = Verification::run(
        "verify_set",
        &[],
        &["--set", "ci-log-analysis", "--provider", "openai", "--inject", "*=no-rows"],
    );
    verification.run.expect_code(1);
    let tracking = verification.tracking("ci-log-analysis");
    assert_eq!(tracking["final_status"], "terminal_fail");
    assert_eq!(attempts(&tracking).len(), 1, "no rerun after zero rows");
    assert!(
        tracking["blocked_by"].as_str().is_some_and(|reason| reason.contains("zero rows is terminal")),
        "{}",
        tracking["blocked_by"]
    );
}

#[test]
fn a_scenario_that_never_writes_its_row_fails_the_row_count_contract() {
    let verification = Verification::run(
        "verify_set",
        &[],
        &["--set", "ci-diagnostics", "--provider", "openai", "--inject", "workflow-job-logs-get-001=no-row"],
    );
    verification.run.expect_code(1);
    let tracking = verification.tracking("ci-diagnostics");
    assert_eq!(tracking["final_status"], "terminal_fail");
    assert_eq!(attempts(&tracking).len(), 2, "the missing scenario is rerun, and a rerun with no rows is terminal");
    assert_eq!(tracking["rows_actual"], serde_json::json!({"agent_direct": 3, "ghx": 3}));
    assert_eq!(
        tracking["failing_scenarios"],
        serde_json::json!(["workflow-job-logs-get-001", "row-count-mismatch: expected=4 agent_direct=3 ghx=3"])
    );
}

#[test]
fn a_row_with_an_error_blocks_the_set_naming_the_file_row_and_field() {
    let verification = Verification::run(
        "verify_set",
        &[],
        &["--set", "ci-diagnostics", "--provider", "openai", "--inject", "workflow-runs-list-001=error-row"],
    );
    verification.run.expect_code(1);
    let tracking = verification.tracking("ci-diagnostics");
    assert_eq!(tracking["final_status"], "terminal_fail");
    assert_eq!(tracking["checks"]["error_null"]["fail"], 2);
    assert_eq!(tracking["checks"]["success"]["fail"], 0);
    let problems: Vec<&str> =
        tracking["problems"].as_array().expect("problems").iter().filter_map(Value::as_str).collect();
    assert!(
        problems.iter().any(|problem| problem
            .starts_with("set ci-diagnostics: ghx-suite.jsonl row 2 (workflow-runs-list-001): field \"error\" is {")),
        "{problems:?}"
    );
    assert!(
        verification.run.stderr.contains("agent_direct-suite.jsonl row 2 (workflow-runs-list-001): field \"error\"")
    );
}

#[test]
fn a_benchmark_crash_and_a_failing_report_gate_still_leave_a_complete_tracking_file() {
    let crashed = Verification::run(
        "verify_set",
        &[],
        &["--set", "release-delivery", "--provider", "openai", "--inject", "release-create-draft-001=crash"],
    );
    crashed.run.expect_code(1);
    let tracking = crashed.tracking("release-delivery");
    assert_eq!(tracking["final_status"], "terminal_fail");
    assert_eq!(tracking["resolved_scenarios"].as_array().map(Vec::len), Some(5));
    let benchmark_failed =
        tracking["commands"].as_array().expect("commands").iter().any(|command| command["code"] == 137);
    assert!(benchmark_failed, "the crash is recorded");

    let gate = Verification::run(
        "verify_set",
        &[],
        &["--set", "ci-log-analysis", "--provider", "openai", "--inject", "report=gate-fail"],
    );
    gate.run.expect_code(0);
    let tracking = gate.tracking("ci-log-analysis");
    assert_eq!(tracking["final_status"], "pass", "row-level validation decides, not the report's gate");
    assert_eq!(tracking["reports"][0]["gate_passed"], false);
    assert_eq!(tracking["reports"][0]["ok"], false);
}

#[test]
fn a_missing_benchmark_program_is_recorded_and_the_set_fails() {
    let project = tempfile::tempdir().expect("scenario folder");
    let scenario = std::fs::read_to_string(repo_root().join("scenarios/verify_by_set.toml")).expect("scenario");
    let broken = scenario.replace(
        "benchmark = [\"python3\", \"fixtures/ghx-bench/ghxbench.py\", \"benchmark\"",
        "benchmark = [\"no-such-benchmark-runner\", \"benchmark\"",
    );
    assert_ne!(broken, scenario, "the benchmark template was found");
    let broken = broken.replace("allow = [\"python3\"]", "allow = [\"python3\", \"no-such-benchmark-runner\"]");
    let path = project.path().join("broken.toml");
    std::fs::write(&path, broken).expect("write scenario");
    let path_text = path.display().to_string();
    let verification = Verification::run(
        "verify_set",
        &["--scenario", &path_text],
        &["--set", "ci-log-analysis", "--provider", "openai"],
    );
    verification.run.expect_code(1);
    let tracking = verification.tracking("ci-log-analysis");
    assert_eq!(tracking["final_status"], "terminal_fail");
    let missing =
        tracking["commands"].as_array().expect("commands").iter().find(|command| command["kind"] == "missing");
    assert!(
        missing.is_some_and(|command| command["error"] == "program `no-such-benchmark-runner` not found on `PATH`")
    );
}

#[test]
fn the_driver_runs_nine_sets_in_order_with_one_preflight_and_read_only_sets_never_seed() {
    let verification = Verification::run("verify_all_sets", &[], &["--provider", "openai"]);
    verification.run.expect_code(0);
    let commands = verification.commands();
    assert_eq!(commands.iter().filter(|line| line.contains("fixtures status")).count(), 1, "{commands:?}");
    assert_eq!(commands.iter().filter(|line| line.contains("fixtures cleanup")).count(), 1);
    let seeded: Vec<&String> = commands.iter().filter(|line| line.contains("fixtures seed")).collect();
    assert_eq!(seeded.len(), 7);
    assert!(!seeded.iter().any(|line| line.contains("ci-diagnostics") || line.contains("ci-log-analysis")));
    let sets = duckdb(&format!(
        "SELECT list(set ORDER BY file_row_number), bool_and(final_status = 'pass') \
         FROM read_parquet('{}', file_row_number = true)",
        verification.table("sets")
    ));
    assert_eq!(
        sets["rows"][0],
        serde_json::json!([
            [
                "pr-exec",
                "pr-thread-mutations",
                "issues",
                "release-delivery",
                "workflows",
                "projects-v2",
                "pr-review-reads",
                "ci-diagnostics",
                "ci-log-analysis"
            ],
            true
        ])
    );
    let rows = duckdb(&format!("SELECT count(*) FROM '{}'", verification.table("rows")));
    assert_eq!(rows["rows"][0][0], 120, "60 scenarios in two modes");
    let summary = std::fs::read_to_string(verification.base().join("summary.md")).expect("summary.md");
    assert!(summary.contains("every set passed"), "{summary}");
    crate::report_html::assert_every_chart_draws(
        &verification.base().join("summary.html"),
        &["Rows per set", "Attempts per set"],
    );
    assert!(verification.base().join("confirmation.sh").is_file());
    assert!(verification.run.stderr.contains("canonical confirmation (run with --confirm)"));
}

#[test]
fn two_sets_verified_side_by_side_share_no_file() {
    let (first, _first_folder) = Verification::start("verify_set", &[], &["--set", "pr-exec", "--provider", "openai"]);
    let (second, _second_folder) = Verification::start("verify_set", &[], &["--set", "issues", "--provider", "openai"]);
    let outputs = [first, second].map(|child| Run::from(child.wait_with_output().expect("wait for host")));
    let mut written = Vec::new();
    for run in &outputs {
        run.expect_code(0);
        let dir = run
            .stderr
            .lines()
            .find_map(|line| line.split(" -> ").nth(1).filter(|_| line.starts_with("run ok")))
            .expect("the run folder");
        let table = Path::new(dir.trim()).join("proc_calls.parquet").display().to_string();
        let rows = duckdb(&format!("SELECT argv FROM '{table}'"));
        let paths: Vec<String> = rows["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .flat_map(|row| row[0].as_array().cloned().unwrap_or_default())
            .filter_map(|arg| arg.as_str().map(String::from))
            .filter(|arg| arg.starts_with('/'))
            .collect();
        assert!(!paths.is_empty());
        assert!(paths.iter().all(|path| path.starts_with(dir.trim())), "a path outside its own run folder: {paths:?}");
        written.push(paths);
    }
    assert!(written[0].iter().all(|path| !written[1].contains(path)));
}

#[test]
fn a_missing_provider_is_a_usage_error_naming_it() {
    let verification = Verification::run("verify_set", &[], &["--set", "pr-exec"]);
    verification.run.expect_code(2);
    assert!(
        verification.run.stderr.contains("missing `--provider`: the benchmark's model provider"),
        "{}",
        verification.run.stderr
    );
}

#[test]
fn help_lists_the_declared_flags_and_makes_no_run() {
    let verification = Verification::run("verify_set", &[], &["--help"]);
    verification.run.expect_code(0);
    let help = &verification.run.stdout;
    assert!(help.starts_with("Flags of scripts/verify_set.rhai (after `--`):\n  --set <text>\n"), "{help}");
    assert!(help.contains("  --model <text>\n      the model id [default: gpt-5.1-codex-mini]\n"), "{help}");
    assert!(help.contains("  --scenario-id <value>...\n"), "{help}");
    assert!(!verification.dir.exists(), "--help made a run directory");

    let typo = Verification::run("verify_set", &[], &["--set", "pr-exec", "--provider", "openai", "--repetiton", "2"]);
    typo.run.expect_code(2);
    assert!(
        typo.run
            .stderr
            .contains("unknown flag `--repetiton`; the flags are: `--set`, `--provider`, `--model`, `--repetitions`"),
        "{}",
        typo.run.stderr
    );
}

#[test]
fn confirm_runs_the_canonical_confirmation_and_out_dir_places_a_set_folder() {
    let verification =
        Verification::run("verify_all_sets", &[], &["--provider", "openai", "--sets", "ci-log-analysis", "--confirm"]);
    verification.run.expect_code(0);
    let confirmations: Vec<String> = verification
        .commands()
        .into_iter()
        .filter(|line| line.contains("gpt-5.3-codex") || line.contains("/confirm/"))
        .collect();
    assert_eq!(confirmations.len(), 6, "{confirmations:?}");
    let manifest = read_json(&verification.dir.join("manifest.json"));
    let checks = manifest["checks"].as_array().expect("checks");
    assert_eq!(
        checks
            .iter()
            .filter(|check| check["name"].as_str().is_some_and(|name| name.starts_with("canonical confirmation")))
            .count(),
        6
    );
    assert!(checks.iter().all(|check| check["passed"] == true), "{checks:?}");

    let placed = Verification::run(
        "verify_set",
        &[],
        &["--set", "ci-log-analysis", "--provider", "openai", "--out-dir", "mine/here"],
    );
    placed.run.expect_code(0);
    assert_eq!(read_json(&placed.dir.join("mine/here/tracking.json"))["final_status"], "pass");
    let outside = Verification::run(
        "verify_set",
        &[],
        &["--set", "ci-log-analysis", "--provider", "openai", "--out-dir", "../x"],
    );
    outside.run.expect_code(2);
    assert!(
        outside.run.stderr.contains("--out-dir must be a folder inside the run directory"),
        "{}",
        outside.run.stderr
    );
}

#[test]
fn the_ghx_scenario_holds_the_commands_exactly_as_the_spec_writes_them() {
    let text = std::fs::read_to_string(repo_root().join("scenarios/verify_by_set_ghx.toml")).expect("scenario");
    let scenario: toml::Table = text.parse().expect("TOML");
    let line = |name: &str| -> String {
        let argv = scenario["commands"][name].as_array().expect("an argv list");
        argv.iter().filter_map(|part| part.as_str()).collect::<Vec<_>>().join(" ")
    };
    // The spec's lines (shared/seeds/003), with its values as placeholders.
    // The acceptance command, with the run's own summary paths for its /tmp ones.
    assert_eq!(
        line("prerequisite"),
        "pnpm --filter @ghx-dev/benchmark run report -- --gate --gate-profile verify_pr --summary-json {summary_json} --summary-md {summary_md}"
    );
    assert_eq!(line("preflight"), "pnpm --filter @ghx-dev/benchmark run fixtures -- status --out {preflight_manifest}");
    // pnpm runs the package's scripts in packages/benchmark: the seed's fixtures/latest.json.
    assert_eq!(scenario["verify"]["preflight_manifest"].as_str(), Some("packages/benchmark/fixtures/latest.json"));
    assert_eq!(
        line("seed"),
        "pnpm --filter @ghx-dev/benchmark run fixtures -- seed --seed-id {seed_id} --out {manifest}"
    );
    assert_eq!(
        line("benchmark"),
        "pnpm --filter @ghx-dev/benchmark run benchmark -- {mode} {repetitions} {selectors} --provider {provider} --model {model} --output-jsonl {output_jsonl}"
    );
    assert!(
        line("report").starts_with("pnpm --filter @ghx-dev/benchmark run report -- --gate --gate-profile verify_pr")
    );
    assert_eq!(line("cleanup"), "pnpm --filter @ghx-dev/benchmark run fixtures -- cleanup --out {preflight_manifest}");
    let confirm: Vec<String> = scenario["commands"]["confirm"]
        .as_array()
        .expect("confirm")
        .iter()
        .map(|argv| {
            argv.as_array().expect("argv").iter().filter_map(|part| part.as_str()).collect::<Vec<_>>().join(" ")
        })
        .collect();
    assert_eq!(
        confirm,
        [
            "env BENCH_PROVIDER_ID=openai BENCH_MODEL_ID=gpt-5.3-codex pnpm --filter @ghx-dev/benchmark run benchmark:verify:pr",
            "env BENCH_PROVIDER_ID=openai BENCH_MODEL_ID=gpt-5.3-codex pnpm --filter @ghx-dev/benchmark run benchmark:verify:release"
        ]
    );
}

/// A copy of the project's verification (the driver, its modules, the reference benchmark) whose
/// default scenario seeds set `pr-thread-mutations` slowly: its seed command waits 5.5 s before
/// it runs. A table's rows reach the disk 5 s after the first of them, so by the time that set
/// ends the set before it is readable, and a kill then lands while the next set is in flight.
fn project_with_a_slow_set() -> TempProject {
    let project = TempProject::new();
    project.with_libraries(&["resume", "charts"]).with_folder("scripts/lib/verify");
    project.with_folder("fixtures/ghx-bench").with_folder("fixtures/ghx-bench/sample");
    let script = "scripts/verify_all_sets.rhai";
    project.write(script, &std::fs::read_to_string(repo_root().join(script)).expect("the driver"));
    let scenario = std::fs::read_to_string(repo_root().join("scenarios/verify_by_set.toml")).expect("scenario");
    let seed = r#"seed = ["python3", "fixtures/ghx-bench/ghxbench.py", "fixtures", "seed","#;
    let slow = r#"seed = ["python3", "-c", "import os, sys, time; time.sleep(5.5 if sys.argv[1] == 'pr-thread-mutations' else 0); os.execvp(sys.executable, [sys.executable] + sys.argv[2:])", "{set}", "fixtures/ghx-bench/ghxbench.py", "fixtures", "seed","#;
    assert!(scenario.contains(seed), "the seed template was found");
    // The scenario `host run` reads for scripts/verify_all_sets.rhai when given none.
    project.write("scenarios/verify_all_sets.toml", &scenario.replace(seed, slow));
    project
}

/// What the set folder of `set` in run `dir` holds: tracking.json, as JSON.
fn tracking_in(dir: &Path, set: &str) -> Value {
    read_json(&verification_folder(dir).join(set).join("tracking.json"))
}

#[test]
fn a_driver_run_killed_between_sets_resumes_with_the_sets_it_finished_to_the_tables_of_one_run() {
    let project = project_with_a_slow_set();
    let dir = tempfile::tempdir().expect("temporary folder");
    // pr-exec fails once and passes on its rerun: a kept set with two attempts.
    let args = [
        "--provider",
        "openai",
        "--sets",
        "pr-exec,pr-thread-mutations,ci-log-analysis",
        "--inject",
        "pr-merge-execute-001=fail-once",
    ];
    let killed = KillTest {
        dir: dir.path(),
        cwd: project.path(),
        script: "scripts/verify_all_sets.rhai",
        args: &args,
        env: &[],
        kill_after: "sets/pr-thread-mutations.json",
        table: "sets",
        // The resumed run ran fewer programs: the gate's and the kept sets' are the killed run's.
        apart: &["proc_calls"],
    }
    .run();
    // pr-exec's row, and pr-thread-mutations' when it reached the disk before the kill; never
    // the set in flight.
    assert!((1..=2).contains(&killed.rows_before_kill), "{} rows of `sets` before the kill", killed.rows_before_kill);
    let resumed = &killed.manifest["settings"]["resumed"];
    assert_eq!(resumed["kept"], serde_json::json!(["pr-exec", "pr-thread-mutations"]));
    assert_eq!(resumed["redone"], serde_json::json!(["ci-log-analysis"]));

    // A kept set's tracking.json and suites are the killed run's; the redone set's are the
    // resumed run's own.
    for set in ["pr-exec", "pr-thread-mutations"] {
        assert_eq!(tracking_in(&killed.resumed, set), tracking_in(&killed.killed, set), "{set}");
        for file in ["agent_direct-suite.jsonl", "ghx-suite.jsonl", "latest-summary.json"] {
            let read = |run: &Path| std::fs::read_to_string(verification_folder(run).join(set).join(file));
            assert_eq!(read(&killed.resumed).expect("kept"), read(&killed.killed).expect("made"), "{set}/{file}");
        }
    }
    let kept_attempts = attempts(&tracking_in(&killed.resumed, "pr-exec"));
    assert_eq!(kept_attempts.iter().map(|(_, _, result)| result.as_str()).collect::<Vec<_>>(), ["fail", "pass"]);
    let redone = tracking_in(&killed.resumed, "ci-log-analysis");
    assert_eq!(redone["run_id"], killed.manifest["run_id"]);
    assert_eq!(redone["final_status"], "pass");
    let summary = read_json(&verification_folder(&killed.resumed).join("summary.json"));
    assert_eq!((summary["sets_verified"].as_i64(), summary["sets_passed"].as_i64()), (Some(3), Some(3)));

    // The resumed run took the gate over, ran the preflight once (its manifest is what the
    // read-only set and the cleanup read) and verified only the set it did not keep.
    let commands = duckdb(&format!(
        "SELECT array_to_string(argv, ' ') FROM '{}'",
        killed.resumed.join("proc_calls.parquet").display()
    ));
    let commands: Vec<&str> =
        commands["rows"].as_array().expect("rows").iter().filter_map(|row| row[0].as_str()).collect();
    assert!(!commands.iter().any(|line| line.contains("sample/agent_direct-suite.jsonl")), "{commands:?}");
    assert_eq!(commands.iter().filter(|line| line.contains("fixtures status")).count(), 1, "{commands:?}");
    assert!(!commands.iter().any(|line| line.contains("fixtures seed")), "{commands:?}");
    assert!(
        commands.iter().all(|line| !line.contains("benchmark") || line.contains("ci-log-analysis")),
        "{commands:?}"
    );
}

#[test]
fn a_resume_with_another_setting_is_refused_naming_it() {
    let first = Verification::run("verify_all_sets", &[], &["--provider", "openai", "--sets", "ci-log-analysis"]);
    first.run.expect_code(0);
    let from = first.dir.display().to_string();
    let again = Verification::run(
        "verify_all_sets",
        &[],
        &["--provider", "openai", "--sets", "ci-log-analysis", "--repetitions", "2", "--resume", &from],
    );
    again.run.expect_code(2);
    let expected = format!(
        "--resume: {from}/sets/ci-log-analysis.json was made with --repetitions `1`, this run has `2`; hint: resume with the same data and settings"
    );
    assert!(again.run.stderr.contains(&expected), "{}", again.run.stderr);
    assert!(!again.dir.join("proc_calls.parquet").exists(), "a refused resume ran nothing");

    // The same setup keeps the set and runs none of its commands.
    let same = Verification::run(
        "verify_all_sets",
        &[],
        &["--provider", "openai", "--sets", "ci-log-analysis", "--resume", &from],
    );
    same.run.expect_code(0);
    assert!(same.run.stderr.contains("resuming"), "{}", same.run.stderr);
    assert!(!same.commands().iter().any(|line| line.contains("benchmark")), "{:?}", same.commands());
    assert_eq!(same.tracking("ci-log-analysis"), first.tracking("ci-log-analysis"));
}
