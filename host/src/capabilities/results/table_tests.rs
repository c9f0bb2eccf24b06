//! What a script can rely on when it appends rows to a table, checked on the Parquet files.

use std::error::Error;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, RecordBatch};
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, SchemaRef};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::metadata::ParquetMetaData;
use serde_json::{Value, json};
use tempfile::TempDir;

use super::super::schema::{ColumnType, parse_declaration};
use super::{TableError, TableSummary, TableWriter};

type TestResult<T = ()> = Result<T, Box<dyn Error>>;

const RUN: &str = "run-7";

/// A Parquet file as read back: its schema, all rows in one batch, and its metadata.
struct Table {
    schema: SchemaRef,
    batch: RecordBatch,
    metadata: Arc<ParquetMetaData>,
}

impl Table {
    fn read(path: &Path) -> TestResult<Self> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path)?)?;
        let metadata = Arc::clone(builder.metadata());
        let schema = Arc::clone(builder.schema());
        let batches = builder.build()?.collect::<Result<Vec<_>, _>>()?;
        let batch = concat_batches(&schema, &batches)?;
        Ok(Self { schema, batch, metadata })
    }

    /// Column names and types, the types written as a declaration would.
    fn columns(&self) -> Vec<(String, String)> {
        let fields = self.schema.fields().iter();
        fields.map(|f| (f.name().clone(), describe(f.data_type()))).collect()
    }

    /// One column's values as text: `null`, `[1, 2]`, `{a: 1}`.
    fn values(&self, column: &str) -> TestResult<Vec<String>> {
        let array = self.batch.column_by_name(column).ok_or(format!("no column `{column}`"))?;
        let options = FormatOptions::default().with_null("null");
        let formatter = ArrayFormatter::try_new(array.as_ref(), &options)?;
        Ok((0..array.len()).map(|i| formatter.value(i).to_string()).collect())
    }
}

fn describe(data_type: &DataType) -> String {
    match data_type {
        DataType::Int64 => "int".to_owned(),
        DataType::Float64 => "float".to_owned(),
        DataType::Boolean => "bool".to_owned(),
        DataType::Utf8 => "string".to_owned(),
        DataType::List(item) => format!("list<{}>", describe(item.data_type())),
        DataType::Struct(fields) => {
            let fields: Vec<String> =
                fields.iter().map(|f| format!("{}: {}", f.name(), describe(f.data_type()))).collect();
            format!("struct{{{}}}", fields.join(", "))
        }
        other => format!("unexpected {other}"),
    }
}

fn pairs(columns: &[(&str, &str)]) -> Vec<(String, String)> {
    columns.iter().map(|(n, t)| ((*n).to_owned(), (*t).to_owned())).collect()
}

fn undeclared(dir: &TempDir, name: &str) -> TestResult<TableWriter> {
    Ok(TableWriter::new(dir.path(), name, RUN, None)?)
}

fn declared(dir: &TempDir, name: &str, declaration: Value) -> TestResult<TableWriter> {
    let columns = parse_declaration(name, &declaration)?;
    Ok(TableWriter::new(dir.path(), name, RUN, Some(columns))?)
}

fn write(mut writer: TableWriter, rows: impl IntoIterator<Item = Value>) -> TestResult<(TableSummary, Table)> {
    for row in rows {
        writer.append(row)?;
    }
    let summary = writer.finish()?;
    let table = Table::read(&summary.path)?;
    Ok((summary, table))
}

/// The message of the error `result` must be.
fn error_message<T>(result: Result<T, TableError>) -> TestResult<String> {
    match result {
        Ok(_) => Err("the writer accepted what it should have rejected".into()),
        Err(error) => Ok(error.to_string()),
    }
}

