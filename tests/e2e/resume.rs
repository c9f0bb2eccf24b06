//! What every benchmark's kill test shows, in one place: a run killed (`SIGKILL`) in the middle of
//! its work leaves the rows it wrote readable with DuckDB, `host runs` calls it `killed`, and
//! `--resume` finishes it with the tables of an uninterrupted run (timings aside). Each
//! benchmark's test (in its own module) says what to run, when to kill and what to compare.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::merge::assert_same_tables;
use crate::support::{duckdb, host_command, host_in_with};

/// One benchmark's kill test.
pub struct KillTest<'a> {
    /// Where the runs go (a temporary folder).
    pub dir: &'a Path,
    /// The project the runs run in.
    pub cwd: &'a Path,
    pub script: &'a str,
    /// The script's arguments, the same for every run.
    pub args: &'a [&'a str],
    pub env: &'a [(&'a str, Option<&'a str>)],
    /// The run is killed once it has written this file (relative to the run directory): the
    /// first unit's saved file, say.
    pub kill_after: &'a str,
    /// A table whose rows written before the kill DuckDB must read.
    pub table: &'a str,
    /// Tables that legitimately differ between the resumed and the uninterrupted run (calls to
    /// programs on other ports, for example).
    pub apart: &'a [&'a str],
}

/// What the test found, for the benchmark's own assertions.
pub struct Killed {
    pub killed: PathBuf,
    pub resumed: PathBuf,
    /// The rows of [`KillTest::table`] DuckDB read from the dead run.
    pub rows_before_kill: usize,
    /// The resumed run's manifest.
    pub manifest: Value,
}

impl KillTest<'_> {
    fn run_args(&self, out: &Path, extra: &[&str]) -> Vec<String> {
        let mut args = vec![
            "run".to_owned(),
            self.script.to_owned(),
            "--out".to_owned(),
            out.display().to_string(),
            "--".to_owned(),
        ];
        args.extend(self.args.iter().map(|arg| (*arg).to_owned()));
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        args
    }

    fn finish(&self, name: &str, extra: &[&str]) -> PathBuf {
        let out = self.dir.join(name);
        let args = self.run_args(&out, extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        host_in_with(self.cwd, &args, self.env).expect_code(0);
        out
    }

    /// Kills a run once it has written `kill_after`, checks the dead run, resumes it, runs the
    /// work once uninterrupted, and compares the two.
    pub fn run(&self) -> Killed {
        let killed = self.dir.join("killed");
        let args = self.run_args(&killed, &[]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut child = host_command(self.cwd, &args, self.env)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start host");
        let marker = killed.join(self.kill_after);
        let deadline = Instant::now() + Duration::from_secs(600);
        while !marker.exists() && Instant::now() < deadline {
            let ended = child.try_wait().expect("poll the run");
            assert!(ended.is_none(), "the run ended ({ended:?}) before it wrote {}", marker.display());
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(marker.exists(), "the run wrote {} within ten minutes", marker.display());
        child.kill().expect("SIGKILL the run");
        child.wait().expect("reap the run");

        // What a user reads of the dead run: its rows, as any run's, and its status.
        let sql = format!("select count(*) from read_parquet('{}/**/{}*.parquet')", killed.display(), self.table);
        let rows_before_kill = duckdb(&sql)["rows"][0][0].as_u64().expect("a count") as usize;
        assert!(rows_before_kill > 0, "DuckDB reads the rows of `{}` the dead run wrote", self.table);
        let killed_text = killed.display().to_string();
        let listed = host_in_with(self.cwd, &["runs", &killed_text], &[]);
        assert!(listed.stdout.lines().any(|line| line.starts_with("killed ")), "{}", listed.stdout);

        let resumed = self.finish("resumed", &["--resume", &killed_text]);
        let whole = self.finish("whole", &[]);
        assert_same_tables(&whole, &resumed, self.apart);
        let manifest = serde_json::from_str(&std::fs::read_to_string(resumed.join("manifest.json")).expect("manifest"))
            .expect("the manifest is JSON");
        Killed { killed, resumed, rows_before_kill, manifest }
    }
}
