//! The main job, `host run scripts/cortex_v11.rhai`: offline by default, deterministic, every
//! reported number a Parquet row; and the same script against loopback LLM and Cortex servers.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{TempProject, duckdb, host_in, host_in_with, repo_root, table};

fn offline_run(out: &Path, extra: &[&str]) -> PathBuf {
    crate::support::offline_run("scripts/cortex_v11.rhai", out, extra)
}

/// The report's overall-mean row: OpenClaw, + Cortex, budget control.
fn overall_row(report: &str) -> Vec<String> {
    let line = report.lines().find(|line| line.starts_with("| **Overall mean**")).expect("an overall row");
    line.split('|').map(str::trim).filter(|cell| !cell.is_empty()).skip(1).take(3).map(String::from).collect()
}

/// The report with the latency table's timings masked, and that table's padding (which follows
/// the timings' widths) collapsed.
fn without_latencies(report: &str) -> String {
    let latency = regex_lite::Regex::new(r"\d+\.\d ms").expect("a valid pattern");
    let mut in_latencies = false;
    let mut out = String::new();
    for line in report.lines() {
        if line.starts_with("## ") {
            in_latencies = line == "## Cortex retrieval latency";
        }
        let line = if in_latencies && line.starts_with('|') {
            crate::support::unpadded(&latency.replace_all(line, "[LATENCY] ms"))
        } else {
            line.to_string()
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn the_offline_run_reports_both_conditions_and_the_control_from_summary_rows_and_is_deterministic() {
    let first_out = tempfile::tempdir().expect("temporary directory");
    let first = offline_run(first_out.path(), &[]);
    let report = std::fs::read_to_string(first.join("report.md")).expect("report.md");
    for heading in [
        "## Scores by category",
        "## Paired per-prompt differences",
        "## Score distribution",
        "## Retrieval hit rate",
        "## Cortex retrieval latency",
    ] {
        assert!(report.contains(heading), "report lacks {heading}:\n{report}");
    }
    assert!(report.contains("answerer `builtin`"), "the report names each role's backend");
    // The offline report is deterministic but for latencies: a change to any number shows in review.
    insta::assert_snapshot!("offline_report", without_latencies(&crate::support::stable(&report, first_out.path())));

    // The local Cortex records every knob it ran with, defaults included.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(first.join("manifest.json")).expect("manifest.json"))
            .expect("JSON");
    let knobs = &manifest["settings"]["cortex_local"];
    assert_eq!((knobs["rrf_k"].as_i64(), knobs["top_k"].as_i64()), (Some(60), Some(8)), "{knobs}");

    // Every number in the overall row is a summary row, printed to 2 decimals.
    let means = duckdb(&format!(
        "SELECT condition, printf('%.2f', value), n FROM '{}' WHERE metric = 'mean_score' AND category = 'all' AND trial = 0 ORDER BY condition",
        table(&first, "summary")
    ));
    let by_condition: std::collections::HashMap<String, String> = means["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| (row[0].as_str().expect("condition").to_string(), row[1].as_str().expect("value").to_string()))
        .collect();
    let shown = overall_row(&report);
    assert_eq!(
        shown,
        vec![
            by_condition["openclaw"].clone(),
            by_condition["openclaw+cortex"].clone(),
            by_condition["openclaw-budget"].clone()
        ]
    );

    // The per-prompt table shows each prompt's judged score in every condition.
    let f03 = duckdb(&format!(
        "SELECT list(printf('%.2f', score::DOUBLE) ORDER BY CASE condition WHEN 'openclaw' THEN 0 WHEN 'openclaw+cortex' THEN 1 ELSE 2 END) FROM '{}' WHERE prompt = 'F03'",
        table(&first, "judgments")
    ));
    let cells = f03["rows"][0][0]
        .as_array()
        .expect("scores")
        .iter()
        .map(|score| score.as_str().expect("text").to_string())
        .collect::<Vec<_>>();
    let row = format!("| F03 | F | {} |", cells.join(" | "));
    assert!(crate::support::unpadded(&report).contains(&row), "no per-prompt row {row}");

    let counts = duckdb(&format!(
        "SELECT (SELECT count(*) FROM '{}'), (SELECT count(*) FROM '{}'), (SELECT count(*) FROM '{}'), (SELECT count(*) FROM '{}'), (SELECT count(DISTINCT prompt) FROM '{}' WHERE system = 'cortex')",
        table(&first, "prompts"),
        table(&first, "answers"),
        table(&first, "judgments"),
        table(&first, "cortex_calls"),
        table(&first, "retrievals")
    ));
    assert_eq!(counts["rows"], json!([[50, 150, 150, 50, 50]]));

    // The budget control never injects more than the Cortex condition did for that prompt.
    let budget = duckdb(&format!(
        "SELECT count(*) FROM '{a}' b JOIN '{a}' c ON b.prompt = c.prompt WHERE b.condition = 'openclaw-budget' AND c.condition = 'openclaw+cortex' AND b.injected_chars > c.injected_chars",
        a = table(&first, "answers")
    ));
    assert_eq!(budget["rows"], json!([[0]]));

    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(first.join("results.json")).expect("results.json"))
            .expect("JSON");
    assert_eq!(results["retrievals"].as_array().map(Vec::len), Some(50));
    assert_eq!(results["judgments"][0]["condition"], "compacted", "the original's condition names");
    // Field for field with the original's V1.1 file: its two conditions of trial 1 in `answers` and
    // `judgments` (a rationale each, `passScores` only with several passes), ours under `benchmark`.
    let conditions: std::collections::BTreeSet<&str> = results["answers"]
        .as_array()
        .expect("answers")
        .iter()
        .map(|a| a["condition"].as_str().expect("condition"))
        .collect();
    assert_eq!(conditions, ["compacted", "cortex"].into_iter().collect());
    assert_eq!(results["judgments"].as_array().map(Vec::len), Some(100));
    assert!(results["judgments"][0]["rationale"].is_string() && results["judgments"][0].get("passScores").is_none());
    for field in ["namespaceBase", "namespaceSuffix", "gitCommit", "ocChunkCount", "cortexQueryTypeMapping", "llmModel"]
    {
        assert!(results["config"].get(field).is_some(), "config lacks {field}");
    }
    assert_eq!(results["config"]["ocChunkCount"], 44);
    assert_eq!(results["benchmark"]["answers"].as_array().map(Vec::len), Some(50), "the budget control's answers");

    // A second run (now with warm embedding caches) writes the same tables, row for row.
    let second_out = tempfile::tempdir().expect("temporary directory");
    let second = offline_run(second_out.path(), &[]);
    // Latencies are timings, like timestamps: the only values allowed to differ.
    for (name, columns, rows) in [
        ("prompts", "run_id", "true"),
        ("retrievals", "run_id", "true"),
        ("answers", "run_id", "true"),
        ("judgments", "run_id", "true"),
        ("cortex_calls", "run_id, latency_ms", "true"),
        ("summary", "run_id", "metric NOT LIKE 'cortex_latency%'"),
    ] {
        let (a, b) = (table(&first, name), table(&second, name));
        let side = |x: &str| format!("SELECT * EXCLUDE ({columns}) FROM '{x}' WHERE {rows}");
        let compare = duckdb(&format!(
            "SELECT (SELECT count(*) FROM ({} EXCEPT ALL {})) + (SELECT count(*) FROM ({} EXCEPT ALL {}))",
            side(&a),
            side(&b),
            side(&b),
            side(&a)
        ));
        assert_eq!(compare["rows"], json!([[0]]), "table {name} differs between two offline runs");
    }
}

/// Runs the benchmark on data files written to a temporary folder and returns stderr.
fn bad_input(sessions: &Value, prompts: &Value) -> String {
    let folder = tempfile::tempdir().expect("temporary directory");
    let sessions_path = folder.path().join("sessions.json");
    let prompts_path = folder.path().join("prompts.json");
    std::fs::write(&sessions_path, sessions.to_string()).expect("write sessions");
    std::fs::write(&prompts_path, prompts.to_string()).expect("write prompts");
    let out = folder.path().join("run").display().to_string();
    let run = host_in(
        &repo_root(),
        &[
            "run",
            "scripts/cortex_v11.rhai",
            "--out",
            &out,
            "--",
            "--sessions",
            &sessions_path.display().to_string(),
            "--prompts",
            &prompts_path.display().to_string(),
        ],
    );
    run.expect_code(2);
    run.stderr.replace(&folder.path().display().to_string(), "[DIR]")
}

fn session(id: &str, description: &str) -> Value {
    json!({"id": id, "description": description, "messages": [{"role": "user", "content": "We use port 4000."}, {"role": "assistant", "content": "Noted: port 4000."}]})
}

fn prompt(id: &str, source: &str) -> Value {
    json!({"id": id, "category": "F", "prompt": "Which port?", "groundTruth": "Port 4000", "sourceSession": source})
}

#[test]
fn bad_data_files_are_errors_naming_the_file_and_the_item() {
    let good = json!([session("s01", "Week 1, Day 1 — kickoff")]);
    let cases = [
        (
            json!([session("s01", "Week 1, Day 1 — a"), session("s01", "Week 1, Day 2 — b")]),
            json!([prompt("F01", "s01")]),
            "[DIR]/sessions.json: session 2 (`s01`): duplicate id (also session 1)",
        ),
        (
            json!([{"id": "s01", "description": "Week 1, Day 1 — a"}]),
            json!([prompt("F01", "s01")]),
            "[DIR]/sessions.json: session 1 (`s01`): missing field `messages`",
        ),
        (
            json!([session("s01", "kickoff meeting")]),
            json!([prompt("F01", "s01")]),
            "[DIR]/sessions.json: session 1 (`s01`): description `kickoff meeting` has no day number",
        ),
        (json!([]), json!([prompt("F01", "s01")]), "[DIR]/sessions.json: no sessions"),
        (
            good.clone(),
            json!([prompt("F01", "s01"), prompt("F01", "s01")]),
            "[DIR]/prompts.json: prompt 2 (`F01`): duplicate id (also prompt 1)",
        ),
        (
            good.clone(),
            json!([prompt("F01", "s01, s09")]),
            "[DIR]/prompts.json: prompt 1 (`F01`): `sourceSession` names `s09`, which is not a session id",
        ),
        (
            good.clone(),
            json!([{"id": "F01", "category": "F", "prompt": 7, "groundTruth": "x", "sourceSession": "s01"}]),
            "[DIR]/prompts.json: prompt 1 (`F01`): `prompt` must be a string, got i64",
        ),
        (good, json!([]), "[DIR]/prompts.json: no prompts"),
    ];
    for (sessions, prompts, expected) in cases {
        let stderr = bad_input(&sessions, &prompts);
        assert!(stderr.contains(expected), "expected {expected:?} in:\n{stderr}");
    }
}

#[test]
fn an_unknown_flag_is_an_error_listing_the_flags() {
    let out = tempfile::tempdir().expect("temporary directory");
    let out_text = out.path().join("run").display().to_string();
    let run =
        host_in(&repo_root(), &["run", "scripts/cortex_v11.rhai", "--out", &out_text, "--", "--judge-pases", "3"]);
    run.expect_code(2);
    assert!(run.stderr.contains("unknown flag `--judge-pases`; the flags are:"), "{}", run.stderr);
    assert!(run.stderr.contains("`--judge-passes`"), "{}", run.stderr);
}

#[test]
fn help_lists_every_flag_with_its_default_and_makes_no_run() {
    let out = tempfile::tempdir().expect("temporary directory");
    let out_text = out.path().join("run").display().to_string();
    let run = host_in(&repo_root(), &["run", "scripts/cortex_v11.rhai", "--out", &out_text, "--", "--help"]);
    run.expect_code(0);
    for line in [
        "  --profile <text>\n      the OpenClaw memory: OpenClaw 2026.3's search, or the original's simulation [default: openclaw (from the scenario); one of: openclaw, ubundi]",
        "  --judge-passes <number>\n      judge passes per answer [default: 1 (from the scenario)]",
        "  --dry-run\n      no network: built-in roles and the local Cortex [default: false]",
        "  --from <text>\n      the phase to start from (with --resume; without it, the first phase the resumed run did not finish) [one of: extract, seed, compact, retrieve, answer, judge, report]",
    ] {
        assert!(run.stdout.contains(line), "missing {line:?} in\n{}", run.stdout);
    }
    let config = std::fs::read_to_string(repo_root().join("scripts/lib/cortex/config.rhai")).expect("config.rhai");
    let declared = config.matches("#{ name: \"").count();
    assert!(declared > 40, "the declaration holds every setting: {declared}");
    assert_eq!(run.stdout.matches("\n  --").count(), declared, "every flag is listed:\n{}", run.stdout);
    assert!(!out.path().join("run").exists(), "--help made a run directory");
}

#[test]
fn the_readme_gives_one_command_for_the_originals_setup_and_its_scenario_sets_what_differs() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let command = "host run scripts/cortex_v11.rhai --scenario scenarios/cortex_v11_original.toml -- --seed";
    assert!(readme.contains(command), "the README gives the command reproducing the original's setup");
    for default in [
        "`--profile openclaw`",
        "no decay, no MMR, a 0.35 score floor",
        "`--query-type-by-category false`",
        "`--judge-failures drop`",
    ] {
        assert!(readme.contains(default), "the README names the default {default} that differs from the original");
    }
    let out = tempfile::tempdir().expect("temporary directory");
    let run = host_in(
        &repo_root(),
        &[
            "run",
            "scripts/cortex_v11.rhai",
            "--scenario",
            "scenarios/cortex_v11_original.toml",
            "--out",
            &out.path().join("run").display().to_string(),
            "--",
            "--help",
        ],
    );
    run.expect_code(0);
    for line in [
        "[default: ubundi (from the scenario)",
        "[default: http (from the scenario)",
        "[default: true (from the scenario)]",
        "[default: null (from the scenario)",
    ] {
        assert!(run.stdout.contains(line), "missing {line:?} in\n{}", run.stdout);
    }
}

#[test]
fn a_scenario_value_that_is_no_setting_is_an_error_naming_it() {
    let folder = tempfile::tempdir().expect("temporary directory");
    let text = std::fs::read_to_string(repo_root().join("scenarios/cortex_v11.toml")).expect("scenario");
    let scenario = folder.path().join("typo.toml");
    std::fs::write(&scenario, text.replace("top_k = 6", "topk = 6")).expect("write scenario");
    let out = folder.path().join("run").display().to_string();
    let scenario = scenario.display().to_string();
    let run = host_in(&repo_root(), &["run", "scripts/cortex_v11.rhai", "--scenario", &scenario, "--out", &out]);
    run.expect_code(2);
    assert!(run.stderr.contains("the scenario sets `openclaw.topk`, which is no setting"), "{}", run.stderr);

    // A local Cortex knob that does not exist is refused by the backend, naming it.
    std::fs::write(folder.path().join("knob.toml"), text.replace("rrf_k = 60", "rrf = 60")).expect("write scenario");
    let knob = folder.path().join("knob.toml").display().to_string();
    let out = folder.path().join("run2").display().to_string();
    let run = host_in(&repo_root(), &["run", "scripts/cortex_v11.rhai", "--scenario", &knob, "--out", &out]);
    run.expect_code(2);
    assert!(run.stderr.contains("local Cortex: unknown setting `rrf`"), "{}", run.stderr);
}

/// The scenario with Cortex polling intervals a test can wait for.
fn fast_scenario(folder: &Path) -> String {
    let text = std::fs::read_to_string(repo_root().join("scenarios/cortex_v11.toml")).expect("scenario");
    let text = text.replace(
        "poll_interval_s = 2.0",
        "poll_interval_s = 0.02\nstabilise_interval_s = 0.02\nsubmit_backoff_s = 0.01",
    );
    let path = folder.join("fast.toml");
    std::fs::write(&path, text).expect("write scenario");
    path.display().to_string()
}

#[test]
fn with_keys_every_role_is_an_llm_and_cortex_is_the_http_api_seeded_and_queried() {
    let llm = crate::fake_llm::FakeLlm::start();
    let cortex = crate::fake_cortex::FakeCortex::start("cortex-key-SECRET");
    cortex.fail(
        crate::fake_cortex::RETRIEVE,
        vec![crate::fake_cortex::Fault::status(reqwest::StatusCode::INTERNAL_SERVER_ERROR)],
    );
    let folder = tempfile::tempdir().expect("temporary directory");
    let scenario = fast_scenario(folder.path());
    let run = folder.path().join("run");
    let run_text = run.display().to_string();
    let (openai, cortex_url) = (llm.openai_base(), cortex.base_url());
    let result = host_in_with(
        &repo_root(),
        &[
            "run",
            "scripts/cortex_v11.rhai",
            "--scenario",
            &scenario,
            "--out",
            &run_text,
            "--",
            "--cortex",
            "http",
            "--seed",
            "--judge-passes",
            "2",
        ],
        &[
            ("LLM_API_KEY", Some("llm-key")),
            ("LLM_BASE_URL", Some(&openai)),
            ("ANTHROPIC_API_KEY", None),
            ("CORTEX_BASE_URL", Some(&cortex_url)),
            ("CORTEX_API_KEY", Some("cortex-key-SECRET")),
            ("LLM_MODEL", None),
            ("JUDGE_MODEL", Some("judge-from-env")),
        ],
    );
    result.expect_code(0);

    let roles =
        duckdb(&format!("SELECT role, count(*) FROM '{}' GROUP BY role ORDER BY role", table(&run, "llm_calls")));
    assert_eq!(roles["rows"], json!([["answerer", 150], ["compactor", 1], ["extractor", 45], ["judge", 300]]));
    assert_eq!(cortex.seen_at(crate::fake_cortex::INGEST).len(), 45, "every session is ingested once");

    // One retrieve failed (HTTP 500): recorded as a failure, not as empty context; 2% stays a valid run.
    let calls =
        duckdb(&format!("SELECT count(*), count(*) FILTER (WHERE NOT ok) FROM '{}'", table(&run, "cortex_calls")));
    assert_eq!(calls["rows"], json!([[50, 1]]));
    let judged = duckdb(&format!(
        "SELECT count(*), count(*) FILTER (WHERE ok), min(score), max(score) FROM '{}'",
        table(&run, "judgments")
    ));
    assert_eq!(judged["rows"], json!([[300, 300, 1, 1]]), "the fake judge's fenced verdicts all parse");
    let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    // JUDGE_MODEL names the judge's model, as in the original; LLM_MODEL unset keeps the default.
    assert!(report.contains("answerer `llm:gpt-4o-mini`") && report.contains("judge `llm:judge-from-env`"), "{report}");
    let models = duckdb(&format!("SELECT DISTINCT model FROM '{}' WHERE role = 'judge'", table(&run, "llm_calls")));
    assert_eq!(models["rows"], json!([["judge-from-env"]]));
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).expect("results.json")).expect("JSON");
    assert_eq!(
        (results["config"]["llmModel"].as_str(), results["config"]["judgeModel"].as_str()),
        (Some("gpt-4o-mini"), Some("judge-from-env"))
    );
    assert_eq!(results["judgments"][0]["passScores"].as_array().map(Vec::len), Some(2), "two passes are listed");
    assert!(!report.contains("Invalid run"));
    for file in ["report.md", "results.json", "manifest.json", "run.log"] {
        let text = std::fs::read_to_string(run.join(file)).expect(file);
        assert!(!text.contains("cortex-key-SECRET"), "{file} leaks the Cortex key");
    }
}

