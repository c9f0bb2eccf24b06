//! The `log` capability: messages for the person running the experiment.
//!
//! Lines go to stderr (never stdout, which is for data) and to the run's `run.log`.

pub mod rhai;
pub mod wasm;

use std::sync::Arc;

use crate::console::Console;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

/// Where script and guest messages go.
pub trait Log: Send + Sync {
    fn write(&self, level: Level, message: &str);
}

/// [`Log`] onto the run's console; `debug` lines are shown only with `--verbose` but always
/// kept in `run.log`.
#[derive(Debug)]
pub struct ConsoleLog {
    console: Arc<Console>,
}

impl ConsoleLog {
    pub fn new(console: Arc<Console>) -> Self {
        ConsoleLog { console }
    }
}

impl Log for ConsoleLog {
    fn write(&self, level: Level, message: &str) {
        let line = match level {
            Level::Debug => format!("debug: {message}"),
            Level::Info => message.to_string(),
            Level::Warn => format!("warning: {message}"),
            Level::Error => format!("error: {message}"),
        };
        if level == Level::Debug && !self.console.verbose() {
            self.console.record(&line);
        } else {
            self.console.line(&line);
        }
    }
}

/// `log::` for scripts, and `host:log` for guests.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "log",
    rhai: |capabilities| rhai::module(capabilities.log.clone()),
    types: |_| {},
    guest: Some(|imports, guest, op, input| {
        Box::pin(async move { wasm::call(imports.log.as_ref(), guest, op, input) })
    }),
    finish: |_, _| {},
    scratch: None,
};
