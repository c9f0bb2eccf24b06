//! `host check`: compile a script and every module it imports, and report all their errors.

use std::sync::{Arc, Mutex};

use crate::cli::CheckArgs;
use crate::project::Project;
use crate::script::{self, Diagnostic, ProjectResolver, Sources};

use super::{Outcome, read_script, scratch_capabilities};

pub fn check(args: &CheckArgs, verbose: bool) -> anyhow::Result<Outcome> {
    let (path, text) = read_script(&args.script)?;
    let project = Project::of_script(&path)?;
    let shown = project.display(&path);
    // Module top-level code runs while imports are resolved; what it writes is thrown away.
    let scratch = scratch_capabilities(&project.root, verbose)?;
    let (files, capabilities) = (scratch.files.clone(), &scratch.capabilities);
    let sources = Arc::new(Sources::default());
    sources.insert(&shown, &text);
    let collected = Arc::new(Mutex::new(Vec::new()));
    let resolver = ProjectResolver::collecting(project.clone(), files, sources.clone(), collected.clone());
    let engine = script::engine(capabilities, resolver, script::Limits::default(), Default::default());
    let scope = script::scope(capabilities).map_err(|error| anyhow::anyhow!("{error}"))?;

    let mut diagnostics = Vec::new();
    if let Err(error) = engine.compile_into_self_contained(&scope, &text) {
        diagnostics.push(Diagnostic::from_error(&error, &shown));
    }
    if let Ok(collected) = collected.lock() {
        diagnostics.extend(collected.iter().map(|error| Diagnostic::from_error(error, &shown)));
    }
    for diagnostic in &diagnostics {
        eprint!("{}", diagnostic.render(&sources));
    }
    if diagnostics.is_empty() {
        eprintln!("ok: `{shown}` and the modules it imports compile");
        Ok(Outcome::Success)
    } else {
        let count = diagnostics.len();
        eprintln!("{count} error{} in `{shown}` and the modules it imports", if count == 1 { "" } else { "s" });
        Ok(Outcome::Failed)
    }
}