#[test]
fn inferred_columns_are_sorted_typed_and_led_by_run_id() -> TestResult {
    let dir = tempfile::tempdir()?;
    let rows = [
        json!({"score": 0.5, "n": 3, "ok": true, "label": "a", "ids": [1, 2], "meta": {"tags": ["x"], "depth": 1}}),
        json!({"score": 1.5, "n": -4, "ok": false, "label": "b", "ids": [], "meta": {"tags": [], "depth": 2}}),
    ];
    let (summary, table) = write(undeclared(&dir, "scores")?, rows)?;

    let expected = pairs(&[
        ("run_id", "string"),
        ("ids", "list<int>"),
        ("label", "string"),
        ("meta", "struct{depth: int, tags: list<string>}"),
        ("n", "int"),
        ("ok", "bool"),
        ("score", "float"),
    ]);
    assert_eq!(table.columns(), expected);
    assert_eq!(summary.columns, expected);
    assert_eq!((summary.name.as_str(), summary.rows), ("scores", 2));
    assert_eq!(summary.path, dir.path().join("scores.parquet"));
    assert_eq!(table.values("run_id")?, [RUN, RUN]);
    assert_eq!(table.values("ids")?, ["[1, 2]", "[]"]);
    assert_eq!(table.values("label")?, ["a", "b"]);
    assert_eq!(table.values("meta")?, ["{depth: 1, tags: [x]}", "{depth: 2, tags: []}"]);
    assert_eq!(table.values("n")?, ["3", "-4"]);
    assert_eq!(table.values("ok")?, ["true", "false"]);
    assert_eq!(table.values("score")?, ["0.5", "1.5"]);
    let nullable: Vec<bool> = table.schema.fields().iter().map(|f| f.is_nullable()).collect();
    assert_eq!(nullable, [false, true, true, true, true, true, true]);
    Ok(())
}

#[test]
fn ints_and_floats_in_one_column_unify_to_float() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (_, table) = write(undeclared(&dir, "t")?, [json!({"x": 1}), json!({"x": 2.5})])?;
    assert_eq!(table.columns(), pairs(&[("run_id", "string"), ("x", "float")]));
    assert_eq!(table.values("x")?, ["1.0", "2.5"]);

    let (_, table) = write(undeclared(&dir, "u")?, [json!({"x": [1, 2.5], "s": {"v": 1}}), json!({"s": {"v": 0.5}})])?;
    assert_eq!(table.columns(), pairs(&[("run_id", "string"), ("s", "struct{v: float}"), ("x", "list<float>")]));
    assert_eq!(table.values("x")?, ["[1.0, 2.5]", "null"]);
    Ok(())
}

#[test]
fn columns_of_only_nulls_or_empty_lists_are_strings_and_missing_keys_are_null() -> TestResult {
    let dir = tempfile::tempdir()?;
    let rows = [json!({"a": 1, "nothing": null, "empty": []}), json!({"b": "x", "empty": [null]})];
    let (_, table) = write(undeclared(&dir, "t")?, rows)?;
    let expected =
        [("run_id", "string"), ("a", "int"), ("b", "string"), ("empty", "list<string>"), ("nothing", "string")];
    assert_eq!(table.columns(), pairs(&expected));
    assert_eq!(table.values("a")?, ["1", "null"]);
    assert_eq!(table.values("b")?, ["null", "x"]);
    assert_eq!(table.values("empty")?, ["[]", "[null]"]);
    assert_eq!(table.values("nothing")?, ["null", "null"]);
    Ok(())
}

#[test]
fn a_type_conflict_during_inference_names_table_column_and_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "scores")?;
    writer.append(json!({"score": 1}))?;
    writer.append(json!({"score": null}))?;
    let message = error_message(writer.append(json!({"score": "high"})))?;
    assert_eq!(message, "type conflict in table `scores`, column `score`, row 3: expected int, found string");
    Ok(())
}

#[test]
fn a_type_conflict_after_the_first_batch_names_its_row() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    let mut messages = Vec::new();
    for i in 1..=1100 {
        let value = if i == 1030 { json!("x") } else { json!(i) };
        if let Err(error) = writer.append(json!({"n": value})) {
            messages.push(error.to_string());
        }
    }
    assert_eq!(messages, ["type conflict in table `t`, column `n`, row 1030: expected int, found string"]);
    let (summary, table) = write(writer, [])?;
    assert_eq!((summary.rows, table.batch.num_rows()), (1099, 1099));
    Ok(())
}

