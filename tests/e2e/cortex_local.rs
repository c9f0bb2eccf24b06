//! The offline Cortex stand-in (`scripts/lib/cortex/local/`): its demo on the Arclight
//! fixtures (hit rate, supersession links, determinism), and the library on a tiny memory of
//! our own (result shape, reading nothing but the question).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::support::{TempProject, duckdb, host_in, repo_root};

/// Runs the demo into a fresh folder and returns that folder.
fn run_demo(out: &Path, run_id: &str) -> PathBuf {
    let run_dir = out.join(run_id);
    let run_dir_text = run_dir.display().to_string();
    host_in(&repo_root(), &["run", "scripts/examples/cortex_local.rhai", "--out", &run_dir_text, "--run-id", run_id])
        .expect_code(0);
    run_dir
}

/// One demo run shared by the tests that only read it (embedding the facts is the slow part).
fn demo() -> &'static Path {
    static DEMO: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, run_dir) = DEMO.get_or_init(|| {
        let out = tempfile::tempdir().expect("temporary directory");
        let run_dir = run_demo(out.path(), "first");
        (out, run_dir)
    });
    run_dir
}

fn table(run_dir: &Path, name: &str) -> String {
    run_dir.join(format!("{name}.parquet")).display().to_string()
}

fn count(sql: &str) -> i64 {
    duckdb(sql)["rows"][0][0].as_i64().expect("a count")
}

#[test]
fn the_demo_finds_a_key_fact_in_the_top_8_for_most_prompts() {
    let hits = table(demo(), "cortex_hits");
    let per_prompt = format!("SELECT prompt, category, bool_or(contains_key_fact) AS hit FROM '{hits}' GROUP BY ALL");
    assert_eq!(count(&format!("SELECT count(*) FROM ({per_prompt})")), 50);
    // Measured 44/50 (E 8/10, T 6/7) when the demo was written; the floors leave a margin for
    // small changes, not for a broken channel.
    let overall = count(&format!("SELECT count(*) FROM ({per_prompt}) WHERE hit"));
    assert!(overall >= 40, "key-fact hit rate fell to {overall}/50");
    let evolved = count(&format!("SELECT count(*) FROM ({per_prompt}) WHERE hit AND category = 'E'"));
    assert!(evolved >= 7, "evolution prompts: {evolved}/10");
    let temporal = count(&format!("SELECT count(*) FROM ({per_prompt}) WHERE hit AND category = 'T'"));
    assert!(temporal >= 5, "temporal prompts: {temporal}/7");
}

#[test]
fn the_demo_results_have_the_cortex_shape() {
    let hits = table(demo(), "cortex_hits");
    let ranks = duckdb(&format!(
        "SELECT min(n), max(n), bool_and(ranks) FROM (SELECT prompt, count(*) AS n, \
         list_sort(list(rank)) = [1, 2, 3, 4, 5, 6, 7, 8] AS ranks FROM '{hits}' GROUP BY prompt)"
    ));
    assert_eq!(ranks["rows"], json!([[8, 8, true]]));
    let bad = count(&format!(
        "SELECT count(*) FROM '{hits}' WHERE NOT regexp_matches(node_id, '^s[0-9]{{2}}:[0-9]+$') \
         OR source NOT IN ('bm25', 'semantic', 'entity', 'temporal') \
         OR NOT (confidence > 0 AND confidence <= 1) OR NOT (score > 0) OR content = ''"
    ));
    assert_eq!(bad, 0);
    let top = count(&format!("SELECT count(*) FROM '{hits}' WHERE rank = 1 AND confidence <> 1.0"));
    assert_eq!(top, 0, "the best result of every prompt has confidence 1");
    let unordered = count(&format!(
        "SELECT count(*) FROM (SELECT score, lag(score) OVER (PARTITION BY prompt ORDER BY rank) AS above \
         FROM '{hits}') WHERE above < score"
    ));
    assert_eq!(unordered, 0, "scores fall with rank");
}

