//! [`Spawned`]: a long-lived program (a server) that a script started and holds. Starting waits
//! for readiness (a text in its output, a port that accepts connections); after that the script
//! can read its recent output, wait for it, or end it. Whatever the script does, the run's end
//! ends it ([`super::Processes::shutdown`]).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::groups::Groups;
use super::local::{Ending, Running, interrupted};
use super::{Launch, OnEnd, ProcError, ProcOutput, Readiness};

/// How often a readiness port is tried.
const PORT_POLL: Duration = Duration::from_millis(50);

/// A spawned program, as the script holds it.
pub struct Spawned {
    /// None when it never started; then `not_started` says why.
    running: Option<Running>,
    not_started: Option<ProcOutput>,
    ready: bool,
    error: Option<String>,
    interrupt: Arc<AtomicBool>,
}

impl Spawned {
    /// Starts `launch` and waits for `ready`. A program that cannot start, exits early or is not
    /// ready in time is a handle whose `ready` is false and whose `error` says why; it has been
    /// ended. Only Ctrl-C is an error.
    pub async fn start(
        launch: &Launch,
        groups: Arc<Groups>,
        interrupt: Arc<AtomicBool>,
        ready: Option<Readiness>,
        on_end: OnEnd,
    ) -> Result<Arc<Spawned>, ProcError> {
        let line = ready.as_ref().and_then(|ready| ready.line.clone()).filter(|line| !line.is_empty());
        let (running, mut seen) = match Running::start(launch, groups, line.as_deref(), on_end) {
            Ok(started) => started,
            Err(output) => return Ok(Arc::new(Spawned::never_started(*output))),
        };
        let mut spawned = Spawned { running: None, not_started: None, ready: true, error: None, interrupt };
        if let Some(ready) = ready {
            let timeout = Duration::from_secs_f64(ready.timeout_s.min(1e9));
            let became_ready = async {
                // Output that ended without the line never makes it ready.
                if line.is_some() && seen.wait_for(|seen| *seen).await.is_err() {
                    std::future::pending::<()>().await;
                }
                if let Some(port) = ready.port {
                    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
                        tokio::time::sleep(PORT_POLL).await;
                    }
                }
            };
            let name = running.name.clone();
            let failure = tokio::select! {
                biased;
                () = became_ready => None,
                output = running.finished() => Some(format!(
                    "`{name}` ended before it was ready: {}",
                    output.error.as_deref().unwrap_or("it exited with code 0")
                )),
                () = tokio::time::sleep(timeout) => {
                    Some(format!("`{name}` was not ready after {} s{}", ready.timeout_s, awaited(&ready)))
                }
                () = interrupted(&spawned.interrupt) => {
                    running.end(Ending::Interrupted).await;
                    return Err(ProcError::Interrupted);
                }
            };
            if let Some(reason) = failure {
                running.end(Ending::NotReady(reason.clone())).await;
                spawned.ready = false;
                spawned.error = Some(reason);
            }
        }
        spawned.running = Some(running);
        Ok(Arc::new(spawned))
    }

    /// A handle for a program that could not start; `output` says why.
    pub fn never_started(output: ProcOutput) -> Spawned {
        let error = output.error.clone();
        let interrupt = Arc::new(AtomicBool::new(false));
        Spawned { running: None, not_started: Some(output), ready: false, error, interrupt }
    }

    pub fn pid(&self) -> Option<u32> {
        self.running.as_ref().map(|running| running.pid)
    }

    pub fn is_ready(&self) -> bool {
        self.ready
    }

    /// Why it is not ready, if it is not.
    pub fn error(&self) -> Option<String> {
        self.error.clone()
    }

    pub fn is_running(&self) -> bool {
        self.running.as_ref().is_some_and(|running| running.output().is_none())
    }

    /// The lines of stdout kept so far (the first and the last, within the output limit).
    pub fn stdout_lines(&self) -> Vec<String> {
        self.running.as_ref().map(|running| lines(&running.stdout)).unwrap_or_default()
    }

    pub fn stderr_lines(&self) -> Vec<String> {
        self.running.as_ref().map(|running| lines(&running.stderr)).unwrap_or_default()
    }

    /// Waits for it to end, at most `timeout` when given: `None` if it is still running then.
    pub async fn wait(&self, timeout: Option<Duration>) -> Result<Option<ProcOutput>, ProcError> {
        let Some(running) = &self.running else {
            return Ok(self.not_started.clone());
        };
        let limit = timeout.unwrap_or(Duration::MAX);
        tokio::select! {
            output = tokio::time::timeout(limit, running.finished()) => Ok(output.ok()),
            () = interrupted(&self.interrupt) => {
                running.end(Ending::Interrupted).await;
                Err(ProcError::Interrupted)
            }
        }
    }

    /// Ends it on the script's request (SIGTERM, then SIGKILL after the grace period) and
    /// returns how it ended; at once if it already has.
    pub async fn kill(&self) -> ProcOutput {
        self.end(Ending::Asked).await
    }

    pub(super) async fn end(&self, why: Ending) -> ProcOutput {
        match (&self.running, &self.not_started) {
            (Some(running), _) => match running.output() {
                Some(output) => output,
                None => running.end(why).await,
            },
            (None, Some(output)) => output.clone(),
            (None, None) => ProcOutput::not_started(super::FailureKind::Start, "never started".into()),
        }
    }
}

fn awaited(ready: &Readiness) -> String {
    match (&ready.line, ready.port) {
        (Some(line), Some(port)) => format!(" (waiting for `{line}` and port {port})"),
        (Some(line), None) => format!(" (waiting for `{line}`)"),
        (None, Some(port)) => format!(" (waiting for port {port})"),
        (None, None) => String::new(),
    }
}

fn lines(capture: &std::sync::Mutex<super::capture::Capture>) -> Vec<String> {
    capture.lock().map(|capture| capture.text().lines().map(str::to_string).collect()).unwrap_or_default()
}
