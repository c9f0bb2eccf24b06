//! `host test`: the Rhai tests beside experiment code, the `test_*` functions of `*_test.rhai`
//! files, each run on its own and in-process with the engine, imports and limits of `host run`.
//! It prints one line per test and the closing count; it writes nothing into the project.

mod assertions;
mod discover;
mod functions;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use rhai::{CallFnOptions, Dynamic, Engine, EvalAltResult, Scope};

use crate::capabilities::Capabilities;
use crate::cli::TestArgs;
use crate::project::Project;
use crate::script::{self, Diagnostic, ProjectResolver, Sources};

use super::{Outcome, scratch_capabilities};

/// How many tests passed and failed; a file that does not compile counts as one failure.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    passed: usize,
    failed: usize,
}

pub fn test(args: &TestArgs, verbose: bool) -> anyhow::Result<Outcome> {
    let paths = if args.paths.is_empty() { vec![PathBuf::from("scripts")] } else { args.paths.clone() };
    let files = discover::test_files(&paths)?;
    let mut tally = Tally::default();
    for (project, files) in by_project(files)? {
        let filter = args.filter.as_deref();
        let part = on_script_thread(|| run_project(&project, &files, filter, verbose))?;
        tally.passed += part.passed;
        tally.failed += part.failed;
    }
    if let Some(filter) = &args.filter
        && tally.passed + tally.failed == 0
    {
        eprintln!("warning: no test name contains `{filter}`");
    }
    println!("{} passed, {} failed", tally.passed, tally.failed);
    Ok(if tally.failed == 0 { Outcome::Success } else { Outcome::ChecksFailed })
}

/// The files grouped by the project whose `scripts/` their imports resolve against, in order.
fn by_project(files: Vec<PathBuf>) -> anyhow::Result<Vec<(Project, Vec<PathBuf>)>> {
    let mut groups: Vec<(Project, Vec<PathBuf>)> = Vec::new();
    for file in files {
        let project = Project::of_script(&file).with_context(|| format!("cannot open `{}`", file.display()))?;
        match groups.iter_mut().find(|(known, _)| known.root == project.root) {
            Some((_, group)) => group.push(file),
            None => groups.push((project, vec![file])),
        }
    }
    Ok(groups)
}

/// Runs `work` on a thread with the script stack, as `host run` evaluates scripts, so deep
/// recursion meets Rhai's call-depth limit rather than the native stack.
fn on_script_thread<T: Send>(work: impl FnOnce() -> anyhow::Result<T> + Send) -> anyhow::Result<T> {
    std::thread::scope(|threads| {
        let worker = std::thread::Builder::new().name("tests".into()).stack_size(script::STACK_BYTES);
        let handle = worker.spawn_scoped(threads, work).context("cannot start the test thread")?;
        handle.join().unwrap_or_else(|_| Err(anyhow::anyhow!("the test thread panicked; this is a host bug")))
    })
}

fn run_project(project: &Project, files: &[PathBuf], filter: Option<&str>, verbose: bool) -> anyhow::Result<Tally> {
    // Module top-level code runs while imports are resolved; what it writes is thrown away.
    let scratch = scratch_capabilities(&project.root, verbose)?;
    let sources = Arc::new(Sources::default());
    // One resolver for the project's files, so a module imported by many is compiled once.
    let resolver = ProjectResolver::new(project.clone(), scratch.files.clone(), sources.clone());
    let mut engine = script::engine(&scratch.capabilities, resolver, script::Limits::default(), Default::default());
    assertions::register(&mut engine);
    let runner = Runner { engine: &engine, capabilities: &scratch.capabilities, sources: &sources, filter };
    let mut tally = Tally::default();
    for file in files {
        let shown = project.display(file);
        let text = fs_err::read_to_string(file).with_context(|| format!("cannot read test file `{shown}`"))?;
        runner.file(&shown, &text, &mut tally)?;
    }
    Ok(tally)
}

struct Runner<'a> {
    engine: &'a Engine,
    capabilities: &'a Capabilities,
    sources: &'a Sources,
    filter: Option<&'a str>,
}

impl Runner<'_> {
    /// Compiles one test file, runs its top-level code, then each test with a fresh scope.
    fn file(&self, shown: &str, text: &str, tally: &mut Tally) -> anyhow::Result<()> {
        self.sources.insert(shown, text);
        let ast = match script::compile(self.engine, &self.scope()?, shown, text) {
            Ok(ast) => ast,
            Err(error) => {
                self.report(shown, "(the file does not compile)", Err(error), tally);
                return Ok(());
            }
        };
        // Imports and constants fail here once for the file, rather than once per test.
        if let Err(error) = self.engine.run_ast_with_scope(&mut self.scope()?, &ast) {
            self.report(shown, "(its top-level code)", Err(error), tally);
            return Ok(());
        }
        let found = functions::tests(&ast, text);
        for name in &found.with_parameters {
            eprintln!("warning: `{name}` in `{shown}` takes parameters, so it is not run as a test");
        }
        if found.tests.is_empty() && found.with_parameters.is_empty() {
            eprintln!("warning: `{shown}` defines no `test_*` functions");
        }
        for name in found.tests.iter().filter(|name| self.filter.is_none_or(|filter| name.contains(filter))) {
            // The file's top-level code runs again first, so the test sees its imports.
            let options = CallFnOptions::new().eval_ast(true).rewind_scope(true);
            let outcome = self.engine.call_fn_with_options::<Dynamic>(options, &mut self.scope()?, &ast, name, ());
            self.report(shown, name, outcome.map(|_| ()), tally);
        }
        Ok(())
    }

    fn scope(&self) -> anyhow::Result<Scope<'static>> {
        script::scope(self.capabilities).map_err(|error| anyhow::anyhow!("{error}"))
    }

    fn report(&self, shown: &str, name: &str, outcome: Result<(), Box<EvalAltResult>>, tally: &mut Tally) {
        match outcome {
            Ok(()) => {
                tally.passed += 1;
                println!("ok   {shown}  {name}");
            }
            Err(error) => {
                tally.failed += 1;
                println!("FAIL {shown}  {name}");
                for line in Diagnostic::from_error(&error, shown).render(self.sources).lines() {
                    println!("    {line}");
                }
            }
        }
    }
}
