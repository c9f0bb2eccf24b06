//! memory-hook, part 1: `host run scripts/docs_to_memories.rhai -- extract <docs>` on small docs
//! written for these tests: the original extractor's decision for every section, the rule
//! extractor's memories, the LLM extractor with the seed's prompt against the loopback fake,
//! `--dry-run` and `--resume`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use reqwest::StatusCode;

use crate::fake_llm::{FakeLlm, Fault};
use crate::resume::KillTest;
use crate::support::{duckdb, host_in, host_in_with, repo_root, stable, table, unpadded};

const UPDATE_TAG: &str = r"---
title: updateTag
description: API Reference for the updateTag function.
---

`updateTag` expires a cache tag from a Server Action.

## Usage

> **Good to know**: `updateTag` can only be called from a Server Action; use `revalidateTag` in Route Handlers.

```tsx
'use server'
import { updateTag } from 'next/cache'

export async function save() {
  updateTag('posts')
}
```

## Version History

| Version | Changes |
|---|---|
| `v16.0.0` | `updateTag` introduced. |

## Returns

Nothing.
";

const CACHING: &str = r"---
title: Caching
---

## Options

| Option | Type |
|---|---|
| `tags` | `string[]` |
| `revalidate` | `number` |
| `cache` | `string` |

## Tagging data

For example, you can tag a fetch so that a later mutation can expire it.

```ts
fetch(url, { next: { tags: ['posts'] } })
```

## Long explanation

Caching in the App Router happens at several layers, and each layer keeps its data for a different time. You should think of the data cache as a store that outlives a single request and is shared between users, while the request memoization only lasts for one render pass. The full route cache keeps the rendered output of static routes on the server between deployments.

## Background

The cache layers were introduced over several releases, and the names changed along the way as the design settled on what it is today.
";

/// The test docs as a folder outside the project, laid out like next.js's `docs/`.
pub(crate) fn docs(dir: &Path) -> PathBuf {
    let root = dir.join("docs");
    let api = root.join("01-app/03-api-reference/04-functions");
    std::fs::create_dir_all(&api).expect("docs folders");
    std::fs::write(api.join("updateTag.md"), UPDATE_TAG).expect("write a doc");
    std::fs::create_dir_all(root.join("01-app/01-getting-started")).expect("docs folders");
    std::fs::write(root.join("01-app/01-getting-started/caching.mdx"), CACHING).expect("write a doc");
    std::fs::write(root.join("01-app/01-getting-started/image.png"), "not a doc").expect("write a file");
    root
}

fn extract(out: &Path, docs: &Path, extra: &[&str]) -> crate::support::Run {
    let mut args = vec!["run", "scripts/docs_to_memories.rhai", "--out"];
    let out = out.display().to_string();
    let docs = docs.display().to_string();
    args.push(&out);
    args.extend(["--", "extract", &docs]);
    args.extend(extra);
    host_in(&repo_root(), &args)
}

fn rows(sql: &str) -> Value {
    duckdb(sql)["rows"].clone()
}

#[test]
fn every_section_is_kept_or_skipped_by_the_original_extractors_rules() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let run = dir.path().join("run");
    extract(&run, &docs(dir.path()), &[]).expect_code(0);
    let decisions = rows(&format!(
        "SELECT source, title, extract, reason FROM '{}' ORDER BY source, line",
        table(&run, "sections")
    ));
    assert_eq!(
        decisions,
        json!([
            ["01-app/01-getting-started/caching.mdx", "Options", false, "mostly a table"],
            ["01-app/01-getting-started/caching.mdx", "Tagging data", true, "3 medium signals"],
            ["01-app/01-getting-started/caching.mdx", "Long explanation", true, "1 medium signal in 371 characters"],
            ["01-app/01-getting-started/caching.mdx", "Background", false, "no signal"],
            ["01-app/03-api-reference/04-functions/updateTag.md", "updateTag", false, "too short"],
            ["01-app/03-api-reference/04-functions/updateTag.md", "Usage", true, "strong signal \"good to know\""],
            [
                "01-app/03-api-reference/04-functions/updateTag.md",
                "Version History",
                false,
                "title names version history"
            ],
            ["01-app/03-api-reference/04-functions/updateTag.md", "Returns", false, "too short"],
        ])
    );
}

#[test]
fn the_rule_extractor_writes_the_api_the_codes_imports_and_the_callout_as_a_memory() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let run = dir.path().join("run");
    extract(&run, &docs(dir.path()), &[]).expect_code(0);
    let memory = rows(&format!(
        "SELECT trigger, rule, example, api, category, imports, len(vector) FROM '{}' WHERE section = 'Usage'",
        table(&run, "memories")
    ));
    assert_eq!(
        memory,
        json!([[
            "updateTag next/cache.updateTag revalidateTag Usage",
            "`updateTag` can only be called from a Server Action; use `revalidateTag` in Route Handlers.",
            "'use server'\nimport { updateTag } from 'next/cache'\n\nexport async function save() {\n  updateTag('posts')\n}",
            "updateTag",
            "App Router",
            ["next/cache.updateTag"],
            384
        ]])
    );
    // The original's JSONL format: trigger, rule, source, section and the example when there is one.
    let jsonl = std::fs::read_to_string(run.join("memories.jsonl")).expect("memories.jsonl");
    let first: Value = serde_json::from_str(jsonl.lines().next().expect("a line")).expect("JSON");
    let mut keys: Vec<&str> = first.as_object().expect("an object").keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["example", "rule", "section", "source", "trigger"]);
    assert_eq!(jsonl.lines().count(), 3);
}

#[test]
fn a_dry_run_lists_every_section_with_its_decision_and_extracts_nothing() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let run = dir.path().join("run");
    let outcome = extract(&run, &docs(dir.path()), &["--dry-run"]);
    outcome.expect_code(0);
    // `print` goes to stderr: stdout stays free for a script's data.
    assert!(
        outcome.stderr.contains(
            "01-app/03-api-reference/04-functions/updateTag.md:8  ## Usage  → extract (strong signal \"good to know\")"
        ),
        "{}",
        outcome.stderr
    );
    assert!(outcome.stderr.contains("## Options  → skip (mostly a table)"), "{}", outcome.stderr);
    assert!(!run.join("memories.parquet").exists());
}

