//! The Rhai namespace `time::`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rhai::{EvalAltResult, Module, NativeCallContext};

use crate::capabilities::{docs::function, script_error};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// Sleeps for `seconds` or fails naming the value; Ctrl-C ends the pause and the script.
fn pause(context: &NativeCallContext, seconds: f64, interrupt: &AtomicBool) -> Result<()> {
    let duration = super::duration(seconds).map_err(|error| script_error(context, &error))?;
    if super::sleep(duration, &|| interrupt.load(Ordering::Relaxed)) {
        Ok(())
    } else {
        Err(Box::new(EvalAltResult::ErrorTerminated("interrupted".into(), context.call_position())))
    }
}

/// `interrupt` is the run's Ctrl-C flag.
pub fn module(interrupt: Arc<AtomicBool>) -> Module {
    let mut module = Module::new();

    function(
        "now_ms",
        &["f64"],
        "
Milliseconds on a monotonic clock: only differences mean something, and they are latencies
that a change of the system time cannot spoil.
Example: `let started = time::now_ms(); work(); let latency_ms = time::now_ms() - started;`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, super::now_ms);

    function(
        "sleep",
        &["seconds: f64"],
        "
Pauses the script for `seconds` (a fraction is fine); Ctrl-C ends the pause and the script. A
negative or NaN value is a catchable error naming it.
Example: `time::sleep(0.5);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, {
        let interrupt = interrupt.clone();
        move |context: NativeCallContext, seconds: f64| -> Result<()> { pause(&context, seconds, &interrupt) }
    });

    function(
        "sleep",
        &["seconds: i64"],
        "
Pauses the script for a whole number of `seconds`; a negative value is a catchable error.
Example: `time::sleep(2);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, seconds: rhai::INT| -> Result<()> {
        pause(&context, seconds as f64, &interrupt)
    });

    function(
        "utc_now",
        &["String"],
        "
The current date and time in UTC, RFC 3339 with whole seconds, for labels and manifests
(not for measuring: use `time::now_ms`).
Example: `results::write_json(\"started.json\", #{ at: time::utc_now() });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, super::utc_now);

    module
}
