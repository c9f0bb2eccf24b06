//! `host report`: a finished run reported again from its tables, into a new run: the script
//! in report mode, as `host merge` runs it over shards, over this one run.

use super::Outcome;
use super::merge::{Finished, read_run, report_runs};
use crate::cli::ReportArgs;

pub fn report(args: &ReportArgs, verbose: bool) -> anyhow::Result<Outcome> {
    let run = read_run(&args.run, Finished::OrStopped)?;
    let part = run.shard();
    report_runs(&[run], &args.output, part, verbose)
}
