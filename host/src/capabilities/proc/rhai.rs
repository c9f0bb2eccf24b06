//! The Rhai namespace `proc::` and the `Process` type `proc::start` returns: thin, on the run's
//! async runtime. Policy lives in [`super::ProcPolicy`], recording in [`super::MeteredProcesses`].

use std::sync::Arc;
use std::time::Duration;

use rhai::{Array, Dynamic, Engine, EvalAltResult, Map, Module, NativeCallContext};
use serde_json::{Value, json};
use tokio::runtime::Handle;

use super::{DEFAULT_CONCURRENCY, Proc, ProcError, ProcOutput, Spawned};
use crate::capabilities::docs::function;
use crate::capabilities::progress::Progress;
use crate::capabilities::{BatchOptions, script_error, script_options, script_value};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// A spawned program, as scripts hold it.
#[derive(Clone)]
pub struct Process(Arc<Spawned>);

pub fn register_types(engine: &mut Engine) {
    engine.register_type_with_name::<Process>("Process");
}

/// Ctrl-C ends the script at once; any other error is catchable.
fn raise(context: &NativeCallContext, error: &ProcError) -> Box<EvalAltResult> {
    match error {
        ProcError::Interrupted => {
            Box::new(EvalAltResult::ErrorTerminated("interrupted".into(), context.call_position()))
        }
        other => script_error(context, other),
    }
}

fn output(output: ProcOutput) -> Result<Dynamic> {
    rhai::serde::to_dynamic(output)
}

fn seconds(context: &NativeCallContext, value: &Dynamic) -> Result<Duration> {
    let number = value.as_float().ok().or_else(|| value.as_int().ok().map(|n| n as f64));
    match number {
        Some(seconds) if seconds.is_finite() && seconds >= 0.0 => Ok(Duration::from_secs_f64(seconds.min(1e9))),
        _ => Err(script_error(
            context,
            &ProcError::Fields { message: format!("`timeout_s` must be a number of seconds, got `{value}`") },
        )),
    }
}

