//! The scripts the project ships, and what any script can rely on: arguments, scenarios,
//! imports, tables readable by DuckDB.

use std::path::Path;

use serde_json::json;

use crate::support::{TempProject, duckdb, host_in, repo_root};

#[test]
fn the_hello_example_writes_a_table_that_duckdb_reads() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run_dir = out.path().join("hello");
    let run_dir_text = run_dir.display().to_string();
    host_in(
        &repo_root(),
        &[
            "run",
            "scripts/examples/hello.rhai",
            "--out",
            &run_dir_text,
            "--run-id",
            "e2e",
            "--",
            "--repeat",
            "3",
            "--label",
            "demo",
        ],
    )
    .expect_code(0);

    let words = run_dir.join("words.parquet").display().to_string();
    let count =
        duckdb(&format!("SELECT count(*) AS n, count(DISTINCT run_id) AS runs, min(run_id) AS run_id FROM '{words}'"));
    assert_eq!(count["rows"], json!([[15, 1, "e2e"]]));

    let schema = duckdb(&format!("SELECT * FROM '{words}' LIMIT 0"));
    assert_eq!(
        schema["columns"],
        json!([
            ["run_id", "VARCHAR"],
            ["is_search", "BOOLEAN"],
            ["length", "BIGINT"],
            ["meta", "STRUCT(first_letter VARCHAR, \"label\" VARCHAR)"],
            ["round", "BIGINT"],
            ["share", "DOUBLE"],
            ["topics", "VARCHAR[]"],
            ["word", "VARCHAR"]
        ])
    );

    let value = duckdb(&format!(
        "SELECT word, length, share, topics, meta.label FROM '{words}' WHERE round = 2 AND word = 'retrieval'"
    ));
    assert_eq!(value["rows"], json!([["retrieval", 9, 0.9, ["search", "memory"], "demo"]]));

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("summary.json")).expect("summary.json"))
            .expect("JSON");
    assert_eq!(summary["rows"], json!(15));
    assert!(std::fs::read_to_string(run_dir.join("report.md")).expect("report.md").starts_with("# Hello"));
}

#[test]
fn the_hello_example_takes_its_defaults_from_its_scenario() {
    let out = tempfile::tempdir().expect("temporary directory");
    let out_text = out.path().join("run").display().to_string();
    host_in(&repo_root(), &["run", "scripts/examples/hello.rhai", "--out", &out_text]).expect_code(0);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("run/manifest.json")).expect("manifest"))
            .expect("JSON");
    assert_eq!(manifest["scenario"]["path"], "scenarios/hello.toml");
    assert_eq!(manifest["tables"][0]["rows"], 10, "scenarios/hello.toml repeats the five words twice");
}

#[test]
fn every_scenario_parses_and_belongs_to_a_shipped_script() {
    let root = repo_root();
    let scripts: Vec<String> = rhai_files(&root.join("scripts"))
        .iter()
        .filter_map(|path| path.file_stem().map(|stem| stem.to_string_lossy().into_owned()))
        .collect();
    // A scenario belongs to a script by name (picked up by default) or by being named in it.
    let texts: Vec<String> = rhai_files(&root.join("scripts"))
        .iter()
        .map(|path| std::fs::read_to_string(path).expect("read script"))
        .collect();
    let mut checked = 0;
    for entry in std::fs::read_dir(root.join("scenarios")).expect("scenarios folder").flatten() {
        let path = entry.path();
        // Folders beside the scenarios (prompts/) hold other files.
        if path.extension().is_none_or(|extension| extension != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read scenario");
        assert!(text.parse::<toml::Table>().is_ok(), "{} is not valid TOML", path.display());
        let stem = path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
        let named = format!("scenarios/{stem}.toml");
        assert!(
            scripts.contains(&stem) || texts.iter().any(|text| text.contains(&named)),
            "{} names no script in scripts/, and no script names it",
            path.display()
        );
        checked += 1;
    }
    assert!(checked >= 1);
}

#[test]
fn every_shipped_script_compiles() {
    let root = repo_root();
    let mut checked = 0;
    for path in rhai_files(&root.join("scripts")) {
        let relative = path.strip_prefix(&root).expect("inside the repository").display().to_string();
        let run = host_in(&root, &["check", &relative]);
        assert_eq!(run.code, 0, "{relative} does not compile:\n{}", run.stderr);
        checked += 1;
    }
    assert!(checked >= 2, "expected the example and the library, found {checked} scripts");
}

fn rhai_files(folder: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).expect("read scripts folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(rhai_files(&path));
        } else if path.extension().is_some_and(|extension| extension == "rhai") {
            found.push(path);
        }
    }
    found.sort();
    found
}

