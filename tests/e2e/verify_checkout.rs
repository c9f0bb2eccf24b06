//! Set-by-set verification against a checkout of the ghx repository, as a user runs it: the
//! README's command with `scenarios/verify_by_set_ghx.toml` as shipped and `--checkout` its only
//! addition, a checkout in a temporary folder outside the project, and `pnpm` on PATH being the
//! stand-in in `tests/ghx-standin/`, which holds every command to the seed's contract (unknown or
//! missing flags exit 2, outputs only where the flags say) and makes the faults asked of it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{Run, duckdb, host_in_with, repo_root};
use crate::verify::{read_json, verification_folder};

/// The benchmark's credentials, as a user's environment has them.
const GITHUB_TOKEN: &str = "ghp_standin0000000000000000000000000000";
const OPENAI_KEY: &str = "sk-standin-0000000000000000";

const NINE_SETS: [&str; 9] = [
    "pr-exec",
    "pr-thread-mutations",
    "issues",
    "release-delivery",
    "workflows",
    "projects-v2",
    "pr-review-reads",
    "ci-diagnostics",
    "ci-log-analysis",
];

/// A ghx checkout in a temporary folder: a pnpm workspace whose `packages/benchmark` has the
/// package's scripts, the real `scenario-sets.json`, earlier results, and a seeded fixture
/// manifest, as a user's checkout has before a verification.
struct Checkout {
    folder: tempfile::TempDir,
    root: PathBuf,
}

impl Checkout {
    fn new() -> Self {
        let folder = tempfile::tempdir().expect("temporary folder");
        let root = folder.path().join("ghx");
        let package = root.join("packages/benchmark");
        std::fs::create_dir_all(package.join("results")).expect("package folder");
        std::fs::write(root.join("pnpm-workspace.yaml"), "packages:\n  - packages/*\n").expect("workspace");
        let scripts = json!({
            "name": "@ghx-dev/benchmark",
            "private": true,
            "scripts": {
                "benchmark": "tsx src/cli/benchmark.ts run",
                "report": "tsx src/cli/report.ts",
                "fixtures": "tsx src/cli/fixtures.ts",
                "benchmark:verify:pr": "pnpm run verify:pr:direct && pnpm run verify:pr:ghx && pnpm run report -- --gate"
            }
        });
        let text = serde_json::to_string_pretty(&scripts).expect("JSON") + "\n";
        std::fs::write(package.join("package.json"), text).expect("package.json");
        let sample = repo_root().join("fixtures/ghx-bench");
        std::fs::copy(sample.join("scenario-sets.json"), package.join("scenario-sets.json")).expect("sets");
        for mode in ["agent_direct", "ghx"] {
            std::fs::copy(
                sample.join(format!("sample/{mode}-suite.jsonl")),
                package.join(format!("results/2026-02-16T23-10-45-123Z-{mode}-suite.jsonl")),
            )
            .expect("earlier results");
        }
        let checkout = Checkout { folder, root };
        let seeded =
            checkout.pnpm(&["run", "fixtures", "--", "seed", "--seed-id", "setup", "--out", "fixtures/latest.json"]);
        assert!(seeded.status.success(), "{}", String::from_utf8_lossy(&seeded.stderr));
        std::fs::remove_file(checkout.root.join(".standin/calls.jsonl")).expect("the setup's call log");
        assert!(!checkout.root.starts_with(repo_root()), "the checkout lies outside the project");
        checkout
    }

    fn standin() -> PathBuf {
        repo_root().join("tests/ghx-standin")
    }

    /// `pnpm --filter @ghx-dev/benchmark <args>` through the stand-in, in the checkout.
    fn pnpm(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new(Checkout::standin().join("pnpm"))
            .args(["--filter", "@ghx-dev/benchmark"])
            .args(args)
            .current_dir(&self.root)
            .output()
            .expect("run the stand-in pnpm")
    }

    fn faults(&self, faults: Value) -> &Self {
        std::fs::create_dir_all(self.root.join(".standin")).expect("stand-in folder");
        std::fs::write(self.root.join(".standin/faults.json"), faults.to_string()).expect("faults");
        self
    }

