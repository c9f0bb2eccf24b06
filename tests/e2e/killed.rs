//! A run that is killed, terminated or interrupted twice leaves a true record: the rows written
//! before are readable with DuckDB as any run's are, the run lists as `killed` (or says
//! `interrupted`), `host report` reads the rows it left, and the programs it started do not
//! outlive it.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{TempProject, duckdb, host_command};

/// Appends a numbered row every 50 ms (`--rows` of them); in report mode, counts them.
const TICKS: &str = r#"
if run::reporting() {
    let rows = results::rows("ticks");
    results::write_text("count.txt", `${rows.len()}`);
} else {
    for i in 0..ARGS.rows {
        results::append("ticks", #{ i: i, label: `tick ${i}` });
        time::sleep(0.05);
    }
}
"#;

/// Starts a shell that leaves a `sleep` in its process group, writes both pids to `pids.txt`
/// and waits as a script waits on a server.
const SERVER: &str = r#"
proc::allow(["sh"]);
let server = proc::start(#{ argv: ["sh", "-c", "sleep 300 & echo \"pids $$ $!\"; wait"], ready: #{ line: "pids " } });
results::write_text("pids.txt", server.stdout_lines()[0]);
time::sleep(300);
"#;

fn project() -> TempProject {
    let project = TempProject::new();
    project.write("scripts/ticks.rhai", TICKS);
    project
}

/// `host run scripts/ticks.rhai --out runs/ticks/r1 -- --rows 100000`, started in the background.
fn start(project: &TempProject) -> Child {
    let args = ["run", "scripts/ticks.rhai", "--out", "runs/ticks/r1", "--", "--rows", "100000"];
    host_command(project.path(), &args, &[]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("start host")
}

/// Waits until the run has a readable part of its table (the first flush), at most a minute.
fn wait_for_first_part(run: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let has_part = || {
        let parts = std::fs::read_dir(run).map(|entries| {
            entries.flatten().any(|entry| entry.file_name().to_string_lossy().starts_with("ticks.part-"))
        });
        parts.unwrap_or(false)
    };
    while !has_part() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(has_part(), "no part of `ticks` was written within a minute");
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status();
    assert!(status.is_ok_and(|status| status.success()), "kill -{name}");
}

/// The `i` of every row DuckDB reads of the run's `ticks`, as users read a run's table.
fn ticks(run: &Path) -> Vec<i64> {
    let sql = format!("select i from read_parquet('{}/**/ticks*.parquet') order by i", run.display());
    let result = duckdb(&sql);
    let rows = result["rows"].as_array().expect("rows");
    rows.iter().map(|row| row[0].as_i64().expect("an int")).collect()
}

/// The pids in `file` once it is written, at most a minute from now.
fn wait_for_pids(file: &Path) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !file.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let text = std::fs::read_to_string(file).expect("the script wrote the pids within a minute");
    text.split_whitespace().filter_map(|word| word.parse().ok()).collect()
}

/// Whether `pid` is a live process (a zombie waiting for its parent counts as gone).
fn alive(pid: &u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])))
        .is_some_and(|zombie| !zombie)
}

fn manifest(run: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).expect("manifest")).expect("JSON")
}

#[test]
fn a_killed_run_leaves_its_rows_readable_is_listed_as_killed_and_can_be_reported() {
    let project = project();
    let run = project.path().join("runs/ticks/r1");
    let mut child = start(&project);
    wait_for_first_part(&run);
    child.kill().expect("SIGKILL the run");
    child.wait().expect("reap the run");

    let written = ticks(&run);
    assert!(!written.is_empty(), "the rows of the first flush are on disk");
    assert_eq!(written, (0..written.len() as i64).collect::<Vec<_>>(), "no row lost or doubled before the last flush");
    assert_eq!(manifest(&run)["status"], "running", "the dead run's record is left as it was");

    let listing = project.host(&["runs"]);
    listing.expect_code(0);
    let line = listing.stdout.lines().find(|line| line.contains("r1")).expect("the run is listed");
    assert!(line.starts_with("killed "), "{}", listing.stdout);

    let report = project.host(&["report", "runs/ticks/r1", "--out", "runs/ticks/report"]);
    report.expect_code(0);
    assert!(report.stderr.contains("was killed before it finished"), "{}", report.stderr);
    assert_eq!(project.read("runs/ticks/report/count.txt"), written.len().to_string());

    let merge = project.host(&["merge", "runs/ticks/r1"]);
    assert_eq!(merge.code, 2);
    assert!(merge.stderr.contains("ended `killed`"), "{}", merge.stderr);
}

#[test]
fn a_terminated_run_closes_its_tables_and_says_interrupted() {
    let project = project();
    let run = project.path().join("runs/ticks/r1");
    let mut child = start(&project);
    wait_for_first_part(&run);
    signal(&child, "TERM");
    let status = child.wait().expect("the run ends");
    assert!(!status.success());

    assert_eq!(manifest(&run)["status"], "interrupted");
    let written = ticks(&run);
    assert!(run.join("ticks.parquet").is_file(), "the table was closed the ordinary way, within the grace period");
    assert_eq!(written, (0..written.len() as i64).collect::<Vec<_>>());
    let listing = project.host(&["runs", "runs/ticks"]);
    assert!(listing.stdout.lines().any(|line| line.starts_with("interrupted ")), "{}", listing.stdout);
}

#[test]
fn two_interrupts_leave_an_interrupted_run_with_its_rows() {
    let project = project();
    let run = project.path().join("runs/ticks/r1");
    let mut child = start(&project);
    wait_for_first_part(&run);
    signal(&child, "INT");
    signal(&child, "INT");
    let status = child.wait().expect("the run ends");
    assert!(!status.success());

    assert_eq!(manifest(&run)["status"], "interrupted");
    let written = ticks(&run);
    assert!(!written.is_empty());
    assert_eq!(written, (0..written.len() as i64).collect::<Vec<_>>());
}

#[test]
fn programs_started_by_a_killed_run_do_not_outlive_it() {
    let project = TempProject::new();
    project.write("scripts/server.rhai", SERVER);
    let args = ["run", "scripts/server.rhai", "--out", "runs/server/r1"];
    let mut child = host_command(project.path(), &args, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start host");
    let pids = wait_for_pids(&project.path().join("runs/server/r1/pids.txt"));
    assert_eq!(pids.len(), 2, "the shell and its `sleep`");
    assert!(pids.iter().all(alive), "the programs run while the host does");

    child.kill().expect("SIGKILL the run");
    child.wait().expect("reap the run");
    // The reaper sends SIGTERM at once; the bound is for a loaded machine.
    let deadline = Instant::now() + Duration::from_secs(15);
    while pids.iter().any(alive) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let survivors: Vec<u32> = pids.into_iter().filter(alive).collect();
    for pid in &survivors {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    assert!(survivors.is_empty(), "programs outlived the killed host: {survivors:?}");
}