#[test]
fn once_columns_are_fixed_only_an_int_may_go_into_a_float_column() -> TestResult {
    let dir = tempfile::tempdir()?;
    let declaration = json!({"f": "float", "s": "string", "b": "bool", "l": "list<int>"});
    let mut writer = declared(&dir, "d", declaration)?;
    writer.append(json!({"f": 1, "l": [2], "s": "x", "b": true}))?;
    let cases = [
        (json!({"s": 1}), "column `s`, row 2: expected string, found int"),
        (json!({"f": "1"}), "column `f`, row 2: expected float, found string"),
        (json!({"b": 1.5}), "column `b`, row 2: expected bool, found float"),
        (json!({"l": 1}), "column `l`, row 2: expected list<int>, found int"),
        (json!({"l": [1, 1.5]}), "column `l[]`, row 2: expected int, found float"),
        (json!({"f": {"x": 1}}), "column `f`, row 2: expected float, found struct"),
    ];
    for (row, expected) in cases {
        let message = error_message(writer.append(row))?;
        assert_eq!(message, format!("type conflict in table `d`, {expected}"));
    }
    let (_, table) = write(writer, [])?;
    assert_eq!(table.values("f")?, ["1.0"]);
    Ok(())
}

#[test]
fn a_nested_conflict_names_the_dotted_path() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    writer.append(json!({"meta": {"tags": ["a"]}}))?;
    let message = error_message(writer.append(json!({"meta": {"tags": ["b", 2]}})))?;
    assert_eq!(message, "type conflict in table `t`, column `meta.tags[]`, row 2: expected string, found int");

    let mut writer = declared(&dir, "d", json!({"meta": {"tags": "list<string>"}}))?;
    let message = error_message(writer.append(json!({"meta": {"tags": [[1]]}})))?;
    assert_eq!(message, "type conflict in table `d`, column `meta.tags[]`, row 1: expected string, found list");
    Ok(())
}

#[test]
fn a_column_not_in_the_first_batch_is_unknown() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    for i in 0..1024 {
        writer.append(json!({"n": i, "meta": {"a": 1}}))?;
    }
    let message = error_message(writer.append(json!({"n": 1, "late": true})))?;
    assert_eq!(
        message,
        "unknown column `late` in table `t`, row 1025; hint: the first 1024 rows fix the columns; declare them with `results::declare` to add more later"
    );
    let message = error_message(writer.append(json!({"meta": {"b": 1}})))?;
    assert!(message.starts_with("unknown column `meta.b` in table `t`, row 1025; hint:"), "{message}");

    let mut writer = declared(&dir, "d", json!({"n": "int"}))?;
    let message = error_message(writer.append(json!({"m": 1})))?;
    assert_eq!(message, "unknown column `m` in table `d`, row 1; hint: add it to the declaration");
    Ok(())
}

#[test]
fn run_id_is_reserved_in_rows_and_declarations() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    let message = error_message(writer.append(json!({"run_id": "mine"})))?;
    assert_eq!(message, "column `run_id` is reserved in table `t`, row 1; hint: the host fills it with the run id");

    let message = error_message(parse_declaration("t", &json!({"run_id": "string"})))?;
    assert_eq!(message, "column `run_id` is reserved in table `t`; hint: the host fills it with the run id");
    let columns = vec![("run_id".to_owned(), ColumnType::String)];
    let message = error_message(TableWriter::new(dir.path(), "t", RUN, Some(columns)))?;
    assert!(message.starts_with("column `run_id` is reserved"), "{message}");
    Ok(())
}

#[test]
fn table_names_are_short_plain_file_names() -> TestResult {
    let dir = tempfile::tempdir()?;
    let too_long = "a".repeat(65);
    for bad in ["", "../x", "a b", "a.b", "é", too_long.as_str()] {
        let message = error_message(TableWriter::new(dir.path(), bad, RUN, None))?;
        assert_eq!(message, format!("invalid table name `{bad}`; hint: use 1 to 64 ASCII letters, digits, `_` or `-`"));
    }
    for good in ["a", "Scores_2-b", &"a".repeat(64)] {
        assert_eq!(TableWriter::new(dir.path(), good, RUN, None)?.name(), good);
    }
    Ok(())
}