#[test]
fn the_llm_extractor_sends_the_seeds_prompt_and_keeps_json_replies_and_counts_skips() {
    let llm = FakeLlm::start();
    llm.always_reply(
        "Here it is:\n{\"trigger\": \"updateTag next/cache Server Action\", \"rule\": \"Call updateTag in Server Actions only.\"}",
    );
    let dir = tempfile::tempdir().expect("temporary directory");
    let docs = docs(dir.path());
    let run = dir.path().join("run");
    let base = llm.openai_base();
    let env = [("LLM_API_KEY", Some("k")), ("LLM_BASE_URL", Some(base.as_str())), ("ANTHROPIC_API_KEY", None)];
    let (out, docs_arg) = (run.display().to_string(), docs.display().to_string());
    host_in_with(
        &repo_root(),
        &["run", "scripts/docs_to_memories.rhai", "--out", &out, "--", "extract", &docs_arg, "--model", "fake-model"],
        &env,
    )
    .expect_code(0);
    let seen = llm.seen();
    assert_eq!(seen.len(), 3, "one request per selected section");
    let usage = seen.iter().find(|s| s.prompt.contains("Section: Usage")).expect("the Usage section's request");
    assert!(usage.prompt.starts_with("You are extracting actionable coding patterns from documentation.\n\nSection: Usage\nFrom: 01-app/03-api-reference/04-functions/updateTag.md\nAPI: updateTag\n\nContent:\n---\n> **Good to know**"), "{}", usage.prompt);
    assert!(usage.prompt.ends_with("Output valid JSON or nothing."), "{}", usage.prompt);
    let no_api = seen.iter().find(|s| s.prompt.contains("Section: Tagging data")).expect("a request");
    assert!(!no_api.prompt.contains("API:"), "a doc without an API name sends no API line: {}", no_api.prompt);
    // Three identical replies: the updateTag section's is enriched with its code's import; the
    // two caching sections' (no API, no imports) are one memory after dedupe.
    let memories =
        rows(&format!("SELECT source, trigger, extractor FROM '{}' ORDER BY source", table(&run, "memories")));
    assert_eq!(
        memories,
        json!([
            ["01-app/01-getting-started/caching.mdx", "updateTag next/cache Server Action", "llm:fake-model"],
            [
                "01-app/03-api-reference/04-functions/updateTag.md",
                "updateTag next/cache Server Action next/cache.updateTag",
                "llm:fake-model"
            ],
        ])
    );

    // A model that answers SKIP extracts nothing, and the report counts the skips.
    llm.always_reply("SKIP");
    let again = dir.path().join("again");
    let again_arg = again.display().to_string();
    host_in_with(
        &repo_root(),
        &[
            "run",
            "scripts/docs_to_memories.rhai",
            "--out",
            &again_arg,
            "--llm-cache",
            "off",
            "--",
            "extract",
            &docs_arg,
            "--model",
            "fake-model",
        ],
        &env,
    )
    .expect_code(1);
    let report = std::fs::read_to_string(again.join("report.md")).expect("report.md");
    assert!(report.contains("0 memories (0 duplicates dropped, 3 sections the model skipped)"), "{report}");
}

#[test]
fn resume_keeps_the_memories_of_the_sections_done_and_extracts_only_the_rest() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let docs = docs(dir.path());
    let first = dir.path().join("first");
    extract(&first, &docs, &[]).expect_code(0);
    // Pretend the first run stopped after one section.
    let progress = first.join("phases/progress.json");
    let done: Vec<String> = serde_json::from_str(&std::fs::read_to_string(&progress).expect("progress")).expect("JSON");
    let memories: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(first.join("phases/memories.json")).expect("memories"))
            .expect("JSON");
    std::fs::write(&progress, serde_json::to_string(&done[..1]).expect("JSON")).expect("write");
    let mut kept = memories[..1].to_vec();
    kept[0]["rule"] = json!("kept from the first run");
    std::fs::write(first.join("phases/memories.json"), serde_json::to_string(&kept).expect("JSON")).expect("write");

    let second = dir.path().join("second");
    extract(&second, &docs, &["--resume", &first.display().to_string()]).expect_code(0);
    let rules = rows(&format!("SELECT rule FROM '{}' ORDER BY id", table(&second, "memories")));
    let rules: Vec<&str> = rules.as_array().expect("rows").iter().filter_map(|row| row[0].as_str()).collect();
    assert_eq!(rules.len(), 3);
    assert!(rules.contains(&"kept from the first run"), "{rules:?}");
}

