//! The `proc` capability: running other programs (a coding agent, `npm run build`, a benchmark
//! runner, a server) from experiment scripts, without a shell.
//!
//! Three layers, each knowing nothing of Rhai: [`ProcPolicy`] turns what a script asked for into a
//! [`Launch`] (is the program allowed, where is it, which environment does it get, which values
//! are secret); the [`Processes`] trait runs launches ([`LocalProcesses`] on real process groups,
//! wrapped by [`MeteredProcesses`] for the `proc_calls` table); [`Proc`] ties them together for
//! the adapters. A program that is missing, fails, is killed or times out is a value
//! ([`ProcOutput`] with `ok: false`); only a request that cannot be run as written is a
//! [`ProcError`]. Guests never get this capability: a guest does not start programs.

mod capture;
mod groups;
mod local;
mod metered;
mod policy;
pub mod reaper;
pub mod rhai;
mod spawned;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use groups::Groups;
pub use local::LocalProcesses;
pub use metered::{CALLS_TABLE, MeteredProcesses, ProgramRecord};
pub use policy::{ProcPolicy, ScenarioProc};
pub use reaper::Reaper;
pub use spawned::Spawned;

/// Seconds a `proc::run` may take when the script does not say.
pub const DEFAULT_TIMEOUT_SECONDS: f64 = 600.0;
/// Seconds between the polite signal (SIGTERM) and the forced one (SIGKILL).
pub const DEFAULT_GRACE_SECONDS: f64 = 5.0;
/// KiB of each of stdout and stderr kept by default: the first and the last half.
pub const DEFAULT_OUTPUT_LIMIT_KIB: u64 = 1024;
/// Seconds a spawned process may take to become ready when the script does not say.
pub const DEFAULT_READY_SECONDS: f64 = 60.0;
/// Processes in flight for `proc::run_many` when the script does not say.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// A program to run, as a script writes it: to completion (`proc::run`, which takes
/// `timeout_s`) or as a long-lived process (`proc::start`, which takes `ready`). Only `argv` is
/// required.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProcRequest {
    /// The program and its arguments; the program is a name looked up on `PATH`, or a path.
    pub argv: Vec<String>,
    /// The working directory: a path the script may read, or an absolute path (a workspace).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Variables set for the child, on top of the few passed from the host (see [`ProcPolicy`]).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Names of host variables passed through as they are (API keys): secret, never recorded.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Text written to the child's standard input, which is then closed; none: `/dev/null`.
    #[serde(default)]
    pub stdin: Option<String>,
    /// `proc::run` only: seconds before the program is ended ([`DEFAULT_TIMEOUT_SECONDS`]).
    #[serde(default, deserialize_with = "crate::capabilities::decode::optional_seconds")]
    pub timeout_s: Option<f64>,
    #[serde(default = "default_grace", deserialize_with = "crate::capabilities::decode::seconds")]
    pub grace_s: f64,
    #[serde(default = "default_output_limit")]
    pub output_limit_kib: u64,
    /// `proc::start` only: when the process counts as ready; none: as soon as it has started.
    #[serde(default)]
    pub ready: Option<Readiness>,
}

impl ProcRequest {
    /// `argv` with every other field at its default.
    pub fn new(argv: Vec<String>) -> Self {
        ProcRequest {
            argv,
            cwd: None,
            env: BTreeMap::new(),
            pass_env: Vec::new(),
            stdin: None,
            timeout_s: None,
            grace_s: DEFAULT_GRACE_SECONDS,
            output_limit_kib: DEFAULT_OUTPUT_LIMIT_KIB,
            ready: None,
        }
    }
}

/// What a started process must show before `proc::start` returns.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Readiness {
    /// Text that appears in its stdout or stderr (`listening on`).
    #[serde(default)]
    pub line: Option<String>,
    /// A TCP port on 127.0.0.1 that accepts a connection.
    #[serde(default)]
    pub port: Option<u16>,
    #[serde(default = "default_ready", deserialize_with = "crate::capabilities::decode::seconds")]
    pub timeout_s: f64,
}

