//! The `search` capability from scripts: corpora, the OpenClaw and benchmark pipelines, the
//! tantivy index, chunkers, and bad input.

use serde_json::{Value, json};

use crate::support::TempProject;

/// Runs `script` and returns what it wrote to `out.json`.
fn run(script: &str) -> Value {
    let project = TempProject::new();
    project.write("scripts/s.rhai", script);
    project.host(&["run", "scripts/s.rhai", "--run-id", "s"]).expect_code(0);
    serde_json::from_str(&project.read("runs/s/s/out.json")).expect("out.json")
}

const DOCS: &str = r#"let docs = [
    #{ id: "a", text: "The API server listens on port 4000 in every environment.", session: 3 },
    #{ id: "b", text: "Redis keys use the format arclight:{entity}:{id}.", session: 5 },
    #{ id: "c", text: "We cache API responses for 600 seconds after the TTL change.", session: 9 },
    #{ id: "d", text: "The team had lunch and talked about the weekend.", session: 2 },
];
"#;

#[test]
fn the_benchmark_keyword_profile_ranks_by_okapi_bm25_with_or_semantics() {
    let out = run(&format!(
        "{DOCS}let corpus = search::corpus(docs);\nlet hits = corpus.keyword(\"API port\", #{{ profile: \"benchmark\", limit: 10 }});\nresults::write_json(\"out.json\", hits.map(|h| [h.id, h.rank, h.session]));\n"
    ));
    assert_eq!(out, json!([["a", 1, 3], ["c", 2, 9]]));
}

#[test]
fn the_openclaw_keyword_leg_needs_every_query_word() {
    let out = run(&format!(
        "{DOCS}let corpus = search::corpus(docs);\nresults::write_json(\"out.json\", [corpus.keyword(\"API port\", #{{}}).map(|h| h.id), corpus.keyword(\"which API port\", #{{}}).len()]);\n"
    ));
    assert_eq!(out, json!([["a"], 0]));
}

