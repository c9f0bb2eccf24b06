//! Bad input: each case exits with code 2 and a message that names the place, snapshotted.

use crate::support::{TempProject, stable};

/// Runs `script` (written as `scripts/case.rhai`) and returns the stable stderr, asserting exit 2.
fn failing_run(project: &TempProject, script: &str) -> String {
    project.write("scripts/case.rhai", script);
    let run = project.host(&["run", "scripts/case.rhai", "--run-id", "case"]);
    run.expect_code(2);
    stable(&run.stderr, project.path())
}

#[test]
fn a_syntax_error_points_at_line_and_column_and_creates_no_run() {
    let project = TempProject::new();
    let stderr = failing_run(&project, "let x = 1;\nlet y = x +;\n");
    insta::assert_snapshot!(stderr);
    assert!(!project.path().join("runs").exists());
}

#[test]
fn a_runtime_error_in_an_imported_function_shows_both_places() {
    let project = TempProject::new();
    project.write("scripts/lib/scoring.rhai", "fn score(answer) {\n    answer.length * 2\n}\n");
    let stderr =
        failing_run(&project, "import \"lib/scoring\" as scoring;\n\nlet s = scoring::score(#{ text: \"x\" });\n");
    insta::assert_snapshot!(stderr);
}

#[test]
fn a_thrown_error_is_reported_with_its_value() {
    let project = TempProject::new();
    let stderr = failing_run(&project, "let n = 0;\nif n == 0 {\n    throw \"no prompts to answer\";\n}\n");
    insta::assert_snapshot!(stderr);
}

#[test]
fn a_missing_input_file_is_named() {
    let project = TempProject::new();
    let stderr = failing_run(&project, "let data = fs::read_json(\"fixtures/missing.json\");\n");
    insta::assert_snapshot!(stderr);
}

#[test]
fn malformed_json_names_file_line_and_column() {
    let project = TempProject::new();
    project.write("fixtures/bad.json", "{\n  \"sessions\": [\n    {\"id\": 1,}\n  ]\n}\n");
    let stderr = failing_run(&project, "let data = fs::read_json(\"fixtures/bad.json\");\n");
    insta::assert_snapshot!(stderr);
}

#[test]
fn reading_outside_the_project_is_refused() {
    let project = TempProject::new();
    let stderr = failing_run(&project, "let secret = fs::read_text(\"../host-e2e-outside.txt\");\n");
    insta::assert_snapshot!(stderr);
}

#[test]
fn a_symlink_out_of_the_project_is_refused() {
    let project = TempProject::new();
    let outside = tempfile::tempdir().expect("temporary directory");
    std::fs::write(outside.path().join("secret.txt"), "secret").expect("write outside");
    std::os::unix::fs::symlink(outside.path(), project.path().join("linked")).expect("symlink");
    let stderr = failing_run(&project, "let secret = fs::read_text(\"linked/secret.txt\");\n");
    assert!(stderr.contains("error: path `linked/secret.txt` is outside the project"), "{stderr}");
}

#[test]
fn writing_outside_the_run_directory_is_refused() {
    let project = TempProject::new();
    let stderr = failing_run(&project, "results::write_json(\"../escaped.json\", #{ a: 1 });\n");
    insta::assert_snapshot!(stderr);
    assert!(!project.path().join("runs/case/escaped.json").exists());
    assert!(!project.path().join("runs/escaped.json").exists());
}

#[test]
fn a_path_given_as_a_script_argument_may_be_read_from_outside() {
    let project = TempProject::new();
    let outside = tempfile::tempdir().expect("temporary directory");
    let data = outside.path().join("sessions.json");
    std::fs::write(&data, "{\"sessions\": [1, 2, 3]}").expect("write outside");
    project.write(
        "scripts/case.rhai",
        "let data = fs::read_json(ARGS.sessions);\nresults::check(\"three sessions\", data.sessions.len() == 3);\n",
    );
    let data = data.display().to_string();
    project.host(&["run", "scripts/case.rhai", "--", "--sessions", &data]).expect_code(0);
}

#[test]
fn a_runaway_loop_is_stopped_by_the_operation_limit() {
    let project = TempProject::new();
    project.write("scripts/case.rhai", "let n = 0;\nloop {\n    n += 1;\n}\n");
    let run = project.host(&["run", "scripts/case.rhai", "--run-id", "case", "--max-operations", "100000"]);
    run.expect_code(2);
    insta::assert_snapshot!(stable(&run.stderr, project.path()));
}