/// One mini-eval in the next-evals layout: a prompt, then a Write of `app/actions.ts` that
/// imports `updateTag`, whose doc is the gold one.
fn tiny_evals(dir: &Path) -> PathBuf {
    let eval = dir.join("evals/mh-001-update-tag");
    std::fs::create_dir_all(eval.join("reference/app")).expect("eval folders");
    std::fs::create_dir_all(eval.join("app")).expect("eval folders");
    std::fs::write(eval.join("PROMPT.md"), "Save the post in a server action and show it right away.\n")
        .expect("write");
    std::fs::write(eval.join("app/page.tsx"), "export default function Page() { return null }\n").expect("write");
    std::fs::write(
        eval.join("labels.json"),
        r#"{"gold_docs": ["01-app/03-api-reference/04-functions/updateTag.md"], "gold_apis": ["updateTag"], "why": "test"}"#,
    )
    .expect("write");
    std::fs::write(eval.join("reference.json"), r#"[{"path": "app/actions.ts", "kind": "write"}]"#).expect("write");
    std::fs::write(
        eval.join("reference/app/actions.ts"),
        "'use server'\nimport { updateTag } from 'next/cache'\n\nexport async function save() {\n  updateTag('posts')\n}\n",
    )
    .expect("write");
    dir.join("evals")
}

fn benchmark(
    out: &Path,
    docs: &Path,
    evals: &Path,
    env: &[(&str, Option<&str>)],
    extra: &[&str],
) -> crate::support::Run {
    let (out, docs, evals) = (out.display().to_string(), docs.display().to_string(), evals.display().to_string());
    let mut args = vec!["run", "scripts/memory_hook.rhai", "--out", &out, "--", "--docs", &docs, "--evals", &evals];
    args.extend(extra);
    host_in_with(&repo_root(), &args, env)
}

#[test]
fn the_offline_benchmark_matches_every_event_under_every_config_and_reports_from_summary_rows() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (docs, evals) = (docs(dir.path()), tiny_evals(dir.path()));
    let run = dir.path().join("run");
    let no_keys = [("LLM_API_KEY", None), ("ANTHROPIC_API_KEY", None), ("OPENAI_API_KEY", None)];
    benchmark(&run, &docs, &evals, &no_keys, &[]).expect_code(0);
    // Two events (the prompt, the Write) under each retrieving config; without keys the reranker's
    // rows say why they are not measured.
    let counts = rows(&format!(
        "SELECT config, count(*) FILTER (WHERE measured), count(*) FILTER (WHERE error LIKE 'no reranker reply%') \
         FROM '{}' GROUP BY config ORDER BY config",
        table(&run, "events")
    ));
    let measured = RETRIEVING_CONFIGS.iter().filter(|config| **config != "rerank").map(|config| json!([config, 2, 0]));
    let mut expected: Vec<Value> = measured.chain([json!(["rerank", 0, 2])]).collect();
    expected.sort_by_key(|row| row[0].as_str().unwrap_or_default().to_owned());
    assert_eq!(counts, json!(expected));
    // The Write imports next/cache.updateTag: with the import boost its doc's memory ranks first.
    let write = rows(&format!(
        "SELECT gold_rank, sources[1] FROM '{}' WHERE config = 'vector+imports' AND tool = 'Write'",
        table(&run, "events")
    ));
    assert_eq!(write, json!([[1, "01-app/03-api-reference/04-functions/updateTag.md"]]));
    let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    let mrr = rows(&format!(
        "SELECT value FROM '{}' WHERE config = 'vector+imports' AND metric = 'mrr'",
        table(&run, "summary")
    ));
    let mrr = mrr[0][0].as_f64().expect("a number");
    let row = report.lines().find(|l| l.starts_with("| `vector+imports`")).expect("the config's row");
    assert!(row.contains(&format!("{mrr:.3}")), "{row} shows the summary's MRR {mrr}");
    let rerank = report.lines().find(|l| l.starts_with("| `rerank`")).expect("the rerank row");
    assert!(rerank.contains("not measured"), "{rerank}");
    assert!(report.contains("`rerank`: no reranker reply could be had"), "{report}");
    // This test's cache pins no revision of the real suite: it is not measured, and the report
    // says how to set it up; nothing was cloned from elsewhere.
    let real = report.split("## next-evals-oss").nth(1).expect("the real suite's section");
    assert!(real.contains("Not measured") && real.contains("memory_hook_bench.rhai -- setup --commit <sha>"), "{real}");
    let line = real.lines().find(|line| line.starts_with("Not measured")).expect("the line");
    assert_eq!(line.matches("hint:").count(), 1, "one hint, not one inside another: {line}");
    assert!(!run.join("suite").exists());
    let index = rows(&format!("SELECT value FROM '{}' WHERE config = 'agents-md'", table(&run, "summary")));
    assert!(index[0][0].as_f64().expect("a number") > 100.0, "the docs index has a size: {index}");
    // report.html draws the same numbers.
    crate::report_html::assert_every_chart_draws(
        &run.join("report.html"),
        &["Hit rate by config", "Matching latency per event", "Paired differences in MRR"],
    );
}

/// The configs of the offline benchmark that retrieve (all but `agents-md`).
const RETRIEVING_CONFIGS: [&str; 10] = [
    "bm25-docs",
    "bm25-docs+imports",
    "bm25-sections",
    "bm25-sections+imports",
    "vector",
    "vector+imports",
    "hybrid",
    "hybrid+imports",
    "docs",
    "rerank",
];

const UPDATE_TAG_DOC: &str = "01-app/03-api-reference/04-functions/updateTag.md";
const CACHING_DOC: &str = "01-app/01-getting-started/caching.mdx";

/// A real-like suite in both layouts, with its labels: `001-update-tag` (`prompt.md` and
/// `input/`), `agent-002-tagged-fetch` (`PROMPT.md` and `EVAL.ts`), `003-plain-react` (labelled
/// with no gold doc: no doc answers it) and `004-not-labelled`. Returns (suite root, labels).
fn small_suite(dir: &Path) -> (PathBuf, PathBuf) {
    let root = dir.join("tiny-suite");
    let write = |path: &str, content: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("eval folders");
        std::fs::write(path, content).expect("write");
    };
    write(
        "evals/001-update-tag/prompt.md",
        "Should I call revalidateTag or updateTag after a Server Action saves a post?\n",
    );
    write("evals/001-update-tag/input/app/page.tsx", "export default function Page() { return null }\n");
    write("evals/agent-002-tagged-fetch/PROMPT.md", "Tag the posts fetch so that a later mutation can expire it.\n");
    write("evals/agent-002-tagged-fetch/EVAL.ts", "test('tags the fetch', () => {})\n");
    write("evals/003-plain-react/prompt.md", "Knit a scarf from blue wool for the winter.\n");
    write("evals/004-not-labelled/prompt.md", "Anything at all.\n");
    write("evals/package.json", "{}\n");
    let labels = dir.join("labels.json");
    let body = json!({ "evals": {
        "001-update-tag": { "gold_docs": [UPDATE_TAG_DOC], "split": "tune" },
        "agent-002-tagged-fetch": { "gold_docs": [CACHING_DOC], "split": "holdout" },
        "003-plain-react": { "gold_docs": [], "split": "tune" },
    } });
    std::fs::write(&labels, body.to_string()).expect("write labels");
    (root, labels)
}

