//! The LoCoMo benchmark (`scripts/locomo.rhai`) and its provider interface: every built-in
//! provider on the project's sample, the tables and report a researcher reads, LongMemEval's
//! schema, the LLM answerer and judge against a loopback model, an external provider, and the
//! conformance check passing the example provider and failing broken ones usefully.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::{duckdb, host_in_with, offline_run, repo_root, table};

const EXAMPLE: &str = "external:scripts/examples/locomo_provider.py";

const NO_KEYS: [(&str, Option<&str>); 3] =
    [("LLM_API_KEY", None), ("ANTHROPIC_API_KEY", None), ("CORTEX_BASE_URL", None)];

fn query(run: &Path, sql: &str) -> serde_json::Value {
    duckdb(&sql.replace("{answers}", &table(run, "locomo_answers")).replace("{summary}", &table(run, "locomo_summary")))
        ["rows"]
        .clone()
}

#[test]
fn every_built_in_provider_answers_every_question_of_the_sample_and_the_report_says_how_well() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run = offline_run("scripts/locomo.rhai", out.path(), &[]);

    let per_provider = query(
        &run,
        "SELECT provider, count(*), count(DISTINCT question_id) FROM '{answers}' GROUP BY ALL ORDER BY ALL",
    );
    let providers = ["bm25", "cortex-local", "dense", "full-context", "hybrid", "openclaw"];
    assert_eq!(
        per_provider,
        json!(providers.map(|p| json!([p, 24, 24]))),
        "each provider answers each of the 24 questions once"
    );
    let categories = query(&run, "SELECT category, (count(*) // 6)::INT FROM '{answers}' GROUP BY ALL ORDER BY ALL");
    assert_eq!(categories, json!([["1", 4], ["2", 7], ["3", 2], ["4", 6], ["5", 5]]));
    // Full context hands the answerer every turn, so every evidence turn is retrieved.
    let full = query(&run, "SELECT min(evidence_recall) FROM '{answers}' WHERE provider = 'full-context'");
    assert_eq!(full, json!([[1.0]]));
    // Every score is the official rule's: adversarial questions score 1 exactly on an abstention.
    let adversarial = query(
        &run,
        "SELECT count(*) FILTER (WHERE f1 != CASE WHEN lower(prediction) LIKE '%not mentioned%' THEN 1 ELSE 0 END) FROM '{answers}' WHERE category = '5'",
    );
    assert_eq!(adversarial, json!([[0]]));

    let headline = query(
        &run,
        "SELECT provider, questions, conversations, f1_low <= f1 AND f1 <= f1_high FROM '{summary}' WHERE \"group\" = '1-4' ORDER BY provider",
    );
    assert_eq!(headline, json!(providers.map(|p| json!([p, 19, 2, true]))));
    let pairs =
        duckdb(&format!("SELECT count(*) FROM '{}' WHERE \"group\" = '1-4'", table(&run, "locomo_pairs")))["rows"]
            .clone();
    assert_eq!(pairs, json!([[15]]), "every pair of six providers");

    let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    for heading in
        ["## Token F1 by provider and category", "## Retrieval and cost (categories 1–4)", "## Paired comparisons"]
    {
        assert!(report.contains(heading), "{heading} in\n{report}");
    }
    assert!(report.contains("categories 1–4 (n=19)") && report.contains("5 adversarial (n=5)"), "{report}");
    assert!(report.contains("**not** the official locomo10.json"), "{report}");
    assert!(run.join("report.html").exists());
}

#[test]
fn a_locomo_file_missing_a_field_is_an_error_naming_the_sample_and_the_field() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let data = dir.path().join("bad.json");
    let sample = json!([{ "sample_id": "x-1", "conversation": { "speaker_a": "Ann" }, "qa": [] }]);
    std::fs::write(&data, sample.to_string()).expect("write the file");
    let data = data.display().to_string();
    let run = dir.path().join("run").display().to_string();
    let result =
        host_in_with(&repo_root(), &["run", "scripts/locomo.rhai", "--out", &run, "--", "--data", &data], &NO_KEYS);
    assert_ne!(result.code, 0);
    assert!(result.stderr.contains("sample 0 (x-1): `conversation` has no `speaker_b`"), "{}", result.stderr);
}

