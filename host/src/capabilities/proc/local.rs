//! [`LocalProcesses`]: programs run on this machine, each leading a process group of its own.
//!
//! A started program is a [`Running`]: a task waits for its exit while two others read its
//! output into bounded captures. When the program's leader exits, whatever it left behind in
//! its group is killed, so nothing it started outlives it. Ending a program early (timeout,
//! Ctrl-C, `kill`, the end of the run) sends SIGTERM to the group, then SIGKILL after its grace.

use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

use super::capture::{Capture, Watch};
use super::groups::{self, Groups};
use super::spawned::Spawned;
use super::{FailureKind, Launch, OnEnd, ProcError, ProcOutput, Processes, Readiness, mask};

/// How long output may still arrive after the group is gone (a descendant that left the group
/// can hold the pipes open); what came by then is kept.
const DRAIN: Duration = Duration::from_secs(2);
/// How often the Ctrl-C flag is looked at while waiting.
const INTERRUPT_POLL: Duration = Duration::from_millis(50);
const READ_CHUNK: usize = 16 * 1024;

/// Why the host ended a program, when it did.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    TimedOut(Duration),
    Interrupted,
    /// The script asked (`kill`), or the run ended: the program did what was asked of it.
    Asked,
    NotReady(String),
}

/// A started program.
pub struct Running {
    pub pid: u32,
    pub name: String,
    pub stdout: Arc<Mutex<Capture>>,
    pub stderr: Arc<Mutex<Capture>>,
    finished: watch::Receiver<Option<ProcOutput>>,
    ending: Arc<Mutex<Option<Ending>>>,
    grace: Duration,
}

impl Running {
    /// Starts `launch`; `line` is text to watch for in its output (the receiver turns true when
    /// it appears). A program that cannot start is its final output, already given to `on_end`.
    pub fn start(
        launch: &Launch,
        groups: Arc<Groups>,
        line: Option<&str>,
        on_end: OnEnd,
    ) -> Result<(Running, watch::Receiver<bool>), Box<ProcOutput>> {
        let name = mask(launch.argv.first().map(String::as_str).unwrap_or_default(), &launch.secrets);
        let mut command = tokio::process::Command::new(&launch.program);
        command
            .arg0(launch.argv.first().map(String::as_str).unwrap_or_default())
            .args(launch.argv.iter().skip(1))
            .env_clear()
            .envs(&launch.env)
            .process_group(0)
            .stdin(if launch.stdin.is_some() { std::process::Stdio::piped() } else { std::process::Stdio::null() })
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(cwd) = &launch.cwd {
            command.current_dir(cwd);
        }
        let started = Instant::now();
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(error) => {
                let output = not_started(&name, launch, &error);
                on_end(&output);
                return Err(Box::new(output));
            }
        };
        let pid = child.id().unwrap_or_default();
        groups.add(pid);
        let (seen, seen_receiver) = watch::channel(line.is_none());
        let seen = Arc::new(seen);
        let stdout = Arc::new(Mutex::new(Capture::new(launch.output_limit_bytes)));
        let stderr = Arc::new(Mutex::new(Capture::new(launch.output_limit_bytes)));
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(tokio::spawn(read_into(out, stdout.clone(), line.map(|l| (Watch::new(l), seen.clone())))));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(tokio::spawn(read_into(err, stderr.clone(), line.map(|l| (Watch::new(l), seen.clone())))));
        }
        if let (Some(mut input), Some(text)) = (child.stdin.take(), launch.stdin.clone()) {
            // A child that exits without reading its input is not an error of the host's.
            tokio::spawn(async move {
                let _ = input.write_all(text.as_bytes()).await;
            });
        }
        let (finish, finished) = watch::channel(None);
        let ending = Arc::new(Mutex::new(None));
        let running = Running {
            pid,
            name: name.clone(),
            stdout: stdout.clone(),
            stderr: stderr.clone(),
            finished,
            ending: ending.clone(),
            grace: launch.grace,
        };
        tokio::spawn(async move {
            let status = child.wait().await;
            let elapsed = started.elapsed();
            // Whatever the leader left in its group goes with it.
            groups::signal(pid, Signal::SIGKILL);
            groups.remove(pid);
            let stop_reading: Vec<_> = readers.iter().map(tokio::task::JoinHandle::abort_handle).collect();
            if tokio::time::timeout(DRAIN, futures::future::join_all(readers)).await.is_err() {
                stop_reading.iter().for_each(tokio::task::AbortHandle::abort);
            }
            let ending = ending.lock().map(|ending| ending.clone()).unwrap_or_default();
            let output = ended(&name, pid, status, ending, elapsed, &stdout, &stderr);
            on_end(&output);
            finish.send_replace(Some(output));
        });
        Ok((running, seen_receiver))
    }

    /// The final output, once it has ended.
    pub fn output(&self) -> Option<ProcOutput> {
        self.finished.borrow().clone()
    }

    /// Waits for the end.
    pub async fn finished(&self) -> ProcOutput {
        let mut finished = self.finished.clone();
        match finished.wait_for(Option::is_some).await {
            Ok(output) => output.clone().unwrap_or_else(|| lost(&self.name)),
            Err(_) => lost(&self.name),
        }
    }

    /// Ends it for `why`: SIGTERM to the group, SIGKILL after the grace period.
    pub async fn end(&self, why: Ending) -> ProcOutput {
        if let Ok(mut ending) = self.ending.lock() {
            ending.get_or_insert(why);
        }
        groups::signal(self.pid, Signal::SIGTERM);
        if let Ok(output) = tokio::time::timeout(self.grace, self.finished()).await {
            return output;
        }
        groups::signal(self.pid, Signal::SIGKILL);
        self.finished().await
    }
}