#[test]
fn the_benchmark_scores_a_suite_in_either_layout_by_doc_against_its_labels_under_every_config() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (docs, evals) = (docs(dir.path()), tiny_evals(dir.path()));
    let (suite, labels) = small_suite(dir.path());
    let run = dir.path().join("run");
    let (suite_arg, labels_arg) = (suite.display().to_string(), labels.display().to_string());
    let no_keys = [("LLM_API_KEY", None), ("ANTHROPIC_API_KEY", None), ("OPENAI_API_KEY", None)];
    benchmark(&run, &docs, &evals, &no_keys, &["--evals-dir", &suite_arg, "--labels", &labels_arg]).expect_code(0);
    let events = table(&run, "events");
    // The labelled evals of both layouts, one prompt event each; the unlabelled one is not read.
    let scored = rows(&format!(
        "SELECT eval_id, split, event, answerable FROM '{events}' WHERE suite = 'tiny-suite' AND config = 'docs' ORDER BY eval_id"
    ));
    assert_eq!(
        scored,
        json!([
            ["001-update-tag", "tune", "UserPromptSubmit", true],
            ["003-plain-react", "tune", "UserPromptSubmit", false],
            ["agent-002-tagged-fetch", "holdout", "UserPromptSubmit", true]
        ])
    );
    // Scored by doc: the first prompt's gold doc is injected first; the second's comes after
    // updateTag's (which expires a tag too), and every metric follows from that rank.
    let docs_rows = rows(&format!(
        "SELECT eval_id, sources[1], gold_rank, reciprocal_rank, hit_1, hit_3, hit_5 FROM '{events}' \
         WHERE suite = 'tiny-suite' AND config = 'docs' AND answerable ORDER BY eval_id"
    ));
    assert_eq!(
        docs_rows,
        json!([
            ["001-update-tag", UPDATE_TAG_DOC, 1, 1.0, true, true, true],
            ["agent-002-tagged-fetch", UPDATE_TAG_DOC, 2, 0.5, false, true, true]
        ])
    );
    // A doc-level config names each doc once: one doc's sections never fill the injection twice.
    let repeated = rows(&format!(
        "SELECT config, eval_id FROM '{events}' WHERE measured AND (config LIKE 'bm25%' OR config = 'docs') \
         AND len(sources) != len(list_distinct(sources))"
    ));
    assert_eq!(repeated, json!([]));
    let docs_counts =
        rows(&format!("SELECT DISTINCT docs = len(list_distinct(sources)) FROM '{events}' WHERE config = 'docs'"));
    assert_eq!(docs_counts, json!([[true]]));
    // The summary's numbers are the events' means over the answerable events, by split too.
    let summary = rows(&format!(
        "SELECT metric, value, n FROM '{}' WHERE suite = 'tiny-suite' AND config = 'docs' \
         AND metric IN ('hit_5', 'mrr', 'tune_hit_5', 'holdout_mrr') ORDER BY metric",
        table(&run, "summary")
    ));
    assert_eq!(summary, json!([["hit_5", 1.0, 2], ["holdout_mrr", 0.5, 1], ["mrr", 0.75, 2], ["tune_hit_5", 1.0, 1]]));
    let unanswerable = rows(&format!(
        "SELECT n FROM '{}' WHERE suite = 'tiny-suite' AND config = 'bm25-docs' AND metric = 'unanswerable_chars'",
        table(&run, "summary")
    ));
    assert_eq!(unanswerable, json!([[1]]), "the prompt no doc answers is measured apart");
    // The report has the suite's section, a row for every config, and the mini-evals beside it.
    let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    assert!(report.contains("## mini-evals"), "{report}");
    let section = report.split("## tiny-suite").nth(1).expect("the suite's section");
    for config in RETRIEVING_CONFIGS.iter().chain(&["agents-md"]) {
        assert!(section.contains(&format!("| `{config}` ")), "a row for {config}: {section}");
    }
    assert!(section.contains("1 evals of the suite are not labelled"), "{section}");
    assert!(section.contains("docs vs bm25-docs"), "paired against BM25: {section}");
}

#[test]
fn the_reranker_orders_the_candidates_as_the_model_answers() {
    let llm = FakeLlm::start();
    llm.always_reply("Relevant: [2, 1, 9]");
    let dir = tempfile::tempdir().expect("temporary directory");
    let (docs, evals) = (docs(dir.path()), tiny_evals(dir.path()));
    let run = dir.path().join("run");
    let base = llm.openai_base();
    let env = [("LLM_API_KEY", Some("k")), ("LLM_BASE_URL", Some(base.as_str())), ("ANTHROPIC_API_KEY", None)];
    benchmark(&run, &docs, &evals, &env, &["--configs", "docs,rerank", "--rerank-model", "fake-model"]).expect_code(0);
    // One rerank request per event that has candidates (the prompt may have none above the
    // floor), never one with an empty list; the requests arrive in any order.
    let seen = llm.seen();
    assert!((1..=2).contains(&seen.len()), "one rerank request per event with candidates: {}", seen.len());
    for request in &seen {
        assert!(
            request.prompt.contains("[1] ") && request.prompt.contains("Answer with a JSON array"),
            "{}",
            request.prompt
        );
    }
    // The model puts the hook's second candidate (from `docs`' ranking) first; a number it names
    // that is not a candidate (9, or 2 when there is one candidate) is ignored.
    let picked = rows(&format!(
        "SELECT event_index, len(h.memory_ids), CASE WHEN len(h.memory_ids) >= 2 \
           THEN r.memory_ids[1:2] = [h.memory_ids[2], h.memory_ids[1]] ELSE r.memory_ids = h.memory_ids END \
         FROM '{0}' h JOIN '{0}' r USING (event_index) WHERE h.config = 'docs' AND r.config = 'rerank' ORDER BY event_index",
        table(&run, "events")
    ));
    let picked = picked.as_array().expect("rows");
    assert_eq!(picked.len(), 2);
    assert!(picked.iter().all(|row| row[2] == json!(true)), "{picked:?}");
    assert!(picked[1][1].as_i64().expect("a count") >= 2, "the Write has several candidates to order: {picked:?}");
}

