//! `host run --shard I/N`, `host merge` and `host report`: a benchmark run as shards and merged
//! gives the tables and report of one run, and a run reported again from its tables gives its own;
//! runs that do not belong together are refused, naming the difference.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::support::{TempProject, duckdb, host_in_with, repo_root, stable, unpadded};

/// What changes between two runs of the same work: timings (latencies, durations in ms, the
/// agent's seconds).
fn is_timing(key: &str) -> bool {
    ["latency", "Latency", "_ms", "Ms", "agent_s_"].iter().any(|word| key.contains(word)) || key == "timestamp"
}

/// `script` run whole, and as 3 shards merged, with `extra` script arguments; the two run
/// directories.
fn whole_and_merged(dir: &Path, script: &str, extra: &[&str]) -> (PathBuf, PathBuf) {
    let no_keys =
        [("LLM_API_KEY", None), ("ANTHROPIC_API_KEY", None), ("ANTHROPIC_BASE_URL", None), ("CORTEX_BASE_URL", None)];
    let run = |out: &Path, host_args: &[&str]| {
        let out = out.display().to_string();
        let mut args = vec!["run", script, "--out", &out];
        args.extend_from_slice(host_args);
        args.push("--");
        args.extend_from_slice(extra);
        host_in_with(&repo_root(), &args, &no_keys).expect_code(0);
    };
    let whole = dir.join("whole");
    run(&whole, &[]);
    let shards: Vec<PathBuf> = (1..=3).map(|index| dir.join(format!("shard-{index}"))).collect();
    for (index, shard) in shards.iter().enumerate() {
        run(shard, &["--shard", &format!("{}/3", index + 1)]);
    }
    let merged = dir.join("merged");
    let mut args = vec!["merge".to_owned()];
    // Given out of order: the merge orders shards by their index.
    args.extend(shards.iter().rev().map(|shard| shard.display().to_string()));
    args.extend(["--out".to_owned(), merged.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    host_in_with(&repo_root(), &args, &no_keys).expect_code(0);
    (whole, merged)
}

/// Every table of a run as DuckDB reads it, rows in file order, `run_id` and timings left out
/// (the `value` of a summary row whose metric is a timing too), and the ports of loopback
/// servers (the system's pick) masked.
fn tables(run: &Path) -> BTreeMap<String, Vec<Value>> {
    let port = regex_lite::Regex::new(r"127\.0\.0\.1:\d+").expect("a valid pattern");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).expect("manifest")).expect("json");
    let mut tables = BTreeMap::new();
    for table in manifest["tables"].as_array().expect("tables") {
        let name = table["name"].as_str().expect("a name");
        let result =
            duckdb(&format!("SELECT * EXCLUDE (run_id) FROM '{}'", run.join(format!("{name}.parquet")).display()));
        let columns: Vec<String> = result["columns"]
            .as_array()
            .expect("columns")
            .iter()
            .map(|column| column[0].as_str().expect("a name").to_owned())
            .collect();
        let rows = result["rows"].as_array().expect("rows").iter().map(|row| {
            let mut object = Map::new();
            for (column, value) in columns.iter().zip(row.as_array().expect("a row")) {
                let value = match value {
                    _ if is_timing(column) => Value::Null,
                    Value::String(text) => Value::String(port.replace_all(text, "127.0.0.1:[PORT]").into_owned()),
                    _ => value.clone(),
                };
                object.insert(column.clone(), value);
            }
            if object.get("metric").and_then(Value::as_str).is_some_and(is_timing) {
                object.insert("value".into(), Value::Null);
            }
            Value::Object(object)
        });
        tables.insert(name.to_owned(), rows.collect());
    }
    tables
}

/// A run's report.md, as [`masked`].
fn report(run: &Path, project: &Path) -> String {
    masked(&run.join("report.md"), project)
}

/// A text file with run ids, times and timings masked, and table padding (which follows the
/// timings' widths) taken out.
fn masked(path: &Path, project: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a text file the run wrote");
    let timing = regex_lite::Regex::new(r"\d+(\.\d+)?( / \d+(\.\d+)?)? ms").expect("a valid pattern");
    unpadded(&timing.replace_all(&stable(&text, project), "[MS]"))
}

