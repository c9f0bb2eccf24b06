//! `proc::`: real programs run by real scripts. Exit codes, signals, timeouts that reach
//! grandchildren, output floods, stdin, the child's environment, the allow-list, Ctrl-C, many
//! processes at once, and a spawned server found by its port. Every process a test starts is
//! checked to be gone when the run is.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::{Run, TempProject, duckdb};

/// Only `sh` and the programs a test names may run.
const SCENARIO: &str = "[proc]\nallow = [\"sh\", \"cat\", \"env\", \"false\", \"no-such-program-for-host\"]\n";

/// A project with `script` as `scripts/<name>.rhai` and [`SCENARIO`] as its default scenario.
fn project(name: &str, script: &str) -> TempProject {
    let project = TempProject::new();
    project.write(&format!("scripts/{name}.rhai"), script);
    project.write(&format!("scenarios/{name}.toml"), SCENARIO);
    project
}

/// Runs `scripts/<name>.rhai` as run `t` and returns what it wrote to `out.json`.
fn run_json(project: &TempProject, name: &str, args: &[&str], env: &[(&str, Option<&str>)]) -> (Run, Value) {
    let mut all = vec!["run", &*format!("scripts/{name}.rhai"), "--run-id", "t"]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    all.extend(args.iter().map(|arg| arg.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let run = project.host_with_env(&all, env);
    run.expect_code(0);
    let out = project.read(&format!("runs/{name}/t/out.json"));
    (run, serde_json::from_str(&out).expect("out.json is JSON"))
}

/// Whether `pid` is a live process (a zombie waiting for its parent counts as gone).
fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])))
        .is_some_and(|zombie| !zombie)
}

/// Every number in `text`, as pids.
fn pids(text: &str) -> Vec<u64> {
    text.split_whitespace().filter_map(|word| word.parse().ok()).collect()
}