/// The mini-evals in the order the benchmark works on them.
const MINI_EVALS: [&str; 17] = [
    "mh-001-update-tag-action",
    "mh-002-use-cache-products",
    "mh-003-revalidate-tag-webhook",
    "mh-004-cookies-theme",
    "mh-005-async-params-page",
    "mh-006-route-handler-params",
    "mh-007-after-analytics",
    "mh-008-connection-random",
    "mh-009-forbidden-admin",
    "mh-010-proxy-auth-redirect",
    "mh-011-link-status-indicator",
    "mh-012-unstable-rethrow",
    "mh-013-permanent-redirect",
    "mh-014-og-image",
    "mh-015-generate-static-params",
    "mh-016-draft-mode-preview",
    "mh-017-refresh-after-action",
];

/// A run's report.md with the latencies (the only timings it shows) masked and the padding of
/// its tables, which follows their widths, taken out.
fn report_without_timings(run: &Path) -> String {
    let text = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    let timing = regex_lite::Regex::new(r"\d+(\.\d+)?( / \d+(\.\d+)?)? ms").expect("a valid pattern");
    unpadded(&timing.replace_all(&stable(&text, &repo_root()), "[MS]"))
}

#[test]
fn a_run_killed_between_evals_resumes_to_the_tables_and_report_of_one_run() {
    // The mini-evals on the test docs, every config: each eval asks the reranker (a loopback
    // model that answers after a second) about its events, so a run lasts long enough to be
    // killed after its tenth eval, its first rows flushed.
    let llm = FakeLlm::start();
    llm.always_reply("Relevant: [2, 1]").latency(Duration::from_secs(1));
    let dir = tempfile::tempdir().expect("temporary directory");
    let docs = docs(dir.path()).display().to_string();
    let base = llm.openai_base();
    let env = [
        ("LLM_API_KEY", Some("k")),
        ("LLM_BASE_URL", Some(base.as_str())),
        ("ANTHROPIC_API_KEY", None),
        ("OPENAI_API_KEY", None),
    ];
    let killed = KillTest {
        dir: dir.path(),
        cwd: &repo_root(),
        script: "scripts/memory_hook.rhai",
        args: &["--docs", &docs, "--rerank-model", "fake-model"],
        env: &env,
        kill_after: "evals/mini-evals_mh-010-proxy-auth-redirect.json",
        table: "events",
        // The calls to the reranker: the uninterrupted run replays what the other two recorded.
        apart: &["llm_calls", "llm_answers"],
    }
    .run();
    // The ten evals the killed run saved are kept, each whole; the others were done again.
    let resumed = &killed.manifest["settings"]["resumed"];
    let names = |list: &Value| -> Vec<String> {
        list.as_array().expect("a list").iter().map(|id| id.as_str().expect("an id").to_owned()).collect()
    };
    let all: Vec<String> = MINI_EVALS.iter().map(|id| format!("mini-evals/{id}")).collect();
    let (kept, redone) = (names(&resumed["kept"]), names(&resumed["redone"]));
    assert_eq!(kept, all[..kept.len()], "the evals finished in order are kept");
    assert!(kept.len() >= 10 && !redone.is_empty(), "kept {kept:?}, redone {redone:?}");
    assert_eq!([kept.clone(), redone].concat(), all);
    // The dead run's rows are those of evals it saved (an eval's rows go to the table as it ends).
    let dead = rows(&format!(
        "SELECT DISTINCT 'mini-evals/' || eval_id FROM read_parquet('{}/**/events*.parquet')",
        killed.killed.display()
    ));
    let dead: Vec<&str> = dead.as_array().expect("rows").iter().map(|row| row[0].as_str().expect("an id")).collect();
    assert!(!dead.is_empty() && dead.iter().all(|id| kept.iter().any(|k| k == id)), "{dead:?} of {kept:?}");
    assert_eq!(report_without_timings(&killed.resumed), report_without_timings(&dir.path().join("whole")));
    let report = std::fs::read_to_string(killed.resumed.join("report.md")).expect("report.md");
    assert!(report.lines().any(|l| l.starts_with("| `rerank`") && !l.contains("not measured")), "{report}");

    // Evals saved with another setting are not taken over: the run stops, naming it.
    let (other, from) = (dir.path().join("other").display().to_string(), killed.killed.display().to_string());
    let args =
        ["run", "scripts/memory_hook.rhai", "--out", &other, "--", "--docs", &docs, "--k", "3", "--resume", &from];
    let refused = host_in_with(&repo_root(), &args, &env);
    assert!(
        refused.code != 0 && refused.stderr.contains("was made with k `5`, this run has `3`"),
        "{}",
        refused.stderr
    );
}

/// A memory store from the test docs, and a hook folder of its own for a test.
pub(crate) fn store(dir: &Path) -> PathBuf {
    let run = dir.join("store");
    extract(&run, &docs(dir), &[]).expect_code(0);
    run
}

fn prompt_event(session: &str, prompt: &str) -> String {
    json!({ "session_id": session, "hook_event_name": "UserPromptSubmit", "cwd": "/", "prompt_id": "p",
            "permission_mode": "bypassPermissions", "transcript_path": "/dev/null", "prompt": prompt })
    .to_string()
}

/// `host hook scripts/hook_memory.rhai -- --memories STORE [extra]` on `event`, logging to `hooks`.
fn hook(hooks: &Path, store: &Path, event: &str, env: &[(&str, Option<&str>)], extra: &[&str]) -> crate::support::Run {
    let (hooks, store) = (hooks.display().to_string(), store.display().to_string());
    let mut all_env = vec![("HOST_HOOK_DIR", Some(hooks.as_str())), ("LLM_API_KEY", None), ("ANTHROPIC_API_KEY", None)];
    all_env.extend_from_slice(env);
    let mut args = vec!["hook", "scripts/hook_memory.rhai", "--", "--memories", &store];
    args.extend(extra);
    crate::support::host_with_stdin(&repo_root(), &args, &all_env, event)
}