#[test]
fn linear_fusion_over_given_vectors_reports_each_leg() {
    let out = run(r#"let docs = [
    #{ id: "x", text: "alpha beta", vector: [1.0, 0.0] },
    #{ id: "y", text: "gamma delta", vector: [0.0, 1.0] },
    #{ id: "z", text: "alpha gamma", vector: [0.6, 0.8] },
];
let corpus = search::corpus(docs);
let hits = corpus.query(#{ text: "alpha", vector: [1.0, 0.0] }, #{ fusion: "linear", keyword: #{ profile: "benchmark" }, limit: 3 });
results::write_json("out.json", hits.map(|h| #{ id: h.id, score: h.score, vector: h.vector, keyword: h.keyword }));
"#);
    // Vector leg: x 1.0, z 0.6, y 0.0. Keyword leg: x and z match "alpha" (rank-normalised);
    // y matches nothing but is ranked third with a raw BM25 of 0, as in the original benchmark.
    // The fused score is 0.7 × vector + 0.3 × normalised keyword.
    let ids: Vec<&str> = out.as_array().unwrap().iter().map(|hit| hit["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["x", "z", "y"]);
    assert_eq!(out[0]["vector"]["raw"], json!(1.0));
    assert_eq!(out[2]["keyword"], json!({"raw": 0.0, "normalized": 1.0 / 3.0}), "y: {}", out[2]);
    let fused = out[0]["score"].as_f64().unwrap();
    let expected = 0.7 * 1.0 + 0.3 * out[0]["keyword"]["normalized"].as_f64().unwrap();
    assert!((fused - expected).abs() < 1e-9, "{fused} vs {expected}");
}

#[test]
fn an_embedded_corpus_answers_a_question_with_the_openclaw_pipeline() {
    let out = run(&format!(
        "{DOCS}let corpus = search::corpus(docs, #{{ embed: true }});\nlet hits = corpus.query(\"Which port does the API listen on?\", #{{ mmr: #{{ lambda: 0.7 }} }});\nresults::write_json(\"out.json\", hits.map(|h| [h.id, h.vector.raw > 0.35, h.keyword]));\n"
    ));
    assert_eq!(out[0][0], "a", "{out}");
    assert_eq!(out[0][1], true);
    assert!(out[0][2].is_null(), "a six-word question matches no chunk in the AND keyword leg");
}

#[test]
fn chunkers_and_the_text_index_work_from_scripts() {
    let out = run(r#"let text = "";
for i in 0..100 { text += `line ${i} says something about memory and retrieval\n`; }
let windows = search::chunk_chars(text, #{ size: 1600, overlap: 320 });
let lines = search::chunk_lines(text, #{ tokens: 100, overlap: 20 });
let index = search::text_index([#{ id: "m", text: "memories of caching" }, #{ id: "n", text: "nothing here" }], #{});
results::write_json("out.json", #{
    windows: windows.len(), first_end: windows[0].end, second_start: windows[1].start,
    lines_first: [lines[0].start_line, lines[0].end_line], lines_second_start: lines[1].start_line,
    hits: index.search("memory", 5).map(|h| h.id),
    snippet: search::snippet(text).len(),
    decayed: search::decay(1.0, 30.0, 30.0),
});
"#);
    assert_eq!(out["first_end"], 1600);
    assert_eq!(out["second_start"], 1280, "windows of 1600 advance by 1600 - 320");
    assert_eq!(out["lines_first"][0], 1);
    assert!(
        out["lines_second_start"].as_u64().unwrap() <= out["lines_first"][1].as_u64().unwrap(),
        "line chunks overlap"
    );
    assert_eq!(out["hits"], json!(["m"]));
    assert_eq!(out["snippet"], 700);
    assert!((out["decayed"].as_f64().unwrap() - 0.5).abs() < 1e-12);
}

#[test]
fn bad_search_input_is_an_error_or_an_empty_answer_never_a_panic() {
    let out = run(r#"let empty = search::corpus([]);
let outcomes = #{ empty_corpus: empty.query("anything", #{}).len(), empty_query: search::corpus([#{ text: "x" }]).query("  ", #{}).len() };
for documents in [
    [#{ id: 1 }],
    [#{ text: "a", vector: [1.0, 0.0] }, #{ text: "b", vector: [1.0] }],
    [#{ text: "a", vector: [1.0, 0.0] }, #{ text: "b" }],
    [#{ text: "a", vector: [0.0, 0.0] }],
] {
    try { search::corpus(documents); outcomes[`case${outcomes.len()}`] = "accepted"; }
    catch (error) { outcomes[`case${outcomes.len()}`] = error; }
}
try { search::corpus([#{ text: "a" }]).nearest([1.0], 3); } catch (error) { outcomes.no_vectors = error; }
results::write_json("out.json", outcomes);
"#);
    assert_eq!(out["empty_corpus"], 0);
    assert_eq!(out["empty_query"], 0);
    assert_eq!(out["case2"], "document 0: has no `text` string");
    assert!(out["case3"].as_str().unwrap().contains("dimension"), "{}", out["case3"]);
    assert!(out["case4"].as_str().unwrap().contains("has no vector while others do"), "{}", out["case4"]);
    assert_eq!(out["case5"], "accepted", "a zero vector is allowed and scores 0");
    assert!(out["no_vectors"].as_str().unwrap().contains("the corpus has no vectors"), "{}", out["no_vectors"]);
}

#[test]
fn a_saved_corpus_opens_in_a_later_run_and_answers_as_the_one_that_was_saved() {
    let project = TempProject::new();
    let docs = r#"let docs = [
    #{ id: "a", text: "revalidate a tag", vector: [1.0, 0.0, 0.2], imports: ["next/cache"], rule: "call revalidateTag" },
    #{ id: "b", text: "read cookies", vector: [0.0, 1.0, 0.1], imports: ["next/headers"], rule: "await cookies()" },
    #{ id: "c", text: "cache a function", vector: [0.7, 0.1, 0.7], imports: ["next/cache", "react"], rule: "use cache" },
];
let query = #{ text: "revalidate cache", vector: [0.9, 0.1, 0.3] };
fn answers(corpus, query) {
    #{ nearest: corpus.nearest(query.vector, 3).map(|h| [h.id, h.score, h.rule]),
       hybrid: corpus.query(query, #{ fusion: "rrf", keyword: #{ profile: "benchmark" } }).map(|h| h.id),
       cache: corpus.lookup("imports", "next/cache"), react: corpus.lookup("imports", "react"),
       second: corpus.document(1) }
}
"#;
    project.write(
        "scripts/save.rhai",
        &format!("{docs}let corpus = search::corpus(docs);\ncorpus.save(\"docs.corpus\", #{{ index: [\"imports\"], keyword_index: [\"benchmark\"] }});\nresults::write_json(\"out.json\", answers(corpus, query));\n"),
    );
    project.write(
        "scripts/open.rhai",
        &format!("{docs}let corpus = search::open_corpus(run::argv()[0]);\nresults::write_json(\"out.json\", answers(corpus, query) + #{{ len: corpus.len(), unindexed: corpus.lookup(\"rule\", \"use cache\") }});\n"),
    );
    project.host(&["run", "scripts/save.rhai", "--run-id", "saved"]).expect_code(0);
    let stored = project.path().join("runs/save/saved/docs.corpus");
    project.host(&["run", "scripts/open.rhai", "--run-id", "opened", "--", stored.to_str().unwrap()]).expect_code(0);
    let saved: Value = serde_json::from_str(&project.read("runs/save/saved/out.json")).unwrap();
    let mut opened: Value = serde_json::from_str(&project.read("runs/open/opened/out.json")).unwrap();
    assert_eq!(opened["len"], 3);
    assert_eq!(opened["unindexed"], json!([2]), "a field not indexed is found by reading every document");
    let object = opened.as_object_mut().unwrap();
    object.remove("len");
    object.remove("unindexed");
    assert_eq!(opened, saved, "the same hits, scores, fields and lookups");
    assert_eq!(saved["cache"], json!([0, 2]));
    assert_eq!(saved["second"]["rule"], "await cookies()");
    let manifest: Value = serde_json::from_str(&project.read("runs/save/saved/manifest.json")).unwrap();
    assert!(manifest["files"].to_string().contains("docs.corpus"), "the saved corpus is listed with the run's files");
}

#[test]
fn a_file_that_is_not_a_corpus_and_a_document_out_of_range_are_clear_errors() {
    let out = run(r#"results::write_text("fake.corpus", "host-corpus 1\n{\"ids\": []}\n");
results::write_text("other.corpus", "PAR1...");
let outcomes = #{};
for name in ["fake.corpus", "other.corpus"] {
    try { search::open_corpus(`${run::dir()}/${name}`); outcomes[name] = "opened"; } catch (error) { outcomes[name] = error; }
}
try { search::corpus([#{ text: "only" }]).document(3); } catch (error) { outcomes.range = error; }
try { search::corpus([#{ text: "only" }]).save("k.corpus", #{ keyword_index: ["porter"] }); } catch (error) { outcomes.tokenizer = error; }
results::write_json("out.json", outcomes);
"#);
    let fake = out["fake.corpus"].as_str().unwrap();
    assert!(fake.contains("fake.corpus") && fake.contains("its header is not valid"), "{fake}");
    let other = out["other.corpus"].as_str().unwrap();
    assert!(
        other.contains("it is not a corpus file") && other.contains("hint: write one with `corpus.save(path)`"),
        "{other}"
    );
    assert_eq!(out["range"], "there is no document 3 (the corpus has 1)");
    let tokenizer = out["tokenizer"].as_str().unwrap();
    assert!(tokenizer.contains("keyword_index") && tokenizer.contains("porter"), "{tokenizer}");
}