    /// Every file in the checkout, relative to it, but the stand-in's own log and state.
    fn files(&self) -> BTreeSet<String> {
        let relative = walk_files(&self.root)
            .into_iter()
            .map(|path| path.strip_prefix(&self.root).expect("inside").display().to_string());
        relative.filter(|path| !path.starts_with(".standin/")).collect()
    }

    /// Each call the package received, as `<script> <args>`.
    fn calls(&self) -> Vec<String> {
        self.call_log()
            .iter()
            .map(|call| {
                let args: Vec<&str> = call["args"].as_array().expect("args").iter().filter_map(Value::as_str).collect();
                format!("{} {}", call["script"].as_str().unwrap_or_default(), args.join(" "))
            })
            .collect()
    }

    fn call_log(&self) -> Vec<Value> {
        let log = std::fs::read_to_string(self.root.join(".standin/calls.jsonl")).unwrap_or_default();
        log.lines().map(|line| serde_json::from_str(line).expect("a call")).collect()
    }

    /// `host run scripts/<script>.rhai --scenario scenarios/verify_by_set_ghx.toml -- --provider
    /// openai --checkout <checkout> <args>` from the project, with the stand-in first on PATH.
    fn verify(&self, script: &str, args: &[&str]) -> Verified {
        let run_dir =
            self.folder.path().join(format!("run-{}", std::fs::read_dir(self.folder.path()).expect("folder").count()));
        let checkout = self.root.display().to_string();
        let out = run_dir.display().to_string();
        let script = format!("scripts/{script}.rhai");
        let mut all = vec!["run", &script, "--out", &out, "--scenario", "scenarios/verify_by_set_ghx.toml", "--"];
        all.extend(["--provider", "openai", "--checkout", &checkout]);
        all.extend(args);
        let path = format!("{}:{}", Checkout::standin().display(), std::env::var("PATH").unwrap_or_default());
        let env =
            [("PATH", Some(path.as_str())), ("GITHUB_TOKEN", Some(GITHUB_TOKEN)), ("OPENAI_API_KEY", Some(OPENAI_KEY))];
        let run = host_in_with(&repo_root(), &all, &env);
        Verified { run, dir: run_dir }
    }

    /// The seed's verification folder in the checkout.
    fn reports(&self) -> PathBuf {
        verification_folder(&self.root.join("packages/benchmark/reports"))
    }

    fn tracking(&self, set: &str) -> Value {
        read_json(&self.reports().join(set).join("tracking.json"))
    }
}

struct Verified {
    run: Run,
    dir: PathBuf,
}

/// Every file under `folder`, at any depth.
fn walk_files(folder: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).expect("folder").flatten() {
        let path = entry.path();
        if path.is_dir() { found.extend(walk_files(&path)) } else { found.push(path) }
    }
    found
}

fn attempts(tracking: &Value) -> Vec<(i64, String)> {
    let reruns = tracking["reruns"].as_array().expect("reruns");
    reruns
        .iter()
        .map(|rerun| (rerun["attempt"].as_i64().unwrap_or(-1), rerun["result"].as_str().unwrap_or_default().into()))
        .collect()
}