#[test]
fn a_bad_declaration_names_the_column() -> TestResult {
    let hint = "hint: use int, float, bool, string, list<T> or a map of fields";
    let cases = [
        (json!({"price": "decimal"}), format!("unknown type `decimal` for column `price` in table `t`; {hint}")),
        (json!({"tags": "list<>"}), format!("unknown type `list<>` for column `tags` in table `t`; {hint}")),
        (json!({"meta": {"when": 5}}), format!("unknown type `5` for column `meta.when` in table `t`; {hint}")),
        (
            json!({"meta": {}}),
            "column `meta` of table `t` is an empty struct; hint: declare at least one field".to_owned(),
        ),
        (json!([["a", "int"], ["a", "float"]]), "column `a` is declared twice in table `t`".to_owned()),
    ];
    for (declaration, expected) in cases {
        assert_eq!(error_message(parse_declaration("t", &declaration))?, expected);
    }
    let message = error_message(parse_declaration("t", &json!("int")))?;
    assert!(message.starts_with("declaration of table `t` is not a map of column names to types, found `\"int\"`"));
    let long = "x".repeat(1000);
    let message = error_message(parse_declaration("t", &json!({ "a": long })))?;
    assert!(message.starts_with(&format!("unknown type `{}…` for column `a`", "x".repeat(60))), "{message}");
    let message = error_message(parse_declaration("t", &json!({"m": [["a"]]})))?;
    assert!(message.starts_with("declaration of table `t`, column `m`, is not a map"), "{message}");
    Ok(())
}

#[test]
fn declared_columns_keep_the_declared_order_and_types() -> TestResult {
    let dir = tempfile::tempdir()?;
    // serde_json and Rhai maps iterate in sorted order, so a list of pairs is what keeps order.
    let declaration = json!([["z", "float"], ["a", "list<list<int>>"], ["m", [["y", "bool"], ["b", "string"]]]]);
    let (summary, table) =
        write(declared(&dir, "d", declaration)?, [json!({"z": 2, "a": [[1], []], "m": {"b": "x"}})])?;
    let expected =
        pairs(&[("run_id", "string"), ("z", "float"), ("a", "list<list<int>>"), ("m", "struct{y: bool, b: string}")]);
    assert_eq!(table.columns(), expected);
    assert_eq!(summary.columns, expected);
    assert_eq!(table.values("z")?, ["2.0"]);
    assert_eq!(table.values("a")?, ["[[1], []]"]);
    assert_eq!(table.values("m")?, ["{y: null, b: x}"]);

    let (_, table) = write(declared(&dir, "o", json!({"b": "int", "a": {"c": "string"}}))?, [])?;
    assert_eq!(table.columns(), pairs(&[("run_id", "string"), ("a", "struct{c: string}"), ("b", "int")]));
    Ok(())
}

#[test]
fn a_declared_table_without_rows_still_has_its_columns() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (summary, table) = write(declared(&dir, "empty", json!({"score": "float"}))?, [])?;
    assert_eq!(table.columns(), pairs(&[("run_id", "string"), ("score", "float")]));
    assert_eq!((summary.rows, table.batch.num_rows()), (0, 0));
    Ok(())
}

#[test]
fn an_undeclared_table_without_rows_has_only_run_id() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (summary, table) = write(undeclared(&dir, "empty")?, [])?;
    assert_eq!(table.columns(), pairs(&[("run_id", "string")]));
    assert_eq!(summary.rows, 0);

    let (_, table) = write(undeclared(&dir, "bare")?, [json!({}), json!({})])?;
    assert_eq!(table.columns(), pairs(&[("run_id", "string")]));
    assert_eq!(table.values("run_id")?, [RUN, RUN]);
    Ok(())
}

