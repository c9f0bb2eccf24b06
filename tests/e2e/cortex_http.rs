//! `scripts/lib/cortex/http.rhai` and the `http::` and `time::` capabilities under it, through
//! the real binary against `fake_cortex.rs`, faults included.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::fake_cortex::{FakeCortex, Fault, INGEST, JOB, KNOWLEDGE, REFLECT, RETRIEVE, WARMUP};
use crate::support::{Run, TempProject, duckdb, repo_root};

const KEY: &str = "ctx-test-SECRET-91b2e4";

/// The experiment side: open (seeding), then one retrieve per prompt, written to
/// `memory.json`, `retrievals.json` and the `retrievals` table. `CONFIG` adds or overrides
/// config keys; `AFTER_OPEN` runs between opening and retrieving.
const DRIVER: &str = r#"import "lib/cortex/http" as cortex_http;

let sessions = [
    #{ id: "s01", description: "Week 1, Day 1 — kickoff", day: 1, date: "2026-01-05", messages: [
        #{ role: "user", content: "The API listens on port 4000 in development. We use Fastify." },
        #{ role: "assistant", content: "Noted: port 4000 and Fastify!" },
    ] },
    #{ id: "s02", description: "Week 1, Day 2 — database", day: 2, date: "2026-01-06", messages: [
        #{ role: "user", content: "Postgres runs on port 5433. Migrations use drizzle." },
    ] },
    #{ id: "s03", description: "Week 1, Day 3 — deploys", day: 3, date: "2026-01-07", messages: [
        #{ role: "user", content: "Deploys go out every Friday afternoon." },
    ] },
];
let prompts = [
    #{ id: "F01", category: "F", prompt: "Which port does the API listen on in development?" },
    #{ id: "R01", category: "R", prompt: "Which tool do the migrations use?" },
    #{ id: "E01", category: "E", prompt: "When do deploys go out?" },
];
let config = #{
    base_url: "BASE_URL/", api_key: "API_KEY", namespace: "trial", seed: true,
    poll_interval_s: 0.02, stabilise_interval_s: 0.02, submit_backoff_s: 0.01, timeout_s: 2,
};
let overrides = #{ CONFIG };
for key in overrides.keys() { config[key] = overrides[key]; }
let memory = cortex_http::open(sessions, config);
AFTER_OPEN
results::write_json("memory.json", cortex_http::describe(memory));
let retrievals = [];
for prompt in prompts {
    let hits = cortex_http::retrieve(memory, prompt);
    let contents = [];
    for row in hits.results { contents.push(row.content); }
    retrievals.push(#{ id: prompt.id, ok: hits.ok, status: hits.status, error: hits.error, latency_ms: hits.latency_ms, contents: contents, results: hits.results });
    results::append("retrievals", #{ id: prompt.id, ok: hits.ok, hits: hits.results.len() });
}
results::write_json("retrievals.json", retrievals);
"#;

/// A project with the Cortex library and a driver configured by `config` and `after_open`.
fn project(server: &FakeCortex, config: &str, after_open: &str) -> TempProject {
    let project = TempProject::new();
    let library = std::fs::read_to_string(repo_root().join("scripts/lib/cortex/http.rhai")).expect("the library");
    project.write("scripts/lib/cortex/http.rhai", &library);
    let driver = DRIVER
        .replace("BASE_URL", &server.base_url())
        .replace("API_KEY", KEY)
        .replace("CONFIG", config)
        .replace("AFTER_OPEN", after_open);
    project.write("scripts/driver.rhai", &driver);
    project
}

fn run(project: &TempProject) -> Run {
    project.host(&["run", "scripts/driver.rhai", "--run-id", "t"])
}

fn output(project: &TempProject, file: &str) -> Value {
    serde_json::from_str(&project.read(&format!("runs/driver/t/{file}"))).expect("a JSON output")
}

/// The field `name` of each request.
fn field(seen: &[crate::fake_cortex::Seen], name: &str) -> Vec<Value> {
    seen.iter().map(|seen| seen.body[name].clone()).collect()
}

#[test]
fn seeding_submits_one_job_per_session_with_namespaced_ids_dates_and_the_key() {
    let server = FakeCortex::start(KEY);
    server.polls_to_complete(2);
    let project = project(&server, "", "");
    run(&project).expect_code(0);

    let ingests = server.seen_at(INGEST);
    assert_eq!(
        field(&ingests, "session_id"),
        [json!("trial:session:s01"), json!("trial:session:s02"), json!("trial:session:s03")]
    );
    assert_eq!(field(&ingests, "reference_date"), [json!("2026-01-05"), json!("2026-01-06"), json!("2026-01-07")]);
    assert_eq!(
        ingests[0].body["messages"][1],
        json!({"role": "assistant", "content": "Noted: port 4000 and Fastify!"})
    );
    assert!(
        server.seen().iter().all(|seen| seen.key_present && seen.status != Some(401)),
        "every request carries the key (the play answers 401 to any other)"
    );
    assert!(ingests.iter().all(|seen| seen.method == "POST"));
    let memories = server.memories();
    assert_eq!(memories.len(), 6, "one memory per sentence, once each job completed");
    assert_eq!(
        (
            memories[3].session_id.as_deref().unwrap_or_default(),
            memories[3].reference_date.as_deref().unwrap_or_default()
        ),
        ("trial:session:s02", "2026-01-06")
    );

    let seen = server.seen();
    let polls: Vec<&str> = seen.iter().filter(|s| s.endpoint == JOB).map(|s| s.path.as_str()).collect();
    for job in ["/v1/jobs/job-1", "/v1/jobs/job-2", "/v1/jobs/job-3"] {
        assert_eq!(polls.iter().filter(|path| **path == job).count(), 2, "{job} is polled until it completes");
    }
    let position = |endpoint: &str| seen.iter().position(|s| s.endpoint == endpoint).expect("requested");
    let last_poll = seen.iter().rposition(|s| s.endpoint == JOB).expect("polled");
    assert!(last_poll < position(WARMUP) && position(WARMUP) < position(KNOWLEDGE));
    assert!(server.seen_at(KNOWLEDGE).len() >= 2, "the count must repeat before it counts as settled");
    assert_eq!(field(&server.seen_at(REFLECT), "session_id"), [json!("trial")]);

    let memory = output(&project, "memory.json");
    assert_eq!(
        (memory["seeded"].clone(), memory["jobs"].clone(), memory["reflect_ok"].clone()),
        (json!(true), json!(3), json!(true))
    );
    assert!(!memory.to_string().contains(KEY), "describe leaves the key out");
    let retrievals = output(&project, "retrievals.json");
    assert_eq!(retrievals[0]["contents"][0], "The API listens on port 4000 in development.");
    assert_eq!(retrievals[1]["contents"][0], "Migrations use drizzle.");
    let retrieve = &server.seen_at(RETRIEVE)[0].body;
    assert_eq!((retrieve["top_k"].clone(), retrieve["mode"].clone()), (json!(8), json!("full")));
    assert_eq!(retrieve["reference_date"], "2026-02-15");
}

#[test]
fn a_job_that_fails_once_is_resubmitted_once_and_the_run_goes_on() {
    let server = FakeCortex::start(KEY);
    server.fail_jobs("trial:session:s02", 1);
    let project = project(&server, "", "");
    run(&project).expect_code(0);
    let ingests = server.seen_at(INGEST);
    assert_eq!(ingests.len(), 4);
    assert_eq!(ingests[3].body["session_id"], "trial:session:s02");
    let memory = output(&project, "memory.json");
    assert_eq!((memory["resubmitted"].clone(), memory["jobs"].clone()), (json!(["s02"]), json!(4)));
    assert_eq!(memory["job_ids"], json!(["job-1", "job-2", "job-3", "job-4"]));
    assert_eq!(output(&project, "retrievals.json")[1]["contents"][0], "Migrations use drizzle.");
}

#[test]
fn a_job_that_fails_twice_ends_the_run_naming_the_session() {
    let server = FakeCortex::start(KEY);
    server.fail_jobs("trial:session:s02", 2);
    let project = project(&server, "", "");
    let outcome = run(&project);
    outcome.expect_code(2);
    assert!(outcome.stderr.contains("ingestion of session `s02` failed twice"), "{}", outcome.stderr);
    assert_eq!(server.seen_at(INGEST).len(), 4);
    assert!(server.seen_at(WARMUP).is_empty(), "nothing runs after the failure");
}

#[test]
fn jobs_still_pending_at_the_deadline_end_the_run_naming_them() {
    let server = FakeCortex::start(KEY);
    server.polls_to_complete(1_000_000);
    let project = project(&server, "deadline_s: 0.1,", "");
    let outcome = run(&project);
    outcome.expect_code(2);
    assert!(outcome.stderr.contains(r#"still pending: ["s01", "s02", "s03"]"#), "{}", outcome.stderr);
}

#[test]
fn a_submission_is_tried_three_times_then_ends_the_run_naming_the_session() {
    let server = FakeCortex::start(KEY);
    server.fail(
        INGEST,
        vec![Fault::status(StatusCode::SERVICE_UNAVAILABLE), Fault::status(StatusCode::INTERNAL_SERVER_ERROR)],
    );
    let recovered = project(&server, "", "");
    run(&recovered).expect_code(0);
    assert_eq!(field(&server.seen_at(INGEST), "session_id")[..3], vec![json!("trial:session:s01"); 3]);

    let broken = FakeCortex::start(KEY);
    broken.fail(
        INGEST,
        vec![
            Fault::status(StatusCode::INTERNAL_SERVER_ERROR),
            Fault::Malformed,
            Fault::status(StatusCode::BAD_GATEWAY),
        ],
    );
    let project = project(&broken, "", "");
    let outcome = run(&project);
    outcome.expect_code(2);
    assert!(outcome.stderr.contains("cannot submit session `s01` after 3 attempts: HTTP 502"), "{}", outcome.stderr);
    assert_eq!(broken.seen_at(INGEST).len(), 3);
}

#[test]
fn a_retrieve_that_fails_hangs_or_garbles_is_a_failure_and_the_script_goes_on() {
    let server = FakeCortex::start(KEY);
    let hang = Fault::Delay(std::time::Duration::from_secs(3));
    server.fail(RETRIEVE, vec![Fault::status(StatusCode::INTERNAL_SERVER_ERROR), hang, Fault::Malformed]);
    let project = project(&server, "timeout_s: 0.3,", "");
    run(&project).expect_code(0);
    let retrievals = output(&project, "retrievals.json");
    let outcomes: Vec<(Value, Value)> =
        (0..3).map(|i| (retrievals[i]["ok"].clone(), retrievals[i]["status"].clone())).collect();
    assert_eq!(outcomes, [(json!(false), json!(500)), (json!(false), json!(0)), (json!(false), json!(200))]);
    let errors: Vec<&str> = (0..3).map(|i| retrievals[i]["error"].as_str().expect("an error")).collect();
    assert!(errors[0].starts_with("HTTP 500 Internal Server Error"), "{}", errors[0]);
    assert!(errors[1].contains("within 0.3 s"), "{}", errors[1]);
    assert!(errors[2].starts_with("the response is not valid JSON"), "{}", errors[2]);
    assert!(retrievals[1]["latency_ms"].as_f64().is_some_and(|ms| ms > 0.0), "a failure keeps its latency");
    assert!((0..3).all(|i| retrievals[i]["results"] == json!([])));
}

#[test]
fn a_retrieved_row_keeps_every_field_the_api_sends_its_metadata_too() {
    let server = FakeCortex::start(KEY);
    let project = project(&server, "", "");
    run(&project).expect_code(0);
    let retrievals = output(&project, "retrievals.json");
    let row = retrievals
        .as_array()
        .and_then(|all| all.iter().find_map(|r| r["results"].get(0)))
        .expect("a retrieval with a row");
    let mut keys: Vec<&str> = row.as_object().expect("a row").keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["confidence", "content", "metadata", "node_id", "score", "session_id", "source", "type"]);
    assert_eq!(row["metadata"]["tier"], "episodic", "--debug-report writes what the API sent: {row}");
}

#[test]
fn a_wrong_api_key_is_a_401_failure_for_retrieve() {
    let server = FakeCortex::start(KEY);
    let project = project(&server, "seed: false,", r#"memory.config.api_key = "not-the-key";"#);
    run(&project).expect_code(0);
    let retrievals = output(&project, "retrievals.json");
    assert_eq!((retrievals[0]["ok"].clone(), retrievals[0]["status"].clone()), (json!(false), json!(401)));
    assert!(retrievals[0]["error"].as_str().is_some_and(|e| e.contains("unauthorized")), "{}", retrievals[0]);
    assert!(server.seen_at(INGEST).is_empty() && server.seen_at(REFLECT).is_empty(), "no seeding, no reflect");
    assert_eq!(output(&project, "memory.json")["seeded"], false);
}

#[test]
fn a_failing_reflect_is_a_warning_and_the_run_goes_on() {
    let server = FakeCortex::start(KEY);
    server.fail(REFLECT, vec![Fault::status(StatusCode::INTERNAL_SERVER_ERROR)]);
    let project = project(&server, "", "");
    let outcome = run(&project);
    outcome.expect_code(0);
    assert!(outcome.stderr.contains("warning: cortex: reflect failed"), "{}", outcome.stderr);
    let memory = output(&project, "memory.json");
    assert_eq!(memory["reflect_ok"], false);
    assert!(memory["reflect_error"].as_str().is_some_and(|e| e.starts_with("HTTP 500")), "{memory}");
    assert_eq!(output(&project, "retrievals.json")[0]["ok"], true);
}

#[test]
fn query_type_is_combined_unless_asked_to_follow_the_category() {
    let server = FakeCortex::start(KEY);
    run(&project(&server, "seed: false,", "")).expect_code(0);
    assert_eq!(field(&server.seen_at(RETRIEVE), "query_type"), vec![json!("combined"); 3]);

    let oracle = FakeCortex::start(KEY);
    run(&project(&oracle, "seed: false, query_type_by_category: true,", "")).expect_code(0);
    assert_eq!(
        field(&oracle.seen_at(RETRIEVE), "query_type"),
        [json!("factual"), json!("combined"), json!("combined")]
    );
}

#[test]
fn http_calls_has_one_row_per_request_and_never_the_key_or_a_query_string() {
    let server = FakeCortex::start(KEY);
    server.fail(RETRIEVE, vec![Fault::status(StatusCode::INTERNAL_SERVER_ERROR)]);
    let probe = r#"let probe = http::get(memory.config.base_url + "/v1/knowledge?token=QUERY-SECRET", #{ headers: #{ "x-api-key": memory.config.api_key } });"#;
    let project = project(&server, "", probe);
    let outcome = run(&project);
    outcome.expect_code(0);

    let calls = project.path().join("runs/driver/t/http_calls.parquet").display().to_string();
    let summary = duckdb(&format!(
        "SELECT count(*), count(*) FILTER (WHERE NOT ok), count(*) FILTER (WHERE url LIKE '%?%') FROM '{calls}'"
    ));
    assert_eq!(summary["rows"], json!([[server.seen().len(), 1, 0]]));
    let failed = duckdb(&format!("SELECT method, url, status, kind FROM '{calls}' WHERE NOT ok"));
    assert_eq!(failed["rows"], json!([["POST", format!("{}/v1/retrieve", server.base_url()), 500, "status"]]));

    assert!(!outcome.stderr.contains(KEY) && !outcome.stdout.contains(KEY));
    let run_dir = project.path().join("runs/driver/t");
    let mut searched = 0;
    for entry in std::fs::read_dir(&run_dir).expect("the run directory").flatten() {
        let text = String::from_utf8_lossy(&std::fs::read(entry.path()).expect("an output")).into_owned();
        assert!(!text.contains(KEY), "{} contains the API key", entry.path().display());
        assert!(!text.contains("QUERY-SECRET"), "{} contains the query string", entry.path().display());
        searched += 1;
    }
    assert!(searched >= 5, "searched only {searched} files");
}

#[test]
fn an_invalid_request_is_an_error_naming_the_field() {
    let project = TempProject::new();
    project.write(
        "scripts/bad.rhai",
        "try {\n    http::request(#{ url: \"http://127.0.0.1:9/\", methd: \"GET\" });\n} catch (error) {\n    results::write_text(\"error.txt\", error);\n}\nhttp::get(\"localhost:9/x\");\n",
    );
    let outcome = project.host(&["run", "scripts/bad.rhai", "--run-id", "b"]);
    outcome.expect_code(2);
    assert!(project.read("runs/bad/b/error.txt").contains("unknown field `methd`"));
    assert!(
        outcome.stderr.contains("invalid HTTP request: `url` `localhost:9/x` is not an `http://` or `https://` URL"),
        "{}",
        outcome.stderr
    );
    assert!(outcome.stderr.contains("scripts/bad.rhai:6:"), "{}", outcome.stderr);
}

#[test]
fn time_sleep_refuses_a_negative_duration_naming_it() {
    let project = TempProject::new();
    project.write("scripts/nap.rhai", "let started = time::now_ms();\ntime::sleep(0.01);\ntime::sleep(-1);\n");
    let outcome = project.host(&["run", "scripts/nap.rhai", "--run-id", "n"]);
    outcome.expect_code(2);
    assert!(outcome.stderr.contains("cannot sleep for -1 seconds"), "{}", outcome.stderr);
    assert!(outcome.stderr.contains("scripts/nap.rhai:3:"), "{}", outcome.stderr);
}
