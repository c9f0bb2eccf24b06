//! One file per subcommand. Each returns an [`Outcome`] or an error for `main` to map to an exit
//! code; what a person needs to read has already been printed to stderr.

pub mod api;
pub mod check;
pub mod fetch;
pub mod guest;
pub mod hook;
mod hook_server;
pub mod merge;
pub mod model;
pub mod report;
pub mod run;
pub mod runs;
mod setup;
pub mod test;

pub use setup::{Ingredients, Scratch, capabilities, llm_settings, runtime, scratch_capabilities};

use std::path::{Path, PathBuf};

use anyhow::Context;

/// How a command ended, when it got far enough to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit code 0.
    Success,
    /// Exit code 1: the run finished, but a check it declared failed (`host test`: a test failed).
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
