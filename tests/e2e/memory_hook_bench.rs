//! memory-hook, part 2: `host run scripts/memory_hook_bench.rhai -- run` drives the real Claude
//! Code CLI (`claude -p`, fetched by `tests/run` into host's cache) against the scripted model
//! on loopback, under each config, on small evals written for these tests: a `package.json` whose
//! build is a tiny node script and an `EVAL.ts` that node runs as plain JavaScript. What the
//! model was sent shows what each config put in front of it.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::memory_hook::store;
use crate::resume::KillTest;
use crate::support::{duckdb, host_in_with, repo_root, table};

/// An eval in the next-evals layout whose reference is one `Write` of `app/actions.ts` calling
/// `updateTag` (the test docs' memory), and, with `next`, a vendored `next` 16.2.0 that ships
/// docs, so the AGENTS.md codemod indexes them offline.
pub(crate) fn write_eval(evals: &Path, id: &str, prompt: &str, solution: &str, extra_scripts: &str) {
    let eval = evals.join(id);
    let files = [
        ("PROMPT.md", prompt),
        ("app/page.tsx", "export default function Page() { return null }\n"),
        (
            "build.js",
            "const fs = require('fs')\nif (!fs.existsSync('app/page.tsx')) { console.error('no page'); process.exit(1) }\n",
        ),
        (
            "EVAL.ts",
            "const fs = require('fs')\nconst src = fs.existsSync('app/actions.ts') ? fs.readFileSync('app/actions.ts', 'utf8') : ''\n\
             if (!/updateTag\\('posts'\\)/.test(src)) { console.error('createPost must call updateTag'); process.exit(1) }\n",
        ),
        ("reference.json", r#"[{"path": "app/actions.ts", "kind": "write"}]"#),
        ("reference/app/actions.ts", solution),
        ("vendor/next/package.json", r#"{"name": "next", "version": "16.2.0"}"#),
        ("vendor/next/dist/docs/01-app/03-api-reference/04-functions/updateTag.md", "# updateTag\n\nExpire a tag.\n"),
    ];
    for (path, content) in files {
        let file = eval.join(path);
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("eval folders");
        std::fs::write(file, content).expect("write an eval file");
    }
    let package = format!(
        r#"{{"name": "{id}", "private": true, "scripts": {{"build": "node build.js"{extra_scripts}}}, "dependencies": {{"next": "file:./vendor/next"}}}}"#
    );
    std::fs::write(eval.join("package.json"), package).expect("write package.json");
}

/// A prompt the test docs' updateTag memory answers.
pub(crate) const PROMPT: &str = "Add a server action createPost in app/actions.ts that saves the post and calls updateTag to expire the posts cache tag.\n";

pub(crate) const SOLUTION: &str = "'use server'\nimport { updateTag } from 'next/cache'\n\nexport async function createPost() {\n  updateTag('posts')\n}\n";

pub(crate) fn evals(dir: &Path) -> PathBuf {
    let evals = dir.join("evals");
    write_eval(&evals, "t-001-update-tag", PROMPT, SOLUTION, "");
    evals
}

/// The benchmark's `run` on the test evals: no API key (the scripted model), dependencies
/// installed in each workspace (the vendored `next` only), EVAL.ts run by node.
fn bench(out: &Path, evals: &Path, extra: &[&str]) -> crate::support::Run {
    let out = out.display().to_string();
    let mut args = vec!["run", "scripts/memory_hook_bench.rhai", "--out", &out, "--"];
    let script_args = bench_args(evals);
    args.extend(script_args.iter().map(String::as_str));
    args.extend(extra);
    let env = [("ANTHROPIC_API_KEY", None), ("LLM_API_KEY", None), ("ANTHROPIC_BASE_URL", None)];
    host_in_with(&repo_root(), &args, &env)
}

/// The script arguments of [`bench`]: every eval of `evals`, each in a workspace of its own.
pub(crate) fn bench_args(evals: &Path) -> Vec<String> {
    let evals = evals.display().to_string();
    let args = [
        "run",
        "--all",
        "--evals-dir",
        &evals,
        "--install",
        "workspace",
        "--install-command",
        "npm install --offline --no-audit --no-fund",
        "--test-command",
        "node EVAL.ts",
    ];
    args.map(String::from).to_vec()
}

/// The requests the scripted model received in one attempt.
fn all_requests(run: &Path, eval: &str, config: &str, attempt: u32) -> Vec<Value> {
    let path = run.join(format!("agents/{eval}/{config}/attempt-{attempt}/requests.jsonl"));
    let text = std::fs::read_to_string(&path).expect("the attempt kept its requests");
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

/// The agent's own requests (the hook's reranker sends side requests to the same server).
fn requests(run: &Path, eval: &str, config: &str, attempt: u32) -> Vec<Value> {
    all_requests(run, eval, config, attempt).into_iter().filter(|request| request["agent"] == json!(true)).collect()
}

/// The text of every message of an agent request, concatenated.
fn messages_text(request: &Value) -> String {
    request["body"]["messages"].to_string()
}

fn rows(sql: &str) -> Value {
    duckdb(sql)["rows"].clone()
}

#[test]
fn every_config_runs_the_real_agent_and_puts_its_own_context_in_front_of_the_model() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (evals, memories) = (evals(dir.path()), store(dir.path()));
    // A prompt no memory answers: what this eval's agent hears comes from its Write.
    write_eval(&evals, "t-002-quiet-prompt", "Make the page render nothing.\n", SOLUTION, "");
    let run = dir.path().join("run");
    bench(&run, &evals, &["--memories", &memories.display().to_string()]).expect_code(0);

    let results = rows(&format!(
        "SELECT config, overall_pass, attempts, agent_turns > 1, memories_injected > 0 FROM '{}' WHERE eval_id = 't-001-update-tag' ORDER BY config",
        table(&run, "results")
    ));
    assert_eq!(
        results,
        json!([
            ["agents-md", true, 1, true, false],
            ["baseline", true, 1, true, false],
            ["memory-hook", true, 1, true, true],
            ["memory-no-rerank", true, 1, true, true]
        ])
    );

    let hook_context = "hook additional context";
    let baseline = requests(&run, "t-001-update-tag", "baseline", 1);
    assert!(baseline.len() >= 2, "the agent made several turns");
    assert!(baseline.iter().all(|r| !messages_text(r).contains(hook_context)), "baseline carries no hook context");
    assert!(baseline.iter().all(|r| !r["body"].to_string().contains("Next.js Docs Index")), "nor the docs index");

    let reranks = all_requests(&run, "t-001-update-tag", "memory-hook", 1);
    assert!(
        reranks.iter().any(|r| r["agent"] == json!(false) && r["body"]["model"] == json!("claude-haiku-4-5")),
        "the memory-hook config's hook asked Haiku to rerank"
    );
    let unreranked = all_requests(&run, "t-001-update-tag", "memory-no-rerank", 1);
    assert!(unreranked.iter().all(|r| r["agent"] == json!(true)), "memory-no-rerank asks no reranker");
    let hooked = requests(&run, "t-001-update-tag", "memory-hook", 1);
    let first = messages_text(&hooked[0]);
    assert!(
        first.contains("UserPromptSubmit hook additional context"),
        "the prompt's memories sit next to it: {first}"
    );
    assert!(first.contains("createPost"), "{first}");
    let quiet = requests(&run, "t-002-quiet-prompt", "memory-hook", 1);
    assert!(!messages_text(&quiet[0]).contains(hook_context), "nothing answers this prompt");
    let after_write = messages_text(quiet.last().expect("a last request"));
    assert!(
        after_write.contains("PreToolUse:Write hook additional context") && after_write.contains("updateTag"),
        "the Write's memory reaches the model's next request: {after_write}"
    );

    let indexed = requests(&run, "t-001-update-tag", "agents-md", 1);
    // Claude Code reads CLAUDE.md, which imports the codemod's AGENTS.md (its comment markers
    // stripped) into the first request.
    let first = messages_text(&indexed[0]);
    assert!(
        first.contains("[Next.js Docs Index]|root: ./node_modules/next/dist/docs"),
        "the index reaches the first request"
    );
    assert!(first.contains("04-functions:{updateTag.md}"), "the index lists the vendored docs: {first}");

    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).expect("results.json")).expect("JSON");
    assert_eq!(original["meta"]["evalCount"], json!(2));
    assert_eq!(original["meta"]["configCount"], json!(4));
    let first = &original["results"][0];
    for field in ["eval", "config", "build", "lint", "test", "overall", "agent"] {
        assert!(first.get(field).is_some(), "EvalResult has {field}: {first}");
    }
    assert_eq!(first["lint"], json!({ "pass": true, "error": "no lint script" }));

    let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    assert!(report.contains("scripted model"), "the report says the model was scripted");
    for criterion in ["beats baseline by 30%+", "within 15% of agents-md", "rerank +20% over no-rerank"] {
        assert!(report.contains(criterion), "{criterion} in {report}");
    }
    crate::report_html::assert_every_chart_draws(
        &run.join("report.html"),
        &["Pass rate per config", "Build, lint and test pass rates", "Paired differences in pass rate"],
    );
}

