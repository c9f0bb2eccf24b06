//! Reading tables back: a finished table's rows as JSON objects (for a script's report phase,
//! `results::rows`), and the tables of several runs joined into one (for `host merge`).
//!
//! Values come back with the types they were stored with: an `int` column gives integers and a
//! `float` column floats, so a report computed from rows read back is the same whether the rows
//! were written by this run or by the shards of a merged one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, new_null_array};
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Map, Value};

use super::schema::{ColumnType, RUN_ID_COLUMN};
use super::table::{TableError, TableSummary, table_file_kind, writer_properties};

/// The tables in the run directory `dir`, each with the files that hold its rows, in order: its
/// `<table>.parquet` when it has one (a finished table), else its parts (the table of a run that
/// is still running or was killed). Parts left beside a final file by a crash are ignored.
pub fn table_files(dir: &Path) -> std::io::Result<BTreeMap<String, Vec<PathBuf>>> {
    let mut finals: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut parts: BTreeMap<String, Vec<(usize, PathBuf)>> = BTreeMap::new();
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some((table, part)) = name.to_str().and_then(table_file_kind) else { continue };
        match part {
            None => {
                finals.insert(table.to_owned(), entry.path());
            }
            Some(number) => parts.entry(table.to_owned()).or_default().push((number, entry.path())),
        }
    }
    let mut tables: BTreeMap<String, Vec<PathBuf>> =
        finals.into_iter().map(|(name, path)| (name, vec![path])).collect();
    for (table, mut numbered) in parts {
        if tables.contains_key(&table) {
            continue;
        }
        numbered.sort();
        tables.insert(table, numbered.into_iter().map(|(_, path)| path).collect());
    }
    Ok(tables)
}

/// Every row of the table file at `path`, without `run_id`, in file order.
pub fn read_rows(table: &str, path: &Path) -> Result<Vec<Value>, TableError> {
    let mut rows = Vec::new();
    for batch in batches(table, path)? {
        let schema = batch.schema();
        let columns: Vec<(usize, &str)> = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, field)| field.name() != RUN_ID_COLUMN)
            .map(|(index, field)| (index, field.name().as_str()))
            .collect();
        for row in 0..batch.num_rows() {
            let mut object = Map::with_capacity(columns.len());
            for &(index, name) in &columns {
                object.insert(name.to_owned(), value_at(table, name, batch.column(index).as_ref(), row)?);
            }
            rows.push(Value::Object(object));
        }
    }
    Ok(rows)
}

/// Writes the rows of `sources`, in order, as the table `<dir>/<table>.parquet`: each row keeps
/// the `run_id` of the run that wrote it. The files' columns are unified as one run's writer
/// would have fixed them from all the rows: a column one file lacks, or holds only nulls in, is
/// taken from the others (nulls there), and an int column meets a float one as float.
pub fn concatenate(table: &str, sources: &[PathBuf], dir: &Path) -> Result<TableSummary, TableError> {
    let mut parts = Vec::with_capacity(sources.len());
    for source in sources {
        let batches = batches(table, source)?;
        let schema = match batches.first() {
            Some(first) => first.schema(),
            None => file_schema(table, source)?,
        };
        parts.push(Part { source, schema, batches });
    }
    let schema = unified_schema(table, &parts)?;
    let final_path = dir.join(format!("{table}.parquet"));
    let partial_path = dir.join(format!(".{table}.parquet.partial"));
    let io = |source| TableError::Io { table: table.to_owned(), source };
    let parquet = |source| TableError::Parquet { table: table.to_owned(), source };
    let file = fs_err::File::create(&partial_path).map_err(io)?;
    let mut writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(writer_properties())).map_err(parquet)?;
    let mut rows = 0u64;
    for batch in parts.iter().flat_map(|part| &part.batches) {
        let batch = conform(table, batch, &schema)?;
        rows += batch.num_rows() as u64;
        writer.write(&batch).map_err(parquet)?;
    }
    writer.close().map_err(parquet)?;
    fs_err::rename(&partial_path, &final_path).map_err(io)?;
    let columns = schema
        .fields()
        .iter()
        .map(|field| {
            let ty = ColumnType::from_arrow(field.data_type())
                .map_or_else(|| field.data_type().to_string(), |ty| ty.describe());
            (field.name().clone(), ty)
        })
        .collect();
    Ok(TableSummary { name: table.to_owned(), path: final_path, rows, columns })
}

/// One file of a table being joined.
struct Part<'a> {
    source: &'a PathBuf,
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl Part<'_> {
    /// Whether the column at `index` holds a value in any row.
    fn holds_values(&self, index: usize) -> bool {
        self.batches.iter().any(|batch| batch.column(index).null_count() < batch.num_rows())
    }
}

