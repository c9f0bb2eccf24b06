//! `manifest.json`: what produced a run and how it ended. Written atomically when the run
//! starts (status `running`) and again when it ends, so a run killed midway still says so.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::GitState;
use super::process::ProcessRecord;
use crate::capabilities::embed::ModelRecord;
use crate::capabilities::fs::InputRecord;
use crate::capabilities::results::Check;

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Started and not (yet) ended; what a killed run leaves.
    Running,
    /// Finished, every declared check passed.
    Ok,
    /// Finished, but a declared check failed (exit code 1).
    ChecksFailed,
    /// Stopped by an error (exit code 2); tables hold the rows appended before it.
    Failed,
    /// Stopped by Ctrl-C or SIGTERM; tables hold the rows appended before it.
    Interrupted,
}

#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    pub run_id: String,
    pub experiment: String,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub host: HostRecord,
    /// The process that runs it and its machine: a run whose status is `running` and whose
    /// process is gone reads as `killed` (see [`super::observed_status`]).
    pub process: ProcessRecord,
    pub script: FileRecord,
    pub scenario: Option<FileRecord>,
    pub arguments: Arguments,
    /// Every file the run read (script, modules, scenario, data), with its sha256.
    pub inputs: Vec<InputRecord>,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub duration_seconds: Option<f64>,
    pub tables: Vec<TableRecord>,
    pub files: Vec<String>,
    /// Folders outside the run directory the run wrote artifacts into (`results::export_folder`), each
    /// with the files it wrote there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exports: Vec<crate::capabilities::results::ExportRecord>,
    pub checks: Vec<Check>,
    /// Settings the script recorded (`results::settings`), by name: every knob of a part of the
    /// experiment, defaults included.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, Value>,
    /// Embedding models the run used; the local one with its weights' sha256 when loaded.
    pub models: Vec<ModelRecord>,
    /// Guest modules the run loaded: which module (by sha256), what it was granted, how it went.
    pub guests: Vec<crate::wasm::GuestRecord>,
    /// Programs the run may start and did start (`proc::`), with their paths and versions.
    pub processes: ProcessesRecord,
    /// Workspaces the run made, and whether each is still on disk.
    pub workspaces: Vec<crate::capabilities::workspace::WorkspaceRecord>,
    /// `--shard I/N`: this run did only its block of the units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::capabilities::run::Shard>,
    /// Each call of `run::shard`: the units the script split, and this run's block.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<crate::capabilities::run::UnitsRecord>,
    /// What the script's report phase wrote (everything first written after its first
    /// `results::rows`), which a merge recomputes rather than joins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_phase: Option<ReportPhase>,
    /// For `host merge` and `host report`: the runs this one reports, in shard order, and what
    /// it left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<MergedFrom>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ReportPhase {
    pub tables: Vec<String>,
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct MergedFrom {
    pub runs: Vec<MergedRun>,
    /// Files the shards wrote differently and the report phase did not write again: each is in
    /// the shards' own directories.
    pub files_left_in_shards: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MergedRun {
    pub run_id: String,
    pub dir: String,
    /// `None` for a run that was not a shard (`host report` of a whole run).
    pub shard: Option<crate::capabilities::run::Shard>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ProcessesRecord {
    /// Each allowed entry and where it was declared (`scenario` or `script`).
    pub allowed: Vec<AllowedRecord>,
    pub programs: Vec<crate::capabilities::proc::ProgramRecord>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AllowedRecord {
    pub program: String,
    pub declared_in: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostRecord {
    pub version: String,
    /// The project's git commit; `null` outside a repository.
    pub git: Option<GitState>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FileRecord {
    pub path: String,
    pub sha256: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Arguments {
    /// The script arguments as given after `--`.
    pub raw: Vec<String>,
    /// The same, parsed as the script saw them in `ARGS`.
    pub parsed: Value,
    /// The whole `host` command line.
    pub command_line: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TableRecord {
    pub name: String,
    pub file: String,
    pub rows: u64,
    /// Column name and type, `run_id` first.
    pub columns: Vec<(String, String)>,
}

impl Manifest {
    pub fn new(run_id: &str, experiment: &str, script: FileRecord, git: Option<GitState>) -> Self {
        Manifest {
            run_id: run_id.to_string(),
            experiment: experiment.to_string(),
            status: Status::Running,
            error: None,
            host: HostRecord { version: env!("CARGO_PKG_VERSION").to_string(), git },
            process: ProcessRecord::current(),
            script,
            scenario: None,
            arguments: Arguments { raw: Vec::new(), parsed: Value::Null, command_line: Vec::new() },
            inputs: Vec::new(),
            started_at: now(),
            finished_at: None,
            duration_seconds: None,
            tables: Vec::new(),
            files: Vec::new(),
            exports: Vec::new(),
            checks: Vec::new(),
            settings: BTreeMap::new(),
            models: Vec::new(),
            guests: Vec::new(),
            processes: ProcessesRecord::default(),
            workspaces: Vec::new(),
            shard: None,
            units: Vec::new(),
            report_phase: None,
            merged_from: None,
        }
    }

    /// Writes `<dir>/manifest.json` atomically.
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        text.push('\n');
        crate::atomic::write(&dir.join("manifest.json"), text.as_bytes())
    }
}

/// Marks the run in `dir` ended with `status` when it cannot end the ordinary way (a second
/// Ctrl-C, or a SIGTERM whose grace period ran out): the manifest on disk keeps everything else
/// it says, and the tables are left in their readable parts for readers to find.
pub fn mark_ended(dir: &Path, status: Status, error: &str) -> std::io::Result<()> {
    let path = dir.join("manifest.json");
    let text = fs_err::read_to_string(&path)?;
    let mut manifest: Value = serde_json::from_str(&text).map_err(std::io::Error::other)?;
    if let Value::Object(fields) = &mut manifest {
        fields.insert("status".to_owned(), serde_json::to_value(status).map_err(std::io::Error::other)?);
        fields.insert("error".to_owned(), Value::String(error.to_owned()));
        fields.insert("finished_at".to_owned(), Value::String(now()));
    }
    let mut text = serde_json::to_string_pretty(&manifest).map_err(std::io::Error::other)?;
    text.push('\n');
    crate::atomic::write(&path, text.as_bytes())
}

/// Now, in UTC, as RFC 3339 with milliseconds.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
