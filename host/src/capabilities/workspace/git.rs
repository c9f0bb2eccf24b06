//! [`ProcGit`]: the workspace's git, run through `proc` so that every git call is a row of
//! `proc_calls` like any other program, with a hermetic configuration (no user or system git
//! config, a fixed date) so that a workspace's first commit is the same on every machine.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::Git;
use crate::capabilities::proc::{Proc, ProcRequest, Processes};

/// The date of every workspace commit.
const FIXED_DATE: &str = "2000-01-01T00:00:00Z";
/// How long one git command may take (a first commit of a large copy included).
const TIMEOUT: Duration = Duration::from_secs(300);

pub struct ProcGit {
    proc: Arc<Proc>,
    runtime: tokio::runtime::Handle,
}

impl ProcGit {
    pub fn new(proc: Arc<Proc>, runtime: tokio::runtime::Handle) -> Self {
        ProcGit { proc, runtime }
    }
}

impl Git for ProcGit {
    fn run(&self, cwd: &Path, args: &[&str]) -> Result<(), String> {
        let env = BTreeMap::from([
            ("GIT_AUTHOR_DATE".to_string(), FIXED_DATE.to_string()),
            ("GIT_COMMITTER_DATE".to_string(), FIXED_DATE.to_string()),
            ("GIT_CONFIG_GLOBAL".to_string(), "/dev/null".to_string()),
            ("GIT_CONFIG_NOSYSTEM".to_string(), "1".to_string()),
        ]);
        let mut request =
            ProcRequest::new(std::iter::once("git").chain(args.iter().copied()).map(str::to_string).collect());
        request.cwd = Some(cwd.display().to_string());
        request.env = env;
        request.output_limit_kib = 64;
        let launch = self.proc.policy.launch(request).map_err(|error| error.to_string())?;
        let output = self.runtime.block_on(self.proc.processes.run(launch, TIMEOUT));
        if output.ok {
            return Ok(());
        }
        let reason = output.error.unwrap_or_default();
        let stderr = output.stderr.trim();
        Err(if stderr.is_empty() { reason } else { format!("{reason}: {stderr}") })
    }
}
