//! [`MeteredProcesses`]: one row per program run in the `proc_calls` table, and the list of
//! programs used (with their versions) for the manifest.
//!
//! A row says what ran and how it ended, never what may be secret: arguments are masked, the
//! environment is recorded by names only, and output is recorded by size, not content.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::json;

use super::{Launch, OnEnd, ProcError, ProcOutput, Processes, Readiness, Spawned};
use crate::capabilities::log::{Level, Log};
use crate::capabilities::results::Results;

pub const CALLS_TABLE: &str = "proc_calls";

/// How long a program may take to answer `--version` for the manifest.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);
/// Characters of a `--version` answer kept.
const VERSION_CHARS: usize = 200;

/// A program the run used, as the manifest records it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProgramRecord {
    /// As the script named it (`git`, `./run.sh`).
    pub name: String,
    /// The resolved path.
    pub path: String,
    /// The first line of its `--version` answer, when it gives one.
    pub version: Option<String>,
    pub calls: u64,
}

pub struct MeteredProcesses {
    inner: Arc<dyn Processes>,
    results: Arc<dyn Results>,
    log: Arc<dyn Log>,
    declared: OnceLock<()>,
    /// Resolved path -> (name as called, calls).
    programs: Mutex<BTreeMap<PathBuf, (String, u64)>>,
}

impl MeteredProcesses {
    pub fn new(inner: Arc<dyn Processes>, results: Arc<dyn Results>, log: Arc<dyn Log>) -> Self {
        MeteredProcesses { inner, results, log, declared: OnceLock::new(), programs: Mutex::new(BTreeMap::new()) }
    }

    /// The programs used so far, each asked for its version through `inner` (not recorded as a
    /// call): for the manifest at the end of a run.
    pub async fn programs(&self) -> Vec<ProgramRecord> {
        let programs = self.programs.lock().map(|programs| programs.clone()).unwrap_or_default();
        let probes = programs.into_iter().map(|(path, (name, calls))| async move {
            let version = self.version(&path).await;
            ProgramRecord { name, path: path.display().to_string(), version, calls }
        });
        futures::future::join_all(probes).await
    }

    async fn version(&self, path: &std::path::Path) -> Option<String> {
        if !path.is_absolute() {
            return None;
        }
        let launch = Launch {
            program: path.to_path_buf(),
            argv: vec![path.display().to_string(), "--version".into()],
            cwd: None,
            env: std::env::var("PATH").map(|value| BTreeMap::from([("PATH".into(), value)])).unwrap_or_default(),
            stdin: None,
            grace: Duration::from_secs(1),
            output_limit_bytes: 4096,
            secrets: Vec::new(),
        };
        let output = self.inner.run(launch, VERSION_TIMEOUT).await;
        let text = if output.stdout.trim().is_empty() { &output.stderr } else { &output.stdout };
        let line = text.lines().map(str::trim).find(|line| !line.is_empty())?;
        output.ok.then(|| line.chars().take(VERSION_CHARS).collect())
    }

    fn note_program(&self, launch: &Launch) {
        let name = launch.recordable_argv().into_iter().next().unwrap_or_default();
        if let Ok(mut programs) = self.programs.lock() {
            programs.entry(launch.program.clone()).or_insert((name, 0)).1 += 1;
        }
    }

    /// A recorder of `launch`'s end, for `mode` (`run` or `spawn`).
    fn recorder(&self, launch: &Launch, mode: &'static str) -> impl FnOnce(&ProcOutput) + Send + 'static {
        self.declared.get_or_init(|| {
            if let Err(error) = self.results.declare(CALLS_TABLE, &columns()) {
                self.log.write(Level::Warn, &format!("cannot declare `{CALLS_TABLE}`: {error}"));
            }
        });
        let (results, log) = (self.results.clone(), self.log.clone());
        let launch = launch.clone();
        move |output: &ProcOutput| {
            if let Err(error) = results.append(CALLS_TABLE, row(&launch, mode, output)) {
                log.write(Level::Warn, &format!("cannot record a process in `{CALLS_TABLE}`: {error}"));
            }
        }
    }
}

fn columns() -> serde_json::Value {
    json!([
        ["mode", "string"],
        ["program", "string"],
        ["path", "string"],
        ["argv", "list<string>"],
        ["cwd", "string"],
        ["env", "list<string>"],
        ["ok", "bool"],
        ["code", "int"],
        ["signal", "string"],
        ["kind", "string"],
        ["timed_out", "bool"],
        ["interrupted", "bool"],
        ["duration_ms", "float"],
        ["stdout_bytes", "int"],
        ["stderr_bytes", "int"],
        ["truncated", "bool"],
        ["error", "string"]
    ])
}

/// The `proc_calls` row of one program's run.
fn row(launch: &Launch, mode: &str, output: &ProcOutput) -> serde_json::Value {
    let argv = launch.recordable_argv();
    json!({
        "mode": mode,
        "program": argv.first(),
        "path": launch.program.display().to_string(),
        "argv": argv,
        "cwd": launch.cwd.as_ref().map(|cwd| cwd.display().to_string()),
        "env": launch.env.keys().collect::<Vec<_>>(),
        "ok": output.ok,
        "code": output.code,
        "signal": output.signal,
        "kind": output.kind,
        "timed_out": output.timed_out,
        "interrupted": output.interrupted,
        "duration_ms": output.duration_ms,
        "stdout_bytes": output.stdout_bytes,
        "stderr_bytes": output.stderr_bytes,
        "truncated": output.truncated,
        "error": output.error.as_deref().map(|error| super::mask(error, &launch.secrets)),
    })
}

#[async_trait::async_trait]
impl Processes for MeteredProcesses {
    async fn run(&self, launch: Launch, timeout: Duration) -> ProcOutput {
        self.note_program(&launch);
        let record = self.recorder(&launch, "run");
        let output = self.inner.run(launch, timeout).await;
        record(&output);
        output
    }

    async fn spawn(&self, launch: Launch, ready: Option<Readiness>, on_end: OnEnd) -> Result<Arc<Spawned>, ProcError> {
        self.note_program(&launch);
        let record = self.recorder(&launch, "spawn");
        let chained: OnEnd = Box::new(move |output| {
            record(output);
            on_end(output);
        });
        self.inner.spawn(launch, ready, chained).await
    }

    async fn shutdown(&self) {
        self.inner.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_masks_secrets_and_names_the_environment_without_values() {
        let launch = Launch {
            program: "/usr/bin/curl".into(),
            argv: vec!["curl".into(), "-H".into(), "x-api-key: sk-SECRET-99".into()],
            cwd: Some("/tmp/ws".into()),
            env: BTreeMap::from([("API_KEY".into(), "sk-SECRET-99".into()), ("PATH".into(), "/bin".into())]),
            stdin: None,
            grace: Duration::from_secs(1),
            output_limit_bytes: 1024,
            secrets: vec!["sk-SECRET-99".into()],
        };
        let mut output = ProcOutput::not_started(super::super::FailureKind::Exit, "`curl` exited with code 6".into());
        output.code = Some(6);
        output.stdout = "sk-SECRET-99 echoed".into();
        let row = row(&launch, "run", &output);
        assert_eq!(row["argv"], json!(["curl", "-H", "x-api-key: ***"]));
        assert_eq!(row["env"], json!(["API_KEY", "PATH"]));
        assert_eq!((row["code"].as_i64(), row["kind"].as_str()), (Some(6), Some("exit")));
        assert!(!row.to_string().contains("SECRET"), "{row}");
    }
}
