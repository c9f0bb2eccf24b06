//! `host run`: one experiment run, from arguments to a closed run directory.
//!
//! Order matters: the script is compiled before the run directory exists (a typo leaves no
//! run behind); once it exists, every way out goes through [`finish`], which closes the tables
//! and writes the final manifest, so a failed or interrupted run is still consistent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::Context;
use rhai::EvalAltResult;

use crate::capabilities::fs::{ReadPolicy, SandboxFiles, parse_toml, sha256_hex};
use crate::capabilities::proc::Groups;
use crate::capabilities::results::{FileContent, Results};
use crate::capabilities::results::{Flusher, RunResults};
use crate::capabilities::run::{HELP_SHOWN, RunInfo, Sharding, UnitsRecord, parse_script_args};
use crate::cli::RunArgs;
use crate::console::{Console, Style};
use crate::project::Project;
use crate::run_record::{self, FileRecord, GitState, Manifest, MergedFrom, ReportPhase, Status, TableRecord};
use crate::script::{self, Diagnostic, Limits, ProjectResolver, Sources};

use super::{Ingredients, Outcome, capabilities, read_script};

pub fn run(args: &RunArgs, verbose: bool) -> anyhow::Result<Outcome> {
    execute(args, verbose, None, None)
}

/// [`run`], embedding with `local_embedder` when given (a model a long-lived process loaded once).
pub fn run_with(
    args: &RunArgs,
    verbose: bool,
    local_embedder: Option<Arc<crate::capabilities::embed::LocalEmbedder>>,
) -> anyhow::Result<Outcome> {
    execute(args, verbose, local_embedder, None)
}

/// What a report run (`host merge`) starts from: the runs it reports have done the work, and
/// the script runs in report mode over their tables.
#[derive(Debug, Default)]
pub struct ReportOf {
    /// Each table to take, with each reported run's files (its parts, or its one file), in
    /// shard order.
    pub tables: BTreeMap<String, Vec<Vec<PathBuf>>>,
    /// Files to copy into the run: the path in the run and the file to copy.
    pub files: Vec<(String, PathBuf)>,
    /// What the reported runs' `run::shard` calls split.
    pub units: Vec<UnitsRecord>,
    /// The shard reported alone, when one shard's run is reported.
    pub part: Option<crate::capabilities::run::Shard>,
    /// The settings they recorded (`results::settings`), which a report phase may not record again.
    pub settings: BTreeMap<String, serde_json::Value>,
    pub merged_from: MergedFrom,
}

/// Runs `args`'s script in report mode over `report`.
pub fn run_report(args: &RunArgs, verbose: bool, report: ReportOf) -> anyhow::Result<Outcome> {
    execute(args, verbose, None, Some(report))
}