#[test]
fn longmemeval_questions_are_grouped_by_type_with_abstention_apart() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run = offline_run(
        "scripts/locomo.rhai",
        out.path(),
        &["--format", "longmemeval", "--data", "fixtures/longmemeval/sample.json", "--providers", "bm25,full-context"],
    );
    let groups = query(&run, "SELECT \"group\", questions FROM '{summary}' WHERE provider = 'bm25' ORDER BY \"group\"");
    let groups = groups.as_array().expect("rows");
    assert!(groups.contains(&json!(["abstention", 2])), "{groups:?}");
    assert!(groups.contains(&json!(["all", 8])), "{groups:?}");
    // Evidence is session-level: full context retrieves every session.
    assert_eq!(
        query(&run, "SELECT min(evidence_recall) FROM '{answers}' WHERE provider = 'full-context'"),
        json!([[1.0]])
    );
}

#[test]
fn with_a_model_the_answers_and_the_j_score_come_from_the_llm_for_every_trial() {
    let llm = crate::fake_llm::FakeLlm::start();
    llm.always_reply(r#"{"reasoning": "the same place", "label": "CORRECT"}"#);
    let dir = tempfile::tempdir().expect("temporary directory");
    let run = dir.path().join("run");
    let run_text = run.display().to_string();
    let base = llm.openai_base();
    let args = [
        "run",
        "scripts/locomo.rhai",
        "--out",
        &run_text,
        "--",
        "--providers",
        "bm25",
        "--answerer",
        "llm:fake-answerer",
        "--judge",
        "llm:fake-judge",
        "--trials",
        "2",
    ];
    host_in_with(
        &repo_root(),
        &args,
        &[("LLM_API_KEY", Some("llm-key")), ("LLM_BASE_URL", Some(&base)), ("ANTHROPIC_API_KEY", None)],
    )
    .expect_code(0);
    let calls =
        duckdb(&format!("SELECT role, model, count(*) FROM '{}' GROUP BY ALL ORDER BY ALL", table(&run, "llm_calls")));
    assert_eq!(calls["rows"], json!([["answerer", "fake-answerer", 48], ["judge", "fake-judge", 48]]));
    assert_eq!(
        query(&run, "SELECT trial, count(*), min(judge), max(judge) FROM '{answers}' GROUP BY ALL ORDER BY ALL"),
        json!([[1, 24, 1, 1], [2, 24, 1, 1]])
    );
    assert_eq!(query(&run, "SELECT j, trial_f1_sd FROM '{summary}' WHERE \"group\" = '1-4'"), json!([[1.0, 0.0]]));
}

/// Runs the conformance check on `provider` with `provider_args`: the run directory and the result.
fn conformance(out: &Path, provider: &str, provider_args: &str) -> (PathBuf, crate::support::Run) {
    let run = out.join("run");
    let run_text = run.display().to_string();
    let provider_args = format!("--provider-args={provider_args}");
    let args =
        ["run", "scripts/locomo_conformance.rhai", "--out", &run_text, "--", "--provider", provider, &provider_args];
    (run.clone(), host_in_with(&repo_root(), &args, &NO_KEYS))
}

fn failed_checks(run: &Path) -> serde_json::Value {
    duckdb(&format!("SELECT \"check\" FROM '{}' WHERE NOT passed ORDER BY \"check\"", table(run, "conformance")))["rows"].clone()
}

#[test]
fn every_built_in_provider_and_the_example_external_one_pass_the_conformance_check() {
    for provider in ["full-context", "bm25", "dense", "hybrid", "cortex-local", "openclaw", EXAMPLE] {
        let out = tempfile::tempdir().expect("temporary directory");
        let (run, result) = conformance(out.path(), provider, "");
        assert_eq!(result.code, 0, "{provider}: {}", result.stderr);
        assert_eq!(failed_checks(&run), json!([]), "{provider}");
    }
}

#[test]
fn a_provider_that_crashes_mid_ingest_is_reported_naming_the_program() {
    let out = tempfile::tempdir().expect("temporary directory");
    let (_, result) = conformance(out.path(), EXAMPLE, "--fail crash-on-ingest");
    result.expect_code(1);
    assert!(
        result.stderr.contains("external provider `scripts/examples/locomo_provider.py`: ingest of conversation `conformance-a` failed: the program exited (code 3)"),
        "{}",
        result.stderr
    );
}

#[test]
fn malformed_search_items_fail_the_check_naming_the_field() {
    let out = tempfile::tempdir().expect("temporary directory");
    let (run, result) = conformance(out.path(), EXAMPLE, "--fail bad-search");
    result.expect_code(1);
    assert!(result.stderr.contains("item 0: `text` must be a non-empty string, got `42`"), "{}", result.stderr);
    assert!(failed_checks(&run).as_array().expect("rows").contains(&json!(["items are well formed"])));
}

#[test]
fn a_provider_that_keeps_old_conversations_or_ignores_reset_fails_that_rule_only() {
    for (mode, rule) in [
        ("keep-conversations", "ingest drops the conversation held before"),
        ("ignore-reset", "reset empties the provider"),
    ] {
        let out = tempfile::tempdir().expect("temporary directory");
        let (run, result) = conformance(out.path(), EXAMPLE, &format!("--fail {mode}"));
        result.expect_code(1);
        assert_eq!(failed_checks(&run), json!([[rule]]), "{mode}");
    }
}

#[test]
fn an_external_provider_runs_in_the_benchmark_beside_the_built_ins() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run = offline_run("scripts/locomo.rhai", out.path(), &["--providers", &format!("bm25,{EXAMPLE}")]);
    let rows = query(
        &run,
        "SELECT provider, count(*), count(*) FILTER (WHERE items <= 10) FROM '{answers}' GROUP BY ALL ORDER BY ALL",
    );
    assert_eq!(rows, json!([["bm25", 24, 24], [EXAMPLE, 24, 24]]));
    let described = std::fs::read_to_string(run.join("manifest.json")).expect("manifest");
    assert!(described.contains("example-bm25"), "the provider's own description is recorded");
}

