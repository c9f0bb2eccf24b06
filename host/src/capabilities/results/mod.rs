//! The `results` capability: everything a run leaves behind besides its manifest and log.
//!
//! Tables of rows become zstd Parquet files (`<run dir>/<table>.parquet`), written in row groups
//! as rows arrive and readable in parts while the run lives (see [`table`]); JSON, JSONL, Markdown and text files are written atomically; declared checks
//! decide the exit code. Everything stays inside the run directory, except the files a script
//! writes into an export folder it opened (`results::export_folder`), each listed in the manifest.

mod flush;
mod read;
pub mod rhai;
mod schema;
mod table;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use serde::Serialize;
use serde_json::Value;

pub use flush::Flusher;
pub use read::{concatenate, read_rows, same_rows, table_files};
pub use schema::*;
pub use table::*;

use crate::capabilities::fs::{FilesError, WritePolicy};

/// Files the host writes itself, which scripts may not overwrite.
pub const RESERVED_FILES: [&str; 2] = ["manifest.json", "run.log"];

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error(transparent)]
    Table(#[from] TableError),
    #[error(transparent)]
    Files(#[from] FilesError),
    #[error(
        "table `{table}` was already declared or has rows; hint: call `results::declare` before the first `results::append`"
    )]
    AlreadyDeclared { table: String },
    #[error("`{path}` is written by the host itself; hint: choose another file name")]
    Reserved { path: String },
    #[error("cannot write `{path}`")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "table `{table}` was read back and takes no more rows; hint: write every row of a table before its first `results::rows`"
    )]
    ReadBack { table: String },
    #[error(
        "table `{table}` holds the rows of the runs being reported (`host merge`, `host report`): the report phase may read it but not write it; hint: run the work phases only when `!run::reporting()`"
    )]
    FromShards { table: String },
    #[error("no table `{table}` in this run{}", known_tables(.known))]
    UnknownTable { table: String, known: Vec<String> },
    #[error("cannot encode `{path}` as JSON")]
    Encode {
        path: String,
        #[source]
        source: serde_json::Error,
    },
}

fn known_tables(known: &[String]) -> String {
    if known.is_empty() { "; it has none yet".to_owned() } else { format!("; it has {}", known.join(", ")) }
}

/// What a script writes as a whole file.
#[derive(Debug, Clone)]
pub enum FileContent {
    /// Pretty-printed JSON.
    Json(Value),
    /// One compact JSON value per line.
    Jsonl(Vec<Value>),
    /// Text as given (Markdown, CSV, ...).
    Text(String),
    /// Bytes as given (a corpus file).
    Bytes(Vec<u8>),
}

/// A check the script declared; any failed check makes the run exit with code 1.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Check {
    pub name: String,
    pub passed: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// Where a run's outputs go. Object safe; shared by scripts and guests.
pub trait Results: Send + Sync {
    /// Fixes a table's columns before its first row (see [`parse_declaration`]).
    fn declare(&self, table: &str, columns: &Value) -> Result<(), ResultsError>;
    /// Appends one row (a JSON object) to a table, creating the table on first use.
    fn append(&self, table: &str, row: Value) -> Result<(), ResultsError>;
    /// Writes a whole file at `path`, atomically: relative to the run directory, or absolute
    /// inside the run directory or an export folder.
    fn write_file(&self, path: &str, content: FileContent) -> Result<(), ResultsError>;
    /// Opens `folder` (absolute; the caller checked the user granted it) for this run's files,
    /// creating it; returns its canonical path.
    fn export(&self, folder: &Path) -> Result<PathBuf, ResultsError>;
    /// Records a named check.
    fn check(&self, name: &str, passed: bool, detail: &str);
    /// Records the settings a part of the experiment ran with, under `name`, for the manifest;
    /// recording the same name again replaces the earlier value.
    fn settings(&self, name: &str, value: Value);
    /// Every row of a table, read back from its file; the table takes no more rows. The first
    /// call starts the run's report phase: tables and files first written from then on are the
    /// report's, which `host merge` recomputes rather than joins.
    fn rows(&self, table: &str) -> Result<Vec<Value>, ResultsError>;
}

