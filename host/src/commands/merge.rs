//! `host merge`: joins the runs of a sharded script (`host run --shard I/N`) into one run; and
//! what `host report` shares with it, a new run of a script in report mode over finished runs.
//!
//! It checks that the runs belong together (the same script, arguments, scenario, inputs and
//! host version, the same units split, every shard once), then makes a new run of the same
//! script in report mode: the shards' tables are its tables (joined in shard order, or kept once
//! where every shard wrote the same rows), the files every shard wrote alike are copied, and the
//! script's report phase computes the summary and reports from the joined tables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Parser;
use serde::Deserialize;

use super::Outcome;
use super::run::{ReportOf, run_report};
use crate::capabilities::fs::sha256_hex;
use crate::capabilities::results::table_files;
use crate::capabilities::run::{Shard, UnitsRecord};
use crate::cli::{Cli, Command, MergeArgs, ReportOutput};
use crate::run_record::{MergedFrom, MergedRun, ProcessRecord, ReportPhase, observed_status};

/// What a merge reads of a shard's manifest.
#[derive(Debug, Deserialize)]
struct ShardManifest {
    run_id: String,
    experiment: String,
    status: String,
    host: Host,
    script: Recorded,
    scenario: Option<Recorded>,
    arguments: Arguments,
    inputs: Vec<Recorded>,
    #[serde(default)]
    tables: Vec<Table>,
    #[serde(default)]
    files: Vec<String>,
    shard: Option<Shard>,
    #[serde(default)]
    units: Vec<UnitsRecord>,
    report_phase: Option<ReportPhase>,
    #[serde(default)]
    settings: BTreeMap<String, serde_json::Value>,
    /// Absent in runs made before it was recorded.
    process: Option<ProcessRecord>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Host {
    version: String,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Recorded {
    path: String,
    sha256: String,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Arguments {
    raw: Vec<String>,
}

impl Arguments {
    /// The arguments that say what a shard did: all but `--resume DIR` (the run a shard took its
    /// finished units over from changes how it got its rows, not what they are), which the
    /// merged run, reporting from tables, needs neither.
    fn of_the_work(&self) -> Vec<String> {
        let mut out = Vec::with_capacity(self.raw.len());
        let mut args = self.raw.iter();
        while let Some(arg) = args.next() {
            if arg == "--resume" {
                args.next();
            } else if !arg.starts_with("--resume=") {
                out.push(arg.clone());
            }
        }
        out
    }
}

#[derive(Debug, Deserialize)]
struct Table {
    name: String,
    file: String,
}

/// A finished run to report: its directory and manifest.
pub(super) struct ShardRun {
    dir: PathBuf,
    manifest: ShardManifest,
    shard: Shard,
}

pub fn merge(args: &MergeArgs, verbose: bool) -> anyhow::Result<Outcome> {
    let mut shards = Vec::with_capacity(args.runs.len());
    for dir in &args.runs {
        let run = read_run(dir, Finished::Only)?;
        if run.manifest.shard.is_none() {
            bail!(
                "run `{}` ({}) was not run with `--shard I/N`, so it is no shard to merge; hint: `host report` reports one run",
                run.manifest.run_id,
                run.dir.display()
            );
        };
        shards.push(run);
    }
    shards.sort_by_key(|run| run.shard.index);
    check_complete(&shards)?;
    check_alike(&shards)?;
    report_runs(&shards, &args.output, None, verbose)
}

/// Runs the script of `runs` (alike, in shard order) in report mode over their tables, into
/// `output`; `part` is the one shard reported alone, if that is what `runs` is.
pub(super) fn report_runs(
    runs: &[ShardRun],
    output: &ReportOutput,
    part: Option<Shard>,
    verbose: bool,
) -> anyhow::Result<Outcome> {
    let Some(first) = runs.first() else { bail!("no runs to report") };
    let script = find_script(&first.manifest.script, &first.dir)?;

    let report_phase = |run: &ShardRun| run.manifest.report_phase.clone().unwrap_or_default();
    let mut tables: BTreeMap<String, Vec<Vec<PathBuf>>> = BTreeMap::new();
    for run in runs {
        let skipped = report_phase(run).tables;
        for (name, files) in run.table_files()?.into_iter().filter(|(name, _)| !skipped.contains(name)) {
            tables.entry(name).or_default().push(files);
        }
    }
    let (files, left_out) = alike_files(runs, &report_phase(first))?;

    let mut command = vec!["host".to_owned(), "run".to_owned(), script.display().to_string(), "--offline".to_owned()];
    if let Some(scenario) = &first.manifest.scenario {
        command.extend([
            "--scenario".to_owned(),
            find_file(&scenario.path, &first.dir, "scenario")?.display().to_string(),
        ]);
    }
    if let Some(out) = &output.out {
        command.extend(["--out".to_owned(), out.display().to_string()]);
    }
    if let Some(id) = &output.run_id {
        command.extend(["--run-id".to_owned(), id.clone()]);
    }
    if let Some(dir) = &output.local_model.model_dir {
        command.extend(["--model-dir".to_owned(), dir.display().to_string()]);
    }
    command.extend([
        "--embed-backend".to_owned(),
        crate::capabilities::embed::Backend::from(output.local_model.embed_backend).name().to_owned(),
    ]);
    command.push("--".to_owned());
    command.extend(first.manifest.arguments.of_the_work());
    let Command::Run(run_args) = Cli::try_parse_from(&command).context("cannot rebuild the shards' command")?.command
    else {
        bail!("cannot rebuild the shards' command");
    };
    let merged_from = MergedFrom {
        runs: runs
            .iter()
            .map(|run| MergedRun {
                run_id: run.manifest.run_id.clone(),
                dir: run.dir.display().to_string(),
                shard: run.shard(),
            })
            .collect(),
        files_left_in_shards: left_out,
    };
    let settings = first.manifest.settings.clone();
    let report = ReportOf { tables, files, units: first.manifest.units.clone(), part, settings, merged_from };
    run_report(&run_args, verbose, report)
}

/// Which runs a command takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Finished {
    /// Runs that finished (`ok`, `checks_failed`): `host merge`.
    Only,
    /// Also runs that stopped midway (`killed`, `interrupted`, `failed`), with the rows they
    /// wrote: `host report`.
    OrStopped,
}

/// A run read from its directory, with its status as it stands (a run whose process is gone is
/// `killed`); `shard` is 1/1 when it was not run as a shard.
pub(super) fn read_run(dir: &Path, finished: Finished) -> anyhow::Result<ShardRun> {
    let dir = fs_err::canonicalize(dir).with_context(|| format!("`{}` is not a run directory", dir.display()))?;
    let path = dir.join("manifest.json");
    let text = fs_err::read_to_string(&path).with_context(|| format!("`{}` is not a run directory", dir.display()))?;
    let mut manifest: ShardManifest =
        serde_json::from_str(&text).with_context(|| format!("cannot read `{}`", path.display()))?;
    manifest.status = observed_status(&manifest.status, manifest.process.as_ref());
    let (id, shown, status) = (&manifest.run_id, dir.display(), manifest.status.as_str());
    match (status, finished) {
        ("ok" | "checks_failed", _) => {}
        ("running", _) => bail!("run `{id}` ({shown}) is still running; hint: report it once it has finished"),
        ("killed" | "interrupted" | "failed", Finished::OrStopped) => {
            eprintln!("run `{id}` ({shown}) was {status} before it finished: reporting the rows it wrote");
        }
        _ => bail!(
            "run `{id}` ({shown}) ended `{status}`; hint: finish it with `--resume {shown}`, or run it again, then merge"
        ),
    }
    let shard = manifest.shard.unwrap_or(Shard { index: 1, count: 1 });
    Ok(ShardRun { dir, manifest, shard })
}

impl ShardRun {
    /// The run's tables, each with the files holding its rows: those its manifest lists when it
    /// finished, else every table it left on disk, in parts or whole.
    fn table_files(&self) -> anyhow::Result<BTreeMap<String, Vec<PathBuf>>> {
        if matches!(self.manifest.status.as_str(), "ok" | "checks_failed") {
            let listed = self.manifest.tables.iter();
            return Ok(listed.map(|table| (table.name.clone(), vec![self.dir.join(&table.file)])).collect());
        }
        table_files(&self.dir).with_context(|| format!("cannot list the tables of `{}`", self.dir.display()))
    }

    /// The shard this run was, if it was one.
    pub(super) fn shard(&self) -> Option<Shard> {
        self.manifest.shard
    }
}

/// Every shard of `1/N` … `N/N` once.
fn check_complete(shards: &[ShardRun]) -> anyhow::Result<()> {
    let Some(first) = shards.first() else { bail!("no runs to merge") };
    let count = first.shard.count;
    if let Some(other) = shards.iter().find(|run| run.shard.count != count) {
        bail!(
            "runs of {count} shards and of {} shards cannot be merged: `{}` is shard {}, `{}` is shard {}",
            other.shard.count,
            first.dir.display(),
            first.shard,
            other.dir.display(),
            other.shard
        );
    }
    for pair in shards.windows(2) {
        if pair[0].shard.index == pair[1].shard.index {
            bail!(
                "shard {} is given twice: `{}` and `{}`",
                pair[0].shard,
                pair[0].dir.display(),
                pair[1].dir.display()
            );
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|index| !shards.iter().any(|run| run.shard.index == *index))
        .map(|index| format!("{index}/{count}"))
        .collect();
    if !missing.is_empty() {
        bail!("shard {} missing; hint: give the run directory of every shard", missing.join(", "));
    }
    Ok(())
}

/// The shards ran the same thing: an error names the first difference.
fn check_alike(shards: &[ShardRun]) -> anyhow::Result<()> {
    let first = &shards[0];
    let expected = &first.manifest;
    for run in &shards[1..] {
        let found = &run.manifest;
        let differ = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
            anyhow::anyhow!(
                "the shards ran different {what}: {a:?} in shard {} ({}), {b:?} in shard {} ({})",
                first.shard,
                first.dir.display(),
                run.shard,
                run.dir.display()
            )
        };
        if found.experiment != expected.experiment {
            return Err(differ("experiments", &expected.experiment, &found.experiment));
        }
        if found.script != expected.script {
            return Err(differ("scripts", &expected.script, &found.script));
        }
        if found.host != expected.host {
            return Err(differ("host versions", &expected.host.version, &found.host.version));
        }
        if found.scenario != expected.scenario {
            return Err(differ("scenarios", &expected.scenario, &found.scenario));
        }
        if found.arguments.of_the_work() != expected.arguments.of_the_work() {
            return Err(differ("script arguments", &expected.arguments.raw, &found.arguments.raw));
        }
        let split = |units: &[UnitsRecord]| units.iter().map(|u| (u.total, u.sha256.clone())).collect::<Vec<_>>();
        if split(&found.units) != split(&expected.units) {
            return Err(differ("units (`run::shard`: count, sha256)", &split(&expected.units), &split(&found.units)));
        }
        for input in &found.inputs {
            if let Some(other) =
                expected.inputs.iter().find(|known| known.path == input.path && known.sha256 != input.sha256)
            {
                return Err(differ(
                    &format!("versions of input `{}` (sha256)", input.path),
                    &other.sha256,
                    &input.sha256,
                ));
            }
        }
    }
    if expected.units.is_empty() {
        bail!(
            "{} never called `run::shard`, so its runs did the same work and have nothing to merge; hint: hand the script's units to `run::shard`",
            expected.script.path
        );
    }
    Ok(())
}

/// A file to copy into the merged run: its path in the run, and a shard's copy.
type Copy = (String, PathBuf);

/// The files every shard wrote alike, to copy, and those it leaves in the shards; the report
/// phase's files are left to the report phase.
fn alike_files(shards: &[ShardRun], report: &ReportPhase) -> anyhow::Result<(Vec<Copy>, Vec<String>)> {
    let first = &shards[0];
    let mut copied = Vec::new();
    let mut left = Vec::new();
    for file in first.manifest.files.iter().filter(|file| !report.files.contains(file)) {
        let hash = |run: &ShardRun| -> anyhow::Result<Option<String>> {
            if !run.manifest.files.contains(file) {
                return Ok(None);
            }
            let bytes = fs_err::read(run.dir.join(file))?;
            Ok(Some(sha256_hex(&bytes)))
        };
        let expected = hash(first)?;
        let mut alike = true;
        for run in &shards[1..] {
            alike &= hash(run)? == expected;
        }
        if alike {
            copied.push((file.clone(), first.dir.join(file)));
        } else {
            left.push(file.clone());
        }
    }
    Ok((copied, left))
}

/// The runs' script as it is now, which must be the version they ran.
fn find_script(recorded: &Recorded, shard_dir: &Path) -> anyhow::Result<PathBuf> {
    let path = find_file(&recorded.path, shard_dir, "script")?;
    let now = sha256_hex(&fs_err::read(&path)?);
    if now != recorded.sha256 {
        bail!(
            "`{}` changed since the runs being reported ran (sha256 {} then, {now} now); hint: report them with the version that produced them",
            recorded.path,
            recorded.sha256
        );
    }
    Ok(path)
}

/// A path the manifest records relative to the project root: found from the working directory
/// or from the shard's directory upwards.
fn find_file(recorded: &str, shard_dir: &Path, what: &str) -> anyhow::Result<PathBuf> {
    let recorded_path = Path::new(recorded);
    if recorded_path.is_absolute() {
        return Ok(recorded_path.to_path_buf());
    }
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    cwd.ancestors()
        .chain(shard_dir.ancestors())
        .map(|dir| dir.join(recorded_path))
        .find(|candidate| candidate.is_file())
        .with_context(|| {
            format!("cannot find the shards' {what} `{recorded}`; hint: run `host merge` inside the project")
        })
}

#[cfg(test)]
mod tests {
    use super::Arguments;

    #[test]
    fn shards_resumed_from_other_runs_did_the_same_work() {
        let of = |raw: &[&str]| Arguments { raw: raw.iter().map(|arg| (*arg).to_owned()).collect() }.of_the_work();
        let plain = of(&["--provider", "openai", "--sets", "a,b"]);
        assert_eq!(of(&["--provider", "openai", "--resume", "runs/x/1", "--sets", "a,b"]), plain);
        assert_eq!(of(&["--resume=runs/x/1", "--provider", "openai", "--sets", "a,b"]), plain);
        assert_ne!(of(&["--provider", "anthropic", "--sets", "a,b"]), plain, "any other argument still counts");
    }
}
