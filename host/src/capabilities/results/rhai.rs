//! The Rhai namespace `results::`.

use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, Map, Module, NativeCallContext};
use serde_json::Value;

use super::{FileContent, Results};
use crate::capabilities::fs::Files;
use crate::capabilities::{docs::function, script_error};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

fn json(value: &Dynamic) -> Result<Value> {
    rhai::serde::from_dynamic(value)
}

pub fn module(results: Arc<dyn Results>, files: Arc<dyn Files>) -> Module {
    let mut module = Module::new();

    let sink = results.clone();
    function(
        "export_folder",
        &["folder: &str", "String"],
        "
Opens a folder outside the run directory for this run's artifacts and returns its absolute path.
The folder must lie under a folder the user named on the command line (a checkout given with
`--checkout DIR`, say); it is created if missing. The `results::write_*` functions then take
absolute paths inside it, and the manifest lists it under `exports` with every file written there.
Example: `let reports = results::export_folder(`${checkout}/reports/run-1`); results::write_json(`${reports}/summary.json`, summary);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, folder: &str| -> Result<String> {
        let granted = files.granted(folder).map_err(|error| script_error(&context, &error))?;
        let opened = sink.export(&granted).map_err(|error| script_error(&context, &error))?;
        files.allow_root(&opened);
        Ok(opened.display().to_string())
    });

    let sink = results.clone();
    function(
        "declare",
        &["table: &str", "columns: Dynamic", "()"],
        "
Fixes a table's columns before its first row. Types: \"int\", \"float\", \"bool\", \"string\",
\"list<T>\", or a map for a nested struct. A map gives its columns in name order; an array of
`[name, type]` pairs keeps the order written. Without a declaration the columns are inferred
from the first 1024 rows, in name order. `run_id` always comes first.
Example: `results::declare(\"scores\", [[\"prompt\", \"string\"], [\"score\", \"float\"], [\"tags\", \"list<string>\"]]);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, table: &str, columns: Dynamic| -> Result<()> {
        sink.declare(table, &json(&columns)?).map_err(|error| script_error(&context, &error))
    });

    let sink = results.clone();
    function(
        "append",
        &["table: &str", "row: Map", "()"],
        "
Appends a row to a table, written to `<run dir>/<table>.parquet` with `run_id` on every row.
A value whose type differs from its column's is an error naming the table, column and row.
Example: `results::append(\"scores\", #{ prompt: p.id, score: 2.5, tags: [\"fact\"] });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, table: &str, row: Map| -> Result<()> {
        sink.append(table, json(&Dynamic::from_map(row))?).map_err(|error| script_error(&context, &error))
    });

    let sink = results.clone();
    function(
        "append_all",
        &["table: &str", "rows: Array", "()"],
        "
Appends every row of an array to a table.
Example: `results::append_all(\"retrievals\", hits);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, table: &str, rows: Array| -> Result<()> {
        for row in rows {
            sink.append(table, json(&row)?).map_err(|error| script_error(&context, &error))?;
        }
        Ok(())
    });

    let source = results.clone();
    function(
        "rows",
        &["table: &str", "Array"],
        "
Every row of a table, read back from its Parquet file as maps (without `run_id`), each value
with its column's type. The table then takes no more rows. The first call starts the script's
report phase: what it writes from then on (its summary table, report.md) is what `host merge`
recomputes from the shards' tables, so compute reports from rows read back, and run the work
phases only when `!run::reporting()`.
Example: `let answers = results::rows(\"answers\");`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, table: &str| -> Result<Array> {
        let rows = source.rows(table).map_err(|error| script_error(&context, &error))?;
        rows.iter().map(rhai::serde::to_dynamic).collect()
    });

    let text_writers = [
        (
            "write_markdown",
            "Writes a Markdown file in the run directory, or at an absolute path in an export folder (atomically).\nExample: `results::write_markdown(\"report.md\", report);`",
        ),
        (
            "write_text",
            "Writes a text file in the run directory, or at an absolute path in an export folder (atomically).\nExample: `results::write_text(\"notes/day-01.md\", notes);`",
        ),
    ];
    for (name, doc) in text_writers {
        let sink = results.clone();
        function(name, &["path: &str", "text: &str", "()"], doc).with_volatility(true).set_into_module(
            &mut module,
            move |context: NativeCallContext, path: &str, text: &str| -> Result<()> {
                sink.write_file(path, FileContent::Text(text.to_string()))
                    .map_err(|error| script_error(&context, &error))
            },
        );
    }

    let sink = results.clone();
    function(
        "write_json",
        &["path: &str", "value: Dynamic", "()"],
        "
Writes a value as pretty-printed JSON in the run directory, or at an absolute path in an export
folder (atomically).
Example: `results::write_json(\"results.json\", #{ conditions: conditions });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str, value: Dynamic| -> Result<()> {
        sink.write_file(path, FileContent::Json(json(&value)?)).map_err(|error| script_error(&context, &error))
    });

    let sink = results.clone();
    function(
        "write_jsonl",
        &["path: &str", "rows: Array", "()"],
        "
Writes an array as JSON Lines, one compact value per line, in the run directory, or at an
absolute path in an export folder (atomically).
Example: `results::write_jsonl(\"answers.jsonl\", answers);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str, rows: Array| -> Result<()> {
        let values = rows.iter().map(json).collect::<Result<Vec<_>>>()?;
        sink.write_file(path, FileContent::Jsonl(values)).map_err(|error| script_error(&context, &error))
    });

    let sink = results.clone();
    function(
        "check",
        &["name: &str", "passed: bool", "()"],
        "
Declares a check. The run still finishes, but exits with code 1 if any check failed; checks
are listed in the manifest and the closing summary.
Example: `results::check(\"every prompt answered\", answers.len() == prompts.len());`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |name: &str, passed: bool| sink.check(name, passed, ""));

    let sink = results.clone();
    function(
        "settings",
        &["name: &str", "value: Map", "()"],
        "
Records the settings a part of the experiment ran with (every knob, defaults included) in the
manifest under `settings.<name>`, so a reader sees exactly what produced the results; the same
name again replaces the earlier map.
Example: `results::settings(\"retriever\", #{ top_k: 8, rrf_k: 60 });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |name: &str, value: Map| -> Result<()> {
        sink.settings(name, json(&Dynamic::from_map(value))?);
        Ok(())
    });

    let sink = results;
    function(
        "check",
        &["name: &str", "passed: bool", "detail: &str", "()"],
        "
Declares a check with a detail shown when it fails.
Example: `results::check(\"hit rate\", rate >= 0.5, `hit rate ${rate}`);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |name: &str, passed: bool, detail: &str| sink.check(name, passed, detail));

    module
}