#[test]
fn a_run_where_more_than_5_percent_of_cortex_calls_fail_is_marked_invalid() {
    let cortex = crate::fake_cortex::FakeCortex::start("k");
    cortex.fail(
        crate::fake_cortex::RETRIEVE,
        vec![crate::fake_cortex::Fault::status(reqwest::StatusCode::SERVICE_UNAVAILABLE); 4],
    );
    let folder = tempfile::tempdir().expect("temporary directory");
    let scenario = fast_scenario(folder.path());
    let run = folder.path().join("run");
    let run_text = run.display().to_string();
    let cortex_url = cortex.base_url();
    let result = host_in_with(
        &repo_root(),
        &["run", "scripts/cortex_v11.rhai", "--scenario", &scenario, "--out", &run_text, "--", "--cortex", "http"],
        &[
            ("LLM_API_KEY", None),
            ("ANTHROPIC_API_KEY", None),
            ("CORTEX_BASE_URL", Some(&cortex_url)),
            ("CORTEX_API_KEY", Some("k")),
        ],
    );
    result.expect_code(1);
    let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    assert!(report.contains("**Invalid run:** 8.0% of Cortex calls failed"), "{report}");
    let valid = duckdb(&format!("SELECT value FROM '{}' WHERE metric = 'run_valid'", table(&run, "summary")));
    assert_eq!(valid["rows"], json!([[0.0]]));

    // Latency percentiles and their count are over the 46 successful calls, as in the original;
    // the 4 failures stand beside them.
    let latency = duckdb(&format!(
        "SELECT metric, n FROM '{}' WHERE metric IN ('cortex_latency_p50_ms', 'cortex_calls_failed') ORDER BY metric",
        table(&run, "summary")
    ));
    assert_eq!(latency["rows"], json!([["cortex_calls_failed", 4], ["cortex_latency_p50_ms", 46]]));
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).expect("results.json")).expect("JSON");
    assert_eq!(
        (results["latency"]["cortex"]["count"].as_i64(), results["benchmark"]["cortexCallsFailed"].as_i64()),
        (Some(46), Some(4))
    );
}