#[test]
fn the_cache_ttl_of_day_16_is_superseded_by_the_ttl_of_day_27() {
    let links = table(demo(), "cortex_links");
    let found = duckdb(&format!(
        "SELECT \"from\", \"to\", from_content, to_content FROM '{links}' WHERE from_day = 16 AND to_day = 27"
    ));
    let rows = found["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{found}");
    assert!(rows[0][0].as_str().expect("from").starts_with("s18:"));
    assert!(rows[0][1].as_str().expect("to").starts_with("s29:"));
    assert!(rows[0][2].as_str().expect("from content").contains("300 seconds"), "{found}");
    assert!(rows[0][3].as_str().expect("to content").contains("600 seconds"), "{found}");
}

#[test]
fn every_supersession_link_goes_forward_in_time_between_facts_that_share_an_entity() {
    let links = table(demo(), "cortex_links");
    // Measured 16 links, every one checked by hand against the sessions (see the demo report).
    let total = count(&format!("SELECT count(*) FROM '{links}'"));
    assert!((10..=24).contains(&total), "{total} links");
    let bad = duckdb(&format!(
        "SELECT \"from\", \"to\" FROM '{links}' WHERE NOT list_has_any(from_entities, to_entities) OR from_day >= to_day"
    ));
    assert_eq!(bad["rows"], json!([]));
    // The evolutions the fixtures describe that carry an explicit change (fixtures/cortex/v1.1/README.md).
    for (from_session, to_session) in
        [("s02", "s32"), ("s04", "s25"), ("s18", "s29"), ("s19", "s36"), ("s20", "s27"), ("s22", "s35"), ("s33", "s40")]
    {
        let n = count(&format!(
            "SELECT count(*) FROM '{links}' WHERE starts_with(\"from\", '{from_session}:') AND starts_with(\"to\", '{to_session}:')"
        ));
        assert!(n >= 1, "no link from {from_session} to {to_session}");
    }
}

#[test]
fn two_runs_of_the_demo_give_identical_hits() {
    let first = table(demo(), "cortex_hits");
    let out = tempfile::tempdir().expect("temporary directory");
    let second = table(&run_demo(out.path(), "second"), "cortex_hits");
    let read =
        |path: &str| duckdb(&format!("SELECT * EXCLUDE (run_id) FROM '{path}' ORDER BY prompt, rank"))["rows"].clone();
    assert_eq!(read(&first), read(&second));
}

const TINY_MEMORY: &str = r#"
import "lib/cortex/local/memory" as cortex_local;
import "lib/cortex/answer" as answer;

let sessions = [
    #{ id: "a", description: "Week 3, Day 16 — Cache-aside layer", day: 16, date: "2026-01-20", messages: [
        #{ role: "user", content: "What TTL should the dashboard cache use?" },
        #{ role: "assistant", content: "I'd set the cache TTL to 300 seconds. Summary keys look like `arclight:summary:<orgId>`." },
    ] },
    #{ id: "b", description: "Week 4, Day 27 — Revisiting the dashboard cache TTL", day: 27, date: "2026-01-31", messages: [
        #{ role: "user", content: "The hit rate is only 41%. Sounds good." },
        #{ role: "assistant", content: "The dashboard cache TTL is now 600 seconds. The summary endpoint has a p95 of 240 ms." },
    ] },
];
let memory = cortex_local::open(sessions, #{ embed: false, top_k: 3 });
let question = "What TTL does the dashboard cache use now?";
let bare = cortex_local::retrieve(memory, #{ prompt: question });
let full = cortex_local::retrieve(memory, #{
    id: "E03", category: "F", prompt: question, groundTruth: "300 seconds", keyFacts: ["300"], staleFacts: ["600"],
});
let stale = bare.results.filter(|row| row.node_id == "a:1");
let line = answer::cortex_lines(stale);
results::write_json("out.json", #{
    bare: bare, full: full, describe: cortex_local::describe(memory), facts: memory.facts,
    latency_type: type_of(bare.latency_ms), lines: line,
    own_text_matches_31: text::count_facts(stale[0].content, ["31"]), line_matches_31: text::count_facts(line, ["31"]),
});
"#;