/// A listener on 127.0.0.1 that counts the connections made to it and answers none: a proxy
/// every proxy variable points at, which a run that stays offline never reaches.
fn counting_listener() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = format!("http://{}", socket.local_addr().expect("address"));
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in socket.incoming() {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    (address, count)
}

#[test]
fn mem0_runs_offline_beside_bm25_on_host_models_reaching_nothing_else_even_with_every_proxy_set() {
    // mem0 (fetched by `tests/run` into host's cache) on its pinned environment, its LLM and
    // embedder served by host; every proxy variable, in host and passed on to mem0, points at a
    // listener that must see no connection: no telemetry, no model download, nothing proxied.
    let (proxy, connections) = counting_listener();
    let names = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"];
    let out = tempfile::tempdir().expect("temporary directory");
    let run = out.path().join("run");
    let run_text = run.display().to_string();
    let pass = format!("--provider-pass-env={}", names.join(","));
    let args = ["run", "scripts/locomo.rhai", "--out", &run_text, "--", "--providers", "mem0,bm25", &pass];
    let mut env: Vec<(&str, Option<&str>)> = NO_KEYS.to_vec();
    env.extend(names.iter().map(|name| (*name, Some(proxy.as_str()))));
    env.push(("NO_PROXY", None));
    env.push(("no_proxy", None));
    host_in_with(&repo_root(), &args, &env).expect_code(0);
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 0, "nothing went to a proxy");

    let rows = query(
        &run,
        "SELECT provider, count(*), count(*) FILTER (WHERE items BETWEEN 1 AND 10) FROM '{answers}' GROUP BY ALL ORDER BY ALL",
    );
    assert_eq!(rows, json!([["bm25", 24, 24], ["mem0", 24, 24]]), "mem0 returns items for every question");
    // Each memory carries the turn ids of the add call it came from, so evidence is found.
    let recall = query(&run, "SELECT avg(evidence_recall) > 0.5 FROM '{answers}' WHERE provider = 'mem0'");
    assert_eq!(recall, json!([[true]]));
    // mem0 asked its model server for embeddings and extractions only, and every one was answered.
    let requests = duckdb(&format!(
        "SELECT path, bool_and(status = 200), count(*) > 0 FROM '{}' GROUP BY ALL ORDER BY ALL",
        table(&run, "locomo_model_requests")
    ))["rows"]
        .clone();
    assert_eq!(requests, json!([["/v1/chat/completions", true, true], ["/v1/embeddings", true, true]]));

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).expect("manifest")).expect("json");
    let packages = manifest["settings"]["packages"].as_array().expect("packages recorded");
    let mem0 = packages.iter().find(|p| p["registry"] == "pypi").expect("the Python environment is recorded");
    assert_eq!((&mem0["name"], &mem0["version"]), (&json!("mem0ai"), &json!("2.2.1")));
    assert!(mem0["lock"].as_array().expect("lock").contains(&json!("mem0ai==2.2.1")), "{mem0}");
    let described = &manifest["settings"]["providers"]["described"][0];
    assert_eq!(described["name"], "mem0");
    assert_eq!(described["settings"]["served_by_host"]["pip_package"], "mem0ai==2.2.1");
    assert_eq!(described["settings"]["keyword_search"], false, "no spaCy or fastembed: no downloads");
    let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    assert!(report.contains("| mem0") && report.contains("memory extractor: no model ran"), "{report}");
}

