//! Writes one results table to a Parquet file as a script appends rows: checks each row against
//! the columns (declared, or fixed by the first batch), writes it in batches, and publishes the
//! file under its final name only when finished. It must not hold more than a batch of rows and
//! a row group in memory, and must never leave a half-written file under the final name.
//!
//! So that a run killed midway still leaves its rows, the rows reach the disk as the run goes:
//! the file being written is closed as a readable part (`<table>.part-00001.parquet`, …) once it
//! holds [`PART_ROWS`] rows or its oldest row is [`FLUSH_INTERVAL`] old. A table that never
//! needed a part is renamed into place as before; one that did is joined from its parts into
//! `<table>.parquet` at the end, and the parts are removed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::json::ReaderBuilder;
use arrow::json::reader::Decoder;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use serde_json::Value;

use super::schema::{self, Columns, FixedColumns, Inference, MAX_DEPTH, RUN_ID_COLUMN, Site};

/// Rows buffered before they are written; without a declaration, the first batch fixes the
/// columns, so this is also how many rows inference sees.
pub const BATCH_ROWS: usize = 1024;

/// Rows per Parquet row group: bounds the writer's memory and stays within what DuckDB reads in
/// parallel comfortably.
pub const ROW_GROUP_ROWS: usize = 65_536;

/// Rows a part holds at most before it is closed and readable: one row group.
pub const PART_ROWS: u64 = ROW_GROUP_ROWS as u64;

/// The longest a row waits, buffered, before it is in a readable part: what a killed run loses
/// at most (besides the rows of the last interval).
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(5);

/// Table names become file names, so they are kept short and free of path syntax.
const MAX_NAME_LEN: usize = 64;

/// Why a table could not be declared, appended to or written. Each variant names the table and,
/// where one is at fault, the column path (`meta.tags[]`) and the 1-based row.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("invalid table name `{name}`; hint: use 1 to 64 ASCII letters, digits, `_` or `-`")]
    InvalidName { name: String },
    #[error(
        "declaration of table `{table}`{} is not a map of column names to types, found `{found}`; hint: write for example {{\"score\": \"float\", \"tags\": \"list<string>\"}}",
        in_column(.column)
    )]
    DeclarationShape { table: String, column: Option<String>, found: String },
    #[error(
        "unknown type `{declared}` for column `{column}` in table `{table}`; hint: use int, float, bool, string, list<T> or a map of fields"
    )]
    UnknownType { table: String, column: String, declared: String },
    #[error("column `{column}` is declared twice in table `{table}`")]
    DuplicateColumn { table: String, column: String },
    #[error("column `{column}` of table `{table}` is an empty struct; hint: declare at least one field")]
    EmptyStructDeclared { table: String, column: String },
    #[error("column `run_id` is reserved in table `{table}`{}; hint: the host fills it with the run id", at_row(.row))]
    ReservedColumn { table: String, row: Option<u64> },
    #[error("row {row} of table `{table}` is not an object, found {found}")]
    NotAnObject { table: String, row: u64, found: &'static str },
    #[error("type conflict in table `{table}`, column `{column}`, row {row}: expected {expected}, found {found}")]
    TypeConflict { table: String, column: String, row: u64, expected: String, found: &'static str },
    #[error("unknown column `{column}` in table `{table}`, row {row}; hint: {}", unknown_column_hint(*.declared))]
    UnknownColumn { table: String, column: String, row: u64, declared: bool },
    #[error(
        "integer out of range in table `{table}`, column `{column}`, row {row}: {value} does not fit in a 64-bit signed int"
    )]
    IntegerOutOfRange { table: String, column: String, row: u64, value: u64 },
    #[error(
        "empty object in table `{table}`, column `{column}`, row {row}: its fields are not known yet; hint: give the object a field, or declare the column with `results::declare`"
    )]
    EmptyObject { table: String, column: String, row: u64 },
    #[error(
        "nesting too deep in table `{table}`, column `{column}`{}; hint: use at most {MAX_DEPTH} levels of lists and structs",
        at_row(.row)
    )]
    TooDeep { table: String, column: String, row: Option<u64> },
    #[error("cannot write table `{table}`")]
    Io {
        table: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot convert rows of table `{table}` to Arrow")]
    Arrow {
        table: String,
        #[source]
        source: ArrowError,
    },
    #[error("cannot write table `{table}` as Parquet")]
    Parquet {
        table: String,
        #[source]
        source: ParquetError,
    },
    #[error("table `{table}` takes no more rows after an earlier write error")]
    Broken { table: String },
    #[error("table `{table}` has other columns in `{second}` than in `{first}`; hint: merge runs of the same script")]
    ColumnsDiffer { table: String, first: String, second: String },
    #[error("table `{table}`, column `{column}` has the type {found}, which results tables never hold")]
    UnreadableType { table: String, column: String, found: String },
}