#[test]
fn exit_codes_signals_missing_programs_and_stdin_are_values() {
    let project = project(
        "basics",
        r#"
let failed = proc::run(#{ argv: ["sh", "-c", "echo out; echo err >&2; exit 3"] });
let crashed = proc::run(#{ argv: ["sh", "-c", "kill -SEGV $$"] });
let missing = proc::run(#{ argv: ["no-such-program-for-host", "x"] });
let echoed = proc::run(#{ argv: ["cat"], stdin: "through stdin\n" });
let plain = proc::run(#{ argv: ["false"] });
results::write_json("out.json", #{ failed: failed, crashed: crashed, missing: missing, echoed: echoed, plain: plain });
"#,
    );
    let (_, out) = run_json(&project, "basics", &[], &[]);
    let failed = &out["failed"];
    assert_eq!(
        (failed["ok"].as_bool(), failed["code"].as_i64(), failed["kind"].as_str()),
        (Some(false), Some(3), Some("exit"))
    );
    assert_eq!((failed["stdout"].as_str(), failed["stderr"].as_str()), (Some("out\n"), Some("err\n")));
    assert_eq!(failed["error"], "`sh` exited with code 3");
    let crashed = &out["crashed"];
    assert_eq!(
        (crashed["code"].clone(), crashed["signal"].as_str(), crashed["kind"].as_str()),
        (Value::Null, Some("SIGSEGV"), Some("signal"))
    );
    let missing = &out["missing"];
    assert_eq!(
        (missing["kind"].as_str(), missing["error"].as_str()),
        (Some("missing"), Some("program `no-such-program-for-host` not found on `PATH`"))
    );
    assert_eq!(
        (out["echoed"]["ok"].as_bool(), out["echoed"]["stdout"].as_str()),
        (Some(true), Some("through stdin\n"))
    );
    assert_eq!(out["plain"]["code"], 1);

    let table = project.path().join("runs/basics/t/proc_calls.parquet").display().to_string();
    let rows = duckdb(&format!("SELECT program, kind, code FROM '{table}' ORDER BY program, kind"));
    assert_eq!(
        rows["rows"],
        serde_json::json!([
            ["cat", null, 0],
            ["false", "exit", 1],
            ["no-such-program-for-host", "missing", null],
            ["sh", "exit", 3],
            ["sh", "signal", null]
        ])
    );
}

#[test]
fn a_timeout_ends_the_whole_process_group_grandchildren_included() {
    let project = project(
        "timeout",
        r#"
let polite = proc::run(#{ argv: ["sh", "-c", "sleep 300 & echo $!; wait"], timeout_s: 0.5 });
let stubborn = proc::run(#{ argv: ["sh", "-c", "trap '' TERM; sleep 300 & echo $!; wait"], timeout_s: 0.5, grace_s: 0.5 });
results::write_json("out.json", #{ polite: polite, stubborn: stubborn });
"#,
    );
    let (_, out) = run_json(&project, "timeout", &[], &[]);
    for case in ["polite", "stubborn"] {
        let result = &out[case];
        assert_eq!((result["timed_out"].as_bool(), result["kind"].as_str()), (Some(true), Some("timeout")), "{case}");
        let grandchildren = pids(result["stdout"].as_str().unwrap_or_default());
        assert_eq!(grandchildren.len(), 1, "{case}: the shell printed its sleeping child");
        assert!(!alive(grandchildren[0]), "{case}: the grandchild {} survived", grandchildren[0]);
    }
    assert_eq!(out["polite"]["signal"], "SIGTERM", "a shell that obeys SIGTERM ends by it");
    assert_eq!(out["stubborn"]["signal"], "SIGKILL", "one that ignores it is killed after the grace period");
}

#[test]
fn a_flood_of_output_is_cut_in_the_middle_with_a_marker_and_counted_whole() {
    let project = project(
        "flood",
        r#"
let r = proc::run(#{ argv: ["sh", "-c", "echo FIRST; yes 0123456789 | head -c 50000000; echo; echo LAST"], output_limit_kib: 64 });
results::write_json("out.json", #{ ok: r.ok, truncated: r.truncated, bytes: r.stdout_bytes, kept: r.stdout.len(),
    first: r.stdout.starts_with("FIRST"), last: r.stdout.ends_with("LAST\n"), marker: r.stdout.contains("bytes of output omitted here") });
"#,
    );
    let (_, out) = run_json(&project, "flood", &[], &[]);
    assert_eq!(out["ok"], true);
    assert_eq!(out["truncated"], true);
    assert_eq!(out["bytes"], 50_000_000 + 6 + 1 + 5);
    assert!(out["kept"].as_u64().is_some_and(|kept| kept < 64 * 1024 + 100), "{}", out["kept"]);
    assert_eq!(
        (out["first"].as_bool(), out["last"].as_bool(), out["marker"].as_bool()),
        (Some(true), Some(true), Some(true))
    );
}

#[test]
fn the_child_gets_only_the_environment_it_is_given_and_secrets_are_never_recorded() {
    let project = project(
        "environment",
        r#"
let bare = proc::run(#{ argv: ["env"] });
let named = proc::run(#{ argv: ["env"], pass_env: ["HOST_TEST_API_KEY"], env: #{ MODE: "test" } });
let echoed = proc::run(#{ argv: ["sh", "-c", "exit 1", "sh", run::env("HOST_TEST_API_KEY")] });
results::write_json("out.json", #{
    bare_has_secret: bare.stdout.contains("HOST_TEST_API_KEY"), bare_has_unrelated: bare.stdout.contains("HOST_TEST_UNRELATED"),
    bare_has_path: bare.stdout.contains("PATH="), named_has_secret: named.stdout.contains("HOST_TEST_API_KEY=sk-test-4242424242"),
    named_has_mode: named.stdout.contains("MODE=test"), echoed: echoed.ok });
"#,
    );
    let env = [("HOST_TEST_API_KEY", Some("sk-test-4242424242")), ("HOST_TEST_UNRELATED", Some("x"))];
    let (run, out) = run_json(&project, "environment", &[], &env);
    assert_eq!(out["bare_has_secret"], false);
    assert_eq!(out["bare_has_unrelated"], false);
    assert_eq!(out["bare_has_path"], true);
    assert_eq!(out["named_has_secret"], true);
    assert_eq!(out["named_has_mode"], true);
    assert_eq!(out["echoed"], false);

    let table = project.path().join("runs/environment/t/proc_calls.parquet").display().to_string();
    let argv = duckdb(&format!("SELECT argv FROM '{table}' WHERE program = 'sh'"));
    assert_eq!(argv["rows"][0][0], serde_json::json!(["sh", "-c", "exit 1", "sh", "***"]));
    for file in files_under(&project.path().join("runs/environment/t")) {
        let bytes = std::fs::read(&file).expect("read a run file");
        assert!(!String::from_utf8_lossy(&bytes).contains("sk-test-4242424242"), "the secret is in {}", file.display());
    }
    assert!(!run.stderr.contains("sk-test-4242424242"));
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read a run folder").flatten() {
        let path = entry.path();
        if path.is_dir() { files.extend(files_under(&path)) } else { files.push(path) }
    }
    files
}

#[test]
fn a_program_not_allowed_is_refused_before_it_starts_with_where_to_allow_it() {
    let project = project(
        "refused",
        r#"
let refused = "";
try { proc::run(#{ argv: ["touch", "created-by-touch"] }); } catch (error) { refused = error; }
proc::allow(["touch"]);
let allowed = proc::run(#{ argv: ["touch", "created-by-touch"], cwd: "." });
results::write_json("out.json", #{ refused: refused, allowed: allowed.ok });
"#,
    );
    let (_, out) = run_json(&project, "refused", &[], &[]);
    let refused = out["refused"].as_str().unwrap_or_default();
    assert!(
        refused.contains("program `touch` is not allowed to run; hint: add \"touch\" to `allow` under `[proc]` in `scenarios/refused.toml`, or call `proc::allow([\"touch\"])`"),
        "{refused}"
    );
    assert_eq!(out["allowed"], true);
    let manifest: Value = serde_json::from_str(&project.read("runs/refused/t/manifest.json")).expect("manifest");
    let allowed = &manifest["processes"]["allowed"];
    assert!(
        allowed
            .as_array()
            .is_some_and(|all| all.contains(&serde_json::json!({"program": "touch", "declared_in": "script"}))),
        "{allowed}"
    );
    let programs = &manifest["processes"]["programs"];
    let touch = programs.as_array().and_then(|all| all.iter().find(|p| p["name"] == "touch")).expect("touch is listed");
    assert!(touch["path"].as_str().is_some_and(|path| path.starts_with('/') && path.ends_with("/touch")), "{touch}");
    assert!(touch["version"].as_str().is_some_and(|version| version.contains("coreutils")), "{touch}");
}

#[test]
fn two_hundred_short_processes_sixteen_at_a_time_come_back_in_input_order() {
    let project = project(
        "many",
        r#"
let requests = [];
for i in 0..200 { requests.push(#{ argv: ["sh", "-c", "echo $1", "sh", `${i}`] }); }
let results = proc::run_many(requests, #{ concurrency: 16, label: "echo" });
let outputs = results.map(|r| { let text = r.stdout; text.trim(); text });
results::write_json("out.json", #{ ok: results.filter(|r| r.ok).len(), outputs: outputs });
"#,
    );
    let (_, out) = run_json(&project, "many", &[], &[]);
    assert_eq!(out["ok"], 200);
    let expected: Vec<String> = (0..200).map(|i| i.to_string()).collect();
    assert_eq!(out["outputs"], serde_json::json!(expected));
    let table = project.path().join("runs/many/t/proc_calls.parquet").display().to_string();
    assert_eq!(duckdb(&format!("SELECT count(*) FROM '{table}'"))["rows"][0][0], 200);
}

#[test]
fn unknown_and_misplaced_options_are_errors_naming_them() {
    let project = project(
        "options",
        r#"
let caught = [];
try { proc::run_many([], #{ concurency: 2 }); } catch (error) { caught.push(error); }
try { proc::run(#{ argv: ["sh"], ready: #{ port: 1 } }); } catch (error) { caught.push(error); }
try { proc::start(#{ argv: ["sh"], timeout_s: 5 }); } catch (error) { caught.push(error); }
try { proc::run(#{ argv: ["sh"], timeout_s: "soon" }); } catch (error) { caught.push(error); }
results::write_json("out.json", caught);
"#,
    );
    let (_, out) = run_json(&project, "options", &[], &[]);
    let caught: Vec<&str> = out.as_array().expect("errors").iter().filter_map(Value::as_str).collect();
    assert_eq!(caught.len(), 4, "{caught:?}");
    assert!(
        caught[0].contains(
            "invalid options for `proc::run_many`: unknown field `concurency`, expected `concurrency` or `label`"
        ),
        "{}",
        caught[0]
    );
    assert!(caught[1].contains("`ready` is for `proc::start`"), "{}", caught[1]);
    assert!(caught[2].contains("`timeout_s` is for `proc::run`"), "{}", caught[2]);
    assert!(caught[3].contains("request: `timeout_s`: expected a number of seconds"), "{}", caught[3]);
}

#[test]
fn a_spawned_server_is_reached_through_its_ready_port_and_ended_with_the_run() {
    let project = project(
        "server",
        r#"
proc::allow(["python3", "sleep"]);
let port = proc::free_port();
let server = proc::start(#{ argv: ["python3", "-m", "http.server", `${port}`, "--bind", "127.0.0.1"], ready: #{ port: port, timeout_s: 30 } });
let reply = http::get(`http://127.0.0.1:${port}/`);
let ended = server.kill();
let early = proc::start(#{ argv: ["sh", "-c", "echo starting; exit 4"], ready: #{ line: "listening" } });
let slow = proc::start(#{ argv: ["sleep", "30"], ready: #{ port: proc::free_port(), timeout_s: 0.5 } });
let booted = proc::start(#{ argv: ["sh", "-c", "echo booting; sleep 0.2; echo 'listening on 4242'; exec sleep 300"], ready: #{ line: "listening on" } });
let left = proc::start(#{ argv: ["sleep", "300"] });
results::write_json("out.json", #{ ready: server.ready(), status: reply.status, ended: ended.ok, running: server.running(),
    early: early.error(), slow: slow.error(), slow_ready: slow.ready(), booted: booted.ready(), booted_lines: booted.stdout_lines(),
    waited: left.wait(0.2), left: left.pid(), left_running: left.running() });
"#,
    );
    let (_, out) = run_json(&project, "server", &[], &[]);
    assert_eq!((out["ready"].as_bool(), out["status"].as_u64()), (Some(true), Some(200)));
    assert_eq!((out["ended"].as_bool(), out["running"].as_bool()), (Some(true), Some(false)));
    assert_eq!(out["early"], "`sh` ended before it was ready: `sh` exited with code 4");
    assert!(
        out["slow"]
            .as_str()
            .is_some_and(|error| error.starts_with("`sleep` was not ready after 0.5 s (waiting for port")),
        "{}",
        out["slow"]
    );
    assert_eq!(out["slow_ready"], false);
    assert_eq!(out["booted"], true);
    assert_eq!(out["booted_lines"], serde_json::json!(["booting", "listening on 4242"]));
    assert_eq!(out["waited"], Value::Null, "a bounded wait on a running process gives ()");
    assert_eq!(out["left_running"], true);
    let left = out["left"].as_u64().expect("a pid");
    assert!(!alive(left), "a process the script left running outlived the run");

    let table = project.path().join("runs/server/t/proc_calls.parquet").display().to_string();
    let rows = duckdb(&format!("SELECT program, ok, kind FROM '{table}' WHERE mode = 'spawn' ORDER BY program, kind"));
    assert_eq!(
        rows["rows"],
        serde_json::json!([
            ["python3", true, null],
            ["sh", false, "exit"],
            ["sh", true, null],
            ["sleep", false, "not_ready"],
            ["sleep", true, null]
        ])
    );
}

#[test]
fn ctrl_c_during_run_many_ends_every_process_and_marks_the_run_interrupted() {
    let project = project(
        "interrupted",
        r#"
let dir = ARGS.dir;
let requests = [];
for i in 0..4 { requests.push(#{ argv: ["sh", "-c", `sleep 300 & echo $$ $! > ${dir}/pids-${i}.partial; mv ${dir}/pids-${i}.partial ${dir}/pids-${i}; wait`] }); }
proc::run_many(requests, #{ concurrency: 4 });
results::write_text("never.txt", "the script went on after Ctrl-C");
"#,
    );
    let pids_dir = tempfile::tempdir().expect("a folder for pids");
    let dir = pids_dir.path().display().to_string();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_host"))
        .args(["run", "scripts/interrupted.rhai", "--run-id", "i", "--", "--dir", &dir])
        .current_dir(project.path())
        .env("CI", "1")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start host");
    let files: Vec<PathBuf> = (0..4).map(|i| pids_dir.path().join(format!("pids-{i}"))).collect();
    for _ in 0..400 {
        if files.iter().all(|file| file.exists()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let started: Vec<u64> =
        files.iter().flat_map(|file| pids(&std::fs::read_to_string(file).unwrap_or_default())).collect();
    assert_eq!(started.len(), 8, "four shells and their four sleeping children");
    assert!(started.iter().all(|pid| alive(*pid)));
    let signal = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
    assert!(signal.success());
    let run = Run::from(child.wait_with_output().expect("wait for host"));
    run.expect_code(2);
    let survivors: Vec<u64> = started.into_iter().filter(|pid| alive(*pid)).collect();
    assert!(survivors.is_empty(), "processes outlived Ctrl-C: {survivors:?}");
    let manifest: Value = serde_json::from_str(&project.read("runs/interrupted/i/manifest.json")).expect("manifest");
    assert_eq!(manifest["status"], "interrupted");
    assert!(!project.path().join("runs/interrupted/i/never.txt").exists());
    let table = project.path().join("runs/interrupted/i/proc_calls.parquet").display().to_string();
    let rows = duckdb(&format!("SELECT count(*), bool_and(interrupted) FROM '{table}'"));
    assert_eq!(rows["rows"][0], serde_json::json!([4, true]));
}

#[test]
fn eight_runs_started_at_once_get_eight_run_directories() {
    let project = TempProject::new();
    project.write("scripts/hello.rhai", "results::write_text(\"hello.txt\", \"hi\");\n");
    let children: Vec<std::process::Child> = (0..8)
        .map(|_| {
            std::process::Command::new(env!("CARGO_BIN_EXE_host"))
                .args(["run", "scripts/hello.rhai"])
                .current_dir(project.path())
                .env("CI", "1")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start host")
        })
        .collect();
    for child in children {
        Run::from(child.wait_with_output().expect("wait for host")).expect_code(0);
    }
    let runs: Vec<_> = std::fs::read_dir(project.path().join("runs/hello")).expect("runs folder").flatten().collect();
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|run| run.path().join("hello.txt").exists()));
}

#[test]
fn the_proc_example_passes_its_checks_and_leaves_no_workspace_behind() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run_dir = out.path().join("run");
    let run_text = run_dir.display().to_string();
    crate::support::host_in(&crate::support::repo_root(), &["run", "scripts/examples/proc.rhai", "--out", &run_text])
        .expect_code(0);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("manifest.json")).expect("manifest")).expect("JSON");
    assert_eq!(manifest["checks"].as_array().map(Vec::len), Some(5));
    let workspaces = manifest["workspaces"].as_array().expect("workspaces");
    assert_eq!(workspaces.len(), 1);
    assert_eq!((workspaces[0]["kept"].as_bool(), workspaces[0]["files"].as_u64()), (Some(false), Some(3)));
    assert!(!Path::new(workspaces[0]["path"].as_str().unwrap_or_default()).exists(), "the workspace was removed");
    let table = run_dir.join("proc_calls.parquet").display().to_string();
    let git = duckdb(&format!("SELECT list(argv[2] ORDER BY argv[2]) FROM '{table}' WHERE program = 'git'"));
    assert_eq!(git["rows"][0][0], serde_json::json!(["-c", "-c", "-c", "status"]), "init, add and commit, then status");
    let report = crate::support::unpadded(&std::fs::read_to_string(run_dir.join("report.md")).expect("report.md"));
    assert!(
        report.contains("| timeout | false | `sh` timed out after 0.5 s and was ended |\n| failure | false |"),
        "{report}"
    );
}

#[test]
fn kept_workspaces_stay_on_disk_and_are_named_at_the_end() {
    let project = project(
        "keep",
        r#"
let ws = workspace::create(#{ name: "kept", under: "run" });
ws.write("notes/a.txt", "kept for debugging");
results::write_json("out.json", #{ path: ws.path() });
"#,
    );
    let (run, out) = run_json(&project, "keep", &["--keep-workspaces"], &[]);
    let path = PathBuf::from(out["path"].as_str().expect("a path"));
    assert!(path.starts_with(project.path().join("runs/keep/t/workspaces").canonicalize().expect("workspaces folder")));
    assert_eq!(std::fs::read_to_string(path.join("notes/a.txt")).expect("kept file"), "kept for debugging");
    assert!(run.stderr.contains(&format!("workspace kept: {}", path.display())), "{}", run.stderr);
}

#[test]
fn a_script_reads_back_what_its_programs_wrote_in_a_run_directory_outside_the_project() {
    let project = project(
        "readback",
        r#"
proc::run(#{ argv: ["sh", "-c", "echo written by a child > child.txt"], cwd: run::dir() });
results::write_json("out.json", #{ read: fs::read_text(`${run::dir()}/child.txt`) });
"#,
    );
    let elsewhere = tempfile::tempdir().expect("a folder outside the project");
    let out = elsewhere.path().join("run");
    let out_text = out.display().to_string();
    project.host(&["run", "scripts/readback.rhai", "--out", &out_text]).expect_code(0);
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("out.json")).expect("out.json")).expect("JSON");
    assert_eq!(written["read"], "written by a child\n");
}