fn log_lines(hooks: &Path) -> Vec<Value> {
    std::fs::read_to_string(hooks.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

#[test]
fn the_hook_answers_a_prompt_about_update_tag_with_the_memory_from_its_doc() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (store, hooks) = (store(dir.path()), dir.path().join("hooks"));
    let event = prompt_event("s1", "Should I call revalidateTag or updateTag after a Server Action saves a post?");
    let outcome = hook(&hooks, &store, &event, &[], &["--no-rerank"]);
    outcome.expect_code(0);
    let answer: Value = serde_json::from_str(outcome.stdout.trim()).expect("one JSON object on stdout");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().expect("the context");
    assert!(context.contains("`updateTag` can only be called from a Server Action"), "{context}");
    assert!(context.contains("[Source: 01-app/03-api-reference/04-functions/updateTag.md - Usage]"), "{context}");
    let lines = log_lines(&hooks);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["outcome"], "ok");
    assert_eq!(lines[0]["event"], "UserPromptSubmit");
    assert_eq!(lines[0]["reranked"], false);
    assert!(
        lines[0]["memory_ids"]
            .as_array()
            .expect("ids")
            .contains(&json!("01-app/03-api-reference/04-functions/updateTag.md#8")),
        "{}",
        lines[0]
    );
    assert!(lines[0]["latency_ms"].as_f64().is_some());
}

#[test]
fn a_memory_is_injected_at_most_once_per_agent_session() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (store, hooks) = (store(dir.path()), dir.path().join("hooks"));
    let event = prompt_event("s1", "Should I call revalidateTag or updateTag after a Server Action saves a post?");
    let first = hook(&hooks, &store, &event, &[], &["--no-rerank"]);
    assert!(!first.expect_code(0).stdout.is_empty());
    let again = hook(&hooks, &store, &event, &[], &["--no-rerank"]);
    assert_eq!(again.expect_code(0).stdout, "", "everything was injected before in this session");
    let other = hook(
        &hooks,
        &store,
        &prompt_event("s2", "Should I call revalidateTag or updateTag after a Server Action saves a post?"),
        &[],
        &["--no-rerank"],
    );
    assert!(!other.expect_code(0).stdout.is_empty(), "another session gets them again");
    let lines = log_lines(&hooks);
    assert!(lines[1]["already_injected"].as_i64().expect("a count") > 0, "{}", lines[1]);
}

#[test]
fn the_hook_fails_open_on_garbage_and_on_a_failing_script() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let hooks = dir.path().join("hooks");
    let missing = dir.path().join("no-store");
    let garbage = hook(&hooks, &missing, "this is not JSON {", &[], &[]);
    garbage.expect_code(0);
    assert_eq!(garbage.stdout, "");
    let broken = hook(&hooks, &missing, &prompt_event("s1", "anything"), &[], &[]);
    broken.expect_code(0);
    assert_eq!(broken.stdout, "", "a script that fails injects nothing");
    let lines = log_lines(&hooks);
    assert_eq!(lines[0]["outcome"], "ignored");
    assert_eq!(lines[1]["outcome"], "failed");
    assert!(lines[1]["error"].as_str().expect("an error").contains("the script failed"), "{}", lines[1]);
}

#[test]
fn a_warm_server_answers_later_events_as_the_process_did_and_exits_when_idle() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (store, hooks) = (store(dir.path()), dir.path().join("hooks"));
    // A cache folder of its own, so that this test's server socket is the only one in it.
    let cache = dir.path().join("cache");
    let (store, hooks_shown, cache_shown) =
        (store.display().to_string(), hooks.display().to_string(), cache.display().to_string());
    let env = [
        ("HOST_HOOK_DIR", Some(hooks_shown.as_str())),
        ("HOST_CACHE_DIR", Some(cache_shown.as_str())),
        ("HOST_HOOK_NO_SERVER", None),
        ("LLM_API_KEY", None),
        ("ANTHROPIC_API_KEY", None),
    ];
    // Idle long enough to outlast the first call, which in a new cache also prepares the model's
    // graph for later processes.
    let args = ["hook", "--server-idle", "10", "scripts/hook_memory.rhai", "--", "--memories", &store, "--no-rerank"];
    let question = "Should I call revalidateTag or updateTag after a Server Action saves a post?";
    let ask =
        |session: &str| crate::support::host_with_stdin(&repo_root(), &args, &env, &prompt_event(session, question));
    let sockets = || std::fs::read_dir(cache.join("hook")).map(|entries| entries.flatten().count()).unwrap_or(0);

    let first = ask("s1");
    assert!(!first.expect_code(0).stdout.is_empty());
    let started = std::time::Instant::now();
    while sockets() == 0 && started.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(sockets(), 1, "the first call started a server");
    let second = ask("s2");
    assert_eq!(second.expect_code(0).stdout, first.stdout, "the server injects what the process did");
    let lines = log_lines(&hooks);
    let answered: Vec<&Value> = lines.iter().map(|line| &line["answered_by"]).collect();
    assert_eq!(answered, [&json!("process"), &json!("server")]);
    assert_eq!(lines[0]["memory_ids"], lines[1]["memory_ids"]);

    let idle = std::time::Instant::now();
    while sockets() > 0 && idle.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(sockets(), 0, "an idle server exits and removes its socket");
}

#[test]
fn a_write_event_is_matched_by_the_files_imports() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (store, hooks) = (store(dir.path()), dir.path().join("hooks"));
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let workspace = std::fs::canonicalize(&workspace).expect("canonical");
    let event = json!({
        "session_id": "s1", "hook_event_name": "PreToolUse", "cwd": workspace, "tool_name": "Write",
        "tool_input": { "file_path": workspace.join("app/actions.ts"),
                        "content": "'use server'\nimport { updateTag } from 'next/cache'\n\nexport async function save() {}\n" },
    });
    let outcome = hook(&hooks, &store, &event.to_string(), &[], &["--no-rerank"]);
    outcome.expect_code(0);
    let answer: Value = serde_json::from_str(outcome.stdout.trim()).expect("one JSON object on stdout");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    let line = &log_lines(&hooks)[0];
    assert_eq!(line["tool"], "Write");
    assert_eq!(line["imports"], json!(["next/cache.updateTag"]));
    assert_eq!(
        line["memory_ids"][0], "01-app/03-api-reference/04-functions/updateTag.md#8",
        "the boosted memory first: {line}"
    );
}