fn at_row(row: &Option<u64>) -> String {
    row.map(|row| format!(", row {row}")).unwrap_or_default()
}

fn in_column(column: &Option<String>) -> String {
    column.as_ref().map(|column| format!(", column `{column}`,")).unwrap_or_default()
}

fn unknown_column_hint(declared: bool) -> &'static str {
    if declared {
        "add it to the declaration"
    } else {
        "the first 1024 rows fix the columns; declare them with `results::declare` to add more later"
    }
}

/// What [`TableWriter::finish`] produced.
#[derive(Debug, Clone)]
pub struct TableSummary {
    pub name: String,
    pub path: PathBuf,
    pub rows: u64,
    /// Every column in the file, `run_id` first, with its [`schema::ColumnType::describe`] name.
    pub columns: Vec<(String, String)>,
}

/// Appends rows to one table; see the module documentation.
pub struct TableWriter {
    name: String,
    run_id: String,
    dir: PathBuf,
    partial_path: PathBuf,
    final_path: PathBuf,
    /// The file being written, `.<name>.parquet.partial`; `None` between a closed part and the
    /// next row.
    current: Option<Current>,
    /// The columns the rows so far imply; only used while `sink` is `None`.
    inference: Inference,
    /// Present once the columns are fixed, by a declaration or by the first batch.
    sink: Option<Sink>,
    pending: Vec<Value>,
    rows: u64,
    /// Closed, readable parts, in order.
    parts: Vec<PathBuf>,
    /// When the oldest row not yet in a closed part was accepted.
    unflushed_since: Option<Instant>,
    /// Set when a write failed part way, after which the file may lack rows already accepted.
    broken: bool,
}

/// The part being written: its file (kept so that `finish` can fsync; the Parquet writer writes
/// through a clone of it) and, once it has rows, its Parquet writer.
struct Current {
    file: fs_err::File,
    writer: Option<ArrowWriter<fs_err::File>>,
    rows: u64,
}

impl TableWriter {
    /// Creates `<dir>/.<name>.parquet.partial` now, so that a bad directory fails the first call;
    /// [`Self::finish`] renames it to `<dir>/<name>.parquet`.
    pub fn new(dir: &Path, name: &str, run_id: &str, declared: Option<Columns>) -> Result<Self, TableError> {
        validate_name(name)?;
        if let Some(columns) = &declared {
            schema::validate_columns(name, columns)?;
        }
        let partial_path = dir.join(format!(".{name}.parquet.partial"));
        let file = fs_err::File::create(&partial_path).map_err(io_error(name))?;
        let sink = declared.map(|columns| Sink::new(columns, true, name)).transpose()?;
        Ok(Self {
            name: name.to_owned(),
            run_id: run_id.to_owned(),
            dir: dir.to_path_buf(),
            final_path: dir.join(format!("{name}.parquet")),
            partial_path,
            current: Some(Current { file, writer: None, rows: 0 }),
            inference: Inference::default(),
            sink,
            pending: Vec::with_capacity(BATCH_ROWS),
            rows: 0,
            parts: Vec::new(),
            unflushed_since: None,
            broken: false,
        })
    }

