//! The Rhai namespace `log::`.

use std::sync::Arc;

use rhai::{Dynamic, Module};

use super::{Level, Log};
use crate::capabilities::docs::function;

pub fn module(log: Arc<dyn Log>) -> Module {
    let mut module = Module::new();
    let levels = [
        (
            Level::Debug,
            "debug",
            "Writes a debug line: kept in `run.log`, shown on stderr only with `--verbose`.\nExample: `log::debug(`prompt ${p.id}: ${hits.len()} hits`);`",
        ),
        (
            Level::Info,
            "info",
            "Writes a line to stderr and `run.log`. Any value is accepted and shown as text.\nExample: `log::info(`loaded ${sessions.len()} sessions`);`",
        ),
        (
            Level::Warn,
            "warn",
            "Writes a line starting with `warning:`.\nExample: `log::warn(\"no API key: using the built-in judge\");`",
        ),
        (
            Level::Error,
            "error",
            "Writes a line starting with `error:`; the run goes on (throw to stop it).\nExample: `log::error(`prompt ${id} failed: ${err}`);`",
        ),
    ];
    for (level, name, doc) in levels {
        let log = log.clone();
        function(name, &["message: Dynamic", "()"], doc).with_volatility(true).set_into_module(
            &mut module,
            move |message: Dynamic| {
                let text = match message.clone().into_immutable_string() {
                    Ok(text) => text.to_string(),
                    Err(_) => message.to_string(),
                };
                log.write(level, &text);
            },
        );
    }
    module
}
