//! The Rhai namespace `run::`.

use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, FnPtr, Module, NativeCallContext};

use super::RunInfo;
use super::flags::{self, FlagSpec, FlagsError, Resolved};
use crate::capabilities::docs::function;
use crate::capabilities::script_error;

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

    function(
        "host_binary",
        &["String"],
        "
The running `host` binary's absolute path, for a script that runs host itself as a program
(a nested `host run`, or `host hook` written into an agent's settings); allow it with
`proc::allow([\"host\"])`.
Example: `proc::run(#{ argv: [run::host_binary(), \"--version\"] });`",
    )
    .set_into_module(&mut module, || -> Result<String> {
        std::env::current_exe()
            .map(|path| path.display().to_string())
            .map_err(|error| format!("cannot find the host binary: {error}").into())
    });

    function(
        "cache_dir",
        &["String"],
        "
Host's cache folder (`HOST_CACHE_DIR`, else `$XDG_CACHE_HOME/host`, else `~/.cache/host`): the
embedding model, fetched packages, recorded LLM answers. Hand it to a program that runs host
in an environment of its own (`env: #{ HOST_CACHE_DIR: run::cache_dir() }`), so that it finds
what this run found.
Example: `let cache = run::cache_dir();`",
    )
    .set_into_module(&mut module, || crate::project::cache_root().display().to_string());

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
    function(
        "flags",
        &["declaration: Array", "Map"],
        "
Declares the script's flags and returns their values: the command line's, else the scenario's,
else the default. Each entry: `name` (`model` or `scenario-id`; the value's key uses `_`),
`type` (`string`, `int`, `float`, `bool`, `list`: repeatable), `default_value`, `required`,
`allowed` (the only values accepted), `scenario` (a dotted path in the scenario, such as
`verify.model`, that replaces the default), `env` (an environment variable that wins over the
scenario and the default), `help`. An unknown flag, a missing required one, a
value of the wrong type or one not allowed is an error naming the flag.
`host run SCRIPT -- --help` prints the flags with their defaults and runs nothing else.
Example: `let flags = run::flags([#{ name: \"provider\", required: true, help: \"the model provider\" }, #{ name: \"repetitions\", type: \"int\", default_value: 1, help: \"runs per scenario\" }]);`",
    )
    .set_into_module(&mut module, move |context: NativeCallContext, declaration: Array| -> Result<Dynamic> {
        let mut specs = Vec::with_capacity(declaration.len());
        for (index, entry) in declaration.iter().enumerate() {
            let value: serde_json::Value = rhai::serde::from_dynamic(entry)?;
            let minimal = serde_json::json!({"name": "x", "help": "x"});
            let spec = crate::capabilities::decode::decode::<FlagSpec>(value, &minimal).map_err(|error| {
                script_error(&context, &FlagsError::Declaration { index, message: error.to_string() })
            })?;
            specs.push(spec);
        }
        flags::check_declaration(&specs).map_err(|error| script_error(&context, &error))?;
        let env = |name: &str| std::env::var(name).ok().map(|value| value.trim().to_string()).filter(|value| !value.is_empty());
        match flags::resolve(&specs, &info.args, &env, info.scenario.as_ref(), &info.script) {
            Ok(Resolved::Values(values)) => rhai::serde::to_dynamic(values),
            Ok(Resolved::Help(text)) => {
                print!("{text}");
                Err(Box::new(EvalAltResult::ErrorTerminated(super::HELP_SHOWN.into(), context.call_position())))
            }
            Err(error) => Err(script_error(&context, &error)),
        }
    });

    let info = run.clone();
    function(
        "git",
        &["Dynamic"],
        "
The project's git state as the manifest records it: `#{ commit, dirty }` (the full commit id,
and whether tracked files had changes), or `()` outside a git repository.
Example: `let commit = run::git()?.commit ?? \"unknown\";`",
    )
    .set_into_module(&mut module, move || -> Dynamic {
        match &info.git {
            Some(git) => {
                let mut map = rhai::Map::new();
                map.insert("commit".into(), git.commit.clone().into());
                map.insert("dirty".into(), git.dirty.into());
                map.into()
            }
            None => Dynamic::UNIT,
        }
    });

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

    let info = run.clone();
    function(
        "shard",
        &["items: Array", "Array"],
        "
This run's part of the script's units of work (prompts, evals, sets, scenarios): all of them,
or under `host run --shard I/N` the I-th of N contiguous, balanced blocks, so that N machines
share a run and `host merge` joins their tables in the order one run writes them. Under `host
merge` (see `run::reporting`) it returns all items, after checking that they are the ones the
shards split (under `host report`, the reported run's own block). Write each unit's rows together, in unit order, so that the
shards' tables joined are the table of one run. The manifest records each call (how many
items, which block, their sha256). A benchmark calls it through `run::benchmark`.
Example: `for prompt in run::shard(prompts) { answer(prompt); }`",
    )
    .set_into_module(&mut module, move |context: NativeCallContext, items: Array| take_units(&info, &context, items));

    let info = run.clone();
    function(
        "benchmark",
        &["parts: Map", "Dynamic"],
        "
The skeleton every benchmark fills in, so that a run, a shard of one and a report of runs
already made (`host merge`, `host report`) all go the same way. `parts.units` (prompts, evals,
sets, scenarios) are split as `run::shard` splits them; `parts.work` is called with this run's
units, except in a report, whose tables are the reported runs'; then `parts.report` is called
with the units (every unit in a merge). The report must read only the tables (`results::rows`)
and the files the work wrote, so that a merge of shards reports exactly what one run does.
Returns what `report` returns.
Example: `run::benchmark(#{ units: prompts, work: |mine| answer_all(mine), report: |all| write_report(all) });`",
    )
    .set_into_module(&mut module, move |context: NativeCallContext, parts: rhai::Map| -> Result<Dynamic> {
        let parts = BenchmarkParts::from_map(parts).map_err(|message| -> Box<EvalAltResult> {
            format!("invalid parts for `run::benchmark`: {message}").into()
        })?;
        let units = take_units(&info, &context, parts.units)?;
        if !matches!(info.sharding, super::Sharding::Report { .. }) {
            // What the work returns is not kept: its results are in the tables.
            let _: Dynamic = parts.work.call_within_context(&context, (units.clone(),))?;
        }
        parts.report.call_within_context::<Dynamic>(&context, (units,))
    });

    let info = run.clone();
    function(
        "reporting",
        &["bool"],
        "
Whether this is a report of runs already made (`host merge` of shards, `host report` of one
run): their tables are this run's, and the script should skip its work phases and run only its report
phase, reading the tables with `results::rows`.
Example: `if !run::reporting() { answer_all(run::shard(prompts)); }`",
    )
    .set_into_module(&mut module, move || matches!(info.sharding, super::Sharding::Report { .. }));

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

/// This run's block of `items` (see `run::shard`), recorded for the manifest.
fn take_units(info: &RunInfo, context: &NativeCallContext, items: Array) -> Result<Array> {
    let json =
        serde_json::to_vec(&rhai::serde::from_dynamic::<serde_json::Value>(&Dynamic::from_array(items.clone()))?)
            .map_err(|error| format!("cannot hash the items: {error}"))?;
    let sha256 = crate::capabilities::fs::sha256_hex(&json);
    let range = info.units.take(&info.sharding, items.len(), sha256).map_err(|error| script_error(context, &error))?;
    Ok(items[range].to_vec())
}

/// What `run::benchmark` is given.
struct BenchmarkParts {
    units: Array,
    work: FnPtr,
    report: FnPtr,
}

impl BenchmarkParts {
    fn from_map(mut parts: rhai::Map) -> std::result::Result<Self, String> {
        let mut take =
            |key: &str, kind: &str| parts.remove(key).ok_or_else(|| format!("`{key}` is missing; it is {kind}"));
        let units = take("units", "the list of units of work")?;
        let work = take("work", "a function of this run's units")?;
        let report = take("report", "a function of the units")?;
        let unknown: Vec<String> = parts.keys().map(|key| format!("`{key}`")).collect();
        if !unknown.is_empty() {
            return Err(format!("unknown {}; the parts are `units`, `work` and `report`", unknown.join(", ")));
        }
        let kind = |value: &Dynamic| value.type_name().to_string();
        Ok(Self {
            units: units
                .clone()
                .try_cast::<Array>()
                .ok_or_else(|| format!("`units` must be an array, got {}", kind(&units)))?,
            work: work
                .clone()
                .try_cast::<FnPtr>()
                .ok_or_else(|| format!("`work` must be a function, got {}", kind(&work)))?,
            report: report
                .clone()
                .try_cast::<FnPtr>()
                .ok_or_else(|| format!("`report` must be a function, got {}", kind(&report)))?,
        })
    }
}