#[test]
fn rejudging_a_run_with_the_same_judge_agrees_exactly_and_a_jsonl_file_can_be_rejudged() {
    let out = tempfile::tempdir().expect("temporary directory");
    let first = offline_run(out.path(), &[]);
    let again = out.path().join("rejudged");
    let (first_text, again_text) = (first.display().to_string(), again.display().to_string());
    host_in(&repo_root(), &["run", "scripts/rejudge.rhai", "--out", &again_text, "--", "--run", &first_text])
        .expect_code(0);
    let agreement = duckdb(&format!(
        "SELECT metric, value, n FROM '{}' WHERE scope = 'all' ORDER BY metric",
        table(&again, "agreement")
    ));
    assert_eq!(agreement["rows"], json!([["cohen_kappa", 1.0, 150], ["exact_agreement", 1.0, 150]]));

    let lines = [
        json!({"prompt": "Which port?", "groundTruth": "Port 4000", "answer": "It listens on 4000.", "score": 3}),
        json!({"prompt": "Which port?", "groundTruth": "Port 4000", "answer": "I don't have that information.", "score": 3}),
    ];
    let jsonl = out.path().join("answers.jsonl");
    std::fs::write(&jsonl, lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")).expect("write JSONL");
    let third = out.path().join("third");
    host_in(
        &repo_root(),
        &[
            "run",
            "scripts/rejudge.rhai",
            "--out",
            &third.display().to_string(),
            "--",
            "--answers",
            &jsonl.display().to_string(),
        ],
    )
    .expect_code(0);
    let scores = duckdb(&format!("SELECT prompt, score FROM '{}' ORDER BY prompt", table(&third, "judgments")));
    assert_eq!(scores["rows"], json!([["row1", 3], ["row2", 1]]));
    let kappa = duckdb(&format!(
        "SELECT value FROM '{}' WHERE scope = 'all' AND metric = 'exact_agreement'",
        table(&third, "agreement")
    ));
    assert_eq!(kappa["rows"], json!([[0.5]]));
}

#[test]
fn an_unparsable_verdict_is_asked_for_once_more_and_then_counted_as_a_failed_pass() {
    use crate::fake_llm::FakeLlm;
    let llm = FakeLlm::start();
    let retried = "Question: Which port?\n\nGround Truth: Port 4000\n\nAI Response: retried";
    let failing = "Question: Which port?\n\nGround Truth: Port 4000\n\nAI Response: failing";
    llm.replies(retried, &["I think it deserves a 3."]);
    llm.replies(failing, &["no verdict", "still none"]);
    let project = crate::support::TempProject::new();
    project.with_libraries(&["cortex/judge", "cortex/prompts", "templates"]).with_folder("scenarios/prompts/cortex");
    project.write(
        "scripts/judge_twice.rhai",
        r#"import "lib/cortex/judge" as judge;
import "lib/cortex/prompts" as prompts;
let prompt = #{ id: "F01", prompt: "Which port?", groundTruth: "Port 4000", key_facts: ["4000"], stale_facts: [] };
let items = ["retried", "failing"].map(|a| #{ trial: 1, condition: a, prompt: prompt, answer: a, error: () });
results::append_all("judgments", judge::passes(prompts::load(()), items, "llm:fake-judge", 1, 0.0, 2));
"#,
    );
    let base = llm.openai_base();
    let out = project.path().join("run").display().to_string();
    crate::support::host_in_with(
        project.path(),
        &["run", "scripts/judge_twice.rhai", "--out", &out],
        &[("LLM_API_KEY", Some("k")), ("LLM_BASE_URL", Some(&base))],
    )
    .expect_code(0);
    let rows = duckdb(&format!(
        "SELECT condition, ok, score, error IS NOT NULL FROM '{}' ORDER BY condition",
        table(&project.path().join("run"), "judgments")
    ));
    assert_eq!(rows["rows"], json!([["failing", false, null, true], ["retried", true, 1, false]]));
    assert_eq!(llm.seen().len(), 4, "one retry each, no more");
}

#[test]
fn the_namespace_and_its_suffix_come_from_the_originals_variables_normalised_as_it_did() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run = out.path().join("run");
    let run_text = run.display().to_string();
    host_in_with(
        &repo_root(),
        &["run", "scripts/cortex_v11.rhai", "--out", &run_text, "--", "--dry-run"],
        &[
            ("LLM_API_KEY", None),
            ("BENCHMARK_NAMESPACE", Some("team-bench")),
            ("BENCHMARK_NAMESPACE_SUFFIX", Some("  run #5 / a. ")),
        ],
    )
    .expect_code(0);
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).expect("results.json")).expect("JSON");
    assert_eq!(results["config"]["namespace"], "team-bench-run-5-a");
}