pub fn module(proc: Arc<Proc>, progress: Arc<dyn Progress>, runtime: Handle) -> Module {
    let mut module = Module::new();
    let minimal = json!({"argv": ["true"]});

    let (procs, handle, least) = (proc.clone(), runtime.clone(), minimal.clone());
    function(
        "run",
        &["request: Map", "Map"],
        "
Runs one program to completion, without a shell, and returns `#{ ok, code, signal, stdout,
stderr, stdout_bytes, stderr_bytes, truncated, timed_out, interrupted, duration_ms, pid, kind,
error }`. Request fields: `argv` (required: the program, a name on `PATH` or a path, then its
arguments), `cwd`, `env` (a map set for the child), `pass_env` (names of host variables passed
as they are, e.g. API keys; never recorded), `stdin` (text), `timeout_s` (600), `grace_s` (5:
between SIGTERM and SIGKILL), `output_limit_kib` (1024 per stream: the first and last half are
kept, with a marker where output was dropped). The child's environment holds only `PATH`,
`HOME`, `LANG` and a few more, the scenario's `[proc] env` names, `pass_env` and `env`.
A program that is missing, fails, is killed or times out is not an error: `ok` is false, `kind`
is `exit`, `signal`, `timeout`, `missing` or `start`, and `error` says what happened (Ctrl-C
ends the program and then the script). A timeout
ends the program's whole process group. The program must be allowed (`[proc] allow` in the
scenario, or `proc::allow`); every run is a row of the `proc_calls` table.
Example: `let r = proc::run(#{ argv: [\"git\", \"status\", \"--short\"], cwd: ws.path(), timeout_s: 30 }); if !r.ok { print(r.error); }`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, request: Map| -> Result<Dynamic> {
        let request = script_value(&context, "`proc::run` request", &request.into(), &least)?;
        match handle.block_on(procs.run(request)) {
            Ok(result) => output(result),
            Err(error) => Err(raise(&context, &error)),
        }
    });

    let (procs, handle, bars, least) = (proc.clone(), runtime.clone(), progress.clone(), minimal.clone());
    function(
        "run_many",
        &["requests: Array", "options: Map", "Array"],
        "
Runs many programs, up to `options.concurrency` (4) at once, with a progress bar labelled
`options.label` (`proc`); returns one result per request (as `proc::run` returns it), in input
order. A failed program does not stop the batch. Ctrl-C ends every program still running.
Example: `let results = proc::run_many(evals.map(|e| #{ argv: [\"npm\", \"test\"], cwd: e }), #{ concurrency: 2, label: \"tests\" });`",
    )
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, requests: Array, options: Map| -> Result<Array> {
            let options: BatchOptions = script_options(&context, "proc::run_many", options)?;
            run_many(&procs, &*bars, &handle, &context, requests, options, &least)
        },
    );

    let (procs, handle, bars, least) = (proc.clone(), runtime.clone(), progress, minimal.clone());
    function(
        "run_many",
        &["requests: Array", "Array"],
        "
`proc::run_many(requests, #{})`: up to 4 programs at once.
Example: `let results = proc::run_many([#{ argv: [\"true\"] }, #{ argv: [\"false\"] }]);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, requests: Array| -> Result<Array> {
        run_many(&procs, &*bars, &handle, &context, requests, BatchOptions::default(), &least)
    });

    let (procs, handle) = (proc.clone(), runtime.clone());
    function(
        "start",
        &["request: Map", "Process"],
        "
Starts a long-lived program (a server) and returns a `Process` once it is ready (not `spawn`:
Rhai reserves that word). Request fields as `proc::run` (but no `timeout_s`), and
`ready: #{ line, port, timeout_s }`: wait until
`line` appears in its output and/or `port` on 127.0.0.1 accepts a connection, for at most
`timeout_s` (60). A program that cannot start, exits or is not ready in time is ended, and its
`ready()` is false with `error()` saying why. Methods: `pid()`, `ready()`, `error()`,
`running()`, `stdout_lines()`, `stderr_lines()`, `wait()`, `wait(timeout_s)`, `kill()`. Every
spawned process is ended (with its whole process group) when the run ends, however it ends.
Example: `let server = proc::start(#{ argv: [\"python3\", \"-m\", \"http.server\", `${port}`], ready: #{ port: port } });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, request: Map| -> Result<Process> {
        let request = script_value(&context, "`proc::start` request", &request.into(), &minimal)?;
        handle.block_on(procs.start(request)).map(Process).map_err(|error| raise(&context, &error))
    });

    let procs = proc;
    function(
        "allow",
        &["programs: Array", "()"],
        "
Declares programs this script runs, in addition to the scenario's `[proc] allow`: a name
(`git`) allows the program of that file name however it is called; a path with a `/` allows
that one file, relative to the project root. The manifest lists what was allowed and where.
Example: `proc::allow([\"git\", \"npm\", \"node\"]);`",
    )
    .set_into_module(&mut module, move |context: NativeCallContext, programs: Array| -> Result<()> {
        let programs: Vec<String> = script_value(&context, "`proc::allow` programs", &programs.into(), &json!([]))?;
        procs.policy.allow(&programs);
        Ok(())
    });

    function(
        "free_port",
        &["i64"],
        "
A TCP port on 127.0.0.1 that is free now, for a server the script is about to spawn.
Example: `let port = proc::free_port();`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, |context: NativeCallContext| -> Result<i64> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0));
        let port = listener.and_then(|listener| listener.local_addr()).map(|address| i64::from(address.port()));
        port.map_err(|error| script_error(&context, &error))
    });

    process_methods(&mut module, runtime);
    module
}

fn run_many(
    proc: &Arc<Proc>,
    progress: &dyn Progress,
    runtime: &Handle,
    context: &NativeCallContext,
    requests: Array,
    options: BatchOptions,
    minimal: &Value,
) -> Result<Array> {
    let requests: Vec<super::ProcRequest> = requests
        .into_iter()
        .enumerate()
        .map(|(index, request)| {
            script_value(context, &format!("`proc::run_many` requests[{index}]"), &request, minimal)
        })
        .collect::<Result<_>>()?;
    let label = options.label.unwrap_or_else(|| "proc".to_string());
    let concurrency = options.concurrency.unwrap_or(DEFAULT_CONCURRENCY);
    let outcomes: Vec<std::result::Result<ProcOutput, ProcError>> =
        crate::capabilities::batch::with_progress(runtime, progress, &label, requests, concurrency, |request| {
            let proc = proc.clone();
            async move { proc.run(request).await }
        });
    outcomes.into_iter().map(|outcome| outcome.map_err(|error| raise(context, &error)).and_then(output)).collect()
}

