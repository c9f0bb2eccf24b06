//! The reaper: a small process of its own (`host __reap`) that ends the host's process groups
//! once the host is gone, however it went. SIGKILL leaves no code of the host's to run, so the
//! groups it started would outlive it; the reaper, told of every group as it comes and goes,
//! sees the host's end as the end of its input and ends those still listed. Only the `host`
//! binary starts one (in a test harness the running executable is not `host`).

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::groups::Groups;
use crate::capabilities::log::{Level, Log};

/// The hidden subcommand that runs the reaper.
pub const SUBCOMMAND: &str = "__reap";

/// One change to the host's live groups, as a line on the reaper's standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// `+<pgid>`: a program now leads this group.
    Added(u32),
    /// `-<pgid>`: the group is gone, or ended by the host.
    Removed(u32),
}

impl Change {
    /// The line the host writes, newline included.
    pub fn line(self) -> String {
        match self {
            Change::Added(group) => format!("+{group}\n"),
            Change::Removed(group) => format!("-{group}\n"),
        }
    }

    /// The change a line says, or `None` for anything else (which the reaper ignores).
    pub fn parse(line: &str) -> Option<Change> {
        let line = line.trim();
        let (sign, number) = line.split_at_checked(1)?;
        if number.is_empty() || !number.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        let group = number.parse().ok()?;
        match sign {
            "+" => Some(Change::Added(group)),
            "-" => Some(Change::Removed(group)),
            _ => None,
        }
    }
}

/// `host __reap`: [`serve`] on standard input, with the grace the host gives a program.
pub fn run() {
    serve(std::io::stdin().lock(), Duration::from_secs_f64(super::DEFAULT_GRACE_SECONDS));
}

/// Follows the changes on `input` until it ends (the host is gone), then ends every group still
/// listed, as the host would have: SIGTERM, up to `grace`, then SIGKILL.
pub fn serve(input: impl BufRead, grace: Duration) {
    let groups = Groups::new();
    // A read error is taken as the host's end too: nothing more will come.
    for line in input.split(b'\n').map_while(Result::ok) {
        match std::str::from_utf8(&line).ok().and_then(Change::parse) {
            Some(Change::Added(group)) => groups.add(group),
            Some(Change::Removed(group)) => groups.remove(group),
            None => {}
        }
    }
    groups.end_all(grace);
}

/// The host's side: starts the reaper (this executable, as `host __reap`) when the first group
/// is added, and tells it every change. A reaper that cannot start or stops listening costs a
/// log line, never the run.
pub struct Reaper {
    log: Arc<dyn Log>,
    state: Mutex<State>,
}

enum State {
    /// No group yet: many runs start no program, and they start no reaper either.
    NotStarted,
    /// Started; its `stdin` is `None` once a write failed.
    Listening(Child),
    /// It could not be started (already said in the log).
    Failed,
}

impl std::fmt::Debug for Reaper {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Reaper").finish_non_exhaustive()
    }
}

impl Reaper {
    /// A reaper that is this executable: for the `host` binary only, never a test harness.
    pub fn new(log: Arc<dyn Log>) -> Self {
        Reaper { log, state: Mutex::new(State::NotStarted) }
    }

    /// Tells the reaper of `change`, starting it on the first group added. Called with the
    /// groups locked, so that the changes of one group reach it in their order; the lines are a
    /// few bytes to a process that reads them as they come, so the write does not wait.
    pub fn tell(&self, change: Change) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if matches!(*state, State::NotStarted) {
            if matches!(change, Change::Removed(_)) {
                return;
            }
            *state = self.start();
        }
        let State::Listening(child) = &mut *state else {
            return;
        };
        let Some(input) = child.stdin.as_mut() else {
            return;
        };
        if let Err(error) = input.write_all(change.line().as_bytes()) {
            self.log.write(Level::Debug, &format!("the reaper stopped listening ({error}); it is told nothing more"));
            child.stdin = None;
        }
    }

    fn start(&self) -> State {
        let started = std::env::current_exe().and_then(|program| {
            Command::new(program)
                .arg(SUBCOMMAND)
                .stdin(Stdio::piped())
                // Never the host's own: whoever reads the host's output to its end (a test, a
                // Claude Code hook) would wait for the reaper's end too.
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                // A group of its own, so that a terminal's Ctrl-C, which ends the host's, leaves
                // the reaper to end what the host could not.
                .process_group(0)
                .spawn()
        });
        match started {
            Ok(child) => State::Listening(child),
            Err(error) => {
                let warning = format!(
                    "cannot start the reaper `host {SUBCOMMAND}` ({error}): if the host is killed, the programs it started outlive it"
                );
                self.log.write(Level::Warn, &warning);
                State::Failed
            }
        }
    }
}

impl Drop for Reaper {
    /// Closes the reaper's input, its sign to end what is left (normally nothing) and exit.
    fn drop(&mut self) {
        let Ok(state) = self.state.get_mut() else {
            return;
        };
        if let State::Listening(mut child) = std::mem::replace(state, State::Failed) {
            drop(child.stdin.take());
            // Waited for off this thread, as ending a group left behind takes up to its grace;
            // a long-lived host (the hook server) would otherwise collect zombies.
            let _ = std::thread::Builder::new().name("reaper".into()).spawn(move || child.wait());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    #[test]
    fn changes_are_written_as_a_sign_and_a_group_and_read_back() {
        assert_eq!(Change::Added(4242).line(), "+4242\n");
        assert_eq!(Change::Removed(4242).line(), "-4242\n");
        for change in [Change::Added(7), Change::Removed(4_294_967_295)] {
            assert_eq!(Change::parse(&change.line()), Some(change));
        }
    }

    #[test]
    fn a_malformed_line_is_no_change() {
        let malformed =
            ["", "+", "-", "4242", "*4242", "++4242", "+-4242", "+42 42", "+4x", "+99999999999", "+4242+", "é"];
        for line in malformed {
            assert_eq!(Change::parse(line), None, "{line:?}");
        }
    }

    #[test]
    fn at_the_end_of_its_input_the_reaper_ends_the_groups_still_listed_and_no_other() {
        let sleeper = || Command::new("sleep").arg("300").process_group(0).spawn().expect("start sleep");
        let (mut listed, mut removed) = (sleeper(), sleeper());
        let input = format!("+{}\nnot a change\n+{}\n-{}\n", listed.id(), removed.id(), removed.id());
        serve(input.as_bytes(), Duration::from_secs(5));
        let status = listed.wait().expect("wait for the listed group's leader");
        assert_eq!(status.signal(), Some(15), "ended with SIGTERM");
        assert!(removed.try_wait().expect("look at the removed one").is_none(), "a removed group is left alone");
        removed.kill().expect("end the removed one");
        removed.wait().expect("wait for the removed one");
    }
}