fn default_grace() -> f64 {
    DEFAULT_GRACE_SECONDS
}

fn default_ready() -> f64 {
    DEFAULT_READY_SECONDS
}

fn default_output_limit() -> u64 {
    DEFAULT_OUTPUT_LIMIT_KIB
}

/// A program ready to start: allowed, found, with its whole environment decided.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The program's absolute path.
    pub program: PathBuf,
    /// As the script wrote it; `argv[0]` is what the child sees as its name.
    pub argv: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// The child's whole environment.
    pub env: BTreeMap<String, String>,
    pub stdin: Option<String>,
    pub grace: std::time::Duration,
    pub output_limit_bytes: usize,
    /// Values that must never be recorded (masked in `argv` before anything is written).
    pub secrets: Vec<String>,
}

impl Launch {
    /// `argv` as it may be recorded: every secret value replaced by `***`.
    pub fn recordable_argv(&self) -> Vec<String> {
        self.argv.iter().map(|arg| mask(arg, &self.secrets)).collect()
    }
}

/// `text` with every occurrence of a secret replaced by `***`.
pub fn mask(text: &str, secrets: &[String]) -> String {
    let mut masked = text.to_string();
    for secret in secrets.iter().filter(|secret| !secret.is_empty()) {
        masked = masked.replace(secret.as_str(), "***");
    }
    masked
}

/// Why a program did not end well, when it did not.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// It exited with a code other than 0.
    Exit,
    /// A signal ended it (a crash, or something outside the host killed it).
    Signal,
    /// It ran past its timeout and was ended.
    Timeout,
    /// Ctrl-C ended it.
    Interrupted,
    /// The program does not exist.
    Missing,
    /// It could not be started (not executable, a missing `cwd`, too many processes).
    Start,
    /// A spawned process that did not become ready in time, or exited first.
    NotReady,
}

/// How a program ended, and what it wrote.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProcOutput {
    /// Exited with 0, on its own.
    pub ok: bool,
    /// The exit code; `()` when a signal ended it or it never started.
    pub code: Option<i32>,
    /// The signal that ended it (`SIGKILL`), if one did.
    pub signal: Option<String>,
    pub stdout: String,
    pub stderr: String,
    /// Bytes written, including any not kept.
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    /// Some output was dropped from the middle (see [`capture`]).
    pub truncated: bool,
    pub timed_out: bool,
    pub interrupted: bool,
    pub duration_ms: f64,
    pub pid: Option<u32>,
    pub kind: Option<FailureKind>,
    /// What went wrong, in words.
    pub error: Option<String>,
}

impl ProcOutput {
    /// A program that never ran.
    pub fn not_started(kind: FailureKind, error: String) -> Self {
        ProcOutput {
            ok: false,
            code: None,
            signal: None,
            stdout: String::new(),
            stderr: String::new(),
            stdout_bytes: 0,
            stderr_bytes: 0,
            truncated: false,
            timed_out: false,
            interrupted: false,
            duration_ms: 0.0,
            pid: None,
            kind: Some(kind),
            error: Some(error),
        }
    }
}