fn execute(
    args: &RunArgs,
    verbose: bool,
    local_embedder: Option<Arc<crate::capabilities::embed::LocalEmbedder>>,
    report: Option<ReportOf>,
) -> anyhow::Result<Outcome> {
    let console = Arc::new(Console::new(Style::detect(), verbose));
    let (script_path, text) = read_script(&args.script)?;
    let project = Project::of_script(&script_path)?;
    let shown = project.display(&script_path);
    let experiment = script_path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    let run_id = args.run_id.clone().unwrap_or_else(run_record::new_run_id);
    run_record::validate_run_id(&run_id)?;

    // Asking git (two processes, about 15 ms) overlaps with compiling; only the manifest waits.
    let git = {
        let root = project.root.clone();
        std::thread::spawn(move || GitState::of(&root))
    };
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let mut policy = ReadPolicy::new(&project.root)?;
    for token in &args.script_args {
        let value = token.split_once('=').map_or(token.as_str(), |(_, value)| value);
        policy.allow_given(value, &cwd);
    }
    // The scenario as the user typed it, or the default one relative to the project root.
    let scenario_path = match &args.scenario {
        Some(typed) => {
            let typed = typed.to_string_lossy().into_owned();
            policy.allow_given(&typed, &cwd);
            Some(typed)
        }
        None => project.default_scenario(&script_path).map(|path| project.display(&path)),
    };
    let files = Arc::new(SandboxFiles::new(policy));
    files.record(&script_path, text.as_bytes());
    let scenario = match &scenario_path {
        Some(path) => Some(load_scenario(&files, path)?),
        None => None,
    };

    let parsed_args = parse_script_args(&args.script_args);
    let runs = project.root.join("runs");
    let staging = tempfile::tempdir().context("cannot create a temporary directory")?;
    let sharding = match (&report, args.shard) {
        (Some(report), _) => Sharding::Report { expected: report.units.clone(), part: report.part },
        (None, Some(shard)) => Sharding::Part(shard),
        (None, None) => Sharding::Whole,
    };
    let info = |dir: &Path, git: Option<GitState>| RunInfo {
        id: run_id.clone(),
        script: shown.clone(),
        experiment: experiment.clone(),
        dir: dir.to_path_buf(),
        args: parsed_args.clone(),
        argv: args.script_args.clone(),
        scenario: scenario.as_ref().map(|(value, _)| value.clone()),
        git,
        sharding: sharding.clone(),
        units: Default::default(),
    };
    let limits = Limits { max_operations: args.max_operations, ..Limits::default() };
    let llm_settings = super::llm_settings(&args.llm)?;
    let runtime = super::runtime()?;
    let interrupt: script::Interrupt = Arc::new(AtomicBool::new(false));
    let parts = Ingredients {
        console: &console,
        files: files.clone(),
        llm: &llm_settings,
        local_model: args.local_model.clone(),
        runtime: runtime.handle().clone(),
        project_root: project.root.clone(),
        scenario_path: scenario_path.clone(),
        interrupt: interrupt.clone(),
        keep_workspaces: args.keep_workspaces,
        local_embedder,
        reaper: true,
    };
    let sources = Arc::new(Sources::default());
    sources.insert(&shown, &text);

    // Compile against throwaway capabilities (the run directory does not exist yet) that carry
    // this run's arguments and scenario: Rhai inlines scope constants such as `ARGS` while
    // compiling, so the scratch capabilities of `host check` would compile in empty values.
    let ast = {
        let results = Arc::new(RunResults::new(staging.path(), &run_id)?);
        // Compiling never asks for the git state, so the scratch capabilities go without it.
        let capabilities = capabilities(&parts, results, info(staging.path(), None))?;
        let resolver = ProjectResolver::new(project.clone(), files.clone(), sources.clone());
        let engine = script::engine(&capabilities, resolver, limits, Default::default());
        let scope = script::scope(&capabilities).map_err(|error| anyhow::anyhow!("{error}"))?;
        match script::compile(&engine, &scope, &shown, &text) {
            Ok(ast) => ast,
            Err(error) => {
                eprint!("{}", Diagnostic::from_error(&error, &shown).render(&sources));
                return Ok(Outcome::Failed);
            }
        }
    };

    // `-- --help` to a script that declares its flags: print them, and make no run.
    if parsed_args.get("help") == Some(&serde_json::Value::Bool(true)) && sources.any_contains("run::flags(") {
        return show_flags(&project, &sources, &shown, &ast, limits, info(staging.path(), None), verbose);
    }

    let dir = run_record::create_dir(args.out.as_deref(), &runs, &experiment, &run_id)?;
    let dir = fs_err::canonicalize(&dir)?;
    crate::capabilities::fs::Files::allow_root(files.as_ref(), &dir);
    console.attach_log_file(&dir.join("run.log")).context("cannot create run.log")?;
    let results = Arc::new(RunResults::new(&dir, &run_id)?);
    let git = git.join().unwrap_or(None);
    let capabilities = capabilities(&parts, results.clone(), info(&dir, git.clone()))?;

    let mut manifest = Manifest::new(
        &run_id,
        &experiment,
        FileRecord { path: shown.clone(), sha256: sha256_hex(text.as_bytes()) },
        git.clone(),
    );
    manifest.scenario = scenario.map(|(_, record)| record);
    manifest.arguments.raw = args.script_args.clone();
    manifest.arguments.parsed = parsed_args.clone();
    manifest.arguments.command_line = std::env::args().collect();
    manifest.inputs = files.inputs();
    manifest.shard = args.shard;
    if let Some(report) = report {
        results.adopt_shards(report.tables);
        for (name, value) in report.settings {
            results.settings(&name, value);
        }
        for (path, source) in &report.files {
            let bytes = fs_err::read(source).context("cannot copy a file of a shard")?;
            results.write_file(path, FileContent::Bytes(bytes))?;
        }
        manifest.merged_from = Some(report.merged_from);
    }
    manifest.write(&dir).context("cannot write manifest.json")?;
    console.line(&format!("run {run_id}: {shown} -> {}", display_dir(&dir)));

    let ending = Arc::new(AtomicBool::new(false));
    install_interrupt_handler(Ending {
        interrupt: interrupt.clone(),
        groups: capabilities.process_groups.clone(),
        results: results.clone(),
        dir: dir.clone(),
        claimed: ending.clone(),
    });
    let flusher = Flusher::start(&results);
    let started = Instant::now();
    let resolver = ProjectResolver::new(project.clone(), files.clone(), sources.clone());
    let engine = script::engine(&capabilities, resolver, limits, interrupt.clone());
    let outcome = evaluate(&engine, &capabilities, &ast);
    capabilities.finish(&mut manifest);
    for kept in manifest.workspaces.iter().filter(|workspace| workspace.kept) {
        console.line(&format!("workspace kept: {}", kept.path));
    }
    drop(flusher);
    if ending.swap(true, Ordering::SeqCst) {
        // The interrupt handler is closing the run as it stands and ends the process.
        loop {
            std::thread::park();
        }
    }

    finish(
        Finish {
            console: &console,
            results: &results,
            files: &files,
            sources: &sources,
            shown: &shown,
            dir: &dir,
            started,
            interrupted: &interrupt,
        },
        manifest,
        outcome,
    )
}