#[test]
fn a_failed_judge_pass_is_left_out_by_default_and_unmeasures_the_answer_as_in_the_original_when_asked() {
    let project = crate::support::TempProject::new();
    project.with_libraries(&["cortex/judge", "cortex/prompts", "templates"]);
    project.write(
        "scripts/failures.rhai",
        r#"import "lib/cortex/judge" as judge;
let rows = [#{ ok: true, score: 3 }, #{ ok: false, score: () }, #{ ok: true, score: 2 }];
results::write_json("out.json", #{
    dropped: judge::record_score(rows, "mean", "drop"), nulled: judge::record_score(rows, "mean", "null"),
    clean: judge::record_score([#{ ok: true, score: 1 }], "mean", "null"),
});
"#,
    );
    project.host(&["run", "scripts/failures.rhai", "--run-id", "f"]).expect_code(0);
    let out: Value = serde_json::from_str(&project.read("runs/failures/f/out.json")).expect("JSON");
    assert_eq!(out, json!({"dropped": 2.5, "nulled": null, "clean": 1.0}));
}

#[test]
fn the_ubundi_simulation_keeps_four_candidates_per_hit_for_mmr_whatever_top_k_is() {
    let project = TempProject::new();
    project.with_libraries(&["cortex/openclaw"]);
    project.write(
        "scripts/probe.rhai",
        r#"import "lib/cortex/openclaw" as openclaw;
let three = #{ profile: "ubundi", top_k: 3, half_life_days: 30.0, mmr_lambda: 0.7 };
let six = three + #{ top_k: 6 };
results::write_json("out.json", [
    openclaw::query_options(three, ()).candidates, openclaw::query_options(six, ()).candidates,
    openclaw::query_options(three, 20).candidates, openclaw::query_options(three, ()).limit,
]);
"#,
    );
    project.host(&["run", "scripts/probe.rhai", "--run-id", "p"]).expect_code(0);
    let pools: Value = serde_json::from_str(&project.read("runs/probe/p/out.json")).expect("out.json");
    // top_k × 4 (the original's 24 at its top_k of 6); a longer limit reads further down.
    assert_eq!(pools, json!([12, 24, 20, 3]));
}

#[test]
fn the_ubundi_simulation_embeds_with_the_originals_remote_model_when_a_key_is_set_and_local_when_asked() {
    let llm = crate::fake_llm::FakeLlm::start();
    let folder = tempfile::tempdir().expect("temporary directory");
    let openai = llm.openai_base();
    let run_with = |name: &str, extra: &[&str]| {
        let run = folder.path().join(name);
        let run_text = run.display().to_string();
        let mut args = vec!["run", "scripts/cortex_v11.rhai", "--out", &run_text, "--", "--profile", "ubundi"];
        args.extend_from_slice(&["--roles", "extractor=builtin,compactor=builtin,answerer=builtin,judge=builtin"]);
        args.extend_from_slice(extra);
        let env = [("LLM_API_KEY", Some("llm-key")), ("LLM_BASE_URL", Some(openai.as_str())), ("OC_EMBED_MODEL", None)];
        host_in_with(&repo_root(), &args, &env).expect_code(0);
        let results: Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).expect("results.json"))
                .expect("JSON");
        let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
        (results["config"]["ocEmbedModel"].clone(), report)
    };

    let (model, report) = run_with("remote", &[]);
    assert_eq!(model, "text-embedding-3-small");
    assert!(report.contains("(embeddings `openai:text-embedding-3-small`)"), "{report}");
    let embedded = llm.seen().iter().filter(|seen| seen.path == "/v1/embeddings").count();
    assert!(embedded > 0, "the notes and the prompts were embedded remotely");

    let (model, report) = run_with("local", &["--embed-model", "local"]);
    assert_eq!(model, "sentence-transformers/all-MiniLM-L6-v2");
    assert!(report.contains("(embeddings `sentence-transformers/all-MiniLM-L6-v2`)"), "{report}");
    assert_eq!(llm.seen().iter().filter(|seen| seen.path == "/v1/embeddings").count(), embedded, "no remote call");
}