#[test]
fn rows_beyond_a_batch_and_a_row_group_are_all_written() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (summary, table) = write(undeclared(&dir, "small")?, (0..2500).map(|i| json!({"i": i})))?;
    assert_eq!((summary.rows, table.batch.num_rows()), (2500, 2500));
    assert_eq!(table.metadata.num_row_groups(), 1);

    let (summary, table) = write(undeclared(&dir, "large")?, (0..70_000).map(|i| json!({"i": i})))?;
    assert_eq!((summary.rows, table.batch.num_rows()), (70_000, 70_000));
    let groups: Vec<i64> = table.metadata.row_groups().iter().map(|g| g.num_rows()).collect();
    assert_eq!(groups, [65_536, 70_000 - 65_536]);
    assert_eq!(table.values("i")?.last().map(String::as_str), Some("69999"));
    Ok(())
}

#[test]
fn every_column_chunk_is_compressed_with_zstd() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (_, table) = write(undeclared(&dir, "t")?, [json!({"a": 1, "b": ["x"]})])?;
    let chunks: Vec<Compression> =
        table.metadata.row_groups().iter().flat_map(|g| g.columns()).map(|c| c.compression()).collect();
    assert_eq!(chunks.len(), 3);
    assert!(chunks.iter().all(|c| matches!(c, Compression::ZSTD(_))), "{chunks:?}");
    Ok(())
}

#[test]
fn a_writer_dropped_without_finish_leaves_no_final_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    for i in 0..2000 {
        writer.append(json!({"i": i}))?;
    }
    drop(writer);
    assert!(!dir.path().join("t.parquet").exists());
    assert!(dir.path().join(".t.parquet.partial").exists());
    Ok(())
}

#[test]
fn a_rejected_row_loses_no_earlier_rows_and_takes_no_row_number() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    writer.append(json!({"a": 1, "b": "x"}))?;
    // Keys are visited in sorted order: `a` would widen to float and `aa` would become a column
    // before `b` conflicts, and neither may survive the rejection.
    assert!(writer.append(json!({"a": 1.5, "aa": true, "b": 2})).is_err());
    assert!(writer.append(json!([1])).is_err());
    assert_eq!(writer.rows(), 1);
    let message = error_message(writer.append(json!({"a": "y"})))?;
    assert!(message.contains("row 2:"), "{message}");
    writer.append(json!({"a": 2}))?;
    let (summary, table) = write(writer, [])?;
    assert_eq!(summary.rows, 2);
    assert_eq!(table.columns(), pairs(&[("run_id", "string"), ("a", "int"), ("b", "string")]));
    assert_eq!(table.values("a")?, ["1", "2"]);
    Ok(())
}

#[test]
fn values_arrow_cannot_store_are_rejected_with_their_place() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    let message = error_message(writer.append(json!({"big": u64::MAX})))?;
    assert_eq!(
        message,
        "integer out of range in table `t`, column `big`, row 1: 18446744073709551615 does not fit in a 64-bit signed int"
    );
    let message = error_message(writer.append(json!({"m": [{}]})))?;
    assert!(
        message.starts_with("empty object in table `t`, column `m[]`, row 1: its fields are not known yet"),
        "{message}"
    );
    let message = error_message(writer.append(json!("row")))?;
    assert_eq!(message, "row 1 of table `t` is not an object, found string");
    let deep = (0..40).fold(json!(1), |inner, _| json!([inner]));
    let message = error_message(writer.append(json!({ "d": deep })))?;
    assert!(message.starts_with("nesting too deep in table `t`, column `d[][][]"), "{message}");

    // Once a struct's fields are known, an empty object is just a struct of nulls.
    writer.append(json!({"m": [{"a": 1}, {}]}))?;
    let (_, table) = write(writer, [])?;
    assert_eq!(table.values("m")?, ["[{a: 1}, {a: null}]"]);
    Ok(())
}

#[test]
fn a_table_writer_is_send_and_debug_so_the_shared_results_map_can_hold_it() -> TestResult {
    fn assert_send<T: Send + std::fmt::Debug>() {}
    assert_send::<TableWriter>();
    let dir = tempfile::tempdir()?;
    let mut writer = declared(&dir, "t", json!({"a": "int"}))?;
    writer.append(json!({"a": 1}))?;
    let debug = format!("{writer:?}");
    assert!(debug.starts_with("TableWriter { name: \"t\","), "{debug}");
    assert!(debug.contains("rows: 1, columns: Some([(\"a\", Int)])"), "{debug}");
    Ok(())
}