    /// `row` must be a JSON object. Rows are numbered from 1 within the table, for error
    /// messages; a rejected row is not kept and does not take a number.
    pub fn append(&mut self, row: Value) -> Result<(), TableError> {
        if self.broken {
            return Err(TableError::Broken { table: self.name.clone() });
        }
        let site = Site { table: &self.name, row: self.rows + 1 };
        let Value::Object(object) = &row else {
            let found = schema::value_kind(&row);
            return Err(TableError::NotAnObject { table: self.name.clone(), row: site.row, found });
        };
        if object.contains_key(RUN_ID_COLUMN) {
            return Err(TableError::ReservedColumn { table: self.name.clone(), row: Some(site.row) });
        }
        match &self.sink {
            Some(sink) => sink.columns.check(object, site)?,
            None => self.inference.absorb(object, site)?,
        }
        self.pending.push(row);
        self.rows += 1;
        let now = Instant::now();
        let since = *self.unflushed_since.get_or_insert(now);
        if self.pending.len() >= BATCH_ROWS {
            self.write_pending()?;
        }
        let part_full = self.current.as_ref().is_some_and(|current| current.rows >= PART_ROWS);
        if part_full || now.duration_since(since) >= FLUSH_INTERVAL {
            self.flush()?;
        }
        Ok(())
    }

    /// Rows accepted so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether rows accepted [`FLUSH_INTERVAL`] ago or earlier are not yet readable.
    pub fn flush_due(&self, now: Instant) -> bool {
        self.unflushed_since.is_some_and(|since| now.duration_since(since) >= FLUSH_INTERVAL)
    }

    /// Makes every row accepted so far readable: writes what is buffered and closes the file
    /// being written as the next part. Before the columns are fixed, the part has the columns
    /// its rows imply; [`Self::finish`] gives the whole table the columns fixed in the end.
    pub fn flush(&mut self) -> Result<(), TableError> {
        if self.broken {
            return Err(TableError::Broken { table: self.name.clone() });
        }
        if self.unflushed_since.is_none() {
            return Ok(());
        }
        if self.sink.is_none() && !self.pending.is_empty() {
            let mut provisional = Sink::new(self.inference.columns(), false, &self.name)?;
            let pending = std::mem::take(&mut self.pending);
            let written = self.write_with(&mut provisional, &pending);
            self.pending = pending;
            written?;
            self.pending.clear();
        } else {
            self.write_pending()?;
        }
        self.close_part()?;
        self.unflushed_since = None;
        Ok(())
    }

    /// Writes what is buffered, closes the Parquet file, fsyncs it and renames it into place;
    /// a table written in parts is joined from them and its parts removed.
    pub fn finish(mut self) -> Result<TableSummary, TableError> {
        if self.broken {
            return Err(TableError::Broken { table: self.name.clone() });
        }
        if !self.parts.is_empty() {
            return self.join_parts();
        }
        let table = self.name.clone();
        self.write_pending()?;
        let mut current = self.current.take().ok_or_else(|| TableError::Broken { table: table.clone() })?;
        let writer = match current.writer.take() {
            Some(writer) => writer,
            None => self.open_writer(&current)?,
        };
        writer.close().map_err(parquet_error(&table))?;
        current.file.sync_all().map_err(io_error(&table))?;
        // Close the handle first: some platforms refuse to rename an open file.
        drop(current);
        fs_err::rename(&self.partial_path, &self.final_path).map_err(io_error(&table))?;
        sync_directory(&self.final_path).map_err(io_error(&table))?;
        Ok(self.summary())
    }

    fn summary(self) -> TableSummary {
        let mut columns = vec![(RUN_ID_COLUMN.to_owned(), "string".to_owned())];
        let fixed = match &self.sink {
            Some(sink) => sink.columns.columns().clone(),
            None => self.inference.columns(),
        };
        columns.extend(fixed.iter().map(|(name, ty)| (name.clone(), ty.describe())));
        TableSummary { name: self.name, path: self.final_path, rows: self.rows, columns }
    }