/// The original runner's V1.1 layouts, written out by hand from its documented behaviour, for
/// the templates to be held to.
const ORIGINAL_LAYOUTS: &str = r#"import "lib/cortex/prompts" as prompts;
import "lib/cortex/answer" as answer;
import "lib/cortex/data" as data;
let t = prompts::load(());
fn original_user(blocks, question, profile) {
    let headers = #{ summary: "Here is a project memory summary:", recent: "Recent session notes (last 2 days, always injected):",
        native: if profile == "ubundi" { "Memory search results (hybrid BM25+vector, temporally decayed, MMR-ranked):" } else { "Memory search results (memory_search over MEMORY.md and memory/*.md):" },
        cortex: "Additionally, here are relevant memories retrieved from Cortex:" };
    let message = "";
    for (block, i) in blocks {
        if i > 0 { message += "\n\n"; }
        message += headers[block.kind] + "\n\n" + block.text;
    }
    message + "\n\nQuestion: " + question
}
let differ = [];
let cases = 0;
for profile in ["ubundi", "openclaw"] {
    for recent in ["", "R1\nR2"] {
        for native in ["", "[s01]\nN"] {
            for cortex in [(), [#{ score: 0.5, content: "C" }], []] {
                let blocks = answer::blocks(#{ summary: "S", recent: recent }, native, cortex);
                cases += 1;
                if answer::user_message(t, blocks, "Q?", profile) != original_user(blocks, "Q?", profile) { differ.push(`${profile}/${recent.len()}/${native.len()}/${cortex}`); }
            }
        }
    }
}
let sessions = [#{ description: "d1", messages: [#{ role: "user", content: "u" }] }, #{ description: "d2", messages: [#{ role: "assistant", content: "a" }] }];
let compaction = prompts::fill(t, "compaction-user", #{ sessions: sessions.map(|s| #{ description: s.description, transcript: data::transcript(s) }) });
results::write_json("out.json", #{
    cases: cases, differ: differ,
    compaction: compaction == "--- Session: d1 ---\nuser: u\n\n--- Session: d2 ---\nassistant: a",
    judge: prompts::fill(t, "judge-user", #{ question: "q", ground_truth: "g", answer: "a" }),
    extract: prompts::fill(t, "extract-user", #{ description: "d", transcript: "t" }),
});
"#;

#[test]
fn the_v11_templates_render_the_original_runners_layouts_character_for_character() {
    let project = crate::support::TempProject::new();
    project
        .with_libraries(&["cortex/prompts", "templates", "cortex/answer", "cortex/data"])
        .with_folder("scenarios/prompts/cortex");
    project.write("scripts/layouts.rhai", ORIGINAL_LAYOUTS);
    project.host(&["run", "scripts/layouts.rhai", "--run-id", "l"]).expect_code(0);
    let out: Value = serde_json::from_str(&project.read("runs/layouts/l/out.json")).expect("JSON");
    assert_eq!(out["cases"], 24);
    assert_eq!(out["differ"], json!([]), "every combination of blocks, profiles and an empty Cortex result");
    assert_eq!(out["compaction"], true);
    assert_eq!(out["judge"], "Question: q\n\nGround Truth: g\n\nAI Response: a");
    assert_eq!(out["extract"], "Session: d\n\nt");
}

/// A resumed run's report.md and results.json are the uninterrupted run's, timings aside (a
/// number of milliseconds in the report, a key naming a latency or a time in results.json).
pub(crate) fn assert_same_report_and_results(whole: &Path, resumed: &Path) {
    let timing = regex_lite::Regex::new(r"\d+(\.\d+)?( / \d+(\.\d+)?)? ms").expect("a valid pattern");
    let report = |run: &Path| {
        let text = std::fs::read_to_string(run.join("report.md")).expect("report.md");
        crate::support::unpadded(&timing.replace_all(&crate::support::stable(&text, run), "[MS]"))
    };
    assert_eq!(report(resumed), report(whole), "report.md: resumed (left), uninterrupted (right)");
    fn mask(value: &mut Value) {
        match value {
            Value::Object(object) => {
                for (key, value) in object.iter_mut() {
                    let timing =
                        ["latency", "Latency", "_ms", "Ms"].iter().any(|word| key.contains(word)) || key == "timestamp";
                    if timing { *value = Value::Null } else { mask(value) }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(mask),
            _ => {}
        }
    }
    let results = |run: &Path| {
        let mut value: Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).expect("results.json"))
                .expect("JSON");
        mask(&mut value);
        value
    };
    assert_eq!(results(resumed), results(whole), "results.json: resumed (left), uninterrupted (right)");
}

#[test]
fn a_run_killed_while_it_asks_the_cortex_api_resumes_without_asking_again_for_the_prompts_it_retrieved() {
    use crate::fake_cortex::{FakeCortex, Fault, RETRIEVE};
    let cortex = FakeCortex::start("cortex-key");
    let folder = tempfile::tempdir().expect("temporary directory");
    let cortex_url = cortex.base_url();
    let env = [
        ("LLM_API_KEY", None),
        ("ANTHROPIC_API_KEY", None),
        ("CORTEX_BASE_URL", Some(cortex_url.as_str())),
        ("CORTEX_API_KEY", Some("cortex-key")),
    ];
    // Seeded once, by a script of its own, with the sessions as they are: the runs below only
    // ask it (each seeding stores every session again).
    let seeder = TempProject::new();
    seeder.with_libraries(&["cortex/http"]).with_folder("fixtures/cortex/v1.1");
    seeder.write(
        "scripts/seed.rhai",
        r#"import "lib/cortex/http" as cortex_http;
let config = #{ base_url: run::env("CORTEX_BASE_URL"), api_key: run::env("CORTEX_API_KEY"), namespace: "benchmark-v1.1", seed: true,
    poll_interval_s: 0.02, stabilise_interval_s: 0.02 };
cortex_http::open(fs::read_json("fixtures/cortex/v1.1/seed-data.json"), config);
"#,
    );
    seeder.host_with_env(&["run", "scripts/seed.rhai", "--run-id", "s"], &env).expect_code(0);
    let asked_before = cortex.seen_at(RETRIEVE).len();
    // Every retrieval now takes 0.2 s, the 50 prompts 10 s: the run is killed once it saved the
    // 40th prompt's, 8 s after the first prompts' rows (which reach the disk within 6 s).
    cortex.fail(RETRIEVE, vec![Fault::Delay(std::time::Duration::from_millis(200)); 200]);
    let prompts: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("fixtures/cortex/v1.1/prompts.json")).expect("prompts.json"),
    )
    .expect("JSON");
    let fortieth = prompts[39]["id"].as_str().expect("an id");
    let kill_after = format!("phases/retrieve/{fortieth}.json");
    let root = repo_root();
    let killed = crate::resume::KillTest {
        dir: folder.path(),
        cwd: &root,
        script: "scripts/cortex_v11.rhai",
        args: &["--cortex", "http"],
        env: &env,
        kill_after: &kill_after,
        table: "retrievals",
        // The resumed run asked Cortex for the prompts it did again only.
        apart: &["http_calls"],
    }
    .run();

    let resumed = &killed.manifest["settings"]["resumed"];
    let kept: Vec<&str> = resumed["kept"].as_array().expect("kept").iter().filter_map(Value::as_str).collect();
    assert_eq!(&kept[..3], ["extract", "seed", "compact"], "{resumed}");
    assert!(kept.contains(&format!("retrieve/{fortieth}").as_str()), "{resumed}");
    let retrievals_kept = kept.len() - 3;
    let redone: Vec<&str> = resumed["redone"].as_array().expect("redone").iter().filter_map(Value::as_str).collect();
    assert_eq!(redone.len(), 50 - retrievals_kept + 2, "{resumed}");
    assert_eq!(&redone[redone.len() - 2..], ["answer", "judge"]);
    // The dead run asked for the prompts it saved and at most one more (in flight at the kill);
    // the resumed run for the others only; the uninterrupted run for all 50.
    let asked = cortex.seen_at(RETRIEVE).len() - asked_before;
    assert!((100..=101).contains(&asked), "{asked} retrievals for the dead, resumed and whole runs");
    assert_same_report_and_results(&folder.path().join("whole"), &killed.resumed);

    // A run made with another setting is not taken over: the error names it.
    let other = folder.path().join("other").display().to_string();
    let killed_text = killed.killed.display().to_string();
    let refused = host_in_with(
        &repo_root(),
        &[
            "run",
            "scripts/cortex_v11.rhai",
            "--out",
            &other,
            "--",
            "--cortex",
            "http",
            "--cortex-top-k",
            "4",
            "--resume",
            &killed_text,
        ],
        &env,
    );
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("was made with cortex_top_k `8`, this run has `4`"), "{}", refused.stderr);
    assert_eq!(cortex.seen_at(RETRIEVE).len() - asked_before, asked, "the refused run asked nothing");
}
