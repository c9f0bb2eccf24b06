//! The Rhai runtime: one engine per run with the capabilities registered, limits that stop a
//! runaway script, project-relative imports, and errors rendered as `path:line:col`.
//!
//! This module compiles and evaluates; it does not decide where outputs go (that is `run`).

mod diagnostic;
mod resolver;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rhai::{AST, Dynamic, Engine, EvalAltResult, Scope};

pub use diagnostic::{Diagnostic, Sources};
pub use resolver::{Collected, ProjectResolver};

use crate::capabilities::Capabilities;
use crate::capabilities::log::Level;

/// Resource limits for one script. Generous for experiments, finite for runaway loops and
/// recursion.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Rhai operations (roughly, expression evaluations) before the script is stopped.
    pub max_operations: u64,
    pub max_call_levels: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // About a minute of pure script work in a debug build; real work belongs in capabilities.
            max_operations: 2_000_000_000,
            // Each Rhai call level costs native stack; scripts run on a 256 MiB stack (see `run`).
            max_call_levels: 200,
        }
    }
}

/// Native stack for the thread that evaluates a script, sized for `max_call_levels`.
pub const STACK_BYTES: usize = 256 << 20;

/// Set by Ctrl-C; the engine stops the script at its next operation.
pub type Interrupt = Arc<AtomicBool>;

/// An engine with every capability registered as `<name>::`, `print` routed to the log, and
/// imports resolved by `resolver`.
pub fn engine(capabilities: &Capabilities, resolver: ProjectResolver, limits: Limits, interrupt: Interrupt) -> Engine {
    let mut engine = Engine::new();
    engine
        .set_max_operations(limits.max_operations)
        .set_max_call_levels(limits.max_call_levels)
        // No string, array or map size limits: with any of them set, Rhai measures the whole value
        // (recursively) after every change to it, so pushing n rows onto a list of rows costs n²
        // (8,000 pushes of a small list: 1.1 s in a debug build, 54 ms without; LoCoMo's answerer
        // spent most of a 17-minute run there). The operation limit still stops a runaway loop.
        // Rhai's defaults (64 / 32) reject ordinary experiment code such as a validation loop
        // with nested interpolations; the 256 MiB script stack holds far deeper nesting.
        .set_max_expr_depths(256, 256)
        .set_strict_variables(true)
        .set_module_resolver(resolver);
    let log = capabilities.log.clone();
    engine.on_print(move |text| log.write(Level::Info, text));
    let log = capabilities.log.clone();
    engine.on_debug(move |text, source, position| {
        let place = match (source, position.line()) {
            (Some(source), Some(line)) => format!("{source}:{line}: "),
            (None, Some(line)) => format!("line {line}: "),
            _ => String::new(),
        };
        log.write(Level::Debug, &format!("{place}{text}"));
    });
    engine.on_progress(move |_| interrupt.load(Ordering::Relaxed).then(|| Dynamic::from("interrupted")));
    capabilities.register_rhai(&mut engine);
    engine
}

/// The constants every script sees: `ARGS`, `ARGV` and `SCENARIO`. Functions cannot see the
/// global scope in Rhai, so the `run::` namespace offers the same values inside functions.
pub fn scope(capabilities: &Capabilities) -> Result<Scope<'static>, Box<EvalAltResult>> {
    let run = &capabilities.run;
    let mut scope = Scope::new();
    scope.push_constant("ARGS", rhai::serde::to_dynamic(&run.args)?);
    scope.push_constant("ARGV", run.argv.iter().cloned().map(Dynamic::from).collect::<rhai::Array>());
    let scenario = match &run.scenario {
        Some(scenario) => rhai::serde::to_dynamic(scenario)?,
        None => Dynamic::UNIT,
    };
    scope.push_constant("SCENARIO", scenario);
    Ok(scope)
}

/// Compiles `source` (shown as `shown` in errors) against the scope's constants.
pub fn compile(engine: &Engine, scope: &Scope, shown: &str, source: &str) -> Result<AST, Box<EvalAltResult>> {
    let mut ast = engine.compile_with_scope(scope, source).map_err(|error| -> Box<EvalAltResult> { error.into() })?;
    ast.set_source(shown);
    Ok(ast)
}