/// A JSON file with timings masked at any depth.
fn json_without_timings(path: &Path) -> Value {
    fn mask(value: &mut Value) {
        match value {
            Value::Object(object) => {
                for (key, value) in object.iter_mut() {
                    if is_timing(key) { *value = Value::Null } else { mask(value) }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(mask),
            _ => {}
        }
    }
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("a JSON file")).expect("json");
    mask(&mut value);
    value
}

/// The tables of `merged` are those of `whole`, row for row, but for the tables `apart`.
pub(crate) fn assert_same_tables(whole: &Path, merged: &Path, apart: &[&str]) {
    let (mut expected, mut found) = (tables(whole), tables(merged));
    for name in apart {
        assert!(expected.remove(*name).is_some() && found.remove(*name).is_some(), "both runs have table {name}");
    }
    assert_eq!(found.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "the same tables");
    for (name, rows) in &expected {
        assert!(!rows.is_empty() || name == "checks", "table {name} has rows to compare");
        let merged = &found[name];
        assert_eq!(merged.len(), rows.len(), "table {name}: rows");
        if let Some(at) = rows.iter().zip(merged).position(|(a, b)| a != b) {
            assert_eq!(merged[at], rows[at], "table {name}, row {}: merged (left), one run (right)", at + 1);
        }
    }
}

#[test]
fn the_cortex_benchmark_as_three_shards_merged_gives_the_tables_report_and_results_of_one_run() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (whole, merged) = whole_and_merged(dir.path(), "scripts/cortex_v11.rhai", &[]);
    assert_same_tables(&whole, &merged, &[]);
    assert_eq!(report(&merged, dir.path()), report(&whole, dir.path()));
    assert_eq!(json_without_timings(&merged.join("results.json")), json_without_timings(&whole.join("results.json")));

    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(merged.join("manifest.json")).expect("manifest")).expect("json");
    let shards: Vec<&str> = manifest["merged_from"]["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|run| run["dir"].as_str().unwrap_or(""))
        .collect();
    assert!(shards[0].ends_with("shard-1") && shards[2].ends_with("shard-3"), "in shard order: {shards:?}");
    assert_eq!(manifest["report_phase"]["tables"], serde_json::json!(["summary"]));
    let answers = duckdb(&format!("SELECT count(DISTINCT run_id) FROM '{}'", merged.join("answers.parquet").display()));
    assert_eq!(answers["rows"], serde_json::json!([[3]]), "each row keeps the shard run that wrote it");

    // `host report` of the whole run reports it again from its tables alone.
    let again = dir.path().join("again");
    let args = ["report", &whole.display().to_string(), "--out", &again.display().to_string()].map(String::from);
    host_in_with(&repo_root(), &args.each_ref().map(String::as_str), &[]).expect_code(0);
    assert_same_tables(&whole, &again, &[]);
    assert_eq!(report(&again, dir.path()), report(&whole, dir.path()));
}

#[test]
fn the_memory_hook_benchmark_as_three_shards_merged_gives_the_tables_and_report_of_one_run() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let docs = crate::memory_hook::docs(dir.path()).display().to_string();
    let (whole, merged) = whole_and_merged(dir.path(), "scripts/memory_hook.rhai", &["--docs", &docs]);
    assert_same_tables(&whole, &merged, &[]);
    assert_eq!(report(&merged, dir.path()), report(&whole, dir.path()));
}

#[test]
fn the_locomo_benchmark_as_three_shards_merged_gives_the_tables_and_report_of_one_run() {
    // Two conversations in three shards: one shard has none and writes no answers.
    let dir = tempfile::tempdir().expect("temporary directory");
    let (whole, merged) = whole_and_merged(dir.path(), "scripts/locomo.rhai", &["--providers", "bm25,cortex-local"]);
    assert_same_tables(&whole, &merged, &[]);
    assert_eq!(report(&merged, dir.path()), report(&whole, dir.path()));
}

