//! The `results` capability: everything a run leaves behind besides its manifest and log.
//!
//! Tables of rows become zstd Parquet files (`<run dir>/<table>.parquet`), written in row groups
//! as rows arrive; JSON, JSONL, Markdown and text files are written atomically; declared checks
//! decide the exit code. Everything stays inside the run directory.

pub mod rhai;
mod schema;
mod table;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use serde_json::Value;

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
    #[error("cannot encode `{path}` as JSON")]
    Encode {
        path: String,
        #[source]
        source: serde_json::Error,
    },
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
    /// Writes a whole file at `path`, relative to the run directory, atomically.
    fn write_file(&self, path: &str, content: FileContent) -> Result<(), ResultsError>;
    /// Records a named check.
    fn check(&self, name: &str, passed: bool, detail: &str);
    /// Records the settings a part of the experiment ran with, under `name`, for the manifest;
    /// recording the same name again replaces the earlier value.
    fn settings(&self, name: &str, value: Value);
}

/// [`Results`] into a run directory on disk.
#[derive(Debug)]
pub struct RunResults {
    run_id: String,
    policy: WritePolicy,
    tables: Mutex<BTreeMap<String, TableWriter>>,
    files: Mutex<Vec<String>>,
    checks: Mutex<Vec<Check>>,
    settings: Mutex<BTreeMap<String, Value>>,
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
}

impl RunResults {
    pub fn new(dir: &Path, run_id: &str) -> Result<Self, ResultsError> {
        Ok(RunResults {
            run_id: run_id.to_string(),
            policy: WritePolicy::new(dir)?,
            tables: Mutex::new(BTreeMap::new()),
            files: Mutex::new(Vec::new()),
            checks: Mutex::new(Vec::new()),
            settings: Mutex::new(BTreeMap::new()),
        })
    }

    pub fn dir(&self) -> &Path {
        self.policy.root()
    }

    /// Rows appended so far, per table.
    pub fn row_counts(&self) -> BTreeMap<String, u64> {
        let tables =
            self.tables.lock().map(|tables| tables.iter().map(|(name, table)| (name.clone(), table.rows())).collect());
        tables.unwrap_or_default()
    }

    /// Closes every table (also after a script error, so no accepted row is lost) and reports
    /// what the run produced. Safe to call once; later calls find nothing left to close.
    pub fn finish(&self) -> Outputs {
        let tables = self.tables.lock().map(|mut tables| std::mem::take(&mut *tables)).unwrap_or_default();
        let mut outputs = Outputs::default();
        for (name, table) in tables {
            match table.finish() {
                Ok(summary) => outputs.tables.push(summary),
                Err(error) => {
                    outputs.errors.push(format!("table `{name}`: {}", crate::capabilities::error_chain(&error)))
                }
            }
        }
        outputs.files = self.files.lock().map(|files| files.clone()).unwrap_or_default();
        outputs.checks = self.checks.lock().map(|checks| checks.clone()).unwrap_or_default();
        outputs.settings = self.settings.lock().map(|settings| settings.clone()).unwrap_or_default();
        outputs
    }

    fn with_tables<T>(&self, work: impl FnOnce(&mut BTreeMap<String, TableWriter>) -> T) -> T {
        match self.tables.lock() {
            Ok(mut tables) => work(&mut tables),
            Err(poisoned) => work(&mut poisoned.into_inner()),
        }
    }
}

impl Results for RunResults {
    fn declare(&self, table: &str, columns: &Value) -> Result<(), ResultsError> {
        let columns = parse_declaration(table, columns)?;
        self.with_tables(|tables| {
            if tables.contains_key(table) {
                return Err(ResultsError::AlreadyDeclared { table: table.to_string() });
            }
            let writer = TableWriter::new(self.dir(), table, &self.run_id, Some(columns))?;
            tables.insert(table.to_string(), writer);
            Ok(())
        })
    }

    fn append(&self, table: &str, row: Value) -> Result<(), ResultsError> {
        self.with_tables(|tables| {
            if !tables.contains_key(table) {
                let writer = TableWriter::new(self.dir(), table, &self.run_id, None)?;
                tables.insert(table.to_string(), writer);
            }
            match tables.get_mut(table) {
                Some(writer) => Ok(writer.append(row)?),
                None => Ok(()),
            }
        })
    }

    fn write_file(&self, path: &str, content: FileContent) -> Result<(), ResultsError> {
        if RESERVED_FILES.contains(&path) {
            return Err(ResultsError::Reserved { path: path.to_string() });
        }
        let target: PathBuf = self.policy.resolve(path)?;
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
        if let Ok(mut files) = self.files.lock()
            && !files.iter().any(|known| known == path)
        {
            files.push(path.to_string());
        }
        Ok(())
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