/// Resolves when Ctrl-C has been pressed.
pub async fn interrupted(flag: &AtomicBool) {
    while !flag.load(Ordering::Relaxed) {
        tokio::time::sleep(INTERRUPT_POLL).await;
    }
}

async fn read_into<R: AsyncRead + Unpin>(
    mut reader: R,
    capture: Arc<Mutex<Capture>>,
    mut watch: Option<(Watch, Arc<watch::Sender<bool>>)>,
) {
    let mut buffer = vec![0_u8; READ_CHUNK];
    while let Ok(read) = reader.read(&mut buffer).await {
        if read == 0 {
            break;
        }
        let chunk = &buffer[..read];
        if let Ok(mut capture) = capture.lock() {
            capture.push(chunk);
        }
        if let Some((watch, seen)) = &mut watch
            && watch.feed(chunk)
        {
            seen.send_replace(true);
        }
    }
}

fn not_started(name: &str, launch: &Launch, error: &std::io::Error) -> ProcOutput {
    if error.kind() == std::io::ErrorKind::NotFound && launch.cwd.as_ref().is_none_or(|cwd| cwd.is_dir()) {
        let place = if name.contains('/') { String::new() } else { " on `PATH`".to_string() };
        ProcOutput::not_started(FailureKind::Missing, format!("program `{name}` not found{place}"))
    } else {
        let cwd = launch.cwd.as_ref().map(|cwd| format!(" in `{}`", cwd.display())).unwrap_or_default();
        ProcOutput::not_started(FailureKind::Start, format!("cannot start `{name}`{cwd}: {error}"))
    }
}

fn lost(name: &str) -> ProcOutput {
    ProcOutput::not_started(FailureKind::Start, format!("lost track of `{name}`; this is a host bug"))
}

