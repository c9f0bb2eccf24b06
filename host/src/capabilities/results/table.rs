//! Writes one results table to a Parquet file as a script appends rows: checks each row against
//! the columns (declared, or fixed by the first batch), writes it in batches, and publishes the
//! file under its final name only when finished. It must not hold more than a batch of rows and
//! a row group in memory, and must never leave a half-written file under the final name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    partial_path: PathBuf,
    final_path: PathBuf,
    /// Kept so that `finish` can fsync; the Parquet writer writes through a clone of it.
    file: fs_err::File,
    /// The columns the rows so far imply; only used while `sink` is `None`.
    inference: Inference,
    /// Present once the columns are fixed, by a declaration or by the first batch.
    sink: Option<Sink>,
    pending: Vec<Value>,
    rows: u64,
    /// Set when a write failed part way, after which the file may lack rows already accepted.
    broken: bool,
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
        let sink = declared.map(|columns| Sink::open(&file, columns, true, name)).transpose()?;
        Ok(Self {
            name: name.to_owned(),
            run_id: run_id.to_owned(),
            final_path: dir.join(format!("{name}.parquet")),
            partial_path,
            file,
            inference: Inference::default(),
            sink,
            pending: Vec::with_capacity(BATCH_ROWS),
            rows: 0,
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
        if self.pending.len() >= BATCH_ROWS {
            self.write_pending()?;
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

    /// Writes what is buffered, closes the Parquet file, fsyncs it and renames it into place.
    pub fn finish(mut self) -> Result<TableSummary, TableError> {
        if self.broken {
            return Err(TableError::Broken { table: self.name.clone() });
        }
        let table = self.name.clone();
        let sink = self.write_pending()?;
        sink.writer.finish().map_err(parquet_error(&table))?;
        let mut columns = vec![(RUN_ID_COLUMN.to_owned(), "string".to_owned())];
        columns.extend(sink.columns.columns().iter().map(|(name, ty)| (name.clone(), ty.describe())));

        self.file.sync_all().map_err(io_error(&self.name))?;
        let Self { name, partial_path, final_path, file, sink, rows, .. } = self;
        // Close both handles first: some platforms refuse to rename an open file.
        drop((file, sink));
        fs_err::rename(&partial_path, &final_path).map_err(io_error(&name))?;
        sync_directory(&final_path).map_err(io_error(&name))?;
        Ok(TableSummary { name, path: final_path, rows, columns })
    }

    /// Writes the buffered rows, fixing the columns first if nothing did yet, and returns the
    /// sink for `finish`. Any failure marks the writer broken.
    fn write_pending(&mut self) -> Result<&mut Sink, TableError> {
        let sink = match self.sink.take() {
            Some(sink) => self.sink.insert(sink),
            None => match Sink::open(&self.file, self.inference.columns(), false, &self.name) {
                Ok(sink) => self.sink.insert(sink),
                Err(error) => {
                    self.broken = true;
                    return Err(error);
                }
            },
        };
        if let Err(error) = sink.write(&self.pending, &self.run_id, &self.name) {
            self.broken = true;
            return Err(error);
        }
        self.pending.clear();
        Ok(sink)
    }
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

/// The open Parquet file of a table whose columns are fixed.
struct Sink {
    columns: FixedColumns,
    /// The file's schema: `run_id`, then the columns.
    schema: SchemaRef,
    /// Turns checked JSON rows into Arrow arrays; it also widens ints in float columns.
    decoder: Decoder,
    writer: ArrowWriter<fs_err::File>,
}

impl Sink {
    fn open(file: &fs_err::File, columns: Columns, declared: bool, table: &str) -> Result<Self, TableError> {
        let fields = schema::arrow_fields(&columns);
        let decoder =
            ReaderBuilder::new(Arc::new(Schema::new(fields.clone()))).build_decoder().map_err(arrow_error(table))?;
        let run_id = Arc::new(Field::new(RUN_ID_COLUMN, DataType::Utf8, false));
        let schema = Arc::new(Schema::new(std::iter::once(run_id).chain(fields.iter().cloned()).collect::<Vec<_>>()));
        let file = file.try_clone().map_err(io_error(table))?;
        let writer =
            ArrowWriter::try_new(file, Arc::clone(&schema), Some(writer_properties())).map_err(parquet_error(table))?;
        Ok(Self { columns: FixedColumns::new(columns, declared), schema, decoder, writer })
    }

    /// Writes rows already checked against `columns`.
    fn write(&mut self, rows: &[Value], run_id: &str, table: &str) -> Result<(), TableError> {
        if rows.is_empty() {
            return Ok(());
        }
        self.decoder.serialize(rows).map_err(arrow_error(table))?;
        let Some(decoded) = self.decoder.flush().map_err(arrow_error(table))? else {
            return Ok(());
        };
        // The decoder's row count, not the columns', since a table may have no columns but run_id.
        let run_ids = StringArray::from_iter_values(std::iter::repeat_n(run_id, decoded.num_rows()));
        let arrays: Vec<ArrayRef> =
            std::iter::once(Arc::new(run_ids) as ArrayRef).chain(decoded.columns().iter().cloned()).collect();
        let batch = RecordBatch::try_new(Arc::clone(&self.schema), arrays).map_err(arrow_error(table))?;
        self.writer.write(&batch).map_err(parquet_error(table))
    }
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
