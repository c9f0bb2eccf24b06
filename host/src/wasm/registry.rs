//! Where guests come from. A guest is a folder with a `guest.toml` under one of the search
//! folders (the project's `guests/`, then each folder in `HOST_GUEST_PATH`), or a module file
//! given by path. Loaded guests are kept for the life of the registry, so a script that loads a
//! guest in a loop compiles and instantiates it once.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::engine::Engines;
use super::guest::{Context, Guest};
use super::manifest::{Grants, Limits, Manifest, validate_grants};
use super::{GuestError, source};
use crate::capabilities::GuestImports;

/// Extra folders of guests, separated like `PATH`.
pub const GUEST_PATH_VARIABLE: &str = "HOST_GUEST_PATH";

pub struct Registry {
    dirs: Vec<PathBuf>,
    context: Context,
    /// Grants a scenario adds, by guest name.
    scenario: BTreeMap<String, Grants>,
    notify: Box<dyn Fn(&str) + Send + Sync>,
    loaded: Mutex<HashMap<String, Arc<Guest>>>,
    /// Which guest serves each extension asked about (`None`: no guest does), so that routing
    /// a file reads the manifests once per extension, not once per file.
    routes: Mutex<HashMap<String, Option<String>>>,
    /// Whether the person was told that no search folder exists.
    warned_no_folder: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Registry").field("dirs", &self.dirs).finish_non_exhaustive()
    }
}

/// A loaded guest as the run's manifest records it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GuestRecord {
    pub name: String,
    pub module: String,
    pub sha256: String,
    pub abi_version: u32,
    pub grants: Grants,
    pub limits: Limits,
    pub calls: u64,
    pub instances: u64,
    /// Calls the sandbox stopped (deadline, memory, fuel, stack, trap).
    pub violations: u64,
}

/// A guest as `host guest list` shows it.
#[derive(Debug)]
pub struct Entry {
    pub name: String,
    pub manifest_path: PathBuf,
    pub manifest: Result<Manifest, String>,
}

impl Registry {
    /// The guests of the project at `project_root`. `scenario` may hold a `guests` table of
    /// extra grants by guest name; it is checked here, so a bad one fails before the run.
    pub fn new(
        project_root: &Path,
        imports: Arc<GuestImports>,
        runtime: tokio::runtime::Handle,
        scenario: Option<&serde_json::Value>,
        notify: Box<dyn Fn(&str) + Send + Sync>,
    ) -> Result<Registry, String> {
        let engines = Engines::new(Some(crate::project::cache_root().join("wasmtime")));
        let context = Context { engines, imports, runtime, project_root: project_root.to_path_buf() };
        Ok(Registry {
            dirs: search_dirs(project_root),
            context,
            scenario: scenario_grants(scenario)?,
            notify,
            loaded: Mutex::default(),
            routes: Mutex::default(),
            warned_no_folder: Default::default(),
        })
    }

    pub fn search_dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Every guest folder in the search folders, first folder first, then by name; a name that
    /// appears twice is served from the first.
    pub fn entries(&self) -> Vec<Entry> {
        let mut entries = Vec::new();
        for dir in &self.dirs {
            let Ok(children) = std::fs::read_dir(dir) else { continue };
            let mut manifests: Vec<PathBuf> =
                children.flatten().map(|child| child.path().join("guest.toml")).filter(|path| path.is_file()).collect();
            manifests.sort();
            for path in manifests {
                let manifest = Manifest::read(&path).map_err(|error| crate::capabilities::error_chain(&error));
                let name = match &manifest {
                    Ok(manifest) => manifest.name.clone(),
                    Err(_) => folder_name(&path),
                };
                entries.push(Entry { name, manifest_path: path, manifest });
            }
        }
        entries
    }

    /// The guest called `name` (or at the path `name`, when it names a `.wasm`/`.wat` file, a
    /// guest folder or a `guest.toml`), loaded once.
    pub fn load(&self, name: &str) -> Result<Arc<Guest>, GuestError> {
        if let Some(guest) = self.lock().get(name) {
            return Ok(guest.clone());
        }
        let guest = Arc::new(self.load_uncached(name)?);
        self.lock().insert(name.to_string(), guest.clone());
        Ok(guest)
    }

    /// The guest whose manifest lists the extension of `path`, if any.
    pub fn for_path(&self, path: &str) -> Result<Option<Arc<Guest>>, GuestError> {
        let Some(extension) = Path::new(path).extension().and_then(|extension| extension.to_str()) else {
            return Ok(None);
        };
        let mut routes = self.routes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let name = routes.entry(extension.to_string()).or_insert_with(|| {
            let serves = |entry: &Entry| {
                entry.manifest.as_ref().is_ok_and(|manifest| manifest.extensions.iter().any(|known| known == extension))
            };
            self.entries().into_iter().find(serves).map(|entry| entry.name)
        });
        let name = name.clone();
        drop(routes);
        if name.is_none() {
            self.warn_if_no_folder();
        }
        name.map(|name| self.load(&name)).transpose()
    }

    /// Says once that no guest folder exists at all: a script run from outside the project
    /// (whose `guests/` holds even the first-party guests) would otherwise route no file to a
    /// guest without a word.
    fn warn_if_no_folder(&self) {
        if self.dirs.iter().any(|dir| dir.is_dir())
            || self.warned_no_folder.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        let folders: Vec<String> = self.dirs.iter().map(|dir| format!("`{}`", dir.display())).collect();
        (self.notify)(&format!(
            "warning: no guest serves any file: no guest folder exists (looked in {}); hint: run the script inside the project that holds `guests/`, or set {GUEST_PATH_VARIABLE} to the folders of your guests",
            folders.join(", ")
        ));
    }

