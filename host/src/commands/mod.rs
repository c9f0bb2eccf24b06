//! One file per subcommand. Each returns an [`Outcome`] or an error for `main` to map to an exit
//! code; what a person needs to read has already been printed to stderr.

pub mod api;
pub mod check;
pub mod run;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use crate::capabilities::Capabilities;
use crate::capabilities::fs::{ReadPolicy, SandboxFiles};
use crate::capabilities::log::ConsoleLog;
use crate::capabilities::progress::ConsoleProgress;
use crate::capabilities::results::RunResults;
use crate::capabilities::run::RunInfo;
use crate::console::Console;

/// How a command ended, when it got far enough to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit code 0.
    Success,
    /// Exit code 1: the run finished, but a check it declared failed.
    ChecksFailed,
    /// Exit code 2: the failure was already reported on stderr.
    Failed,
}

impl Outcome {
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::ChecksFailed => 1,
            Outcome::Failed => 2,
        }
    }
}

/// The capabilities of a run, on the real console and file system.
pub fn capabilities(
    console: &Arc<Console>,
    files: Arc<SandboxFiles>,
    results: Arc<RunResults>,
    run: RunInfo,
) -> Capabilities {
    Capabilities {
        files,
        results,
        log: Arc::new(ConsoleLog::new(console.clone())),
        progress: Arc::new(ConsoleProgress::new(console.clone())),
        run: Arc::new(run),
    }
}

/// Capabilities for commands that compile or describe scripts without a run (`check`, `api`):
/// reads are confined to `root`, and anything written lands in a scratch directory that is
/// removed when the returned guard drops.
pub fn scratch_capabilities(
    root: &Path,
    verbose: bool,
) -> anyhow::Result<(tempfile::TempDir, Arc<SandboxFiles>, Capabilities)> {
    let scratch = tempfile::tempdir().context("cannot create a temporary directory")?;
    let console = Arc::new(Console::new(crate::console::Style::Plain, verbose));
    let files = Arc::new(SandboxFiles::new(ReadPolicy::new(root)?));
    let results = Arc::new(RunResults::new(scratch.path(), "scratch")?);
    let info = RunInfo {
        id: "scratch".into(),
        experiment: "scratch".into(),
        dir: scratch.path().to_path_buf(),
        args: serde_json::json!({}),
        argv: Vec::new(),
        scenario: None,
    };
    let capabilities = capabilities(&console, files.clone(), results, info);
    Ok((scratch, files, capabilities))
}

/// A script's path and text, read with an error that names it.
pub fn read_script(path: &Path) -> anyhow::Result<(PathBuf, String)> {
    if !path.is_file() {
        anyhow::bail!("script `{}` does not exist; hint: paths are relative to the working directory", path.display());
    }
    let canonical = fs_err::canonicalize(path).with_context(|| format!("cannot open script `{}`", path.display()))?;
    let text =
        fs_err::read_to_string(&canonical).with_context(|| format!("cannot read script `{}`", path.display()))?;
    Ok((canonical, text))
}