#[test]
fn the_readme_command_with_only_a_checkout_verifies_nine_sets_into_the_checkout() {
    let checkout = Checkout::new();
    let before = checkout.files();
    let verified = checkout.verify("verify_all_sets", &[]);
    verified.run.expect_code(0);

    let reports = checkout.reports();
    let base = reports.strip_prefix(&checkout.root).expect("inside the checkout").display().to_string();
    assert!(
        base.starts_with("packages/benchmark/reports/verification-") && base.ends_with("-gpt-5.1-codex-mini-by-set")
    );
    for set in NINE_SETS {
        let tracking = checkout.tracking(set);
        assert_eq!(tracking["final_status"], "pass", "{set}");
        for file in
            ["agent_direct-suite.jsonl", "ghx-suite.jsonl", "latest-summary.json", "latest-summary.md", "tracking.json"]
        {
            assert!(reports.join(set).join(file).is_file(), "{set}/{file}");
        }
        let copy = read_json(
            &verified.dir.join(base.replace("packages/benchmark/reports/", "")).join(set).join("tracking.json"),
        );
        assert_eq!(copy, tracking, "the run directory keeps a copy of {set}'s tracking.json");
    }
    assert_eq!(read_json(&reports.join("summary.json"))["sets_passed"], 9);

    // Only the verification folder was written; cleanup removed the preflight's manifest.
    let after = checkout.files();
    let added: Vec<&String> = after.difference(&before).collect();
    let removed: Vec<&String> = before.difference(&after).collect();
    assert!(added.iter().all(|path| path.starts_with(&format!("{base}/"))), "written elsewhere: {added:?}");
    assert_eq!(removed, ["packages/benchmark/fixtures/latest.json"]);

    let calls = checkout.calls();
    let count = |prefix: &str| calls.iter().filter(|call| call.starts_with(prefix)).count();
    assert_eq!(count("fixtures -- status"), 1, "preflight runs exactly once: {calls:?}");
    assert_eq!(count("fixtures -- cleanup"), 1, "cleanup runs once");
    let seeded: Vec<&String> = calls.iter().filter(|call| call.starts_with("fixtures -- seed")).collect();
    assert_eq!(seeded.len(), 7, "{seeded:?}");
    assert!(!seeded.iter().any(|call| call.contains("-ci-diagnostics-seed") || call.contains("-ci-log-analysis-seed")));
    assert_eq!(count("benchmark -- "), 18, "nine sets in two modes, no reruns");

    // The credentials reached every command and no record of the run.
    assert!(
        checkout.call_log().iter().all(|call| call["env"].to_string().contains("GITHUB_TOKEN")
            && call["env"].to_string().contains("OPENAI_API_KEY"))
    );
    let benchmarks = checkout.call_log().into_iter().filter(|call| call["script"] == "benchmark");
    assert!(benchmarks.into_iter().all(|call| call["env"].to_string().contains("BENCH_FIXTURE_MANIFEST")));
    for file in walk_files(&verified.dir).into_iter().chain(walk_files(&reports)) {
        let bytes = std::fs::read(&file).expect("a file the run wrote");
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(GITHUB_TOKEN) && !text.contains(OPENAI_KEY), "a credential in {}", file.display());
    }

    let manifest = read_json(&verified.dir.join("manifest.json"));
    let exports = manifest["exports"].as_array().expect("the manifest lists the export folder");
    assert_eq!(exports.len(), 1);
    assert_eq!(exports[0]["folder"].as_str().map(PathBuf::from), Some(reports.canonicalize().expect("reports")));
    let files = exports[0]["files"].as_array().expect("files");
    assert!(files.contains(&json!("pr-exec/tracking.json")) && files.contains(&json!("summary.md")), "{files:?}");
    assert!(verified.run.stderr.contains(&format!("to `{}`", reports.canonicalize().expect("reports").display())));
    let sets = duckdb(&format!(
        "SELECT count(*) FILTER (final_status = 'pass') FROM '{}/sets.parquet'",
        verified.dir.display()
    ));
    assert_eq!(sets["rows"][0][0], 9);
}

#[test]
fn a_scenario_failing_once_recovers_and_one_failing_always_stops_the_driver_after_two_reruns() {
    let checkout = Checkout::new();
    checkout.faults(json!({"inject": "pr-merge-execute-001=fail-once,pr-comment-reply-001=fail-always"}));
    let verified = checkout.verify("verify_all_sets", &[]);
    verified.run.expect_code(1);

    let recovered = checkout.tracking("pr-exec");
    assert_eq!(recovered["final_status"], "pass");
    assert_eq!(attempts(&recovered), [(1, "fail".into()), (2, "pass".into())]);
    assert_eq!(recovered["reruns"][1]["scenario_ids"], json!(["pr-merge-execute-001"]));

    let stopped = checkout.tracking("pr-thread-mutations");
    assert_eq!(stopped["final_status"], "terminal_fail");
    assert_eq!(attempts(&stopped), [(1, "fail".into()), (2, "fail".into()), (3, "fail".into())]);
    assert_eq!(stopped["failing_scenarios"], json!(["pr-comment-reply-001"]));
    assert!(!checkout.reports().join("issues").exists(), "the driver went on after a terminal failure");
    let calls = checkout.calls();
    assert!(!calls.iter().any(|call| call.contains("--scenario-set issues")), "{calls:?}");
    assert!(!calls.iter().any(|call| call.starts_with("fixtures -- cleanup")), "no cleanup after a stop unless asked");
    let problems: Vec<&str> =
        stopped["problems"].as_array().expect("problems").iter().filter_map(Value::as_str).collect();
    assert!(
        problems.iter().any(|problem| problem.starts_with(
            "set pr-thread-mutations: agent_direct-suite.jsonl row 1 (pr-comment-reply-001): field \"success\" is false"
        )),
        "set, file, row and field named: {problems:?}"
    );
}