#[test]
fn mem0_passes_the_conformance_check() {
    let out = tempfile::tempdir().expect("temporary directory");
    let (run, result) = conformance(out.path(), "mem0", "");
    assert_eq!(result.code, 0, "{}", result.stderr);
    assert_eq!(failed_checks(&run), json!([]));
}

#[test]
fn with_a_model_mem0s_extraction_goes_through_hosts_llm_stack_and_is_recorded_in_llm_calls() {
    let llm = crate::fake_llm::FakeLlm::start();
    llm.always_reply(
        r#"{"memory": [{"id": "0", "text": "Ines adopted a retired racing greyhound", "attributed_to": "user"}]}"#,
    );
    let dir = tempfile::tempdir().expect("temporary directory");
    let run = dir.path().join("run");
    let run_text = run.display().to_string();
    let base = llm.openai_base();
    let args = [
        "run",
        "scripts/locomo.rhai",
        "--out",
        &run_text,
        "--",
        "--providers",
        "mem0",
        "--mem0-model",
        "llm:fake-extractor",
    ];
    host_in_with(
        &repo_root(),
        &args,
        &[("LLM_API_KEY", Some("llm-key")), ("LLM_BASE_URL", Some(&base)), ("ANTHROPIC_API_KEY", None)],
    )
    .expect_code(0);
    let calls = duckdb(&format!(
        "SELECT role, model, count(*) > 0, bool_and(prompt_tokens > 0) FROM '{}' GROUP BY ALL",
        table(&run, "llm_calls")
    ));
    assert_eq!(calls["rows"], json!([["memory-system", "fake-extractor", true, true]]));
    // The model extracted one memory over and over: mem0 stored it once per speaker, and the
    // provider answers identical texts once, so a search finds it once or (under mem0's 0.1
    // similarity threshold) not at all.
    let found = query(&run, "SELECT count(*) FILTER (WHERE items > 0) > 0, max(items), count(*) FROM '{answers}'");
    assert_eq!(found, json!([[true, 1, 24]]));
    let texts = duckdb(&format!(
        "SELECT count(*) FROM '{}' WHERE path = '/v1/chat/completions' AND status = 200",
        table(&run, "locomo_model_requests")
    ));
    assert!(texts["rows"][0][0].as_i64().unwrap_or(0) > 0, "{texts}");
    // The report gives mem0's extraction calls with the tokens they used.
    let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    let section = report.split("## The memory systems' own model calls").nth(1).expect("the section");
    let row = section.lines().find(|line| line.starts_with("| mem0")).expect("mem0's row");
    assert!(!row.contains("no model ran") && row.contains(" / "), "{row}");
}

#[test]
fn a_mem0_adapter_that_dies_mid_ingest_stops_the_run_cleanly_naming_it_and_the_conversation() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run = out.path().join("run");
    let run_text = run.display().to_string();
    let args = [
        "run",
        "scripts/locomo.rhai",
        "--out",
        &run_text,
        "--",
        "--providers",
        "bm25,mem0",
        "--provider-args=--crash-after-adds 5",
    ];
    let result = host_in_with(&repo_root(), &args, &NO_KEYS);
    result.expect_code(2);
    assert!(
        result.stderr.contains("external provider `scripts/lib/locomo/providers/mem0_provider.py`: ingest of conversation `sample-1` failed: the program exited (code 3)"),
        "{}",
        result.stderr
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).expect("manifest")).expect("json");
    assert_eq!(manifest["status"], "failed");
    // bm25's step of the conversation was saved before mem0 died: a resume starts from it.
    assert!(run.join("steps/sample-1/0.json").is_file());
    assert!(!run.join("conversations/sample-1.json").exists());
}
