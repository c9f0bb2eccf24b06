//! Reading tables back: a finished table's rows as JSON objects (for a script's report phase,
//! `results::rows`), and the tables of several runs joined into one (for `host merge`).
//!
//! Values come back with the types they were stored with: an `int` column gives integers and a
//! `float` column floats, so a report computed from rows read back is the same whether the rows
//! were written by this run or by the shards of a merged one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, Int64Type, SchemaRef};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde_json::{Map, Value};

use super::schema::{ColumnType, RUN_ID_COLUMN};
use super::table::{TableError, TableSummary, writer_properties};

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
/// the `run_id` of the run that wrote it. The files must have the same columns.
pub fn concatenate(table: &str, sources: &[PathBuf], dir: &Path) -> Result<TableSummary, TableError> {
    let mut all = Vec::new();
    let mut schema: Option<(SchemaRef, &PathBuf)> = None;
    for source in sources {
        let batches = batches(table, source)?;
        let Some(first) = batches.first() else { continue };
        match &schema {
            Some((known, from)) if !same_columns(known, &first.schema()) => {
                return Err(TableError::ColumnsDiffer {
                    table: table.to_owned(),
                    first: from.display().to_string(),
                    second: source.display().to_string(),
                });
            }
            Some(_) => {}
            None => schema = Some((first.schema(), source)),
        }
        all.extend(batches);
    }
    let final_path = dir.join(format!("{table}.parquet"));
    let partial_path = dir.join(format!(".{table}.parquet.partial"));
    let io = |source| TableError::Io { table: table.to_owned(), source };
    let parquet = |source| TableError::Parquet { table: table.to_owned(), source };
    let schema = match schema {
        Some((schema, _)) => schema,
        // No rows anywhere: the first file's (empty) schema.
        None => match sources.first() {
            Some(source) => empty_schema(table, source)?,
            None => Arc::new(arrow::datatypes::Schema::empty()),
        },
    };
    let file = fs_err::File::create(&partial_path).map_err(io)?;
    let mut writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(writer_properties())).map_err(parquet)?;
    let mut rows = 0u64;
    for batch in &all {
        // Each source's own schema may carry other metadata; the columns were checked equal.
        let batch = RecordBatch::try_new(Arc::clone(&schema), batch.columns().to_vec())
            .map_err(|source| TableError::Arrow { table: table.to_owned(), source })?;
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
            (field.name().clone(), if field.name() == RUN_ID_COLUMN { "string".to_owned() } else { ty })
        })
        .collect();
    Ok(TableSummary { name: table.to_owned(), path: final_path, rows, columns })
}

fn same_columns(a: &SchemaRef, b: &SchemaRef) -> bool {
    a.fields().len() == b.fields().len()
        && a.fields().iter().zip(b.fields()).all(|(x, y)| x.name() == y.name() && x.data_type() == y.data_type())
}

fn batches(table: &str, path: &Path) -> Result<Vec<RecordBatch>, TableError> {
    let file = fs_err::File::open(path).map_err(|source| TableError::Io { table: table.to_owned(), source })?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file.into_parts().0)
        .and_then(|builder| builder.build())
        .map_err(|source| TableError::Parquet { table: table.to_owned(), source })?;
    reader.collect::<Result<Vec<_>, _>>().map_err(|source| TableError::Arrow { table: table.to_owned(), source })
}

fn empty_schema(table: &str, path: &Path) -> Result<SchemaRef, TableError> {
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

/// Whether every file of `sources` holds the same rows, `run_id` apart: a table each shard of a
/// run wrote in full rather than in part.
pub fn same_rows(table: &str, sources: &[PathBuf]) -> Result<bool, TableError> {
    let Some((first, rest)) = sources.split_first() else { return Ok(true) };
    let expected = read_rows(table, first)?;
    for source in rest {
        if read_rows(table, source)? != expected {
            return Ok(false);
        }
    }
    Ok(true)
}