/// [`Results`] into a run directory on disk.
#[derive(Debug)]
pub struct RunResults {
    run_id: String,
    dir: PathBuf,
    policy: RwLock<WritePolicy>,
    tables: Mutex<Tables>,
    files: Mutex<Files>,
    checks: Mutex<Vec<Check>>,
    settings: Mutex<BTreeMap<String, Value>>,
}

#[derive(Debug, Default)]
struct Tables {
    open: BTreeMap<String, TableWriter>,
    /// Finished before the end of the run: read back, or taken from the shards of a merge.
    closed: BTreeMap<String, Closed>,
    /// In a merge, each shard table not taken yet: each shard's files (its parts, or its one
    /// file), in shard order.
    shards: BTreeMap<String, Vec<Vec<PathBuf>>>,
    /// Set by the first [`Results::rows`]: what is created from then on is the report's.
    reporting: bool,
    report: BTreeSet<String>,
    /// Why a flush between rows failed (the table takes no more rows), for [`RunResults::finish`].
    flush_errors: Vec<String>,
}

#[derive(Debug)]
struct Closed {
    summary: TableSummary,
    from_shards: bool,
}

#[derive(Debug, Default)]
struct Files {
    written: Vec<String>,
    report: Vec<String>,
    /// Files written into export folders, by folder.
    exported: BTreeMap<PathBuf, Vec<String>>,
}

/// An export folder and the files the run wrote into it (relative to it), for the manifest.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ExportRecord {
    pub folder: String,
    pub files: Vec<String>,
}

/// What [`RunResults::finish`] reports for the manifest.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub tables: Vec<TableSummary>,
    pub files: Vec<String>,
    pub checks: Vec<Check>,
    /// The settings the script recorded, by name.
    pub settings: BTreeMap<String, Value>,
    /// Tables that could not be finished, with the reason.
    pub errors: Vec<String>,
    /// The tables and files the report phase created (see [`Results::rows`]).
    pub report_tables: Vec<String>,
    pub report_files: Vec<String>,
    /// The export folders the run opened, with what it wrote there.
    pub exports: Vec<ExportRecord>,
}

