//! The Rhai namespace `stats::`.

use rhai::{Array, Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use algorithms::stats;

use crate::capabilities::{docs::function, script_error, script_options};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// Numbers from a script array; integers count as floats, anything else names its index.
fn numbers(context: &NativeCallContext, name: &str, values: &Array) -> Result<Vec<f64>> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| {
            value.as_float().or_else(|_| value.as_int().map(|int| int as f64)).map_err(|type_name| {
                let message = format!("`{name}[{index}]` must be a number, got {type_name}");
                Box::new(EvalAltResult::ErrorRuntime(message.into(), context.call_position()))
            })
        })
        .collect()
}

fn integers(context: &NativeCallContext, name: &str, values: &Array) -> Result<Vec<i64>> {
    numbers(context, name, values).map(|values| values.iter().map(|value| value.round() as i64).collect())
}

/// Cluster ids as text: values that print alike are one cluster (`1` and `"1"` too).
fn cluster_names(clusters: &Array) -> Vec<String> {
    clusters.iter().map(|cluster| cluster.to_string()).collect()
}

/// The options of `stats::bootstrap_mean`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct BootstrapOptions {
    level: f64,
    resamples: usize,
    seed: u64,
}

impl Default for BootstrapOptions {
    fn default() -> Self {
        BootstrapOptions { level: 0.95, resamples: 10_000, seed: 1 }
    }
}

pub fn module() -> Module {
    let mut module = Module::new();

    function(
        "mean",
        &["values: Array", "f64"],
        "The arithmetic mean; an empty array is an error.\nExample: `let average = stats::mean(scores);`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, values: Array| -> Result<f64> {
        stats::mean(&numbers(&context, "values", &values)?).map_err(|error| script_error(&context, &error))
    });

    function(
        "variance",
        &["values: Array", "f64"],
        "The sample variance (divisor n − 1; 0 for one value).\nExample: `let spread = stats::variance(trial_means);`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, values: Array| -> Result<f64> {
        stats::variance(&numbers(&context, "values", &values)?).map_err(|error| script_error(&context, &error))
    });

    function(
        "nearest_rank",
        &["values: Array", "q: f64", "f64"],
        "
The nearest-rank percentile: the value at 1-based position ⌈q·n⌉ of the sorted values, `q` in
[0, 1] (the original benchmark's latency percentiles).
Example: `let p95 = stats::nearest_rank(latencies, 0.95);`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, values: Array, q: f64| -> Result<f64> {
        stats::nearest_rank(&numbers(&context, "values", &values)?, q).map_err(|error| script_error(&context, &error))
    });

    function(
        "bootstrap_mean",
        &["values: Array", "options: Map", "Map"],
        "
A percentile-bootstrap confidence interval for the mean: `#{ mean, low, high, level, resamples,
seed }`. Options: `level` (0.95), `resamples` (10000), `seed` (1); the same seed gives the same
interval.
Example: `let ci = stats::bootstrap_mean(deltas, #{ level: 0.95, seed: 7 });`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, values: Array, options: Map| -> Result<Dynamic> {
        let options: BootstrapOptions = script_options(&context, "stats::bootstrap_mean", options)?;
        let values = numbers(&context, "values", &values)?;
        let interval = stats::bootstrap_mean(&values, options.level, options.resamples, options.seed)
            .map_err(|error| script_error(&context, &error))?;
        rhai::serde::to_dynamic(interval)
    });

    function(
        "bootstrap_clustered_mean",
        &["values: Array", "clusters: Array", "options: Map", "Map"],
        "
A bootstrap confidence interval for the mean of values that come in clusters (a benchmark's
questions grouped by conversation): each resample draws whole clusters with replacement, so
questions that succeed or fail together are not counted as independent. `clusters[i]` names
the cluster of `values[i]` (any strings or numbers). Returns and options as `bootstrap_mean`.
Example: `let ci = stats::bootstrap_clustered_mean(f1s, conversation_ids, #{ seed: 1 });`",
    )
    .set_into_module(
        &mut module,
        |context: NativeCallContext, values: Array, clusters: Array, options: Map| -> Result<Dynamic> {
            let options: BootstrapOptions = script_options(&context, "stats::bootstrap_clustered_mean", options)?;
            let values = numbers(&context, "values", &values)?;
            let clusters = cluster_names(&clusters);
            let interval =
                stats::bootstrap_clustered_mean(&values, &clusters, options.level, options.resamples, options.seed)
                    .map_err(|error| script_error(&context, &error))?;
            rhai::serde::to_dynamic(interval)
        },
    );

    function(
        "bootstrap_clustered_difference",
        &["first: Array", "second: Array", "clusters: Array", "options: Map", "Map"],
        "
The cluster bootstrap interval of the mean paired difference `first[i] − second[i]` (two
systems scored on the same questions), resampling whole clusters as
`bootstrap_clustered_mean` does. Returns and options as `bootstrap_mean`.
Example: `let ci = stats::bootstrap_clustered_difference(f1_a, f1_b, conversation_ids, #{});`",
    )
    .set_into_module(
        &mut module,
        |context: NativeCallContext, first: Array, second: Array, clusters: Array, options: Map| -> Result<Dynamic> {
            let options: BootstrapOptions = script_options(&context, "stats::bootstrap_clustered_difference", options)?;
            let first = numbers(&context, "first", &first)?;
            let second = numbers(&context, "second", &second)?;
            let clusters = cluster_names(&clusters);
            let interval = stats::bootstrap_clustered_difference(
                &first,
                &second,
                &clusters,
                options.level,
                options.resamples,
                options.seed,
            )
            .map_err(|error| script_error(&context, &error))?;
            rhai::serde::to_dynamic(interval)
        },
    );

    function(
        "sign_test",
        &["differences: Array", "Map"],
        "
The exact two-sided sign test on paired differences: `#{ positive, negative, ties, p_value }`
(ties are dropped; no differences gives p = 1).
Example: `let test = stats::sign_test(deltas); log::info(`p = ${test.p_value}`);`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, differences: Array| -> Result<Dynamic> {
        let test = stats::sign_test(&numbers(&context, "differences", &differences)?)
            .map_err(|error| script_error(&context, &error))?;
        rhai::serde::to_dynamic(test)
    });

    function(
        "agreement",
        &["first: Array", "second: Array", "Map"],
        "
How two raters agree on the same items, given integer ratings (numbers are rounded):
`#{ n, exact, kappa, labels, confusion }`; `confusion[i][j]` counts items the first rater put in
`labels[i]` and the second in `labels[j]`. `kappa` is Cohen's κ.
Example: `let agreement = stats::agreement(old_scores, new_scores);`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, first: Array, second: Array| -> Result<Dynamic> {
        let agreement =
            stats::agreement(&integers(&context, "first", &first)?, &integers(&context, "second", &second)?)
                .map_err(|error| script_error(&context, &error))?;
        rhai::serde::to_dynamic(agreement)
    });

    function(
        "shuffle",
        &["items: Array", "seed: i64", "Array"],
        "
The items in a seeded random order: mulberry32 and Fisher–Yates, the permutation the original
benchmark's `--shuffle-prompts --shuffle-seed` produced.
Example: `let order = stats::shuffle(prompts, 1337);`",
    )
    .set_into_module(&mut module, |items: Array, seed: i64| -> Array {
        // The original passed the seed to a 32-bit generator; keep its low 32 bits likewise.
        stats::shuffled_order(items.len(), seed as u32).into_iter().map(|index| items[index].clone()).collect()
    });

    module
}