#[test]
fn unbounded_recursion_is_stopped_without_crashing_the_host() {
    let project = TempProject::new();
    let stderr = failing_run(&project, "fn down(n) { down(n + 1) }\ndown(0);\n");
    assert!(stderr.contains("error: Stack overflow"), "{stderr}");
    let manifest = project.read("runs/case/case/manifest.json");
    assert!(manifest.contains("\"status\": \"failed\""), "{manifest}");
}

#[test]
fn check_reports_the_errors_of_every_imported_module() {
    let project = TempProject::new();
    project.write("scripts/lib/first.rhai", "fn f() {\n    let = 1;\n}\n");
    project.write("scripts/lib/second.rhai", "fn g( {\n}\n");
    project.write(
        "scripts/main.rhai",
        "import \"lib/first\" as first;\nimport \"lib/second\" as second;\nimport \"lib/third\" as third;\n",
    );
    let run = project.host(&["check", "scripts/main.rhai"]);
    run.expect_code(2);
    insta::assert_snapshot!(stable(&run.stderr, project.path()));
}

#[test]
fn every_options_map_refuses_an_unknown_key_naming_the_function_and_the_key() {
    let project = TempProject::new();
    // One call per function that takes an options map, each with a misspelt key.
    let cases = [
        ("llm::chat_many", r#"llm::chat_many([], #{ concurency: 2 })"#, "concurency"),
        ("proc::run_many", r#"proc::run_many([], #{ concurency: 2 })"#, "concurency"),
        ("proc::run", r#"proc::run(#{ argv: ["true"], timout_s: 1 })"#, "timout_s"),
        ("embed::texts", r#"embed::texts([], #{ modle: "local" })"#, "modle"),
        ("search::corpus", r#"search::corpus([], #{ embeds: true })"#, "embeds"),
        ("corpus.query", r#"search::corpus([#{ id: "a", text: "x" }]).query("x", #{ limt: 3 })"#, "limt"),
        ("corpus.keyword", r#"search::corpus([#{ id: "a", text: "x" }]).keyword("x", #{ limt: 3 })"#, "limt"),
        ("search::text_index", r#"search::text_index([], #{ stemer: true })"#, "stemer"),
        ("search::chunk_chars", r#"search::chunk_chars("abc", #{ sise: 3 })"#, "sise"),
        ("search::chunk_lines", r#"search::chunk_lines("abc", #{ sise: 3 })"#, "sise"),
        ("search::mmr", r#"search::mmr([1.0], ["x"], #{ lamda: 0.5 })"#, "lamda"),
        ("stats::bootstrap_mean", r#"stats::bootstrap_mean([1.0, 2.0], #{ levl: 0.9 })"#, "levl"),
        ("text::table", r#"text::table(["a"], [["1"]], #{ algin: "r" })"#, "algin"),
        ("http", r#"http::get("http://127.0.0.1:9/", #{ timeot_s: 1 })"#, "timeot_s"),
        ("workspace", r#"workspace::create(#{ nmae: "x" })"#, "nmae"),
        ("llm::chat", r#"llm::chat(#{ messages: [], modle: "x" })"#, "modle"),
    ];
    let calls: Vec<String> = cases
        .iter()
        .map(|(_, call, _)| {
            format!("try {{ {call}; caught.push(\"no error\"); }} catch (error) {{ caught.push(`${{error}}`); }}")
        })
        .collect();
    project.write(
        "scripts/options.rhai",
        &format!("let caught = [];\n{}\nresults::write_json(\"caught.json\", caught);\n", calls.join("\n")),
    );
    project.host(&["run", "scripts/options.rhai", "--run-id", "o"]).expect_code(0);
    let caught: Vec<String> = serde_json::from_str(&project.read("runs/options/o/caught.json")).expect("caught.json");
    for ((function, _, key), message) in cases.iter().zip(&caught) {
        assert!(message.contains(&format!("unknown field `{key}`")), "{function}: {message}");
        assert!(message.contains(function), "{function} is not named: {message}");
    }
    assert_eq!(caught.len(), cases.len());
}

#[test]
fn an_unknown_option_key_points_at_the_script_line() {
    let project = TempProject::new();
    let stderr = failing_run(
        &project,
        "let values = [1.0, 2.0];\nlet ci = stats::bootstrap_mean(values, #{ level: 0.9, sed: 3 });\n",
    );
    assert!(stderr.contains("invalid options for `stats::bootstrap_mean`: unknown field `sed`, expected one of `level`, `resamples`, `seed`"), "{stderr}");
    assert!(stderr.contains("scripts/case.rhai:2:"), "{stderr}");
}