#[test]
fn an_agent_that_stalls_is_retried_once_in_a_fresh_workspace_and_a_failed_test_is_not() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let evals = evals(dir.path());
    write_eval(
        &evals,
        "t-002-wrong-tag",
        PROMPT,
        &SOLUTION.replace("'posts'", "'post'"),
        r#", "lint": "node build.js""#,
    );
    let run = dir.path().join("run");
    bench(
        &run,
        &evals,
        &["--configs", "baseline", "--timeout", "20", "--scripted-faults", "t-001-update-tag:baseline:1:stall"],
    )
    .expect_code(0);
    let results = rows(&format!(
        "SELECT eval_id, attempts, attempt_kinds, build_pass, lint_pass, test_pass, overall_pass, test_error LIKE '%updateTag%' FROM '{}' ORDER BY eval_id",
        table(&run, "results")
    ));
    assert_eq!(
        results,
        json!([
            ["t-001-update-tag", 2, "timeout,ok", true, true, true, true, false],
            ["t-002-wrong-tag", 1, "ok", true, true, false, false, true]
        ])
    );
    let stalled = all_requests(&run, "t-001-update-tag", "baseline", 1);
    assert_eq!(stalled[0]["fault"], json!("stall"), "the first attempt's first request stalled");
}

#[test]
fn a_hook_that_fails_does_not_block_the_agent() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let evals = evals(dir.path());
    let broken = dir.path().join("broken-store");
    std::fs::create_dir_all(&broken).expect("a store folder");
    std::fs::write(broken.join("memories.corpus"), "not a corpus").expect("write");
    let run = dir.path().join("run");
    bench(&run, &evals, &["--configs", "memory-hook", "--memories", &broken.display().to_string()]).expect_code(0);
    let results = rows(&format!("SELECT overall_pass, memories_injected, attempts FROM '{}'", table(&run, "results")));
    assert_eq!(results, json!([[true, 0, 1]]));
    let log = std::fs::read_to_string(run.join("agents/t-001-update-tag/memory-hook/attempt-1/hook-events.jsonl"))
        .expect("the hook's log");
    assert!(
        log.lines().count() >= 2 && log.lines().all(|line| line.contains(r#""outcome":"failed""#)),
        "the hook failed on every event: {log}"
    );
}

#[test]
fn resume_keeps_the_pairs_a_run_finished_and_runs_only_the_rest() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let evals = evals(dir.path());
    let first = dir.path().join("first");
    bench(&first, &evals, &["--configs", "baseline"]).expect_code(0);
    let second = dir.path().join("second");
    let from = first.display().to_string();
    bench(&second, &evals, &["--configs", "baseline,agents-md", "--resume", &from]).expect_code(0);
    assert!(!second.join("agents/t-001-update-tag/baseline").exists(), "the finished pair did not run again");
    assert!(second.join("agents/t-001-update-tag/agents-md/attempt-1").exists());
    let configs = rows(&format!("SELECT config FROM '{}' ORDER BY config", table(&second, "results")));
    assert_eq!(configs, json!([["agents-md"], ["baseline"]]));
}