#[test]
fn odd_column_names_are_stored_as_written() -> TestResult {
    let dir = tempfile::tempdir()?;
    let rows = [json!({"": 1, "a.b": {"c d": "x"}, "ü": [true]})];
    let (_, table) = write(undeclared(&dir, "t")?, rows)?;
    let expected = [("run_id", "string"), ("", "int"), ("a.b", "struct{c d: string}"), ("ü", "list<bool>")];
    assert_eq!(table.columns(), pairs(&expected));
    assert_eq!(table.values("a.b")?, ["{c d: x}"]);
    Ok(())
}

#[test]
fn a_missing_directory_fails_when_the_table_is_opened() -> TestResult {
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("missing");
    let error = TableWriter::new(&missing, "t", RUN, None).err().ok_or("opened")?;
    assert_eq!(error.to_string(), "cannot write table `t`");
    let source = error.source().map(ToString::to_string).unwrap_or_default();
    assert!(source.contains(".t.parquet.partial"), "{source}");
    Ok(())
}

#[test]
fn a_flushed_table_is_readable_in_parts_and_finishes_whole_in_order() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    for i in 0..3 {
        writer.append(json!({"i": i}))?;
    }
    writer.flush()?;
    let part = Table::read(&dir.path().join("t.part-00001.parquet"))?;
    assert_eq!(part.values("i")?, ["0", "1", "2"]);
    assert!(!dir.path().join("t.parquet").exists(), "the table is not finished");

    writer.flush()?;
    assert!(!dir.path().join("t.part-00002.parquet").exists(), "a flush with nothing new writes no part");
    for i in 3..5 {
        writer.append(json!({"i": i}))?;
    }
    let (summary, table) = write(writer, [])?;
    assert_eq!(summary.rows, 5);
    assert_eq!(table.values("i")?, ["0", "1", "2", "3", "4"]);
    assert_eq!(table.values("run_id")?, [RUN; 5]);
    let left: Vec<String> = std::fs::read_dir(dir.path())?
        .map(|e| Ok(e?.file_name().to_string_lossy().into_owned()))
        .collect::<std::io::Result<_>>()?;
    assert_eq!(left, ["t.parquet"], "the parts are removed once the table is whole");
    Ok(())
}

#[test]
fn rows_flushed_before_the_columns_were_fixed_take_the_columns_fixed_in_the_end() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    writer.append(json!({"a": 1, "tags": []}))?;
    writer.flush()?;
    writer.append(json!({"a": 1.5, "tags": ["x"], "meta": {"k": "v"}}))?;
    let (_, table) = write(writer, [])?;
    assert_eq!(
        table.columns(),
        pairs(&[("run_id", "string"), ("a", "float"), ("meta", "struct{k: string}"), ("tags", "list<string>")])
    );
    assert_eq!(table.values("a")?, ["1.0", "1.5"]);
    assert_eq!(table.values("meta")?, ["null", "{k: v}"]);
    Ok(())
}

#[test]
fn a_part_holds_at_most_a_row_group() -> TestResult {
    let dir = tempfile::tempdir()?;
    let mut writer = undeclared(&dir, "t")?;
    for i in 0..super::PART_ROWS + 1 {
        writer.append(json!({"i": i}))?;
    }
    assert!(dir.path().join("t.part-00001.parquet").is_file(), "a full part is closed without waiting");
    let part = Table::read(&dir.path().join("t.part-00001.parquet"))?;
    assert_eq!(part.batch.num_rows() as u64, super::PART_ROWS);
    Ok(())
}

#[test]
fn table_files_are_told_from_other_files_by_name() {
    use super::table_file_kind;
    assert_eq!(table_file_kind("answers.parquet"), Some(("answers", None)));
    assert_eq!(table_file_kind("answers.part-00012.parquet"), Some(("answers", Some(12))));
    for other in ["answers.json", ".answers.parquet.partial", "answers.part-.parquet", "a.b.parquet", "x/y.parquet"] {
        assert_eq!(table_file_kind(other), None, "{other}");
    }
}
