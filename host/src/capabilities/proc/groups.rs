//! Process groups: every program the host starts leads a group of its own, so that ending it
//! also ends what it started (a shell's children, npm's node, a server's workers). This module
//! keeps the groups still alive and ends them, politely and then by force, on a timeout, on
//! Ctrl-C and when the run ends, however it ends; with a [`Reaper`], even when the host is
//! killed. It does not start processes.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::reaper::{Change, Reaper};

/// How often a group is looked at while it is given time to go.
const POLL: Duration = Duration::from_millis(20);

/// The groups of one run that may still have members.
#[derive(Debug, Default)]
pub struct Groups {
    live: Mutex<BTreeSet<u32>>,
    /// Told of every change, to end the groups if the host is killed first.
    reaper: Option<Reaper>,
}

impl Groups {
    /// Groups that live no longer than the host, unless it is killed (SIGKILL).
    pub fn new() -> Self {
        Groups::default()
    }

    /// Groups that a [`Reaper`] ends even when the host is killed.
    pub fn with_reaper(reaper: Reaper) -> Self {
        Groups { live: Mutex::default(), reaper: Some(reaper) }
    }

    pub fn add(&self, group: u32) {
        if let Ok(mut live) = self.live.lock()
            && live.insert(group)
        {
            self.tell(Change::Added(group));
        }
    }

    pub fn remove(&self, group: u32) {
        if let Ok(mut live) = self.live.lock()
            && live.remove(&group)
        {
            self.tell(Change::Removed(group));
        }
    }

    /// Called with `live` locked, so that the reaper hears of a group's changes in their order.
    fn tell(&self, change: Change) {
        if let Some(reaper) = &self.reaper {
            reaper.tell(change);
        }
    }

    pub fn live(&self) -> Vec<u32> {
        self.live.lock().map(|live| live.iter().copied().collect()).unwrap_or_default()
    }

    /// Ends every group still known: SIGTERM, up to `grace` for them to go, then SIGKILL.
    /// Blocking: for the end of a run and the second Ctrl-C, where no async runtime may be left.
    pub fn end_all(&self, grace: Duration) {
        let groups = self.live();
        for group in &groups {
            signal(*group, Signal::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while groups.iter().any(|group| alive(*group)) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        for group in groups {
            signal(group, Signal::SIGKILL);
            self.remove(group);
        }
    }
}

/// Sends `signal` to every member of `group`; false when it has none left.
pub fn signal(group: u32, signal: Signal) -> bool {
    let Ok(group) = i32::try_from(group) else {
        return false;
    };
    // Never 0 or 1: killpg(0) would signal the host's own group.
    group > 1 && killpg(Pid::from_raw(group), signal).is_ok()
}

/// Whether `group` has a member that is still running (zombies waiting to be reaped do not count).
pub fn alive(group: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return i32::try_from(group).is_ok_and(|group| killpg(Pid::from_raw(group), None).is_ok());
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let is_pid = name.to_str().is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()));
        is_pid && std::fs::read_to_string(entry.path().join("stat")).is_ok_and(|stat| running_in(&stat, group))
    })
}

/// Whether a `/proc/<pid>/stat` line describes a live (not zombie) process of `group`.
fn running_in(stat: &str, group: u32) -> bool {
    // The command name is in parentheses and may contain spaces; fields follow the last `)`.
    let Some((_, fields)) = stat.rsplit_once(')') else {
        return false;
    };
    let mut fields = fields.split_whitespace();
    let state = fields.next();
    let _parent = fields.next();
    let process_group = fields.next().and_then(|field| field.parse::<u32>().ok());
    process_group == Some(group) && !matches!(state, Some("Z" | "X"))
}

/// A signal's name (`SIGKILL`), or its number when it has none.
pub fn signal_name(number: i32) -> String {
    Signal::try_from(number).map_or_else(|_| format!("signal {number}"), |signal| signal.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_says_whether_a_live_member_of_the_group() {
        assert!(running_in("4242 (sleep) S 4200 4200 4200 0 -1", 4200));
        assert!(running_in("4242 (a (b) c) R 1 4200 4200 0", 4200), "names with spaces and parentheses");
        assert!(!running_in("4242 (sleep) Z 1 4200 4200 0", 4200), "a zombie is not running");
        assert!(!running_in("4242 (sleep) S 4200 4201 4201 0", 4200), "another group");
    }

    #[test]
    fn signals_have_their_names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(200), "signal 200");
    }

    #[test]
    fn the_hosts_own_group_is_never_signalled() {
        assert!(!signal(0, Signal::SIGCONT));
        assert!(!signal(1, Signal::SIGCONT));
    }
}