#[test]
fn a_run_killed_while_a_pair_stalls_resumes_to_the_results_of_one_run() {
    // Four evals under baseline, two pairs at a time. The third pair's first agent stalls until
    // its timeout: meanwhile the first pairs' rows reach the table (and are flushed, which takes
    // up to 6 s) and the fourth pair finishes, its row held back until the third's is in. The
    // run is killed as the stalled agent is given up, before its retry.
    let dir = tempfile::tempdir().expect("temporary directory");
    let evals = evals(dir.path());
    for id in ["t-002-second", "t-003-stalls", "t-004-after-the-stall"] {
        write_eval(&evals, id, PROMPT, SOLUTION, "");
    }
    let mut args = bench_args(&evals);
    let extra = [
        "--configs",
        "baseline",
        "--concurrency",
        "2",
        "--timeout",
        "12",
        "--scripted-faults",
        "t-003-stalls:baseline:1:stall",
    ];
    args.extend(extra.map(String::from));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let killed = KillTest {
        dir: dir.path(),
        cwd: &repo_root(),
        script: "scripts/memory_hook_bench.rhai",
        args: &args,
        env: &[("ANTHROPIC_API_KEY", None), ("LLM_API_KEY", None), ("ANTHROPIC_BASE_URL", None)],
        kill_after: "agents/t-003-stalls/baseline/attempt-1/transcript.jsonl",
        table: "results",
        // The programs each pair ran, in the order they ended, in workspaces named after the run.
        apart: &["proc_calls"],
    }
    .run();
    // The dead run's table holds pairs before the stalled one, in table order; the fourth, even
    // when it finished (and was saved), waited behind it.
    let dead = rows(&format!("SELECT eval_id FROM read_parquet('{}/**/results*.parquet')", killed.killed.display()));
    assert!(dead == json!([["t-001-update-tag"]]) || dead == json!([["t-001-update-tag"], ["t-002-second"]]), "{dead}");
    let resumed = &killed.manifest["settings"]["resumed"];
    let kept = resumed["kept"].as_array().expect("a list");
    assert!(
        kept.len() >= 2 && kept[..2] == [json!("t-001-update-tag__baseline"), json!("t-002-second__baseline")],
        "{resumed}"
    );
    assert_eq!(resumed["redone"][0], json!("t-003-stalls__baseline"), "{resumed}");
    let results =
        rows(&format!("SELECT eval_id, attempt_kinds, overall_pass FROM '{}'", table(&killed.resumed, "results")));
    assert_eq!(
        results,
        json!([
            ["t-001-update-tag", "ok", true],
            ["t-002-second", "ok", true],
            ["t-003-stalls", "timeout,ok", true],
            ["t-004-after-the-stall", "ok", true]
        ])
    );

    // Pairs made with another agent timeout are not taken over.
    let other = dir.path().join("other").display().to_string();
    let killed_text = killed.killed.display().to_string();
    let mut refused_args = vec!["run", "scripts/memory_hook_bench.rhai", "--out", &other, "--"];
    refused_args.extend(args.iter().map(|arg| if *arg == "12" { "13" } else { arg }));
    refused_args.extend(["--resume", &killed_text]);
    let refused = host_in_with(&repo_root(), &refused_args, &[("ANTHROPIC_API_KEY", None), ("LLM_API_KEY", None)]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("was made with timeout `12`, this run has `13`"), "{}", refused.stderr);
}

/// The shipped mini-eval with real Next.js: `npm install` from the registry, `next build` and
/// vitest, the codemod indexing next@16.2.0's own docs.
#[test]
#[ignore = "installs Next.js from the npm registry and builds it (minutes, network): run with --ignored"]
fn with_real_next_a_mini_eval_installs_builds_and_passes_its_eval_under_baseline_and_agents_md() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let run = dir.path().join("run");
    let out = run.display().to_string();
    let args = [
        "run",
        "scripts/memory_hook_bench.rhai",
        "--out",
        &out,
        "--",
        "run",
        "--evals",
        "mh-001-update-tag-action",
        "--configs",
        "baseline,agents-md",
    ];
    host_in_with(&repo_root(), &args, &[("ANTHROPIC_API_KEY", None)]).expect_code(0);
    let results = rows(&format!(
        "SELECT config, build_pass, test_pass, overall_pass FROM '{}' ORDER BY config",
        table(&run, "results")
    ));
    assert_eq!(results, json!([["agents-md", true, true, true], ["baseline", true, true, true]]));
    let indexed = requests(&run, "mh-001-update-tag-action", "agents-md", 1);
    assert!(messages_text(&indexed[0]).contains("04-functions:{"), "the index lists next's own docs");
}