#[test]
fn the_hook_reranks_with_the_model_and_falls_back_when_it_cannot_be_reached() {
    let llm = FakeLlm::start();
    llm.always_reply("[1]");
    let dir = tempfile::tempdir().expect("temporary directory");
    let (store, hooks) = (store(dir.path()), dir.path().join("hooks"));
    let base = llm.openai_base();
    let env = [("LLM_API_KEY", Some("k")), ("LLM_BASE_URL", Some(base.as_str()))];
    let event = prompt_event("s1", "Should I call revalidateTag or updateTag after a Server Action saves a post?");
    hook(&hooks, &store, &event, &env, &["--rerank-model", "fake-model"]).expect_code(0);
    llm.always(Fault::status(StatusCode::INTERNAL_SERVER_ERROR));
    hook(
        &hooks,
        &store,
        &prompt_event("s2", "How do I tag a fetch for later revalidation?"),
        &env,
        &["--rerank-model", "fake-model"],
    )
    .expect_code(0);
    let lines = log_lines(&hooks);
    assert_eq!(lines[0]["reranked"], true);
    assert_eq!(lines[0]["memory_ids"].as_array().expect("ids").len(), 1, "the model kept one: {}", lines[0]);
    assert_eq!(
        lines[1]["reranked"], false,
        "no reply: the matches above the threshold, as the original fell back: {}",
        lines[1]
    );
    assert!(llm.seen().iter().any(|seen| seen.prompt.contains("Answer with a JSON array")));
}

/// The context the hook answered with (empty when it injected nothing).
fn context_of(outcome: &crate::support::Run) -> String {
    if outcome.stdout.trim().is_empty() {
        return String::new();
    }
    let answer: Value = serde_json::from_str(outcome.stdout.trim()).expect("one JSON object on stdout");
    answer["hookSpecificOutput"]["additionalContext"].as_str().expect("the context").to_owned()
}

#[test]
fn an_unreachable_reranker_injects_exactly_what_no_rerank_does() {
    let llm = FakeLlm::start();
    llm.always(Fault::status(StatusCode::INTERNAL_SERVER_ERROR));
    let dir = tempfile::tempdir().expect("temporary directory");
    let (store, hooks) = (store(dir.path()), dir.path().join("hooks"));
    let base = llm.openai_base();
    let env = [("LLM_API_KEY", Some("k")), ("LLM_BASE_URL", Some(base.as_str()))];
    for (i, prompt) in [
        "Should I call revalidateTag or updateTag after a Server Action saves a post?",
        "How do I tag a fetch for later revalidation?",
    ]
    .iter()
    .enumerate()
    {
        let failed =
            hook(&hooks, &store, &prompt_event(&format!("a{i}"), prompt), &env, &["--rerank-model", "fake-model"]);
        let plain = hook(&hooks, &store, &prompt_event(&format!("b{i}"), prompt), &env, &["--no-rerank"]);
        let (failed, plain) = (context_of(failed.expect_code(0)), context_of(plain.expect_code(0)));
        assert!(!plain.is_empty(), "{prompt}: the hook injects something");
        assert_eq!(failed, plain, "{prompt}: the same memories, in the same order");
    }
    let lines = log_lines(&hooks);
    assert_eq!(lines.len(), 4);
    for pair in lines.chunks(2) {
        assert_eq!(pair[0]["reranked"], false);
        assert_eq!(pair[0]["memory_ids"], pair[1]["memory_ids"], "{pair:?}");
    }
    assert!(!llm.seen().is_empty(), "the reranker was asked");
}

/// Eight docs about tagging cached data, each one section long enough that its memory (rule and
/// example) takes about 900 characters.
fn tagging_docs(dir: &Path) -> PathBuf {
    let root = dir.join("docs");
    let folder = root.join("01-app/02-guides");
    std::fs::create_dir_all(&folder).expect("docs folders");
    for i in 1..=8 {
        let code: Vec<String> = (1..=12)
            .map(|line| {
                format!("const tagged{line} = await fetch(url{line}, {{ next: {{ tags: ['posts-{i}-{line}'] }} }})")
            })
            .collect();
        let doc = format!(
            "---\ntitle: Tagging cached data {i}\ndescription: How to tag cached data and revalidate it by tag.\n---\n\n\
             ## Tagging cached data\n\n\
             You should tag cached data with a cache tag so that a later mutation can revalidate every entry that carries the tag in one call, \
             which keeps the cached pages of posts fresh after an edit in variant {i}. \
             You should call revalidateTag with the same tag in a Server Action after the mutation, and the next request then renders the page with new data for every user. \
             You should keep the tags short and stable, for example the name of the collection, so that the cache tag of a fetch and the tag you revalidate always agree.\n\n\
             ```ts\n{}\n```\n",
            code.join("\n")
        );
        std::fs::write(folder.join(format!("tagging-{i}.md")), doc).expect("write a doc");
    }
    root
}

#[test]
fn the_hook_injects_one_memory_per_doc_within_its_character_budget_each_naming_its_source() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = dir.path().join("store");
    extract(&store, &tagging_docs(dir.path()), &[]).expect_code(0);
    let hooks = dir.path().join("hooks");
    let prompt = "How do I tag cached data and revalidate the cache tag after a mutation?";
    let outcome = hook(&hooks, &store, &prompt_event("s1", prompt), &[], &["--no-rerank"]);
    let context = context_of(outcome.expect_code(0));
    let ids: Vec<String> = log_lines(&hooks)[0]["memory_ids"]
        .as_array()
        .expect("ids")
        .iter()
        .map(|id| id.as_str().expect("an id").to_owned())
        .collect();
    // Every memory of the store is about ~900 characters: five would be over the budget.
    let sizes = rows(&format!(
        "SELECT id, len(rule) + coalesce(len(example), 0), source FROM '{}' ORDER BY id",
        table(&store, "memories")
    ));
    let sizes = sizes.as_array().expect("rows");
    assert_eq!(sizes.len(), 8, "one memory per doc: {sizes:?}");
    assert!(sizes.iter().all(|row| row[1].as_i64().expect("a size") > 700), "{sizes:?}");
    let injected: Vec<&Value> = sizes.iter().filter(|row| ids.iter().any(|id| row[0] == json!(id))).collect();
    let total: i64 = injected.iter().map(|row| row[1].as_i64().expect("a size")).sum();
    assert!(ids.len() >= 2 && ids.len() < 5, "the budget stops the injection: {ids:?}");
    assert!(total <= 3000, "{total} characters of memories, over the budget of 3,000");
    // One memory per doc, and each names its doc and section for the independent check.
    let mut sources: Vec<&Value> = injected.iter().map(|row| &row[2]).collect();
    sources.dedup();
    assert_eq!(sources.len(), ids.len(), "{sources:?}");
    for row in &injected {
        let line = format!("[Source: {} - Tagging cached data]", row[2].as_str().expect("a path"));
        assert_eq!(context.matches(&line).count(), 1, "{line} in {context}");
    }
    assert_eq!(context.matches("[Source: ").count(), ids.len(), "{context}");
}