/// A request that cannot be run as written, or a run that must stop.
#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("invalid process request: {message}")]
    Fields { message: String },
    #[error(
        "invalid process request: `argv` is empty; hint: name the program first, as in `argv: [\"git\", \"status\"]`"
    )]
    EmptyArgv,
    #[error("invalid process request: `{field}` must be a positive number of seconds, got {value}")]
    Seconds { field: &'static str, value: f64 },
    #[error("invalid process request: `output_limit_kib` must be at least 1")]
    OutputLimit,
    #[error("invalid process request: `ready` needs `line` or `port`")]
    EmptyReadiness,
    #[error("invalid process request: `{field}` is for `{belongs_to}`; hint: {hint}")]
    Misplaced { field: &'static str, belongs_to: &'static str, hint: &'static str },
    #[error("invalid process request: `{field}.{name}` is not a valid environment variable name")]
    EnvName { field: &'static str, name: String },
    #[error(
        "program `{program}` is not allowed to run; hint: add \"{program}\" to `allow` under `[proc]` in {scenario}, or call `proc::allow([\"{program}\"])` in the script"
    )]
    NotAllowed { program: String, scenario: String },
    #[error("invalid process request: `cwd` `{path}` cannot be used")]
    Cwd {
        path: String,
        #[source]
        source: crate::capabilities::fs::FilesError,
    },
    #[error("interrupted")]
    Interrupted,
}

/// Called once with a program's final output, whenever and however it ends.
pub type OnEnd = Box<dyn FnOnce(&ProcOutput) + Send>;

/// Runs launches. Object safe; the real backend and the metering wrapper implement it alike.
/// Failures are values: nothing here fails once a launch exists, except that Ctrl-C during a
/// spawn's readiness wait is [`ProcError::Interrupted`].
#[async_trait::async_trait]
pub trait Processes: Send + Sync {
    /// Runs `launch` to completion, ending its whole process group after `timeout` or on Ctrl-C
    /// (then `interrupted` is set).
    async fn run(&self, launch: Launch, timeout: std::time::Duration) -> ProcOutput;
    /// Starts `launch` and waits until `ready` holds (or it fails to); `on_end` gets its final
    /// output when it ends.
    async fn spawn(&self, launch: Launch, ready: Option<Readiness>, on_end: OnEnd) -> Result<Arc<Spawned>, ProcError>;
    /// Ends every process still running (politely, then by force) and waits for their ends to
    /// be recorded: the end of a run.
    async fn shutdown(&self);
}

/// What the adapters call: policy first, then the processes.
pub struct Proc {
    pub policy: ProcPolicy,
    pub processes: Arc<MeteredProcesses>,
}

impl std::fmt::Debug for Proc {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Proc").field("policy", &self.policy).finish_non_exhaustive()
    }
}

impl Proc {
    /// Checks `request` and runs it to completion. Ctrl-C is an error, after it was recorded:
    /// the script must stop.
    pub async fn run(&self, request: ProcRequest) -> Result<ProcOutput, ProcError> {
        if request.ready.is_some() {
            let hint = "`proc::start` waits for readiness; `proc::run` waits for the end";
            return Err(ProcError::Misplaced { field: "ready", belongs_to: "proc::start", hint });
        }
        let seconds = request.timeout_s.unwrap_or(DEFAULT_TIMEOUT_SECONDS);
        positive("timeout_s", seconds)?;
        let timeout = std::time::Duration::from_secs_f64(seconds.min(1e9));
        let launch = self.policy.prepare(request)?;
        let output = self.processes.run(launch, timeout).await;
        if output.interrupted { Err(ProcError::Interrupted) } else { Ok(output) }
    }

    /// Checks `request` and starts it.
    pub async fn start(&self, request: ProcRequest) -> Result<Arc<Spawned>, ProcError> {
        if request.timeout_s.is_some() {
            let hint =
                "a started process runs until it ends or `kill()`; `ready.timeout_s` bounds the wait for readiness";
            return Err(ProcError::Misplaced { field: "timeout_s", belongs_to: "proc::run", hint });
        }
        if let Some(ready) = &request.ready {
            positive("ready.timeout_s", ready.timeout_s)?;
            if ready.line.as_deref().is_none_or(str::is_empty) && ready.port.is_none() {
                return Err(ProcError::EmptyReadiness);
            }
        }
        let ready = request.ready.clone();
        let launch = self.policy.prepare(request)?;
        self.processes.spawn(launch, ready, Box::new(|_| {})).await
    }
}