/// The final output of a program that ran.
fn ended(
    name: &str,
    pid: u32,
    status: std::io::Result<std::process::ExitStatus>,
    ending: Option<Ending>,
    elapsed: Duration,
    stdout: &Mutex<Capture>,
    stderr: &Mutex<Capture>,
) -> ProcOutput {
    let (code, signal) = match &status {
        Ok(status) => (status.code(), status.signal().map(groups::signal_name)),
        Err(_) => (None, None),
    };
    let (kind, error) = match (&ending, &status) {
        (_, Err(error)) => (Some(FailureKind::Start), Some(format!("cannot wait for `{name}`: {error}"))),
        (Some(Ending::TimedOut(after)), _) => (
            Some(FailureKind::Timeout),
            Some(format!("`{name}` timed out after {} s and was ended", after.as_secs_f64())),
        ),
        (Some(Ending::Interrupted), _) => {
            (Some(FailureKind::Interrupted), Some(format!("`{name}` was ended by Ctrl-C")))
        }
        (Some(Ending::NotReady(reason)), _) => (Some(FailureKind::NotReady), Some(reason.clone())),
        (Some(Ending::Asked), _) => (None, None),
        (None, Ok(_)) => match (code, &signal) {
            (Some(0), _) => (None, None),
            (Some(code), _) => (Some(FailureKind::Exit), Some(format!("`{name}` exited with code {code}"))),
            (None, signal) => {
                let signal = signal.as_deref().unwrap_or("a signal");
                (Some(FailureKind::Signal), Some(format!("`{name}` was killed by {signal}")))
            }
        },
    };
    let (stdout, stdout_bytes, stdout_cut) = read_capture(stdout);
    let (stderr, stderr_bytes, stderr_cut) = read_capture(stderr);
    ProcOutput {
        ok: error.is_none(),
        code,
        signal,
        stdout,
        stderr,
        stdout_bytes,
        stderr_bytes,
        truncated: stdout_cut || stderr_cut,
        timed_out: matches!(ending, Some(Ending::TimedOut(_))),
        interrupted: ending == Some(Ending::Interrupted),
        duration_ms: (elapsed.as_secs_f64() * 1e6).round() / 1e3,
        pid: Some(pid),
        kind,
        error,
    }
}

fn read_capture(capture: &Mutex<Capture>) -> (String, u64, bool) {
    capture.lock().map(|capture| (capture.text(), capture.total(), capture.truncated())).unwrap_or_default()
}

/// [`Processes`] on this machine.
pub struct LocalProcesses {
    groups: Arc<Groups>,
    interrupt: Arc<AtomicBool>,
    /// Spawned processes, so that the end of the run can end them and record how they ended.
    spawned: Mutex<Vec<Arc<Spawned>>>,
}

impl LocalProcesses {
    pub fn new(groups: Arc<Groups>, interrupt: Arc<AtomicBool>) -> Self {
        LocalProcesses { groups, interrupt, spawned: Mutex::new(Vec::new()) }
    }
}

#[async_trait::async_trait]
impl Processes for LocalProcesses {
    async fn run(&self, launch: Launch, timeout: Duration) -> ProcOutput {
        let (running, _) = match Running::start(&launch, self.groups.clone(), None, Box::new(|_| {})) {
            Ok(started) => started,
            Err(output) => return *output,
        };
        tokio::select! {
            output = running.finished() => output,
            () = tokio::time::sleep(timeout) => running.end(Ending::TimedOut(timeout)).await,
            () = interrupted(&self.interrupt) => running.end(Ending::Interrupted).await,
        }
    }

    async fn spawn(&self, launch: Launch, ready: Option<Readiness>, on_end: OnEnd) -> Result<Arc<Spawned>, ProcError> {
        let spawned = Spawned::start(&launch, self.groups.clone(), self.interrupt.clone(), ready, on_end).await?;
        if let Ok(mut all) = self.spawned.lock() {
            all.push(spawned.clone());
        }
        Ok(spawned)
    }

    async fn shutdown(&self) {
        let spawned = self.spawned.lock().map(|mut all| std::mem::take(&mut *all)).unwrap_or_default();
        futures::future::join_all(spawned.iter().map(|process| process.end(Ending::Asked))).await;
        let groups = self.groups.clone();
        let _ =
            tokio::task::spawn_blocking(move || groups.end_all(Duration::from_secs_f64(super::DEFAULT_GRACE_SECONDS)))
                .await;
    }
}