impl RunResults {
    pub fn new(dir: &Path, run_id: &str) -> Result<Self, ResultsError> {
        let policy = WritePolicy::new(dir)?;
        Ok(RunResults {
            run_id: run_id.to_string(),
            dir: policy.root().to_path_buf(),
            policy: RwLock::new(policy),
            tables: Mutex::new(Tables::default()),
            files: Mutex::new(Files::default()),
            checks: Mutex::new(Vec::new()),
            settings: Mutex::new(BTreeMap::new()),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Rows appended so far, per table open for rows.
    pub fn row_counts(&self) -> BTreeMap<String, u64> {
        self.with_tables(|tables| tables.open.iter().map(|(name, table)| (name.clone(), table.rows())).collect())
    }

    /// Makes readable the rows of every table that has held rows unreadable for
    /// [`FLUSH_INTERVAL`] (see [`TableWriter::flush`]); with `all`, of every table. A table that
    /// cannot be flushed is reported by [`Self::finish`].
    pub fn flush(&self, all: bool) {
        let now = std::time::Instant::now();
        self.with_tables(|tables| {
            let open = tables.open.values_mut();
            for table in open.filter(|table| all || table.flush_due(now)) {
                if let Err(error) = table.flush() {
                    let message = format!("table `{}`: {}", table.name(), crate::capabilities::error_chain(&error));
                    tables.flush_errors.push(message);
                }
            }
        });
    }

    /// For `host merge`: the tables of the shards, each with its files in shard order. A table
    /// is taken into this run when first read, or at the end: once if every shard holds the same
    /// rows (a table each wrote in full), else joined in shard order.
    pub fn adopt_shards(&self, shards: BTreeMap<String, Vec<Vec<PathBuf>>>) {
        self.with_tables(|tables| tables.shards = shards);
    }

    /// Closes every table (also after a script error, so no accepted row is lost) and reports
    /// what the run produced. Safe to call once; later calls find nothing left to close.
    pub fn finish(&self) -> Outputs {
        let mut outputs = Outputs::default();
        let (closed, report) = self.with_tables(|tables| {
            for name in tables.shards.keys().cloned().collect::<Vec<_>>() {
                if let Err(error) = take_from_shards(tables, self.dir(), &name) {
                    outputs.errors.push(format!("table `{name}`: {}", crate::capabilities::error_chain(&error)));
                }
            }
            outputs.errors.append(&mut tables.flush_errors);
            for (name, table) in std::mem::take(&mut tables.open) {
                match table.finish() {
                    Ok(summary) => {
                        tables.closed.insert(name, Closed { summary, from_shards: false });
                    }
                    Err(error) => {
                        outputs.errors.push(format!("table `{name}`: {}", crate::capabilities::error_chain(&error)))
                    }
                }
            }
            (std::mem::take(&mut tables.closed), tables.report.iter().cloned().collect())
        });
        outputs.tables = closed.into_values().map(|closed| closed.summary).collect();
        outputs.report_tables = report;
        if let Ok(files) = self.files.lock() {
            outputs.files = files.written.clone();
            outputs.report_files = files.report.clone();
            outputs.exports = files
                .exported
                .iter()
                .map(|(folder, written)| ExportRecord { folder: folder.display().to_string(), files: written.clone() })
                .collect();
        }
        outputs.checks = self.checks.lock().map(|checks| checks.clone()).unwrap_or_default();
        outputs.settings = self.settings.lock().map(|settings| settings.clone()).unwrap_or_default();
        outputs
    }

    fn with_tables<T>(&self, work: impl FnOnce(&mut Tables) -> T) -> T {
        match self.tables.lock() {
            Ok(mut tables) => work(&mut tables),
            Err(poisoned) => work(&mut poisoned.into_inner()),
        }
    }

    /// The writer of `table`, created (with `declared` columns, if any) when new. A table read
    /// back or taken from the shards takes no more rows; a table created in the report phase is
    /// the report's.
    fn writer<'a>(
        &self,
        tables: &'a mut Tables,
        table: &str,
        declared: Option<Columns>,
    ) -> Result<&'a mut TableWriter, ResultsError> {
        if let Some(closed) = tables.closed.get(table) {
            return Err(if closed.from_shards {
                ResultsError::FromShards { table: table.to_string() }
            } else {
                ResultsError::ReadBack { table: table.to_string() }
            });
        }
        if tables.shards.contains_key(table) {
            return Err(ResultsError::FromShards { table: table.to_string() });
        }
        let exists = tables.open.contains_key(table);
        if exists && declared.is_some() {
            return Err(ResultsError::AlreadyDeclared { table: table.to_string() });
        }
        if !exists {
            let writer = TableWriter::new(self.dir(), table, &self.run_id, declared)?;
            if tables.reporting {
                tables.report.insert(table.to_string());
            }
            tables.open.insert(table.to_string(), writer);
        }
        tables.open.get_mut(table).ok_or_else(|| ResultsError::UnknownTable { table: table.to_string(), known: vec![] })
    }
}

impl RunResults {
    /// The export folder `target` was written into (the innermost), and its path inside it.
    fn export_folder_of(&self, target: &Path) -> Option<(PathBuf, String)> {
        let policy = self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let folder =
            policy.exports().iter().filter(|folder| target.starts_with(folder)).max_by_key(|f| f.as_os_str().len())?;
        let relative = target.strip_prefix(folder).ok()?.display().to_string();
        Some((folder.clone(), relative))
    }
}

/// Takes a shard table into the run directory (see [`RunResults::adopt_shards`]).
fn take_from_shards(tables: &mut Tables, dir: &Path, table: &str) -> Result<(), TableError> {
    let Some(shards) = tables.shards.remove(table) else { return Ok(()) };
    let sources =
        if same_rows(table, &shards)? { shards.first().cloned().unwrap_or_default() } else { shards.concat() };
    let summary = concatenate(table, &sources, dir)?;
    tables.closed.insert(table.to_string(), Closed { summary, from_shards: true });
    Ok(())
}

impl Results for RunResults {
    fn declare(&self, table: &str, columns: &Value) -> Result<(), ResultsError> {
        let columns = parse_declaration(table, columns)?;
        self.with_tables(|tables| self.writer(tables, table, Some(columns)).map(|_| ()))
    }

