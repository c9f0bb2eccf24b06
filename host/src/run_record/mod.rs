//! A run's directory and its record: where a run's outputs go, and the manifest that says what
//! produced them (versions, hashes, arguments, times, status).

mod git;
mod manifest;
mod process;

use std::path::{Path, PathBuf};

pub use git::GitState;
pub use manifest::{
    AllowedRecord, FileRecord, Manifest, MergedFrom, MergedRun, ProcessesRecord, ReportPhase, Status, TableRecord,
    mark_ended, now as manifest_now,
};
pub use process::{Liveness, ProcessRecord, host_name};

/// A run's status as it stands now: the one its manifest records, except that a run recorded as
/// `running` whose process is gone is `killed`. It changes nothing on disk.
pub fn observed_status(recorded: &str, process: Option<&ProcessRecord>) -> String {
    match process.map(ProcessRecord::liveness) {
        Some(Liveness::Gone) if recorded == "running" => "killed".to_owned(),
        _ => recorded.to_owned(),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    #[error("run directory `{path}` already exists and is not empty; hint: choose another `--run-id` or `--out`")]
    NotEmpty { path: String },
    #[error("cannot create run directory `{path}`")]
    Create {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("run id `{id}` may only contain letters, digits, `-`, `_` and `.`, and may not start with `.`")]
    BadId { id: String },
}

/// A fresh run id: UTC time and a part that tells apart runs started in the same second, in
/// this process or another (`20261122-143005-7f3a9c`).
pub fn new_run_id() -> String {
    format!("{}-{}", chrono::Utc::now().format("%Y%m%d-%H%M%S"), unique_part())
}

/// Six hex characters that no earlier call of this process returned (for 16 million calls), and
/// that another process returns only by chance: for names that runs side by side must not share
/// (run ids, workspaces), each also created atomically so that a chance meeting is caught.
pub fn unique_part() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    static MADE: AtomicU64 = AtomicU64::new(0);
    // A random start per process (RandomState is seeded by the OS, mixed with the pid and the
    // time), then an odd step, which visits every 24-bit value once before repeating.
    let seed = *SEED.get_or_init(|| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.write_i64(chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default());
        hasher.finish()
    });
    let unique = seed.wrapping_add(MADE.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B1)) & 0xff_ffff;
    format!("{unique:06x}")
}

pub fn validate_run_id(id: &str) -> Result<(), RunDirError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.starts_with('.') || !id.chars().all(allowed) {
        return Err(RunDirError::BadId { id: id.to_string() });
    }
    Ok(())
}

/// Creates the run directory: `out` when given, else `<runs>/<experiment>/<id>`. An existing
/// empty `out` is reused; a non-empty one is refused so that no run overwrites another. Under
/// `runs/` the directory itself is created atomically, so two runs can never share it.
pub fn create_dir(out: Option<&Path>, runs: &Path, experiment: &str, id: &str) -> Result<PathBuf, RunDirError> {
    let dir = match out {
        Some(out) => out.to_path_buf(),
        None => runs.join(experiment).join(id),
    };
    let shown = dir.display().to_string();
    let create = |source| RunDirError::Create { path: shown.clone(), source };
    if out.is_none() {
        if let Some(parent) = dir.parent() {
            fs_err::create_dir_all(parent).map_err(create)?;
        }
        return match std::fs::create_dir(&dir) {
            Ok(()) => Ok(dir),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                let empty = std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_none());
                if empty { Ok(dir) } else { Err(RunDirError::NotEmpty { path: shown }) }
            }
            Err(error) => Err(create(error)),
        };
    }
    let occupied = std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some());
    if occupied {
        return Err(RunDirError::NotEmpty { path: shown });
    }
    fs_err::create_dir_all(&dir).map_err(create)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_never_reuses_a_directory_with_content() {
        let runs = tempfile::tempdir().unwrap();
        let dir = create_dir(None, runs.path(), "hello", "r1").unwrap();
        assert_eq!(dir, runs.path().join("hello/r1"));
        std::fs::write(dir.join("manifest.json"), "{}").unwrap();
        assert!(matches!(create_dir(None, runs.path(), "hello", "r1"), Err(RunDirError::NotEmpty { .. })));
    }

    #[test]
    fn run_ids_made_in_the_same_second_differ() {
        let ids: std::collections::BTreeSet<String> = (0..1000).map(|_| new_run_id()).collect();
        assert_eq!(ids.len(), 1000, "no two ids of one process are the same, even within a second");
        assert!(ids.iter().all(|id| validate_run_id(id).is_ok()));
    }

    #[test]
    fn run_ids_cannot_name_other_folders() {
        for bad in ["../x", "a/b", ".hidden", ""] {
            assert!(validate_run_id(bad).is_err(), "{bad}");
        }
        assert!(validate_run_id("2026-11-22_trial.1").is_ok());
    }
}
