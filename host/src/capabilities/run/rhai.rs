//! The Rhai namespace `run::`.

use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, Module};

use super::RunInfo;
use crate::capabilities::docs::function;

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

pub fn module(run: Arc<RunInfo>) -> Module {
    let mut module = Module::new();

    let info = run.clone();
    function(
        "id",
        &["String"],
        "The run id, also the `run_id` column of every table.\nExample: `log::info(`run ${run::id()}`);`",
    )
    .set_into_module(&mut module, move || info.id.clone());

    let info = run.clone();
    function(
        "experiment",
        &["String"],
        "The experiment name (the script's file name without `.rhai`).\nExample: `let name = run::experiment();`",
    )
    .set_into_module(&mut module, move || info.experiment.clone());

    let info = run.clone();
    function(
        "dir",
        &["String"],
        "The run directory, where tables and files are written.\nExample: `log::info(`writing to ${run::dir()}`);`",
    )
    .set_into_module(&mut module, move || info.dir.display().to_string());

    let info = run.clone();
    function(
        "args",
        &["Map"],
        "
The script arguments (after `--`) as a map; the same map as the constant `ARGS`.
`--key value` and `--key=value` give typed values, `--flag` gives `true`, dashes become underscores.
Example: `let trials = run::args().trials ?? 1;`",
    )
    .set_into_module(&mut module, move || -> Result<Dynamic> { rhai::serde::to_dynamic(&info.args) });

    let info = run.clone();
    function("argv", &["Array"], "The script arguments exactly as given; the same list as the constant `ARGV`.\nExample: `for token in run::argv() { print(token); }`")
        .set_into_module(&mut module, move || -> Array { info.argv.iter().cloned().map(Dynamic::from).collect() });

    function(
        "env",
        &["name: &str", "Dynamic"],
        "
An environment variable's value, or `()` when it is unset or empty: how a script finds the
endpoints a user configured (`CORTEX_BASE_URL`, `CORTEX_API_KEY`). Values are never recorded
by the host; keep secrets out of tables and reports.
Example: `let base_url = run::env(\"CORTEX_BASE_URL\") ?? \"http://127.0.0.1:8080\";`",
    )
    .set_into_module(&mut module, |name: &str| -> Dynamic {
        match std::env::var(name) {
            Ok(value) if !value.trim().is_empty() => value.trim().into(),
            _ => Dynamic::UNIT,
        }
    });

    let info = run;
    function(
        "scenario",
        &["Dynamic"],
        "
The scenario (from `--scenario FILE`, or `scenarios/<script name>.toml` when it exists) as a
map, or `()` without one; the same value as the constant `SCENARIO`.
Example: `let top_k = run::scenario()?.retrieval?.top_k ?? 6;`",
    )
    .set_into_module(&mut module, move || -> Result<Dynamic> {
        match &info.scenario {
            Some(scenario) => rhai::serde::to_dynamic(scenario),
            None => Ok(Dynamic::UNIT),
        }
    });

    module
}