    fn load_uncached(&self, name: &str) -> Result<Guest, GuestError> {
        // A path is relative to the project, like every other path a script names.
        let joined = self.context.project_root.join(name);
        let as_path = joined.as_path();
        let is_module = matches!(as_path.extension().and_then(|extension| extension.to_str()), Some("wasm" | "wat"));
        if is_module && as_path.is_file() {
            let stem = as_path.file_stem().and_then(|stem| stem.to_str()).unwrap_or("guest");
            let manifest = Manifest {
                name: stem.to_string(),
                description: String::new(),
                extensions: Vec::new(),
                wasm: Some(as_path.to_path_buf()),
                stateless: true,
                grants: Grants::default(),
                limits: Limits::default(),
            };
            return self.load_module(manifest, as_path.to_path_buf());
        }
        let manifest_path = if as_path.is_dir() {
            as_path.join("guest.toml")
        } else if as_path.file_name().is_some_and(|file| file == "guest.toml") {
            as_path.to_path_buf()
        } else {
            let found = self.entries().into_iter().find(|entry| entry.name == name);
            let Some(entry) = found else {
                return Err(GuestError::NotFound { name: name.into(), searched: self.dirs.clone() });
            };
            entry.manifest_path
        };
        let manifest = Manifest::read(&manifest_path)?;
        let dir = manifest_path.parent().unwrap_or(Path::new(".")).to_path_buf();
        let module_path = match &manifest.wasm {
            Some(wasm) => dir.join(wasm),
            None => source::ensure_built(&manifest.name, &dir, &*self.notify)?,
        };
        self.load_module(manifest, module_path)
    }

    fn load_module(&self, manifest: Manifest, path: PathBuf) -> Result<Guest, GuestError> {
        let bytes = std::fs::read(&path).map_err(|source| GuestError::ReadModule {
            name: manifest.name.clone(),
            path: path.clone(),
            source,
        })?;
        let grants = match self.scenario.get(&manifest.name) {
            Some(more) => manifest.grants.union(more),
            None => manifest.grants.clone(),
        };
        Guest::load(manifest, grants, path, &bytes, &self.context)
    }

    /// What each loaded guest was, for the run's manifest, by name.
    pub fn records(&self) -> Vec<GuestRecord> {
        let mut records: Vec<GuestRecord> = self
            .lock()
            .values()
            .map(|guest| {
                let stats = guest.stats();
                GuestRecord {
                    name: guest.name().to_string(),
                    module: guest.module_path.display().to_string(),
                    sha256: guest.sha256.clone(),
                    abi_version: ::abi::ABI_VERSION,
                    grants: guest.grants.clone(),
                    limits: guest.manifest.limits,
                    calls: stats.calls,
                    instances: stats.instances,
                    violations: stats.violations,
                }
            })
            .collect();
        records.sort_by(|a, b| a.name.cmp(&b.name));
        records.dedup_by(|a, b| a.name == b.name && a.sha256 == b.sha256);
        records
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Guest>>> {
        self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `<root>/guests`, then `HOST_GUEST_PATH`'s folders (relative ones against the working
/// directory, as a shell user would expect).
fn search_dirs(project_root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![project_root.join("guests")];
    if let Some(extra) = std::env::var_os(GUEST_PATH_VARIABLE) {
        dirs.extend(std::env::split_paths(&extra).filter(|dir| !dir.as_os_str().is_empty()));
    }
    dirs
}

fn folder_name(manifest: &Path) -> String {
    manifest.parent().and_then(Path::file_name).map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The scenario's `[guests.<name>]` tables of extra grants.
fn scenario_grants(scenario: Option<&serde_json::Value>) -> Result<BTreeMap<String, Grants>, String> {
    let Some(table) = scenario.and_then(|scenario| scenario.get("guests")) else {
        return Ok(BTreeMap::new());
    };
    let Some(table) = table.as_object() else {
        return Err("field `guests` must be a table of grants by guest name".into());
    };
    let mut grants = BTreeMap::new();
    for (name, value) in table {
        let parsed: Grants =
            serde_json::from_value(value.clone()).map_err(|error| format!("field `guests.{name}`: {error}"))?;
        validate_grants(&parsed).map_err(|problem| format!("field `guests.{name}.{problem}"))?;
        grants.insert(name.clone(), parsed);
    }
    Ok(grants)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_grants_are_read_by_guest_name() {
        let scenario = serde_json::json!({ "guests": { "judge": { "capabilities": ["llm"], "clock": true } } });
        let grants = scenario_grants(Some(&scenario)).unwrap();
        assert!(grants["judge"].capabilities.contains("llm"));
        assert!(grants["judge"].clock);
    }

    #[test]
    fn a_scenario_cannot_grant_an_unknown_capability() {
        let scenario = serde_json::json!({ "guests": { "judge": { "capabilities": ["shell"] } } });
        let error = scenario_grants(Some(&scenario)).unwrap_err();
        assert!(error.starts_with("field `guests.judge.capabilities`"), "{error}");
    }

    #[test]
    fn a_scenario_grant_with_a_misspelt_field_is_refused() {
        let scenario = serde_json::json!({ "guests": { "judge": { "clocks": true } } });
        let error = scenario_grants(Some(&scenario)).unwrap_err();
        assert!(error.contains("field `guests.judge`") && error.contains("clocks"), "{error}");
    }
}