#[test]
fn arguments_reach_the_script_typed_and_raw() {
    let project = TempProject::new();
    project.write(
        "scripts/args.rhai",
        r#"results::write_json("seen.json", #{ args: ARGS, argv: ARGV, inside: read_args() });
fn read_args() { run::args() }
"#,
    );
    project
        .host(&[
            "run",
            "scripts/args.rhai",
            "--run-id",
            "a",
            "--",
            "--trials",
            "3",
            "--dry-run",
            "--judge-temperature=0.2",
            "--tag",
            "x",
            "--tag",
            "y",
        ])
        .expect_code(0);
    let seen: serde_json::Value = serde_json::from_str(&project.read("runs/args/a/seen.json")).expect("JSON");
    let expected_args = json!({"trials": 3, "dry_run": true, "judge_temperature": 0.2, "tag": ["x", "y"]});
    assert_eq!(seen["args"], expected_args);
    assert_eq!(seen["inside"], expected_args);
    assert_eq!(
        seen["argv"],
        json!(["--trials", "3", "--dry-run", "--judge-temperature=0.2", "--tag", "x", "--tag", "y"])
    );
}

#[test]
fn the_scenario_is_the_default_one_for_the_script_unless_given() {
    let project = TempProject::new();
    project.write("scripts/exp.rhai", "results::write_json(\"scenario.json\", SCENARIO);\n");
    project.write("scenarios/exp.toml", "name = \"default\"\n[judge]\npasses = 3\n");
    project.write("scenarios/other.toml", "name = \"other\"\n");
    project.host(&["run", "scripts/exp.rhai", "--run-id", "default"]).expect_code(0);
    project
        .host(&["run", "scripts/exp.rhai", "--run-id", "other", "--scenario", "scenarios/other.toml"])
        .expect_code(0);
    let default: serde_json::Value =
        serde_json::from_str(&project.read("runs/exp/default/scenario.json")).expect("JSON");
    assert_eq!(default, json!({"name": "default", "judge": {"passes": 3}}));
    let other: serde_json::Value = serde_json::from_str(&project.read("runs/exp/other/scenario.json")).expect("JSON");
    assert_eq!(other, json!({"name": "other"}));
}

#[test]
fn a_malformed_scenario_is_an_input_error_naming_its_line() {
    let project = TempProject::new();
    project.write("scripts/exp.rhai", "let x = 1;\n");
    project.write("scenarios/exp.toml", "name = \"x\"\npasses = \n");
    let run = project.host(&["run", "scripts/exp.rhai"]);
    run.expect_code(2);
    assert!(run.stderr.contains("invalid TOML in `scenarios/exp.toml` at line 2"), "{}", run.stderr);
}

#[test]
fn imports_resolve_against_the_scripts_folder_from_any_working_directory() {
    let project = TempProject::new();
    project.write("scripts/lib/greet.rhai", "fn hello(name) { `hello ${name}` }\n");
    project.write(
        "scripts/deep/nested/exp.rhai",
        "import \"lib/greet\" as greet;\nresults::write_text(\"out.txt\", greet::hello(\"memory\"));\n",
    );
    let elsewhere = tempfile::tempdir().expect("temporary directory");
    let script = project.path().join("scripts/deep/nested/exp.rhai").display().to_string();
    host_in(elsewhere.path(), &["run", &script, "--run-id", "n"]).expect_code(0);
    assert_eq!(project.read("runs/exp/n/out.txt"), "hello memory");
}

