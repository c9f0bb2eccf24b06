//! The Rhai namespace `progress::` and the `ProgressTask` type it returns.

use std::sync::Arc;

use rhai::{Array, Dynamic, Engine, EvalAltResult, FnPtr, INT, Module, NativeCallContext};

use super::{Progress, Task};
use crate::capabilities::docs::function;

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// A running progress display, as scripts hold it.
#[derive(Clone)]
pub struct ProgressTask(Arc<dyn Task>);

pub fn register_types(engine: &mut Engine) {
    engine.register_type_with_name::<ProgressTask>("ProgressTask");
}

pub fn module(progress: Arc<dyn Progress>) -> Module {
    let mut module = Module::new();

    let starter = progress.clone();
    function("start", &["label: &str", "total: INT", "ProgressTask"], "
Starts a progress bar of `total` steps; call `advance()` per step and `finish()` at the end.
Example: `let bar = progress::start(\"answer\", prompts.len()); for p in prompts { ...; bar.advance(); } bar.finish();`")
    .with_volatility(true)
    .set_into_module(&mut module, move |label: &str, total: INT| {
        ProgressTask(starter.start(label, Some(u64::try_from(total).unwrap_or(0))))
    });

    let starter = progress.clone();
    function(
        "start",
        &["label: &str", "ProgressTask"],
        "
Starts a spinner for work of unknown length.
Example: `let bar = progress::start(\"scan\"); while more() { bar.advance(); } bar.finish();`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |label: &str| ProgressTask(starter.start(label, None)));

    function(
        "advance",
        &["task: &mut ProgressTask", "()"],
        "Advances a progress task by one step.\nExample: `bar.advance();`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, |task: &mut ProgressTask| task.0.advance(1));

    function(
        "advance",
        &["task: &mut ProgressTask", "steps: INT", "()"],
        "Advances a progress task by `steps`.\nExample: `bar.advance(batch.len());`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, |task: &mut ProgressTask, steps: INT| {
        task.0.advance(u64::try_from(steps).unwrap_or(0));
    });

    function(
        "finish",
        &["task: &mut ProgressTask", "()"],
        "Ends a progress task and prints its closing line.\nExample: `bar.finish();`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(&mut module, |task: &mut ProgressTask| task.0.finish());

    let starter = progress;
    function(
        "map",
        &["items: Array", "label: &str", "mapper: FnPtr", "Array"],
        "
Calls `mapper` on each item with a progress bar, and returns the results in order.
Example: `let scores = progress::map(prompts, \"judge\", |p| judge(p));`",
    )
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, items: Array, label: &str, mapper: FnPtr| -> Result<Array> {
            let task = starter.start(label, Some(items.len() as u64));
            let mut results = Array::with_capacity(items.len());
            for item in items {
                results.push(mapper.call_within_context::<Dynamic>(&context, (item,))?);
                task.advance(1);
            }
            task.finish();
            Ok(results)
        },
    );

    module
}
