//! Who runs a run: the process (pid and start time) and the machine, recorded in its manifest,
//! and whether that process is still alive, so that a run whose process is gone reads as
//! `killed` rather than `running` forever. It only looks; it never signals a process.

use serde::{Deserialize, Serialize};

/// The process that runs a run. The pid alone is not enough, since the system reuses pids: the
/// process's start time (clock ticks since boot, from `/proc`) and the boot id tell a later
/// process with the same pid apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessRecord {
    pub pid: u32,
    /// `/proc/<pid>/stat`'s start time; `None` where the system does not say.
    pub start_ticks: Option<u64>,
    /// `/proc/sys/kernel/random/boot_id`; `None` where the system does not say.
    pub boot_id: Option<String>,
    pub host_name: String,
}

/// What can be told of a recorded process from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    Gone,
    /// It ran on another machine, or this system cannot tell.
    Unknown,
}

impl ProcessRecord {
    /// This process.
    pub fn current() -> Self {
        let pid = std::process::id();
        Self { pid, start_ticks: start_ticks(pid), boot_id: boot_id(), host_name: host_name() }
    }

    pub fn liveness(&self) -> Liveness {
        if self.host_name != host_name() {
            return Liveness::Unknown;
        }
        if self.boot_id.is_some() && boot_id().is_some() && self.boot_id != boot_id() {
            return Liveness::Gone;
        }
        match (self.start_ticks, start_ticks(self.pid)) {
            (Some(recorded), Some(now)) => {
                if recorded == now {
                    Liveness::Alive
                } else {
                    Liveness::Gone
                }
            }
            // The recorded process had a start time here, and no process has that pid now.
            (Some(_), None) if std::path::Path::new("/proc/self/stat").exists() => Liveness::Gone,
            _ => signal_zero(self.pid),
        }
    }
}

/// Field 22 of `/proc/<pid>/stat`, counted after the command name (which may hold spaces and
/// parentheses, so the fields are read after its last `)`).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    // After the name come field 3 (state) onwards; the start time is field 22.
    after_name.split_whitespace().nth(22 - 3)?.parse().ok()
}

fn boot_id() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(text.trim().to_owned()).filter(|id| !id.is_empty())
}

/// The machine's name: the kernel's, else `HOSTNAME`, else `unknown`.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|name| !name.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Where there is no `/proc`: whether a process with `pid` exists (pids may have been reused).
fn signal_zero(pid: u32) -> Liveness {
    #[cfg(unix)]
    {
        use nix::errno::Errno;
        let Ok(pid) = i32::try_from(pid) else { return Liveness::Unknown };
        match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
            Ok(()) | Err(Errno::EPERM) => Liveness::Unknown,
            Err(Errno::ESRCH) => Liveness::Gone,
            Err(_) => Liveness::Unknown,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        Liveness::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive() {
        assert_ne!(ProcessRecord::current().liveness(), Liveness::Gone);
    }

    #[test]
    fn a_process_that_exited_is_gone() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let record = ProcessRecord { pid: child.id(), ..ProcessRecord::current() };
        let record = ProcessRecord { start_ticks: start_ticks(record.pid).or(Some(1)), ..record };
        child.wait().unwrap();
        assert_eq!(record.liveness(), Liveness::Gone);
    }

    #[test]
    fn a_reused_pid_with_another_start_time_is_gone() {
        let me = ProcessRecord::current();
        if me.start_ticks.is_none() {
            return; // no /proc here: nothing to compare
        }
        let earlier = ProcessRecord { start_ticks: me.start_ticks.map(|ticks| ticks.wrapping_sub(1)), ..me };
        assert_eq!(earlier.liveness(), Liveness::Gone);
    }

    #[test]
    fn a_process_on_another_machine_is_unknown() {
        let elsewhere = ProcessRecord { host_name: format!("{}-elsewhere", host_name()), ..ProcessRecord::current() };
        assert_eq!(elsewhere.liveness(), Liveness::Unknown);
    }
}
