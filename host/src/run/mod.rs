//! A run's directory and its record: where a run's outputs go, and the manifest that says what
//! produced them (versions, hashes, arguments, times, status).

mod git;
mod manifest;

use std::path::{Path, PathBuf};

pub use git::GitState;
pub use manifest::{FileRecord, Manifest, Status, TableRecord, now as manifest_now};

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

/// A fresh, UTC-time-based run id: `20261122-143005`.
pub fn new_run_id() -> String {
    chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string()
}

pub fn validate_run_id(id: &str) -> Result<(), RunDirError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if id.is_empty() || id.starts_with('.') || !id.chars().all(allowed) {
        return Err(RunDirError::BadId { id: id.to_string() });
    }
    Ok(())
}

/// Creates the run directory: `out` when given, else `<runs>/<experiment>/<id>`. An existing
/// empty directory is reused; a non-empty one is refused so that no run overwrites another.
pub fn create_dir(out: Option<&Path>, runs: &Path, experiment: &str, id: &str) -> Result<PathBuf, RunDirError> {
    let dir = match out {
        Some(out) => out.to_path_buf(),
        None => runs.join(experiment).join(id),
    };
    let shown = dir.display().to_string();
    let occupied = std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some());
    if occupied {
        return Err(RunDirError::NotEmpty { path: shown });
    }
    fs_err::create_dir_all(&dir).map_err(|source| RunDirError::Create { path: shown, source })?;
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
    fn run_ids_cannot_name_other_folders() {
        for bad in ["../x", "a/b", ".hidden", ""] {
            assert!(validate_run_id(bad).is_err(), "{bad}");
        }
        assert!(validate_run_id("2026-11-22_trial.1").is_ok());
    }
}