#[test]
fn print_goes_to_stderr_and_the_run_log_never_to_stdout() {
    let project = TempProject::new();
    project.write("scripts/talk.rhai", "print(\"to the person\");\nlog::warn(\"careful\");\n");
    let run = project.host(&["run", "scripts/talk.rhai", "--run-id", "t"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("to the person\nwarning: careful\n"), "{}", run.stderr);
    let log = project.read("runs/talk/t/run.log");
    assert!(log.contains("to the person") && log.contains("warning: careful"), "{log}");
}

#[test]
fn the_script_api_reference_is_unchanged() {
    let project = TempProject::new();
    let run = project.host(&["api"]);
    run.expect_code(0);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn a_declared_table_keeps_its_column_order_and_types() {
    let project = TempProject::new();
    project.write(
        "scripts/declared.rhai",
        "results::declare(\"scores\", [[\"prompt\", \"string\"], [\"score\", \"float\"], [\"tags\", \"list<string>\"]]);\nresults::append(\"scores\", #{ prompt: \"F1\", score: 3, tags: [] });\n",
    );
    project.host(&["run", "scripts/declared.rhai", "--run-id", "d"]).expect_code(0);
    let table = project.path().join("runs/declared/d/scores.parquet").display().to_string();
    let result = duckdb(&format!("SELECT * FROM '{table}'"));
    assert_eq!(
        result["columns"],
        json!([["run_id", "VARCHAR"], ["prompt", "VARCHAR"], ["score", "DOUBLE"], ["tags", "VARCHAR[]"]])
    );
    assert_eq!(result["rows"], json!([["d", "F1", 3.0, []]]));
}

#[test]
fn the_cortex_fixtures_pass_their_own_checker() {
    let output = std::process::Command::new("python3")
        .arg(repo_root().join("fixtures/cortex/v1.1/check.py"))
        .output()
        .expect("run python3");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("OK: 45 sessions"));
}

#[test]
fn the_memory_hook_evals_pass_their_own_checker() {
    // Structure, labels and that each reference.json applies exactly (the gold docs are checked
    // against the docs only when given --docs, which needs the next package).
    let output = std::process::Command::new("python3")
        .arg(repo_root().join("fixtures/memory-hook/check.py"))
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.trim_end().ends_with("OK") && stdout.contains("17 evals"), "{stdout}");
}

#[test]
fn the_retrieval_example_finds_key_facts_and_every_number_traces_to_a_row() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run_dir = out.path().join("run");
    let run_dir_text = run_dir.display().to_string();
    host_in(&repo_root(), &["run", "scripts/examples/retrieval.rhai", "--out", &run_dir_text]).expect_code(0);
    let hits = run_dir.join("prompt_hits.parquet").display().to_string();
    let rates = duckdb(&format!(
        "SELECT profile, count(*), count(*) FILTER (WHERE hit) FROM '{hits}' GROUP BY profile ORDER BY profile"
    ));
    let rows = rates["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{rates}");
    let report = crate::support::unpadded(&std::fs::read_to_string(run_dir.join("report.md")).expect("report.md"));
    for row in rows {
        let (profile, prompts, found) =
            (row[0].as_str().expect("profile"), row[1].as_u64().expect("n"), row[2].as_u64().expect("hits"));
        assert_eq!(prompts, 50);
        assert!(
            report.contains(&format!("| {profile} | {prompts} | {found} |")),
            "report row for {profile} must match the table:\n{report}"
        );
    }
    let simulated = rows.iter().find(|row| row[0] == "ubundi").expect("ubundi row");
    assert!(
        simulated[2].as_u64().expect("hits") >= 25,
        "the benchmark simulation should find key facts for most prompts: {rates}"
    );
}