#[test]
fn a_locomo_run_resumed_from_one_that_stopped_early_keeps_its_conversations_and_ends_as_one_run() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let out_text = out.display().to_string();
        let mut args = vec!["run", "scripts/locomo.rhai", "--out", &out_text, "--", "--providers", "bm25,cortex-local"];
        args.extend_from_slice(extra);
        host_in_with(&repo_root(), &args, &[("LLM_API_KEY", None)]).expect_code(0);
        out
    };
    let stopped = run("stopped", &["--conversations", "1"]);
    let stopped_text = stopped.display().to_string();
    let resumed = run("resumed", &["--resume", &stopped_text]);
    let whole = run("whole", &[]);
    assert_same_tables(&whole, &resumed, &[]);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(resumed.join("manifest.json")).expect("manifest")).expect("json");
    assert_eq!(manifest["settings"]["resumed"]["kept"], serde_json::json!(["sample-1"]));
    assert_eq!(manifest["settings"]["resumed"]["redone"], serde_json::json!(["sample-2"]));

    // Another setup's conversations are not taken over.
    let other = dir.path().join("other").display().to_string();
    let refused = host_in_with(
        &repo_root(),
        &["run", "scripts/locomo.rhai", "--out", &other, "--", "--providers", "bm25", "--resume", &stopped_text],
        &[("LLM_API_KEY", None)],
    );
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("was made with providers"), "{}", refused.stderr);
}

#[test]
fn a_locomo_run_killed_mid_conversation_is_listed_as_killed_and_resumes_from_its_last_step_to_the_tables_of_one_run() {
    // bm25 answers at once; the example provider answers each search after 0.4 s, so each
    // conversation's 12 questions take about 5 s: time to kill the run once bm25 has finished
    // the second conversation and the slow provider is still searching it.
    let dir = tempfile::tempdir().expect("temporary directory");
    let provider = [
        "--providers",
        "bm25,external:scripts/examples/locomo_provider.py",
        "--provider-args=--fail slow --delay-s 0.4",
    ];
    let killed = dir.path().join("killed");
    let killed_text = killed.display().to_string();
    let mut args = vec!["run", "scripts/locomo.rhai", "--out", &killed_text, "--"];
    args.extend_from_slice(&provider);
    let mut child = crate::support::host_command(&repo_root(), &args, &[("LLM_API_KEY", None)])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start host");
    // bm25's step file is written when it has searched, and again when it has answered.
    let bm25_step = killed.join("steps/sample-2/0.json");
    let answered = || {
        std::fs::read_to_string(&bm25_step)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|step| step["answers"].is_array())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !answered() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(answered(), "bm25 answered the second conversation within two minutes");
    child.kill().expect("SIGKILL the run");
    child.wait().expect("reap the run");
    assert!(killed.join("conversations/sample-1.json").exists(), "the first conversation was saved whole");
    assert!(!killed.join("steps/sample-2/1.json").exists(), "killed while the slow provider searched the second");

    let listed = host_in_with(&repo_root(), &["runs", &killed_text], &[]);
    assert!(listed.stdout.contains("killed"), "{}", listed.stdout);

    let run = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let out_text = out.display().to_string();
        let mut args = vec!["run", "scripts/locomo.rhai", "--out", &out_text, "--"];
        args.extend_from_slice(&provider);
        args.extend_from_slice(extra);
        host_in_with(&repo_root(), &args, &[("LLM_API_KEY", None)]).expect_code(0);
        out
    };
    let resumed = run("resumed", &["--resume", &killed_text]);
    let whole = run("whole", &[]);
    // The provider program (on another port) and the calls to it differ: the resumed run asked it
    // only what it did again.
    assert_same_tables(&whole, &resumed, &["http_calls", "proc_calls"]);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(resumed.join("manifest.json")).expect("manifest")).expect("json");
    assert_eq!(manifest["settings"]["resumed"]["kept"], serde_json::json!(["sample-1"]));
    assert_eq!(manifest["settings"]["resumed"]["steps"], serde_json::json!(["sample-2 / bm25: answered"]));
}

#[test]
fn the_cortex_v1_benchmark_as_three_shards_merged_gives_the_tables_report_and_results_of_one_run_trial_by_trial() {
    let dir = tempfile::tempdir().expect("temporary directory");
    // Two trials: each shard writes a prompt's answers of every trial together, so that the
    // shards' rows joined are one run's rows.
    let (whole, merged) = whole_and_merged(dir.path(), "scripts/cortex_v1.rhai", &["--trials", "2"]);
    assert_same_tables(&whole, &merged, &[]);
    assert_eq!(report(&merged, dir.path()), report(&whole, dir.path()));
    assert_eq!(json_without_timings(&merged.join("results.json")), json_without_timings(&whole.join("results.json")));
}