/// Runs the script on scratch capabilities (nothing lasts, no program starts, nothing is spent)
/// until `run::flags` prints its help.
fn show_flags(
    project: &Project,
    sources: &Arc<Sources>,
    shown: &str,
    ast: &rhai::AST,
    limits: Limits,
    info: RunInfo,
    verbose: bool,
) -> anyhow::Result<Outcome> {
    let mut scratch = super::scratch_capabilities(&project.root, verbose)?;
    scratch.capabilities.run = Arc::new(info);
    let resolver = ProjectResolver::new(project.clone(), scratch.files.clone(), sources.clone());
    let engine = script::engine(&scratch.capabilities, resolver, limits, Default::default());
    match evaluate(&engine, &scratch.capabilities, ast) {
        Err(error) if matches!(&*error, EvalAltResult::ErrorTerminated(value, _) if value.to_string() == HELP_SHOWN) => {
            Ok(Outcome::Success)
        }
        Err(error) => {
            eprint!("{}", Diagnostic::from_error(&error, shown).render(sources));
            Ok(Outcome::Failed)
        }
        Ok(()) => {
            eprintln!("{shown} finished without declaring its flags with `run::flags`");
            Ok(Outcome::Success)
        }
    }
}

/// Evaluates on a thread with a large stack, so deep script recursion hits Rhai's call-depth
/// limit rather than the native stack.
fn evaluate(
    engine: &rhai::Engine,
    capabilities: &crate::capabilities::Capabilities,
    ast: &rhai::AST,
) -> Result<(), Box<EvalAltResult>> {
    let mut scope = script::scope(capabilities)?;
    std::thread::scope(|threads| {
        let worker = std::thread::Builder::new()
            .name("script".into())
            .stack_size(script::STACK_BYTES)
            .spawn_scoped(threads, || engine.run_ast_with_scope(&mut scope, ast));
        match worker {
            Ok(handle) => {
                handle.join().unwrap_or_else(|_| Err("the script thread panicked; this is a host bug".into()))
            }
            Err(error) => Err(format!("cannot start the script thread: {error}").into()),
        }
    })
}

