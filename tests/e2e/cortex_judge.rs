//! The built-in roles that decide every offline score: the judge, held to the hand-scored
//! calibration set (`fixtures/judge-calibration/`), and the answerer, which abstains when its
//! context does not support an answer.

use serde_json::{Value, json};

use crate::support::{TempProject, duckdb, host_in, repo_root, table};

const CALIBRATION: &str = "fixtures/judge-calibration/items.jsonl";

#[test]
fn the_builtin_judge_agrees_with_the_hand_scores_on_the_held_out_calibration_items() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run = out.path().join("holdout");
    host_in(
        &repo_root(),
        &["run", "scripts/rejudge.rhai", "--out", &run.display().to_string(), "--", "--calibration", CALIBRATION],
    )
    .expect_code(0);
    let agreement = duckdb(&format!("SELECT metric, value, n FROM '{}' ORDER BY metric", table(&run, "agreement")));
    let rows = agreement["rows"].as_array().expect("rows");
    assert_eq!(rows[0][0], "cohen_kappa");
    let kappa = rows[0][1].as_f64().expect("a number");
    assert!(kappa >= 0.6, "Cohen's κ on the holdout part is {kappa}, below the 0.6 the judge must reach");
    // The holdout part only: the 119 items whose prompt number is divisible by 3.
    assert_eq!(rows[0][2], 119);

    let report = std::fs::read_to_string(run.join("report.md")).expect("report.md");
    assert!(report.contains("119 answers of the `holdout` part"), "{report}");
    assert!(report.contains("Confusion matrix (rows: hand score, columns: new score)"), "{report}");
    let cells = duckdb(&format!("SELECT sum(count) FROM '{}'", table(&run, "confusion")));
    assert_eq!(cells["rows"], json!([[119]]));
    let kinds =
        duckdb(&format!("SELECT kind, n FROM '{}' WHERE kind = 'paraphrase'", table(&run, "agreement_by_kind")));
    assert_eq!(kinds["rows"], json!([["paraphrase", 9]]));
}

#[test]
fn a_calibration_item_that_does_not_match_its_dataset_is_an_error_naming_the_line() {
    let out = tempfile::tempdir().expect("temporary directory");
    let items = std::fs::read_to_string(repo_root().join(CALIBRATION)).expect("the calibration set");
    let mut lines: Vec<Value> = items.lines().take(3).map(|l| serde_json::from_str(l).expect("JSON")).collect();
    lines[2]["question"] = json!("What port does the API use?");
    let file = out.path().join("items.jsonl");
    std::fs::write(&file, lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")).expect("write");
    let run = host_in(
        &repo_root(),
        &[
            "run",
            "scripts/rejudge.rhai",
            "--out",
            &out.path().join("r").display().to_string(),
            "--",
            "--calibration",
            &file.display().to_string(),
            "--split",
            "all",
        ],
    );
    run.expect_code(2);
    assert!(
        run.stderr.contains("items.jsonl: line 3: `question` and `ground_truth` must equal prompt `F01`"),
        "{}",
        run.stderr
    );
}

/// Runs `body` (Rhai) with the Cortex libraries and returns what it wrote to `out.json`.
fn script(body: &str) -> Value {
    let project = TempProject::new();
    project
        .with_libraries(&["cortex/judge", "cortex/prompts", "templates", "cortex/answer"])
        .with_folder("scenarios/prompts/cortex");
    project.write("scripts/probe.rhai", body);
    project.host(&["run", "scripts/probe.rhai", "--run-id", "p"]).expect_code(0);
    serde_json::from_str(&project.read("runs/probe/p/out.json")).expect("out.json")
}

#[test]
fn the_builtin_judge_applies_the_rubric_rule_by_rule() {
    let scores = script(
        r#"import "lib/cortex/judge" as judge;
let p = #{ id: "E03", prompt: "What TTL does the dashboard cache use?", groundTruth: "600 seconds (CACHE_TTL_SECONDS = 600), raised from 300 s.",
           key_facts: ["600"], stale_facts: ["300"] };
let answers = [
    "The cache TTL is 600 seconds.",                                       // every key fact: 3
    "Ten minutes.",                                                        // number words count: 3
    "It's 300 seconds.",                                                   // a stale value as current: 0
    "I don't have the cache configuration.",                               // abstains: 1
    "I don't have the configuration, but it's probably 120 seconds.",      // abstains, then guesses: 0
    "A fixed TTL aligned with how often the metrics are recomputed.",      // consistent, no specifics: 2
    "We set `ttl: 3600` on the cache client.",                             // a specific the truth does not support: 0
    "Caches usually use 600 seconds.",                                     // the fact, framed as common practice: 2
];
results::write_json("out.json", answers.map(|a| judge::builtin(p, a).score));
"#,
    );
    assert_eq!(scores, json!([3, 3, 0, 1, 0, 2, 0, 2]));
}

#[test]
fn a_key_fact_the_question_already_states_proves_nothing() {
    let scores = script(
        r#"import "lib/cortex/judge" as judge;
let p = #{ id: "R08", prompt: "Why did we use Biome instead of ESLint plus Prettier?",
           groundTruth: "One tool and one config for both linting and formatting.", key_facts: ["Biome"], stale_facts: [] };
results::write_json("out.json", [judge::builtin(p, "Biome is faster and simpler.").score]);
"#,
    );
    assert_eq!(scores, json!([2]), "naming Biome again is a generic answer, not a grounded one");
}

#[test]
fn the_builtin_answerer_abstains_when_no_sentence_holds_what_the_question_asks_for() {
    let replies = script(
        r#"import "lib/cortex/answer" as answer;
let why = #{ id: "R01", prompt: "Why does the API run on port 4000?" };
let port = #{ id: "F01", prompt: "What port does the API listen on?" };
let no_reason = [#{ kind: "summary", text: "The API runs on port 4000 in development. The API port is set in the env file." }];
let reason = [#{ kind: "summary", text: "The API runs on port 4000 because Grafana already uses port 3000." }];
let memories = [
    #{ score: 0.9, content: "The API listens on port 3000.", metadata: #{ superseded_on: "2026-01-20", superseded_by: ["s2:1"] } },
    #{ score: 0.8, content: "The API listens on port 4000.", metadata: #{} },
];
let cortex = answer::blocks(#{ summary: "Notes.", recent: "" }, "", memories);
let contexts = [
    #{ prompt: why, blocks: no_reason }, #{ prompt: why, blocks: reason }, #{ prompt: port, blocks: cortex },
];
results::write_json("out.json", answer::builtin_replies(contexts, [why, port]).map(|r| r.text));
"#,
    );
    assert_eq!(
        replies,
        json!([
            "I don't have that information in the project history.",
            "The API runs on port 4000 because Grafana already uses port 3000.",
            "The API listens on port 4000.",
        ])
    );
}