    /// [`Self::finish`] for a table written in parts: their rows, read back, written again with
    /// the columns fixed in the end (a part closed before they were fixed may have fewer).
    fn join_parts(mut self) -> Result<TableSummary, TableError> {
        let table = self.name.clone();
        self.flush()?;
        if self.sink.is_none() {
            self.sink = Some(Sink::new(self.inference.columns(), false, &table)?);
        }
        let file = fs_err::File::create(&self.partial_path).map_err(io_error(&table))?;
        let current = Current { file, writer: None, rows: 0 };
        let mut writer = self.open_writer(&current)?;
        for part in &self.parts {
            let rows = super::read::read_rows(&table, part)?;
            for chunk in rows.chunks(BATCH_ROWS) {
                if let Some(sink) = self.sink.as_mut()
                    && let Some(batch) = sink.encode(chunk, &self.run_id, &table)?
                {
                    writer.write(&batch).map_err(parquet_error(&table))?;
                }
            }
        }
        writer.close().map_err(parquet_error(&table))?;
        current.file.sync_all().map_err(io_error(&table))?;
        drop(current);
        fs_err::rename(&self.partial_path, &self.final_path).map_err(io_error(&table))?;
        // Only once the whole table is in place, so that a reader never misses a row; a crash
        // between the two leaves the parts beside it, which readers of a run ignore then.
        for part in std::mem::take(&mut self.parts) {
            fs_err::remove_file(&part).map_err(io_error(&table))?;
        }
        sync_directory(&self.final_path).map_err(io_error(&table))?;
        Ok(self.summary())
    }

    /// Writes the buffered rows, fixing the columns first if nothing did yet. Any failure marks
    /// the writer broken.
    fn write_pending(&mut self) -> Result<(), TableError> {
        if self.sink.is_none() {
            match Sink::new(self.inference.columns(), false, &self.name) {
                Ok(sink) => self.sink = Some(sink),
                Err(error) => {
                    self.broken = true;
                    return Err(error);
                }
            }
        }
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut sink = self.sink.take();
        let pending = std::mem::take(&mut self.pending);
        let written = match sink.as_mut() {
            Some(sink) => self.write_with(sink, &pending),
            None => Ok(()),
        };
        self.sink = sink;
        self.pending = pending;
        written?;
        self.pending.clear();
        Ok(())
    }

    /// Encodes `rows` with `sink` into the file being written, opening one if the last was closed.
    fn write_with(&mut self, sink: &mut Sink, rows: &[Value]) -> Result<(), TableError> {
        let result = self.try_write_with(sink, rows);
        if result.is_err() {
            self.broken = true;
        }
        result
    }

    fn try_write_with(&mut self, sink: &mut Sink, rows: &[Value]) -> Result<(), TableError> {
        let Some(batch) = sink.encode(rows, &self.run_id, &self.name)? else { return Ok(()) };
        if self.current.is_none() {
            let file = fs_err::File::create(&self.partial_path).map_err(io_error(&self.name))?;
            self.current = Some(Current { file, writer: None, rows: 0 });
        }
        let table = self.name.clone();
        let current = self.current.as_mut().ok_or_else(|| TableError::Broken { table: table.clone() })?;
        if current.writer.is_none() {
            let file = current.file.try_clone().map_err(io_error(&table))?;
            let writer =
                ArrowWriter::try_new(file, batch.schema(), Some(writer_properties())).map_err(parquet_error(&table))?;
            current.writer = Some(writer);
        }
        if let Some(writer) = current.writer.as_mut() {
            writer.write(&batch).map_err(parquet_error(&table))?;
        }
        current.rows += batch.num_rows() as u64;
        Ok(())
    }

    /// A Parquet writer over `current`'s file with the fixed columns' schema.
    fn open_writer(&self, current: &Current) -> Result<ArrowWriter<fs_err::File>, TableError> {
        let table = &self.name;
        let schema = match &self.sink {
            Some(sink) => Arc::clone(&sink.schema),
            None => Sink::new(self.inference.columns(), false, table)?.schema,
        };
        let file = current.file.try_clone().map_err(io_error(table))?;
        ArrowWriter::try_new(file, schema, Some(writer_properties())).map_err(parquet_error(table))
    }

    /// Closes the file being written, if it has rows, as the next readable part.
    fn close_part(&mut self) -> Result<(), TableError> {
        let Some(current) = self.current.take_if(|current| current.writer.is_some()) else { return Ok(()) };
        let table = self.name.clone();
        let Current { file, writer, .. } = current;
        let closed = writer.map(|writer| writer.close().map(|_| ())).transpose().map_err(parquet_error(&table));
        drop(file);
        if let Err(error) = closed {
            self.broken = true;
            return Err(error);
        }
        let part = self.dir.join(part_file_name(&table, self.parts.len() + 1));
        if let Err(error) = fs_err::rename(&self.partial_path, &part) {
            self.broken = true;
            return Err(io_error(&table)(error));
        }
        self.parts.push(part);
        Ok(())
    }
}