fn tiny_memory() -> Value {
    let project = TempProject::new();
    project.with_libraries(&[
        "cortex/local/memory",
        "cortex/local/settings",
        "cortex/local/facts",
        "cortex/local/entities",
        "cortex/local/supersession",
        "cortex/local/channels",
        "cortex/local/fusion",
        "cortex/answer",
        "cortex/prompts",
        "templates",
    ]);
    project.write("scripts/tiny.rhai", TINY_MEMORY);
    project.host(&["run", "scripts/tiny.rhai", "--run-id", "t"]).expect_code(0);
    serde_json::from_str(&project.read("runs/tiny/t/out.json")).expect("JSON")
}

#[test]
fn retrieve_reads_the_question_only_and_answers_in_the_cortex_shape() {
    let out = tiny_memory();
    assert_eq!(out["bare"]["results"], out["full"]["results"], "extra prompt fields changed the results");
    assert_eq!(out["bare"]["ok"], json!(true));
    assert_eq!(out["bare"]["error"], Value::Null);
    assert_eq!(out["latency_type"], json!("f64"));
    let results = out["bare"]["results"].as_array().expect("results");
    assert_eq!(results.len(), 3, "top_k");
    for result in results {
        let mut keys: Vec<&str> = result.as_object().expect("a map").keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["confidence", "content", "metadata", "node_id", "score", "source", "type"]);
        assert_eq!(result["type"], json!("FACT"));
    }
    assert_eq!(results[0]["confidence"], json!(1.0));
    let describe = &out["describe"];
    assert_eq!(describe["backend"], json!("local"));
    assert_eq!(describe["channels"], json!(["bm25", "entity", "temporal"]), "no semantic channel without `embed`");
}

#[test]
fn a_later_value_supersedes_an_earlier_one_and_ranks_above_it() {
    let out = tiny_memory();
    let facts = out["facts"].as_array().expect("facts");
    let contents: Vec<&str> = facts.iter().map(|fact| fact["content"].as_str().expect("content")).collect();
    // Questions and acknowledgements are no facts; the question is context for the reply.
    assert_eq!(
        contents,
        [
            "I'd set the cache TTL to 300 seconds.",
            "Summary keys look like `arclight:summary:<orgId>`.",
            "The hit rate is only 41%.",
            "The dashboard cache TTL is now 600 seconds.",
            "The summary endpoint has a p95 of 240 ms."
        ]
    );
    assert_eq!(facts[0]["node_id"], json!("a:1"));
    assert_eq!(facts[0]["superseded_by"], json!(["b:2"]));
    assert_eq!(facts[3]["supersedes"], json!(["a:1"]));
    assert_eq!(facts[3]["date"], json!("2026-01-31"));
    assert!(facts[0]["entities"].as_array().expect("entities").contains(&json!("ttl")));
    assert_eq!(facts[4]["superseded_by"], json!([]), "a different quantity is no supersession");

    let results = out["bare"]["results"].as_array().expect("results");
    let rank = |node: &str| results.iter().position(|result| result["node_id"] == json!(node));
    let current = rank("b:2").expect("the current TTL is retrieved");
    let stale = rank("a:1").expect("the stale TTL stays retrievable");
    assert!(current < stale, "{results:?}");
    assert_eq!(results[stale]["content"], json!("I'd set the cache TTL to 300 seconds."));
    assert_eq!(
        results[stale]["metadata"],
        json!({"superseded_on": "2026-01-31", "superseded_by": ["b:2"], "supersedes": []})
    );
    assert_eq!(out["lines"], json!("- [0.03] I'd set the cache TTL to 300 seconds. (superseded on 2026-01-31 by b:2)"));
}

#[test]
fn key_facts_are_matched_on_a_memorys_own_text_not_on_the_dates_of_its_supersession_note() {
    // F15, E05, S08 and E06 have key facts such as `15`, `25` and `10`, which matched the dates and
    // node ids of the note the answer prompt adds ("superseded on 2026-01-31 by b:2").
    let out = tiny_memory();
    assert_eq!(out["own_text_matches_31"], json!(0));
    assert_eq!(out["line_matches_31"], json!(1), "the prompt line still tells the answerer");
}