    fn append(&self, table: &str, row: Value) -> Result<(), ResultsError> {
        self.with_tables(|tables| Ok(self.writer(tables, table, None)?.append(row)?))
    }

    fn rows(&self, table: &str) -> Result<Vec<Value>, ResultsError> {
        let path = self.with_tables(|tables| {
            tables.reporting = true;
            if let Some(writer) = tables.open.remove(table) {
                let summary = writer.finish()?;
                tables.closed.insert(table.to_string(), Closed { summary, from_shards: false });
            }
            take_from_shards(tables, self.dir(), table)?;
            match tables.closed.get(table) {
                Some(closed) => Ok(closed.summary.path.clone()),
                None => Err(ResultsError::UnknownTable {
                    table: table.to_string(),
                    known: tables.closed.keys().chain(tables.open.keys()).cloned().collect(),
                }),
            }
        })?;
        Ok(read_rows(table, &path)?)
    }

    fn write_file(&self, path: &str, content: FileContent) -> Result<(), ResultsError> {
        let target: PathBuf = self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner).resolve(path)?;
        if RESERVED_FILES.iter().any(|reserved| target == self.dir.join(reserved)) {
            return Err(ResultsError::Reserved { path: path.to_string() });
        }
        let encode = |source| ResultsError::Encode { path: path.to_string(), source };
        let bytes = match content {
            FileContent::Json(value) => {
                let mut text = serde_json::to_string_pretty(&value).map_err(encode)?;
                text.push('\n');
                text.into_bytes()
            }
            FileContent::Jsonl(values) => {
                let mut text = String::new();
                for value in values {
                    text.push_str(&serde_json::to_string(&value).map_err(encode)?);
                    text.push('\n');
                }
                text.into_bytes()
            }
            FileContent::Text(text) => text.into_bytes(),
            FileContent::Bytes(bytes) => bytes,
        };
        crate::atomic::write(&target, &bytes)
            .map_err(|source| ResultsError::Write { path: path.to_string(), source })?;
        let reporting = self.with_tables(|tables| tables.reporting);
        let exported = match target.strip_prefix(&self.dir) {
            Ok(_) => None,
            Err(_) => self.export_folder_of(&target),
        };
        let Ok(mut files) = self.files.lock() else { return Ok(()) };
        match exported {
            Some((folder, relative)) => {
                let written = files.exported.entry(folder).or_default();
                if !written.contains(&relative) {
                    written.push(relative);
                }
            }
            None => {
                let relative =
                    target.strip_prefix(&self.dir).map_or(path.to_string(), |inside| inside.display().to_string());
                if !files.written.contains(&relative) {
                    files.written.push(relative.clone());
                    if reporting {
                        files.report.push(relative);
                    }
                }
            }
        }
        Ok(())
    }

    fn export(&self, folder: &Path) -> Result<PathBuf, ResultsError> {
        let folder = self.policy.write().unwrap_or_else(std::sync::PoisonError::into_inner).add_export(folder)?;
        if let Ok(mut files) = self.files.lock() {
            files.exported.entry(folder.clone()).or_default();
        }
        Ok(folder)
    }

    fn check(&self, name: &str, passed: bool, detail: &str) {
        if let Ok(mut checks) = self.checks.lock() {
            checks.push(Check { name: name.to_string(), passed, detail: detail.to_string() });
        }
    }

    fn settings(&self, name: &str, value: Value) {
        if let Ok(mut settings) = self.settings.lock() {
            settings.insert(name.to_string(), value);
        }
    }
}

/// `results::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability::script("results", |capabilities| {
    rhai::module(capabilities.results.clone(), capabilities.files.clone())
});

#[cfg(test)]
#[path = "rows_tests.rs"]
mod rows_tests;
