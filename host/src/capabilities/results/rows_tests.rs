//! Reading tables back (`results::rows`), the report phase it starts, and a merge's shard tables.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;

fn run(dir: &Path, id: &str) -> RunResults {
    RunResults::new(dir, id).unwrap()
}

#[test]
fn rows_read_back_come_with_their_columns_types_and_close_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let results = run(dir.path(), "r1");
    results.append("scores", json!({"id": "a", "score": 2, "tags": ["x"], "meta": {"n": 1}, "note": null})).unwrap();
    results
        .append("scores", json!({"id": "b", "score": 2.5, "tags": [], "meta": {"n": null}, "note": "late"}))
        .unwrap();

    let rows = results.rows("scores").unwrap();
    assert_eq!(
        rows,
        vec![
            json!({"id": "a", "score": 2.0, "tags": ["x"], "meta": {"n": 1}, "note": null}),
            json!({"id": "b", "score": 2.5, "tags": [], "meta": {"n": null}, "note": "late"}),
        ],
        "the float column gives 2.0 for the 2 it was given, and no run_id"
    );
    assert!(rows[0]["score"].is_f64() && rows[0]["meta"]["n"].is_i64());
    assert!(matches!(results.append("scores", json!({"id": "c"})), Err(ResultsError::ReadBack { .. })));
    assert_eq!(results.rows("scores").unwrap().len(), 2, "a closed table can be read again");
    let outputs = results.finish();
    assert_eq!(outputs.tables.iter().map(|t| (t.name.as_str(), t.rows)).collect::<Vec<_>>(), [("scores", 2)]);
}

#[test]
fn what_is_first_written_after_the_first_read_is_the_reports() {
    let dir = tempfile::tempdir().unwrap();
    let results = run(dir.path(), "r1");
    results.append("answers", json!({"score": 1})).unwrap();
    results.write_file("notes.md", FileContent::Text("work".into())).unwrap();
    results.append("calls", json!({"ms": 3})).unwrap();
    results.rows("answers").unwrap();
    results.append("summary", json!({"mean": 1.0})).unwrap();
    results.append("calls", json!({"ms": 4})).unwrap();
    results.write_file("report.md", FileContent::Text("# report".into())).unwrap();
    results.write_file("notes.md", FileContent::Text("rewritten".into())).unwrap();

    let outputs = results.finish();
    assert_eq!(outputs.report_tables, ["summary"], "`calls` existed before the report phase");
    assert_eq!(outputs.report_files, ["report.md"], "`notes.md` was first written before it");
}

#[test]
fn an_unknown_table_is_an_error_naming_the_tables_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let results = run(dir.path(), "r1");
    results.append("answers", json!({"score": 1})).unwrap();
    let error = results.rows("answer").unwrap_err().to_string();
    assert_eq!(error, "no table `answer` in this run; it has answers");
}

/// Writes a finished table `name` with `rows` into a run `id` under `root`; returns its file.
fn shard_table(root: &Path, id: &str, name: &str, rows: &[serde_json::Value]) -> PathBuf {
    let dir = root.join(id);
    fs_err::create_dir_all(&dir).unwrap();
    let results = run(&dir, id);
    for row in rows {
        results.append(name, row.clone()).unwrap();
    }
    results.finish();
    dir.join(format!("{name}.parquet"))
}

#[test]
fn a_merge_joins_the_shards_tables_in_order_and_keeps_a_table_every_shard_wrote_alike_once() {
    let root = tempfile::tempdir().unwrap();
    let shards = BTreeMap::from([
        (
            "answers".to_owned(),
            vec![
                vec![shard_table(root.path(), "s1", "answers", &[json!({"p": 1}), json!({"p": 2})])],
                vec![shard_table(root.path(), "s2", "answers", &[json!({"p": 3})])],
            ],
        ),
        (
            "prompts".to_owned(),
            vec![
                vec![shard_table(root.path(), "s1", "prompts", &[json!({"all": 3})])],
                vec![shard_table(root.path(), "s2", "prompts", &[json!({"all": 3})])],
            ],
        ),
    ]);
    let merged = root.path().join("merged");
    fs_err::create_dir_all(&merged).unwrap();
    let results = run(&merged, "m");
    results.adopt_shards(shards);

    assert_eq!(results.rows("answers").unwrap(), vec![json!({"p": 1}), json!({"p": 2}), json!({"p": 3})]);
    assert!(matches!(results.append("answers", json!({"p": 4})), Err(ResultsError::FromShards { .. })));
    assert!(matches!(results.append("prompts", json!({"all": 3})), Err(ResultsError::FromShards { .. })));
    results.append("summary", json!({"n": 3})).unwrap();
    let outputs = results.finish();
    let tables: Vec<_> = outputs.tables.iter().map(|t| (t.name.as_str(), t.rows)).collect();
    assert_eq!(tables, [("answers", 3), ("prompts", 1), ("summary", 1)], "prompts was taken at the end, once");
    assert!(outputs.errors.is_empty(), "{:?}", outputs.errors);
    let run_ids = |path: &Path| -> Vec<String> {
        let file = fs_err::File::open(path).unwrap();
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file.into_parts().0)
            .unwrap()
            .build()
            .unwrap();
        let mut ids = Vec::new();
        for batch in reader {
            let batch = batch.unwrap();
            let column = arrow::array::AsArray::as_string::<i32>(batch.column(0).as_ref()).clone();
            ids.extend(column.iter().map(|id| id.unwrap_or_default().to_owned()));
        }
        ids
    };
    assert_eq!(run_ids(&merged.join("answers.parquet")), ["s1", "s1", "s2"], "each row keeps the run that wrote it");
}

#[test]
fn shard_tables_with_other_columns_are_an_error_naming_both_files() {
    let root = tempfile::tempdir().unwrap();
    let first = shard_table(root.path(), "s1", "answers", &[json!({"p": 1})]);
    let second = shard_table(root.path(), "s2", "answers", &[json!({"p": "one"})]);
    let merged = root.path().join("merged");
    fs_err::create_dir_all(&merged).unwrap();
    let results = run(&merged, "m");
    results.adopt_shards(BTreeMap::from([("answers".to_owned(), vec![vec![first], vec![second]])]));
    let error = results.rows("answers").unwrap_err().to_string();
    assert!(error.contains("table `answers` has other columns in") && error.contains("s2/answers.parquet"), "{error}");
}

#[test]
fn shard_tables_join_as_one_writer_would_have_fixed_their_columns() {
    let root = tempfile::tempdir().unwrap();
    // Shard 1 saw only ints in `score` and only nulls in `note`; shard 2 a float and a string, and
    // a column shard 1 never had.
    let first = shard_table(root.path(), "s1", "answers", &[json!({"score": 1, "note": null})]);
    let second = shard_table(root.path(), "s2", "answers", &[json!({"score": 1.5, "note": "n", "extra": true})]);
    let merged = root.path().join("merged");
    fs_err::create_dir_all(&merged).unwrap();
    let results = run(&merged, "m");
    results.adopt_shards(BTreeMap::from([("answers".to_owned(), vec![vec![first], vec![second]])]));
    assert_eq!(
        results.rows("answers").unwrap(),
        vec![json!({"note": null, "score": 1.0, "extra": null}), json!({"note": "n", "score": 1.5, "extra": true}),]
    );
}