#[test]
fn a_mode_with_zero_rows_and_a_mode_with_a_row_too_many_are_terminal() {
    for (faults, message) in [
        (json!({"zero_rows": "ghx"}), "ghx-suite.jsonl has no rows (zero rows is terminal)"),
        (
            json!({"extra_row": "agent_direct"}),
            "agent_direct-suite.jsonl has 2 rows, expected 1 (a row too many is terminal)",
        ),
    ] {
        let checkout = Checkout::new();
        checkout.faults(faults);
        let verified = checkout.verify("verify_set", &["--set", "ci-log-analysis"]);
        verified.run.expect_code(1);
        let tracking = checkout.tracking("ci-log-analysis");
        assert_eq!(tracking["final_status"], "terminal_fail");
        assert_eq!(attempts(&tracking), [(1, "fail".into())], "no rerun can mend it");
        assert_eq!(tracking["blocked_by"], format!("attempt 1: {message}"));
    }
}

#[test]
fn a_report_that_ignores_summary_json_fails_the_prerequisite_gate_before_any_set_runs() {
    let checkout = Checkout::new();
    checkout.faults(json!({"report_ignores_summary_json": true}));
    let verified = checkout.verify("verify_all_sets", &[]);
    verified.run.expect_code(1);
    let calls = checkout.calls();
    assert_eq!(calls.len(), 1, "only the gate's report ran: {calls:?}");
    assert!(calls[0].starts_with("report -- --gate --gate-profile verify_pr --summary-json "), "{calls:?}");
    let gate_path = verified.dir.join("_run/prerequisite-summary.json");
    assert!(
        verified.run.stderr.contains(&format!(
            "check failed: the report writes --summary-json and --summary-md (prerequisite gate): the report exited 0 but did not write --summary-json {}",
            gate_path.display()
        )),
        "{}",
        verified.run.stderr
    );
    assert!(!checkout.reports().join("pr-exec").exists());
}

#[test]
fn a_preflight_that_leaves_no_manifest_stops_the_run_before_set_one_naming_the_file() {
    let checkout = Checkout::new();
    std::fs::write(checkout.root.join("packages/benchmark/fixtures/latest.json"), "{ not json").expect("spoil it");
    checkout.faults(json!({"status_exits_0": true}));
    let verified = checkout.verify("verify_all_sets", &[]);
    verified.run.expect_code(1);
    let manifest = checkout.root.canonicalize().expect("checkout").join("packages/benchmark/fixtures/latest.json");
    let expected = format!(
        "fixture preflight (once, before the first set): preflight: the fixture manifest {} cannot be read as JSON",
        manifest.display()
    );
    assert!(verified.run.stderr.contains(&expected), "{}", verified.run.stderr);
    assert!(!checkout.calls().iter().any(|call| call.starts_with("benchmark") || call.contains(" seed ")));
}

