//! `import "lib/<name>" as <name>;`: modules come from the project's `scripts/` folder, are
//! hashed into the manifest like any input, and compiled once per run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rhai::{Engine, EvalAltResult, Module, ModuleResolver, Position, Scope, Shared};

type SharedModule = Shared<Module>;

use super::Sources;
use crate::capabilities::fs::SandboxFiles;
use crate::project::Project;

/// Resolves imports against `<project>/scripts/`, refusing paths that leave it.
pub struct ProjectResolver {
    project: Project,
    files: Arc<SandboxFiles>,
    sources: Arc<Sources>,
    cache: Mutex<HashMap<PathBuf, SharedModule>>,
    collected: Option<Collected>,
}

/// Module errors kept aside by a collecting resolver.
pub type Collected = Arc<Mutex<Vec<EvalAltResult>>>;

impl ProjectResolver {
    pub fn new(project: Project, files: Arc<SandboxFiles>, sources: Arc<Sources>) -> Self {
        ProjectResolver { project, files, sources, cache: Mutex::new(HashMap::new()), collected: None }
    }

    /// A resolver for `host check`: a module that fails is recorded in `collected` and replaced
    /// by an empty one, so that the errors of every imported file are reported, not just the first.
    pub fn collecting(project: Project, files: Arc<SandboxFiles>, sources: Arc<Sources>, collected: Collected) -> Self {
        ProjectResolver { collected: Some(collected), ..Self::new(project, files, sources) }
    }

    /// The file an import path names, if it stays inside `scripts/`.
    fn locate(&self, import: &str) -> Option<PathBuf> {
        let relative = Path::new(import);
        let plain = relative.components().all(|part| matches!(part, std::path::Component::Normal(_)));
        if !plain {
            return None;
        }
        let mut file = self.project.scripts().join(relative);
        if file.extension().is_none_or(|extension| extension != "rhai") {
            file.as_mut_os_string().push(".rhai");
        }
        Some(file)
    }
}

impl ModuleResolver for ProjectResolver {
    fn resolve(
        &self,
        engine: &Engine,
        source: Option<&str>,
        import: &str,
        position: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        match (self.load(engine, source, import, position), &self.collected) {
            (Err(error), Some(collected)) => {
                if let Ok(mut collected) = collected.lock() {
                    collected.push(*error);
                }
                Ok(Shared::new(Module::new()))
            }
            (result, _) => result,
        }
    }
}

impl ProjectResolver {
    fn load(
        &self,
        engine: &Engine,
        _source: Option<&str>,
        import: &str,
        position: Position,
    ) -> Result<SharedModule, Box<EvalAltResult>> {
        let not_found =
            || Box::new(EvalAltResult::ErrorModuleNotFound(format!("{import} (looked in scripts/)"), position));
        let file = self.locate(import).ok_or_else(not_found)?;
        let canonical = std::fs::canonicalize(&file).map_err(|_| not_found())?;
        if !canonical.starts_with(self.project.scripts().canonicalize().unwrap_or_default()) {
            return Err(not_found());
        }
        if let Some(module) = self.cache.lock().ok().and_then(|cache| cache.get(&canonical).cloned()) {
            return Ok(module);
        }
        let shown = self.project.display(&canonical);
        let bytes = std::fs::read(&canonical)
            .map_err(|error| EvalAltResult::ErrorSystem(format!("cannot read `{shown}`"), Box::new(error)))?;
        self.files.record(&canonical, &bytes);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        self.sources.insert(&shown, &text);
        let in_module =
            |error: Box<EvalAltResult>| Box::new(EvalAltResult::ErrorInModule(shown.clone(), error, position));
        let mut ast = engine.compile(&text).map_err(|error| in_module(Box::new(error.into())))?;
        ast.set_source(shown.as_str());
        let module: SharedModule = Shared::new(Module::eval_ast_as_new(Scope::new(), &ast, engine).map_err(in_module)?);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(canonical, module.clone());
        }
        Ok(module)
    }
}
