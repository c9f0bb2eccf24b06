//! The run directory: manifest content, status on every way a run can end, checks and exit codes.

use serde_json::Value;

use crate::support::{TempProject, stable};

fn manifest(project: &TempProject, path: &str) -> Value {
    serde_json::from_str(&project.read(path)).expect("manifest.json is JSON")
}

#[test]
fn the_manifest_records_what_produced_the_run() {
    let project = TempProject::new();
    project.write("fixtures/data.json", "{\"n\": 2}\n");
    project.write("scenarios/exp.toml", "label = \"x\"\n");
    project.write("scripts/lib/util.rhai", "fn twice(n) { n * 2 }\n");
    project.write(
        "scripts/exp.rhai",
        "import \"lib/util\" as util;\nlet data = fs::read_json(\"fixtures/data.json\");\nresults::append(\"t\", #{ n: util::twice(data.n) });\nresults::write_json(\"out.json\", #{ ok: true });\nresults::check(\"n is 4\", util::twice(data.n) == 4);\n",
    );
    project.host(&["run", "scripts/exp.rhai", "--run-id", "m1", "--", "--seed", "7"]).expect_code(0);
    let text = project.read("runs/exp/m1/manifest.json");
    insta::assert_snapshot!(stable(&text, project.path()));
}

#[test]
fn an_error_after_rows_were_appended_keeps_them_and_marks_the_run_failed() {
    let project = TempProject::new();
    project.write(
        "scripts/crash.rhai",
        "for i in 0..1500 {\n    results::append(\"progress\", #{ i: i, label: `row ${i}` });\n}\nresults::write_json(\"partial.json\", #{ done: 1500 });\nthrow \"simulated crash\";\n",
    );
    let run = project.host(&["run", "scripts/crash.rhai", "--run-id", "c"]);
    run.expect_code(2);
    let manifest = manifest(&project, "runs/crash/c/manifest.json");
    assert_eq!(manifest["status"], "failed");
    assert_eq!(manifest["error"], "scripts/crash.rhai:5:1: simulated crash");
    assert_eq!(manifest["tables"][0]["rows"], 1500);
    assert!(manifest["finished_at"].is_string());
    let table = project.path().join("runs/crash/c/progress.parquet").display().to_string();
    let rows = crate::support::duckdb(&format!("SELECT count(*), max(i) FROM '{table}'"));
    assert_eq!(rows["rows"], serde_json::json!([[1500, 1499]]));
    let leftovers: Vec<_> = std::fs::read_dir(project.path().join("runs/crash/c"))
        .expect("run dir")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind: {leftovers:?}");
}

#[test]
fn a_failed_check_finishes_the_run_with_exit_code_1() {
    let project = TempProject::new();
    project.write("scripts/checks.rhai", "results::check(\"always\", true);\nresults::check(\"hit rate at least 0.5\", false, \"hit rate 0.25\");\nresults::append(\"t\", #{ x: 1 });\n");
    let run = project.host(&["run", "scripts/checks.rhai", "--run-id", "k"]);
    run.expect_code(1);
    insta::assert_snapshot!(stable(&run.stderr, project.path()));
    let manifest = manifest(&project, "runs/checks/k/manifest.json");
    assert_eq!(manifest["status"], "checks_failed");
    assert_eq!(
        manifest["checks"][1],
        serde_json::json!({"name": "hit rate at least 0.5", "passed": false, "detail": "hit rate 0.25"})
    );
}

#[test]
fn a_run_never_overwrites_an_earlier_run() {
    let project = TempProject::new();
    project.write("scripts/once.rhai", "results::write_text(\"x.txt\", \"first\");\n");
    project.host(&["run", "scripts/once.rhai", "--run-id", "same"]).expect_code(0);
    let run = project.host(&["run", "scripts/once.rhai", "--run-id", "same"]);
    run.expect_code(2);
    assert!(run.stderr.contains("already exists and is not empty"), "{}", run.stderr);
    assert_eq!(project.read("runs/once/same/x.txt"), "first");
}

#[test]
fn scripts_cannot_overwrite_the_manifest() {
    let project = TempProject::new();
    project.write("scripts/sneaky.rhai", "results::write_json(\"manifest.json\", #{ status: \"ok\" });\n");
    project.host(&["run", "scripts/sneaky.rhai", "--run-id", "s"]).expect_code(2);
    assert_eq!(manifest(&project, "runs/sneaky/s/manifest.json")["status"], "failed");
}