struct Finish<'a> {
    console: &'a Console,
    results: &'a RunResults,
    files: &'a SandboxFiles,
    sources: &'a Sources,
    shown: &'a str,
    dir: &'a Path,
    started: Instant,
    interrupted: &'a AtomicBool,
}

/// Closes the tables, records how the run ended, and prints the closing summary.
fn finish(
    context: Finish<'_>,
    mut manifest: Manifest,
    outcome: Result<(), Box<EvalAltResult>>,
) -> anyhow::Result<Outcome> {
    let outputs = context.results.finish();
    let mut status = Status::Ok;
    if let Err(error) = &outcome {
        let diagnostic = Diagnostic::from_error(error, context.shown);
        eprint!("{}", diagnostic.render(context.sources));
        context.console.record(&diagnostic.render(context.sources));
        manifest.error = Some(format!("{}: {}", diagnostic.place(), diagnostic.message));
        status = if context.interrupted.load(Ordering::Relaxed) { Status::Interrupted } else { Status::Failed };
    }
    if !outputs.errors.is_empty() {
        for error in &outputs.errors {
            context.console.line(&format!("error: {error}"));
        }
        manifest.error.get_or_insert_with(|| outputs.errors.join("; "));
        status = Status::Failed;
    }
    let failed_checks: Vec<_> = outputs.checks.iter().filter(|check| !check.passed).collect();
    for check in &failed_checks {
        let detail = if check.detail.is_empty() { String::new() } else { format!(": {}", check.detail) };
        context.console.line(&format!("check failed: {}{detail}", check.name));
    }
    if status == Status::Ok && !failed_checks.is_empty() {
        status = Status::ChecksFailed;
    }

    manifest.status = status;
    manifest.inputs = context.files.inputs();
    manifest.finished_at = Some(run_record::manifest_now());
    manifest.duration_seconds = Some((context.started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0);
    manifest.tables = outputs
        .tables
        .iter()
        .map(|table| TableRecord {
            name: table.name.clone(),
            file: format!("{}.parquet", table.name),
            rows: table.rows,
            columns: table.columns.clone(),
        })
        .collect();
    manifest.files = outputs.files.clone();
    manifest.exports = outputs.exports.clone();
    if !outputs.report_tables.is_empty() || !outputs.report_files.is_empty() {
        manifest.report_phase =
            Some(ReportPhase { tables: outputs.report_tables.clone(), files: outputs.report_files.clone() });
    }
    if let Some(merged) = &mut manifest.merged_from {
        merged.files_left_in_shards.retain(|file| !outputs.files.contains(file));
    }
    manifest.checks = outputs.checks.clone();
    manifest.settings = outputs.settings.clone();
    manifest.write(context.dir).context("cannot write manifest.json")?;

    for export in &outputs.exports {
        context.console.line(&format!("wrote {} to `{}`", plural(export.files.len() as u64, "file"), export.folder));
    }
    let rows: u64 = outputs.tables.iter().map(|table| table.rows).sum();
    let checks = if outputs.checks.is_empty() {
        String::new()
    } else {
        format!(", checks {}/{} passed", outputs.checks.len() - failed_checks.len(), outputs.checks.len())
    };
    let word = match status {
        Status::Ok => "ok",
        Status::ChecksFailed => "checks failed",
        Status::Failed => "failed",
        Status::Interrupted => "interrupted",
        Status::Running => "running",
    };
    context.console.line(&format!(
        "run {word} in {:.1}s: {}, {}, {}{checks} -> {}",
        context.started.elapsed().as_secs_f64(),
        plural(outputs.tables.len() as u64, "table"),
        plural(rows, "row"),
        plural(outputs.files.len() as u64, "file"),
        display_dir(context.dir),
    ));
    Ok(match status {
        Status::Ok => Outcome::Success,
        Status::ChecksFailed => Outcome::ChecksFailed,
        _ => Outcome::Failed,
    })
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

/// The scenario as a JSON object, read through the sandbox so it is hashed like any input.
fn load_scenario(files: &SandboxFiles, path: &str) -> anyhow::Result<(serde_json::Value, FileRecord)> {
    use crate::capabilities::fs::Files;
    let text = files.read_text(path).with_context(|| format!("cannot load scenario `{path}`"))?;
    let value = parse_toml(&text.path, &text.content)?;
    Ok((value, FileRecord { path: path.to_string(), sha256: sha256_hex(text.content.as_bytes()) }))
}

/// The run directory relative to the working directory when inside it, for a copyable path.
fn display_dir(dir: &Path) -> String {
    let cwd = std::env::current_dir().ok().and_then(|cwd| cwd.canonicalize().ok());
    match cwd.as_deref().and_then(|cwd| dir.strip_prefix(cwd).ok()) {
        Some(relative) => relative.display().to_string(),
        None => dir.display().to_string(),
    }
}

/// How long a run stopped by Ctrl-C or SIGTERM has to close the ordinary way before it is closed
/// as it stands: below the 30 s that Slurm (`KillWait`) and Kubernetes
/// (`terminationGracePeriodSeconds`) wait by default before they send SIGKILL.
const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(20);

/// What the interrupt handler needs to end a run that cannot end the ordinary way.
struct Ending {
    interrupt: script::Interrupt,
    groups: Arc<Groups>,
    results: Arc<RunResults>,
    dir: PathBuf,
    /// Set by whoever ends the run first: [`finish`] or [`Ending::now`].
    claimed: Arc<AtomicBool>,
}

impl Ending {
    /// Ends every program, makes every row written so far readable, marks the run
    /// `interrupted` and quits. If the run is already being closed the ordinary way, a second
    /// interrupt (`quit`) quits at once, as the user asked, and the grace period's end waits on.
    fn now(&self, why: &str, quit: bool) {
        if self.claimed.swap(true, Ordering::SeqCst) {
            if quit {
                self.groups.end_all(std::time::Duration::from_millis(500));
                std::process::exit(130);
            }
            return;
        }
        self.groups.end_all(std::time::Duration::from_millis(500));
        self.results.flush(true);
        let _ = run_record::mark_ended(&self.dir, Status::Interrupted, why);
        eprintln!("interrupted: {why}; the tables' rows are in their parts under `{}`", self.dir.display());
        std::process::exit(130);
    }
}

/// First Ctrl-C or SIGTERM: stop the script at its next operation (ending the programs it waits
/// on) and close the run cleanly, within [`INTERRUPT_GRACE`]. Second, or when the grace period
/// runs out: close the run as it stands ([`Ending::now`]).
fn install_interrupt_handler(ending: Ending) {
    let ending = Arc::new(ending);
    let _ = ctrlc::set_handler(move || {
        if ending.interrupt.swap(true, Ordering::Relaxed) {
            ending.now("stopped by a second interrupt", true);
            return;
        }
        eprintln!(
            "interrupting: closing tables and the manifest (Ctrl-C again to quit at once; in {} s the run is closed as it stands)",
            INTERRUPT_GRACE.as_secs()
        );
        let watchdog = ending.clone();
        let _ = std::thread::Builder::new().name("grace".into()).spawn(move || {
            std::thread::sleep(INTERRUPT_GRACE);
            watchdog.now("did not close within the grace period after an interrupt", false);
        });
    });
}