#[test]
fn the_agent_benchmark_as_three_shards_merged_gives_the_tables_report_and_results_of_one_run() {
    use crate::memory_hook_bench::{PROMPT, SOLUTION, bench_args, evals, write_eval};
    let dir = tempfile::tempdir().expect("temporary directory");
    // Two evals, one that passes and one whose EVAL.ts fails, under two configs: four pairs.
    let evals = evals(dir.path());
    write_eval(&evals, "t-002-wrong-tag", PROMPT, &SOLUTION.replace("'posts'", "'post'"), "");
    let mut args = bench_args(&evals);
    args.extend(["--configs".to_owned(), "baseline,agents-md".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (whole, merged) = whole_and_merged(dir.path(), "scripts/memory_hook_bench.rhai", &args);
    // `proc_calls` logs the programs the pairs ran, in workspaces named after their run, in the
    // order they ended (two pairs run side by side): it is no run's result to compare.
    assert_same_tables(&whole, &merged, &["proc_calls"]);
    assert_eq!(report(&merged, dir.path()), report(&whole, dir.path()));
    // Each run's results.json names the run it is.
    let results = |run: &Path| {
        let mut results = json_without_timings(&run.join("results.json"));
        results["meta"]["runId"] = Value::Null;
        results
    };
    assert_eq!(results(&merged), results(&whole));
}

#[test]
fn the_cortex_v2_benchmark_as_three_shards_merged_gives_the_tables_and_report_of_one_run_measurements_apart() {
    let dir = tempfile::tempdir().expect("temporary directory");
    // The four latency states, a gateway each, one warm turn each.
    let args = ["--quick", "--phases", "latency", "--turns", "1"];
    let (whole, merged) = whole_and_merged(dir.path(), "scripts/cortex_v2.rhai", &args);
    // The meter samples each gateway every interval: how many samples a gateway has is a timing.
    // Each shard copies the plugins into its own run directory (`proc_calls`), where its gateways'
    // plugin configs point: the rest of a gateway's row is compared.
    assert_same_tables(&whole, &merged, &["samples", "gateways", "proc_calls"]);
    let gateways = |run: &Path| {
        duckdb(&format!("SELECT gateway, phase, state, plugin FROM '{}'", run.join("gateways.parquet").display()))["rows"]
            .clone()
    };
    assert_eq!(gateways(&merged), gateways(&whole));
    // Every number of this report is a measurement of the machine (latencies, starts).
    let measurements = |run: &Path| {
        let number = regex_lite::Regex::new(r"\d+(\.\d+)?").expect("a valid pattern");
        unpadded(&number.replace_all(&report(run, dir.path()), "[N]"))
    };
    assert_eq!(measurements(&merged), measurements(&whole));
}

#[test]
fn the_set_by_set_verification_as_three_shards_merged_gives_the_tables_summary_and_checks_of_one_run() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (whole, merged) = whole_and_merged(dir.path(), "scripts/verify_all_sets.rhai", &["--provider", "openai"]);
    // Each shard runs the gate, the preflight and the cleanup of its own fixtures, as programs
    // given its own run directory: `proc_calls` is the one table a merge does not make alike.
    assert_same_tables(&whole, &merged, &["proc_calls"]);
    let base = |run: &Path| {
        let found = std::fs::read_dir(run).expect("a run directory").flatten().map(|entry| entry.path());
        found.into_iter().find(|path| path.to_string_lossy().contains("verification-")).expect("the sets' folder")
    };
    for file in ["summary.md", "summary.json"] {
        assert_eq!(
            masked(&base(&merged).join(file), dir.path()),
            masked(&base(&whole).join(file), dir.path()),
            "{file}"
        );
    }
    let checks = |run: &Path| {
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).expect("manifest")).expect("json");
        manifest["checks"].clone()
    };
    assert_eq!(checks(&merged), checks(&whole));
    assert_eq!(checks(&whole).as_array().map(Vec::len), Some(12), "the gate, the preflight, 9 sets and the cleanup");
}

