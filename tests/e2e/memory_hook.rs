//! memory-hook, part 1: `host run scripts/docs_to_memories.rhai -- extract <docs>` on small docs
//! written for these tests: the original extractor's decision for every section, the rule
//! extractor's memories, the LLM extractor with the seed's prompt against the loopback fake,
//! `--dry-run` and `--resume`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::fake_llm::{FakeLlm, Fault};
use crate::support::{duckdb, host_in, host_in_with, repo_root, table};

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
fn docs(dir: &Path) -> PathBuf {
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
    llm.always(Fault::Reply(
        "Here it is:\n{\"trigger\": \"updateTag next/cache Server Action\", \"rule\": \"Call updateTag in Server Actions only.\"}".into(),
    ));
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
    llm.always(Fault::Reply("SKIP".into()));
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
    // Two events (the prompt, the Write) under each retrieving config; no reranker without keys.
    let counts =
        rows(&format!("SELECT config, count(*) FROM '{}' GROUP BY config ORDER BY config", table(&run, "events")));
    assert_eq!(counts, json!([["hybrid", 2], ["vector", 2], ["vector+imports", 2]]));
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
    let index = rows(&format!("SELECT value FROM '{}' WHERE config = 'agents-md'", table(&run, "summary")));
    assert!(index[0][0].as_f64().expect("a number") > 100.0, "the docs index has a size: {index}");
}

#[test]
fn the_reranker_orders_the_candidates_as_the_model_answers() {
    let llm = FakeLlm::start();
    llm.always(Fault::Reply("Relevant: [2, 1, 9]".into()));
    let dir = tempfile::tempdir().expect("temporary directory");
    let (docs, evals) = (docs(dir.path()), tiny_evals(dir.path()));
    let run = dir.path().join("run");
    let base = llm.openai_base();
    let env = [("LLM_API_KEY", Some("k")), ("LLM_BASE_URL", Some(base.as_str())), ("ANTHROPIC_API_KEY", None)];
    benchmark(
        &run,
        &docs,
        &evals,
        &env,
        &["--configs", "hybrid,rerank", "--rerank-model", "fake-model", "--threshold", "0"],
    )
    .expect_code(0);
    let seen = llm.seen();
    assert_eq!(seen.len(), 2, "one rerank request per event");
    assert!(
        seen[1].prompt.contains("[1] ") && seen[1].prompt.contains("Answer with a JSON array"),
        "{}",
        seen[1].prompt
    );
    // The model puts hybrid's second candidate first; a number it names that is not a candidate (9,
    // or 2 when there is one candidate) is ignored.
    let picked = rows(&format!(
        "SELECT event_index, len(h.memory_ids), CASE WHEN len(h.memory_ids) >= 2 \
           THEN r.memory_ids[1:2] = [h.memory_ids[2], h.memory_ids[1]] ELSE r.memory_ids = h.memory_ids END \
         FROM '{0}' h JOIN '{0}' r USING (event_index) WHERE h.config = 'hybrid' AND r.config = 'rerank' ORDER BY event_index",
        table(&run, "events")
    ));
    let picked = picked.as_array().expect("rows");
    assert_eq!(picked.len(), 2);
    assert!(picked.iter().all(|row| row[2] == json!(true)), "{picked:?}");
    assert!(picked[1][1].as_i64().expect("a count") >= 2, "the Write has several candidates to order: {picked:?}");
}