/// The columns of the joined table: every file's, in order of first appearance, each with the
/// type the files with values in it agree on.
fn unified_schema(table: &str, parts: &[Part<'_>]) -> Result<SchemaRef, TableError> {
    let mut fields: Vec<(String, DataType, Option<&PathBuf>)> = Vec::new();
    for part in parts {
        for (index, field) in part.schema.fields().iter().enumerate() {
            let valued = part.holds_values(index);
            match fields.iter_mut().find(|(name, ..)| name == field.name()) {
                None => fields.push((field.name().clone(), field.data_type().clone(), valued.then_some(part.source))),
                Some((_, _, _)) if !valued => {}
                Some((_, known, from @ None)) => {
                    *known = field.data_type().clone();
                    *from = Some(part.source);
                }
                Some((_, known, Some(from))) => {
                    *known = widen(known, field.data_type()).ok_or_else(|| TableError::ColumnsDiffer {
                        table: table.to_owned(),
                        first: from.display().to_string(),
                        second: part.source.display().to_string(),
                    })?;
                }
            }
        }
    }
    let fields: Vec<Field> =
        fields.into_iter().map(|(name, data_type, _)| Field::new(&name, data_type, name != RUN_ID_COLUMN)).collect();
    Ok(Arc::new(Schema::new(fields)))
}

/// The type that holds values of both `a` and `b`, as a table's writer widens: int to float.
fn widen(a: &DataType, b: &DataType) -> Option<DataType> {
    match (a, b) {
        _ if a == b => Some(a.clone()),
        (DataType::Int64, DataType::Float64) | (DataType::Float64, DataType::Int64) => Some(DataType::Float64),
        (DataType::List(x), DataType::List(y)) => {
            let item = widen(x.data_type(), y.data_type())?;
            Some(DataType::List(Arc::new(Field::new_list_field(item, true))))
        }
        _ => None,
    }
}

/// `batch` with the columns of `schema`: missing or all-null columns as nulls, others cast.
fn conform(table: &str, batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch, TableError> {
    let arrow_error = |source| TableError::Arrow { table: table.to_owned(), source };
    let rows = batch.num_rows();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let column = match batch.column_by_name(field.name()) {
            Some(column) if column.data_type() == field.data_type() => Arc::clone(column),
            Some(column) if column.null_count() < rows => {
                arrow::compute::cast(column, field.data_type()).map_err(arrow_error)?
            }
            _ => new_null_array(field.data_type(), rows),
        };
        columns.push(column);
    }
    RecordBatch::try_new(Arc::clone(schema), columns).map_err(arrow_error)
}

fn batches(table: &str, path: &Path) -> Result<Vec<RecordBatch>, TableError> {
    let file = fs_err::File::open(path).map_err(|source| TableError::Io { table: table.to_owned(), source })?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file.into_parts().0)
        .and_then(|builder| builder.build())
        .map_err(|source| TableError::Parquet { table: table.to_owned(), source })?;
    reader.collect::<Result<Vec<_>, _>>().map_err(|source| TableError::Arrow { table: table.to_owned(), source })
}

fn file_schema(table: &str, path: &Path) -> Result<SchemaRef, TableError> {
    let file = fs_err::File::open(path).map_err(|source| TableError::Io { table: table.to_owned(), source })?;
    ParquetRecordBatchReaderBuilder::try_new(file.into_parts().0)
        .map(|builder| Arc::clone(builder.schema()))
        .map_err(|source| TableError::Parquet { table: table.to_owned(), source })
}

/// The value of `array` at `row` as JSON; only the types [`ColumnType`] writes are read.
fn value_at(table: &str, column: &str, array: &dyn Array, row: usize) -> Result<Value, TableError> {
    if array.is_null(row) {
        return Ok(Value::Null);
    }
    Ok(match array.data_type() {
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row).into(),
        DataType::Float64 => serde_json::Number::from_f64(array.as_primitive::<Float64Type>().value(row))
            .map_or(Value::Null, Value::Number),
        DataType::Boolean => array.as_boolean().value(row).into(),
        DataType::Utf8 => array.as_string::<i32>().value(row).into(),
        DataType::List(_) => {
            let items = array.as_list::<i32>().value(row);
            let values = (0..items.len()).map(|item| value_at(table, column, items.as_ref(), item));
            Value::Array(values.collect::<Result<_, _>>()?)
        }
        DataType::Struct(fields) => {
            let parts = array.as_struct();
            let mut object = Map::with_capacity(fields.len());
            for (index, field) in fields.iter().enumerate() {
                object.insert(field.name().clone(), value_at(table, column, parts.column(index).as_ref(), row)?);
            }
            Value::Object(object)
        }
        other => {
            return Err(TableError::UnreadableType {
                table: table.to_owned(),
                column: column.to_owned(),
                found: other.to_string(),
            });
        }
    })
}

/// Whether every shard of `shards` (each its files) holds the same rows, `run_id` apart: a
/// table each shard of a run wrote in full rather than in part.
pub fn same_rows(table: &str, shards: &[Vec<PathBuf>]) -> Result<bool, TableError> {
    let Some((first, rest)) = shards.split_first() else { return Ok(true) };
    let expected = read_shard_rows(table, first)?;
    for shard in rest {
        if read_shard_rows(table, shard)? != expected {
            return Ok(false);
        }
    }
    Ok(true)
}

fn read_shard_rows(table: &str, files: &[PathBuf]) -> Result<Vec<Value>, TableError> {
    let mut rows = Vec::new();
    for file in files {
        rows.extend(read_rows(table, file)?);
    }
    Ok(rows)
}