/// The file name of a table's `number`-th part (1-based): `<table>.part-00001.parquet`, so that
/// `<table>.*parquet` matches the table's parts and its final file and no other table's.
pub fn part_file_name(table: &str, number: usize) -> String {
    format!("{table}.part-{number:05}.parquet")
}

/// What a file in a run directory is to the tables: `Some((table, None))` for a table's final
/// file, `Some((table, Some(n)))` for its n-th part, `None` for anything else.
pub fn table_file_kind(file_name: &str) -> Option<(&str, Option<usize>)> {
    let stem = file_name.strip_suffix(".parquet")?;
    let (table, part) = match stem.split_once('.') {
        None => (stem, None),
        Some((table, rest)) => {
            let digits = rest.strip_prefix("part-")?;
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (table, Some(digits.parse().ok()?))
        }
    };
    validate_name(table).ok()?;
    Some((table, part))
}

// By hand, because the Parquet writer and decoder inside say nothing useful.
impl std::fmt::Debug for TableWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableWriter")
            .field("name", &self.name)
            .field("path", &self.partial_path)
            .field("rows", &self.rows)
            .field("columns", &self.sink.as_ref().map(|sink| sink.columns.columns()))
            .field("broken", &self.broken)
            .field("parts", &self.parts.len())
            .finish_non_exhaustive()
    }
}

fn validate_name(name: &str) -> Result<(), TableError> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if name.is_empty() || name.len() > MAX_NAME_LEN || !name.chars().all(allowed) {
        return Err(TableError::InvalidName { name: name.to_owned() });
    }
    Ok(())
}

/// Makes the rename itself durable; only Unix lets a directory be opened and synced.
fn sync_directory(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        fs_err::File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

fn io_error(table: &str) -> impl FnOnce(std::io::Error) -> TableError + '_ {
    move |source| TableError::Io { table: table.to_owned(), source }
}

fn parquet_error(table: &str) -> impl FnOnce(ParquetError) -> TableError + '_ {
    move |source| TableError::Parquet { table: table.to_owned(), source }
}

fn arrow_error(table: &str) -> impl FnOnce(ArrowError) -> TableError + '_ {
    move |source| TableError::Arrow { table: table.to_owned(), source }
}

/// How every table file is written: zstd, row groups of [`ROW_GROUP_ROWS`].
pub(super) fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build()
}

/// Turns checked JSON rows into record batches of fixed columns.
struct Sink {
    columns: FixedColumns,
    /// The file's schema: `run_id`, then the columns.
    schema: SchemaRef,
    /// Turns checked JSON rows into Arrow arrays; it also widens ints in float columns.
    decoder: Decoder,
}

impl Sink {
    fn new(columns: Columns, declared: bool, table: &str) -> Result<Self, TableError> {
        let fields = schema::arrow_fields(&columns);
        let decoder =
            ReaderBuilder::new(Arc::new(Schema::new(fields.clone()))).build_decoder().map_err(arrow_error(table))?;
        let run_id = Arc::new(Field::new(RUN_ID_COLUMN, DataType::Utf8, false));
        let schema = Arc::new(Schema::new(std::iter::once(run_id).chain(fields.iter().cloned()).collect::<Vec<_>>()));
        Ok(Self { columns: FixedColumns::new(columns, declared), schema, decoder })
    }

    /// Rows already checked against `columns`, as one batch; `None` for no rows.
    fn encode(&mut self, rows: &[Value], run_id: &str, table: &str) -> Result<Option<RecordBatch>, TableError> {
        if rows.is_empty() {
            return Ok(None);
        }
        self.decoder.serialize(rows).map_err(arrow_error(table))?;
        let Some(decoded) = self.decoder.flush().map_err(arrow_error(table))? else {
            return Ok(None);
        };
        // The decoder's row count, not the columns', since a table may have no columns but run_id.
        let run_ids = StringArray::from_iter_values(std::iter::repeat_n(run_id, decoded.num_rows()));
        let arrays: Vec<ArrayRef> =
            std::iter::once(Arc::new(run_ids) as ArrayRef).chain(decoded.columns().iter().cloned()).collect();
        RecordBatch::try_new(Arc::clone(&self.schema), arrays).map(Some).map_err(arrow_error(table))
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