/// [`Processes`] that start nothing, for commands that only compile or describe scripts
/// (`host check`, `host api`): every program fails to start, as a value.
#[derive(Debug)]
pub struct NoProcesses;

#[async_trait::async_trait]
impl Processes for NoProcesses {
    async fn run(&self, launch: Launch, _timeout: std::time::Duration) -> ProcOutput {
        NoProcesses::refusal(&launch)
    }

    async fn spawn(&self, launch: Launch, _ready: Option<Readiness>, on_end: OnEnd) -> Result<Arc<Spawned>, ProcError> {
        let output = NoProcesses::refusal(&launch);
        on_end(&output);
        Ok(Arc::new(Spawned::never_started(output)))
    }

    async fn shutdown(&self) {}
}

impl NoProcesses {
    fn refusal(launch: &Launch) -> ProcOutput {
        let name = launch.recordable_argv().into_iter().next().unwrap_or_default();
        ProcOutput::not_started(FailureKind::Start, format!("`{name}` not started: this command runs no programs"))
    }
}

fn positive(field: &'static str, value: f64) -> Result<(), ProcError> {
    if value.is_finite() && value > 0.0 { Ok(()) } else { Err(ProcError::Seconds { field, value }) }
}

/// `proc::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "proc",
    rhai: |capabilities| {
        rhai::module(capabilities.proc.clone(), capabilities.progress.clone(), capabilities.runtime.clone())
    },
    types: rhai::register_types,
    guest: None,
    finish: finish_run,
    scratch: Some(|capabilities| {
        let nothing =
            MeteredProcesses::new(Arc::new(NoProcesses), capabilities.results.clone(), capabilities.log.clone());
        let policy = ProcPolicy::new(ScenarioProc::default(), None, capabilities.files.clone(), Default::default());
        capabilities.proc = Arc::new(Proc { policy, processes: Arc::new(nothing) });
    }),
};

/// At the end of a run, however the script ended: nothing it started outlives the run, and the
/// manifest records which programs were allowed (and where) and which ran.
fn finish_run(capabilities: &super::Capabilities, manifest: &mut crate::run_record::Manifest) {
    let (proc, runtime) = (&capabilities.proc, &capabilities.runtime);
    runtime.block_on(proc.processes.shutdown());
    manifest.processes = crate::run_record::ProcessesRecord {
        allowed: proc
            .policy
            .allowed()
            .into_iter()
            .map(|(program, declared_in)| crate::run_record::AllowedRecord { program, declared_in })
            .collect(),
        programs: runtime.block_on(proc.processes.programs()),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_take_integer_or_float_seconds_and_refuse_unknown_fields() {
        let request: ProcRequest =
            serde_json::from_value(serde_json::json!({"argv": ["true"], "timeout_s": 2})).expect("integer seconds");
        assert_eq!((request.timeout_s, request.grace_s, request.output_limit_kib), (Some(2.0), 5.0, 1024));
        let error = serde_json::from_value::<ProcRequest>(serde_json::json!({"argv": ["true"], "timeout": 2}))
            .expect_err("unknown field");
        assert!(error.to_string().contains("unknown field `timeout`"), "{error}");
        let error = serde_json::from_value::<ProcRequest>(serde_json::json!({"argv": ["true"], "timeout_s": "1m"}))
            .expect_err("text seconds");
        assert!(error.to_string().contains("expected a number of seconds"), "{error}");
    }

    #[test]
    fn secrets_are_masked_wherever_they_appear_in_an_argument() {
        let launch = Launch {
            program: "/bin/echo".into(),
            argv: vec!["echo".into(), "--key=sk-SECRET-1".into(), "plain".into()],
            cwd: None,
            env: BTreeMap::new(),
            stdin: None,
            grace: std::time::Duration::from_secs(1),
            output_limit_bytes: 1024,
            secrets: vec!["sk-SECRET-1".into(), String::new()],
        };
        assert_eq!(launch.recordable_argv(), ["echo", "--key=***", "plain"]);
    }
}