fn process_methods(module: &mut Module, runtime: Handle) {
    function(
        "pid",
        &["process: &mut Process", "?"],
        "The process id, or `()` if it never started.\nExample: `print(server.pid());`",
    )
    .in_global_namespace()
    .set_into_module(module, |process: &mut Process| {
        process.0.pid().map_or(Dynamic::UNIT, |pid| Dynamic::from(i64::from(pid)))
    });

    function(
        "ready",
        &["process: &mut Process", "bool"],
        "Whether it became ready.\nExample: `if !server.ready() { throw server.error(); }`",
    )
    .in_global_namespace()
    .set_into_module(module, |process: &mut Process| process.0.is_ready());

    function(
        "error",
        &["process: &mut Process", "?"],
        "Why it is not ready, or `()`.\nExample: `print(server.error());`",
    )
    .in_global_namespace()
    .set_into_module(module, |process: &mut Process| process.0.error().map_or(Dynamic::UNIT, Dynamic::from));

    function(
        "running",
        &["process: &mut Process", "bool"],
        "Whether it is still running.\nExample: `while server.running() { time::sleep(0.1); }`",
    )
    .in_global_namespace()
    .set_into_module(module, |process: &mut Process| process.0.is_running());

    function(
        "stdout_lines",
        &["process: &mut Process", "Array"],
        "The lines of its stdout kept so far (the first and last, within `output_limit_kib`).\nExample: `for line in server.stdout_lines() { print(line); }`",
    )
    .in_global_namespace()
    .set_into_module(module, |process: &mut Process| -> Array {
        process.0.stdout_lines().into_iter().map(Dynamic::from).collect()
    });

    function(
        "stderr_lines",
        &["process: &mut Process", "Array"],
        "The lines of its stderr kept so far.\nExample: `let errors = server.stderr_lines();`",
    )
    .in_global_namespace()
    .set_into_module(module, |process: &mut Process| -> Array {
        process.0.stderr_lines().into_iter().map(Dynamic::from).collect()
    });

    let handle = runtime.clone();
    function(
        "wait",
        &["process: &mut Process", "Map"],
        "Waits for it to end and returns what `proc::run` returns.\nExample: `let result = job.wait();`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(module, move |context: NativeCallContext, process: &mut Process| -> Result<Dynamic> {
        match handle.block_on(process.0.wait(None)) {
            Ok(Some(result)) => output(result),
            Ok(None) => Ok(Dynamic::UNIT),
            Err(error) => Err(raise(&context, &error)),
        }
    });

    let handle = runtime.clone();
    function(
        "wait",
        &["process: &mut Process", "timeout_s: ?", "?"],
        "Waits at most `timeout_s` seconds: what `proc::run` returns, or `()` if it is still running.\nExample: `let result = job.wait(5); if result == () { job.kill(); }`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(
        module,
        move |context: NativeCallContext, process: &mut Process, timeout: Dynamic| -> Result<Dynamic> {
            let timeout = seconds(&context, &timeout)?;
            match handle.block_on(process.0.wait(Some(timeout))) {
                Ok(Some(result)) => output(result),
                Ok(None) => Ok(Dynamic::UNIT),
                Err(error) => Err(raise(&context, &error)),
            }
        },
    );

    function(
        "kill",
        &["process: &mut Process", "Map"],
        "Ends it and its process group (SIGTERM, then SIGKILL after `grace_s`) and returns how it ended; `ok` is true unless it had failed on its own.\nExample: `let ended = server.kill();`",
    )
    .in_global_namespace()
    .with_volatility(true)
    .set_into_module(module, move |process: &mut Process| -> Result<Dynamic> { output(runtime.block_on(process.0.kill())) });
}
