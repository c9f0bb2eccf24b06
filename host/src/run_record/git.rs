//! The project's git state, so that a result can be traced to the code that produced it.

use std::path::Path;
use std::process::Command;

use serde::Serialize;

/// The commit checked out in the project, and whether the work tree differed from it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GitState {
    pub commit: String,
    pub dirty: bool,
}

impl GitState {
    /// `None` when the project is not in a git repository or git is not installed.
    pub fn of(root: &Path) -> Option<Self> {
        let run = |args: &[&str]| {
            let output = Command::new("git").arg("-C").arg(root).args(args).output().ok()?;
            output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
        };
        let commit = run(&["rev-parse", "HEAD"])?;
        // Ignored files (runs/, target/) do not make a tree dirty; untracked ones do.
        let dirty = !run(&["status", "--porcelain"])?.is_empty();
        Some(GitState { commit, dirty })
    }
}