#[test]
fn hook_install_prints_the_settings_block_and_merges_it_into_a_workspace() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = store(dir.path());
    let store_arg = store.display().to_string();
    let printed = host_in(&repo_root(), &["hook", "install", "--memories", &store_arg]);
    printed.expect_code(0);
    let block: Value = serde_json::from_str(&printed.stdout).expect("JSON");
    let command = block["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].as_str().expect("a command");
    assert!(
        command.contains(" hook ") && command.ends_with(&format!("scripts/hook_memory.rhai -- --memories {store_arg}")),
        "{command}"
    );
    assert_eq!(block["hooks"]["PreToolUse"][0]["matcher"], "Edit|Write");

    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(workspace.join(".claude")).expect("workspace");
    std::fs::write(workspace.join(".claude/settings.json"), r#"{"model": "keep-me"}"#).expect("write");
    let ws = workspace.display().to_string();
    host_in(&repo_root(), &["hook", "install", "--memories", &store_arg, "--no-rerank", "--write", "--workspace", &ws])
        .expect_code(0);
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(workspace.join(".claude/settings.json")).expect("settings"))
            .expect("JSON");
    assert_eq!(settings["model"], "keep-me");
    assert!(
        settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
            .as_str()
            .expect("a command")
            .ends_with(" --no-rerank")
    );
    let missing = host_in(&repo_root(), &["hook", "install", "--memories", "/nonexistent/store"]);
    missing.expect_code(2);
    assert!(missing.stderr.contains("does not exist"), "{}", missing.stderr);
}

#[test]
fn hook_install_carries_the_guest_path_it_was_run_with_as_absolute_folders() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let store = store(dir.path());
    let store_arg = store.display().to_string();
    let guest_path = [("HOST_GUEST_PATH", Some("my guests:/opt/guests"))];
    let printed = host_in_with(dir.path(), &["hook", "install", "--memories", &store_arg], &guest_path);
    printed.expect_code(0);
    let block: Value = serde_json::from_str(&printed.stdout).expect("JSON");
    let command = block["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].as_str().expect("a command");
    let cwd = dir.path().canonicalize().expect("canonical");
    let expected = format!("HOST_GUEST_PATH='{}/my guests:/opt/guests' ", cwd.display());
    assert!(command.starts_with(&expected), "{command}");

    let without =
        host_in_with(dir.path(), &["hook", "install", "--memories", &store_arg], &[("HOST_GUEST_PATH", None)]);
    assert!(!without.stdout.contains("HOST_GUEST_PATH"), "{}", without.stdout);
}

/// The real development set: next-evals-oss at the pinned commit, cloned from the bundle in
/// `../shared/datasets`, scored against the committed labels with the next@16.2.0 docs.
#[test]
#[ignore = "needs ../shared/datasets/next-evals-oss.bundle and the next@16.2.0 package"]
fn on_the_real_development_set_the_hooks_keyless_default_beats_bm25_over_whole_docs_by_015() {
    let bundle = repo_root().join("../shared/datasets/next-evals-oss.bundle");
    let dir = tempfile::tempdir().expect("temporary directory");
    let suite = dir.path().join("next-evals-oss");
    let cloned = std::process::Command::new("git")
        .arg("clone")
        .arg("--quiet")
        .arg(&bundle)
        .arg(&suite)
        .status()
        .expect("run git");
    assert!(cloned.success(), "clone {}", bundle.display());
    let checkout = std::process::Command::new("git")
        .args(["checkout", "--quiet", "98397f2dbb633ae62dadf5f1bf503e162913a2de"])
        .current_dir(&suite)
        .status()
        .expect("run git");
    assert!(checkout.success());
    // The docs of the next@16.2.0 package in the user's cache (this test's cache is a temporary one).
    let cache = std::env::var("HOST_CACHE_DIR")
        .map_or_else(|_| PathBuf::from(std::env::var("HOME").expect("HOME")).join(".cache/host"), PathBuf::from);
    let docs = cache.join("npm/next@16.2.0/package/dist/docs").display().to_string();
    let run = dir.path().join("run");
    let suite_arg = suite.display().to_string();
    let args = [
        "run",
        "scripts/memory_hook.rhai",
        "--out",
        &run.display().to_string(),
        "--",
        "--docs",
        &docs,
        "--evals-dir",
        &suite_arg,
        "--configs",
        "bm25-docs,docs",
    ]
    .map(ToString::to_string);
    let no_keys = [("LLM_API_KEY", None), ("ANTHROPIC_API_KEY", None), ("OPENAI_API_KEY", None)];
    host_in_with(&repo_root(), &args.each_ref().map(String::as_str), &no_keys).expect_code(0);
    let value = |config: &str, metric: &str| {
        rows(&format!(
            "SELECT value FROM '{}' WHERE suite = 'next-evals-oss' AND config = '{config}' AND metric = '{metric}'",
            table(&run, "summary")
        ))[0][0]
            .as_f64()
            .expect("a number")
    };
    for metric in ["hit_5", "mrr"] {
        let (docs, bm25) = (value("docs", metric), value("bm25-docs", metric));
        assert!(docs - bm25 >= 0.15, "{metric}: docs {docs:.3} against bm25-docs {bm25:.3}");
    }
}