#[test]
fn a_type_conflict_names_the_table_column_and_row() {
    let project = TempProject::new();
    project.write("scripts/conflict.rhai", "results::append(\"scores\", #{ score: 1.5 });\nresults::append(\"scores\", #{ score: 2.0 });\nresults::append(\"scores\", #{ score: \"high\" });\n");
    let run = project.host(&["run", "scripts/conflict.rhai", "--run-id", "t"]);
    run.expect_code(2);
    assert!(run.stderr.contains("table `scores`, column `score`, row 3"), "{}", run.stderr);
}

#[test]
fn ctrl_c_stops_the_script_keeps_its_rows_and_marks_the_run_interrupted() {
    let project = TempProject::new();
    project.write(
        "scripts/endless.rhai",
        "let i = 0;\nloop {\n    results::append(\"ticks\", #{ i: i });\n    i += 1;\n}\n",
    );
    // The operation limit is only a safety net so that a lost signal cannot hang the suite.
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_host"))
        .args(["run", "scripts/endless.rhai", "--run-id", "i", "--max-operations", "500000000"])
        .current_dir(project.path())
        .env("CI", "1")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start host");
    let manifest_path = project.path().join("runs/endless/i/manifest.json");
    let table_path = project.path().join("runs/endless/i/.ticks.parquet.partial");
    for _ in 0..200 {
        if manifest_path.exists() && table_path.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let signal = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
    assert!(signal.success());
    let run = crate::support::Run::from(child.wait_with_output().expect("wait for host"));
    run.expect_code(2);
    let manifest = manifest(&project, "runs/endless/i/manifest.json");
    assert_eq!(manifest["status"], "interrupted", "{}", run.stderr);
    let rows = manifest["tables"][0]["rows"].as_u64().expect("a row count");
    assert!(rows > 0, "rows appended before Ctrl-C are kept");
    let table = project.path().join("runs/endless/i/ticks.parquet").display().to_string();
    let counted = crate::support::duckdb(&format!("SELECT count(*) FROM '{table}'"));
    assert_eq!(counted["rows"][0][0], rows);
}

#[test]
fn the_manifest_records_the_git_commit_and_whether_the_tree_was_dirty() {
    let project = TempProject::new();
    project.write("scripts/exp.rhai", "results::write_text(\"x.txt\", \"x\");\n");
    project.write(".gitignore", "runs/\n");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(project.path())
            .output()
            .expect("run git");
        assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
        String::from_utf8_lossy(&status.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "experiment"]);
    let commit = git(&["rev-parse", "HEAD"]);

    project.host(&["run", "scripts/exp.rhai", "--run-id", "clean"]).expect_code(0);
    let clean = manifest(&project, "runs/exp/clean/manifest.json");
    assert_eq!(clean["host"]["git"], serde_json::json!({"commit": commit, "dirty": false}));

    project.write("scripts/exp.rhai", "results::write_text(\"x.txt\", \"changed\");\n");
    project.host(&["run", "scripts/exp.rhai", "--run-id", "dirty"]).expect_code(0);
    let dirty = manifest(&project, "runs/exp/dirty/manifest.json");
    assert_eq!(dirty["host"]["git"]["dirty"], true);
}

#[test]
fn ctrl_c_ends_a_long_sleep_at_once_and_marks_the_run_interrupted() {
    let project = TempProject::new();
    project.write(
        "scripts/nap.rhai",
        "results::write_text(\"started.txt\", \"x\");\ntime::sleep(300);\nresults::write_text(\"woke.txt\", \"x\");\n",
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_host"))
        .args(["run", "scripts/nap.rhai", "--run-id", "n"])
        .current_dir(project.path())
        .env("CI", "1")
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start host");
    let started = project.path().join("runs/nap/n/started.txt");
    for _ in 0..400 {
        if started.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let signal = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
    assert!(signal.success());
    // The pause is 300 s; a pause that ignored Ctrl-C would still be running long after this.
    let mut status = None;
    for _ in 0..300 {
        status = child.try_wait().expect("wait for host");
        if status.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    if status.is_none() {
        let _ = child.kill();
    }
    assert_eq!(status.and_then(|status| status.code()), Some(2), "Ctrl-C did not end the pause");
    assert_eq!(manifest(&project, "runs/nap/n/manifest.json")["status"], "interrupted");
    assert!(!project.path().join("runs/nap/n/woke.txt").exists());
}