#[test]
fn a_set_that_fails_in_one_shard_fails_the_merged_verification() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let args = [
        "--provider",
        "openai",
        "--sets",
        "pr-thread-mutations,ci-log-analysis",
        "--inject",
        "pr-comment-reply-001=fail-always",
    ];
    for (index, code) in [(1, 1), (2, 0)] {
        let out = dir.path().join(format!("shard-{index}")).display().to_string();
        let shard = format!("{index}/2");
        let mut run = vec!["run", "scripts/verify_all_sets.rhai", "--shard", &shard, "--out", &out, "--"];
        run.extend(args);
        host_in_with(&repo_root(), &run, &[]).expect_code(code);
    }
    let [first, second, merged] =
        ["shard-1", "shard-2", "merged"].map(|name| dir.path().join(name).display().to_string());
    let merge = host_in_with(&repo_root(), &["merge", &first, &second, "--out", &merged], &[]);
    merge.expect_code(1);
    assert!(
        merge.stderr.contains("check failed: set pr-thread-mutations passes blocking validation"),
        "{}",
        merge.stderr
    );
}

/// A project whose script splits 5 items, writes a row per item and reports their sum.
fn squares() -> TempProject {
    let project = TempProject::new();
    project.write(
        "scripts/squares.rhai",
        r#"
let items = [1, 2, 3, 4, 5];
if !run::reporting() {
    for n in run::shard(items) { results::append("squares", #{ n: n, square: n * n }); }
} else { run::shard(items); }
let rows = results::rows("squares");
results::write_markdown("report.md", `sum ${rows.reduce(|sum, r| sum + r.square, 0)} of ${rows.len()}`);
"#,
    );
    project
}

fn shard(project: &TempProject, name: &str, shard: &str, extra: &[&str]) {
    let mut args = vec!["run", "scripts/squares.rhai", "--shard", shard, "--out", name, "--"];
    args.extend_from_slice(extra);
    project.host(&args).expect_code(0);
}

#[test]
fn a_merge_refuses_runs_that_do_not_belong_together_naming_the_difference() {
    let project = squares();
    shard(&project, "s1", "1/3", &[]);
    shard(&project, "s2", "2/3", &[]);
    shard(&project, "s3", "3/3", &[]);
    shard(&project, "other", "2/3", &["--label", "x"]);
    project.host(&["run", "scripts/squares.rhai", "--out", "whole"]).expect_code(0);
    let refused = |args: &[&str]| project.host(args).expect_code(2).stderr.clone();

    assert!(refused(&["merge", "s1", "s3"]).contains("shard 2/3 missing"));
    assert!(refused(&["merge", "s1", "s2", "s2", "s3"]).contains("shard 2/3 is given twice"));
    assert!(refused(&["merge", "s1", "other", "s3"]).contains("the shards ran different script arguments"));
    assert!(refused(&["merge", "whole"]).contains("was not run with `--shard I/N`"));
    project.write("scripts/squares.rhai", &format!("{}\n// changed\n", project.read("scripts/squares.rhai")));
    assert!(
        refused(&["merge", "s1", "s2", "s3"])
            .contains("`scripts/squares.rhai` changed since the runs being reported ran")
    );
}

#[test]
fn a_merged_run_reports_every_unit_and_a_report_phase_may_not_write_the_shards_tables() {
    let project = squares();
    for index in 1..=3 {
        shard(&project, &format!("s{index}"), &format!("{index}/3"), &[]);
    }
    assert_eq!(project.read("s2/report.md"), "sum 25 of 2", "shard 2 of 3 took items 3 and 4");
    project.host(&["merge", "s1", "s2", "s3", "--out", "merged"]).expect_code(0);
    assert_eq!(project.read("merged/report.md"), "sum 55 of 5");
    project.host(&["report", "s2", "--out", "s2-again"]).expect_code(0);
    assert_eq!(project.read("s2-again/report.md"), "sum 25 of 2", "a shard reported alone is that shard");
    project.host(&["report", "merged", "--out", "merged-again"]).expect_code(0);
    assert_eq!(project.read("merged-again/report.md"), "sum 55 of 5");

    // A script that runs its work in the report too writes into the shards' table: refused.
    project.write(
        "scripts/squares.rhai",
        &project.read("scripts/squares.rhai").replace("if !run::reporting()", "if true"),
    );
    for index in 1..=3 {
        shard(&project, &format!("t{index}"), &format!("{index}/3"), &[]);
    }
    let stderr = project.host(&["merge", "t1", "t2", "t3"]).expect_code(2).stderr.clone();
    assert!(stderr.contains("table `squares` holds the rows of the runs being reported"), "{stderr}");
}