#[test]
fn paths_outside_every_root_are_refused_naming_the_flag_that_grants_them() {
    let checkout = Checkout::new();
    // The shipped scenario without --checkout: its sets file is the checkout's.
    let path = format!("{}:{}", Checkout::standin().display(), std::env::var("PATH").unwrap_or_default());
    let run = host_in_with(
        &repo_root(),
        &[
            "run",
            "scripts/verify_all_sets.rhai",
            "--out",
            &checkout.folder.path().join("bare").display().to_string(),
            "--scenario",
            "scenarios/verify_by_set_ghx.toml",
            "--",
            "--provider",
            "openai",
        ],
        &[("PATH", Some(&path))],
    );
    run.expect_code(2);
    assert!(run.stderr.contains("hint: give the ghx repository with --checkout DIR"), "{}", run.stderr);

    // An --out-dir that climbs out of the checkout.
    let outside = checkout.verify("verify_set", &["--set", "ci-log-analysis", "--out-dir", "../elsewhere"]);
    outside.run.expect_code(2);
    assert!(outside.run.stderr.contains("is not under a folder given on the command line"), "{}", outside.run.stderr);
    assert!(outside.run.stderr.contains("`--checkout DIR`"), "{}", outside.run.stderr);
    assert!(!checkout.folder.path().join("elsewhere").exists());
}

#[test]
fn the_package_scripts_are_printed_and_written_into_the_checkout_untouched_otherwise() {
    let checkout = Checkout::new();
    let package_json = checkout.root.join("packages/benchmark/package.json");
    let before = std::fs::read_to_string(&package_json).expect("package.json");
    let root = checkout.root.display().to_string();
    let out = checkout.folder.path().join("scripts-run").display().to_string();
    let printed = host_in_with(
        &repo_root(),
        &["run", "scripts/verify_package_scripts.rhai", "--out", &out, "--", "--checkout", &root],
        &[],
    );
    printed.expect_code(0);
    assert!(printed.stderr.contains("\"verify:set\": \"host run "), "{}", printed.stderr);
    assert!(printed.stderr.contains("verify_all_sets.rhai --scenario "), "{}", printed.stderr);
    assert_eq!(std::fs::read_to_string(&package_json).expect("package.json"), before, "printing writes nothing");

    let out = checkout.folder.path().join("scripts-write").display().to_string();
    let written = host_in_with(
        &repo_root(),
        &["run", "scripts/verify_package_scripts.rhai", "--out", &out, "--", "--checkout", &root, "--write"],
        &[],
    );
    written.expect_code(0);
    let after = std::fs::read_to_string(&package_json).expect("package.json");
    let parsed: Value = serde_json::from_str(&after).expect("still JSON");
    let line = parsed["scripts"]["verify:set"].as_str().expect("verify:set");
    assert!(line.ends_with("/scenarios/verify_by_set_ghx.toml -- --checkout ../.."), "{line}");
    assert!(parsed["scripts"]["verify:mini:by-set"].as_str().is_some_and(|line| line.contains("verify_all_sets.rhai")));
    assert_eq!(parsed["scripts"]["benchmark"], "tsx src/cli/benchmark.ts run");
    let kept: Vec<&str> = before.lines().collect();
    let lines: Vec<&str> = after.lines().filter(|line| !line.contains("\"verify:")).collect();
    assert_eq!(lines, kept, "every other line is as it was");

    // The seed's own command, in the checkout, with host on PATH.
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_host"));
    let path = format!(
        "{}:{}:{}",
        binary.parent().expect("the binary's folder").display(),
        Checkout::standin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let seed_command = std::process::Command::new(Checkout::standin().join("pnpm"))
        .args([
            "--filter",
            "@ghx-dev/benchmark",
            "run",
            "verify:set",
            "--",
            "--set",
            "ci-log-analysis",
            "--provider",
            "openai",
        ])
        .current_dir(&checkout.root)
        .env("PATH", path)
        .env("CI", "1")
        .output()
        .expect("run pnpm");
    let stderr = String::from_utf8_lossy(&seed_command.stderr);
    // The run went to the project's runs/ folder: read what it says, then remove it.
    let run_dir =
        stderr.lines().find_map(|line| line.strip_prefix("run ok in ").and_then(|rest| rest.split(" -> ").nth(1)));
    if let Some(dir) = run_dir {
        let _ = std::fs::remove_dir_all(dir.trim());
    }
    assert!(seed_command.status.success(), "{stderr}");
    assert_eq!(checkout.tracking("ci-log-analysis")["final_status"], "pass");
}
