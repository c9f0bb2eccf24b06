//! The `packages` capability: pinned packages from a package registry, fetched once with the
//! registry's own client into host's cache and read from there ever after, so a run needs the
//! network only the first time. Each fetched package is recorded in the run's manifest
//! (`settings.packages`: name, version, sha256 of the archive) by [`RecordedPackages`].
//!
//! The registries are npm (the `next` package's docs, the Claude Code CLI, the OpenClaw
//! runtime), fetched with `npm pack` and unpacked with `tar`; git repositories pinned by
//! commit or tag (an eval suite, a docs tree), cloned with `git`; and PyPI (mem0), each package
//! installed with its dependencies by pip into a Python environment of its own, with what pip
//! resolved (`pip freeze`) recorded as its lock.

mod git;
mod npm;
mod pip;
pub mod rhai;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;

pub use git::GitCache;
pub use npm::NpmCache;
pub use pip::{PipCache, pinned_pip};

/// A git repository at a revision: `rev` a commit id (7 to 40 hex digits), a tag or a branch;
/// `None` for the revision last set up for this repository. `paths` limits the checkout to
/// those folders (a sparse checkout), all of it when empty.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitSource {
    pub repo: String,
    #[serde(default)]
    pub rev: Option<String>,
    #[serde(default)]
    pub paths: Vec<String>,
}

/// A git checkout in the cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GitCheckout {
    pub repo: String,
    pub rev: String,
    /// The full commit id the revision resolved to.
    pub commit: String,
    /// The work tree.
    pub dir: PathBuf,
    /// Whether this call cloned it (false: it was in the cache already).
    pub fetched: bool,
}

/// A package in the cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Package {
    pub name: String,
    pub version: String,
    /// The unpacked package: the folder holding its `package.json`.
    pub dir: PathBuf,
    /// The archive as the registry served it.
    pub archive: PathBuf,
    /// SHA-256 of the archive, lowercase hex.
    pub sha256: String,
    /// Whether this call fetched it (false: it was in the cache already).
    pub fetched: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum PackagesError {
    #[error(
        "`{spec}` is not a pinned npm package; hint: give an exact version, `<name>@<major>.<minor>.<patch>`, e.g. `next@16.2.0`"
    )]
    NotPinned { spec: String },
    #[error(
        "`{spec}` is not a pinned PyPI package; hint: give an exact version, `<name>==<version>`, e.g. `mem0ai==2.2.1`"
    )]
    NotPinnedPip { spec: String },
    #[error(
        "cannot fetch `{spec}` with `{program}`: {reason}; hint: run `npm pack {spec}` once on a machine that reaches the npm registry, or set HOST_CACHE_DIR to a cache that has it"
    )]
    Fetch { spec: String, program: String, reason: String },
    #[error(
        "cannot install `{spec}` with `{program}`: {reason}; hint: run it once on a machine that reaches PyPI (or the index pip is configured with), or set HOST_CACHE_DIR to a cache that has it"
    )]
    PipInstall { spec: String, program: String, reason: String },
    #[error("cannot use the package cache `{path}`")]
    Cache {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("packages are not fetched here (`host check` and `host api` reach no registry)")]
    Unavailable,
    #[error(
        "cannot check out `{repo}` at `{rev}`: {reason}; hint: check the repository's address (a URL, a local clone or a bundle file) and that it has that revision"
    )]
    GitFetch { repo: String, rev: String, reason: String },
    #[error(
        "no revision of `{repo}` was set up yet; hint: give a commit or tag once (`setup --commit <sha>`), later runs use it"
    )]
    NotSetUp { repo: String },
    #[error("`{rev}` is not a revision: give a commit id, a tag or a branch name")]
    BadRevision { rev: String },
    #[error("`{path}` is not a folder inside the repository")]
    BadGitPath { path: String },
}

/// A program from a registry installed with its dependencies, in the cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Installed {
    pub name: String,
    pub version: String,
    /// The package itself: `<root>/node_modules/<name>`.
    pub dir: PathBuf,
    /// The install's root: its `node_modules/` holds the package and every dependency, and
    /// `node_modules/.bin` its programs.
    pub root: PathBuf,
    /// SHA-256 of the install's `package-lock.json`: the exact dependency tree.
    pub lock_sha256: String,
    /// Whether this call installed it (false: it was in the cache already).
    pub fetched: bool,
}

/// A PyPI package installed with its dependencies into a Python environment of its own, in the
/// cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PythonEnv {
    /// The package's name, normalised as PyPI compares names (`mem0ai`).
    pub name: String,
    pub version: String,
    /// The environment's Python, `<root>/bin/python`: run programs as `python -m <module>` or
    /// `python <file>`, never through the scripts in `bin/` (their shebangs name the folder the
    /// environment was made in).
    pub python: PathBuf,
    /// The environment (a virtual environment, `pyvenv.cfg` at its top).
    pub root: PathBuf,
    /// What pip resolved: `pip freeze --all`, one `name==version` a line.
    pub lock: Vec<String>,
    /// SHA-256 of the lock file, `host-lock.txt`.
    pub lock_sha256: String,
    /// Whether this call installed it (false: it was in the cache already).
    pub fetched: bool,
}

/// Where packages come from.
pub trait Packages: Send + Sync {
    /// The npm package `spec` (`name@version`, the version exact), fetched when not cached.
    fn npm(&self, spec: &str) -> Result<Package, PackagesError>;

    /// The npm package `spec` installed with its dependencies (`npm install`), when not cached:
    /// for programs that need their dependencies to run.
    fn npm_install(&self, spec: &str) -> Result<Installed, PackagesError>;

    /// The PyPI package `spec` (`name==version`, the version exact) installed with its
    /// dependencies (`pip install`) into a Python environment of its own, when not cached.
    fn pip_install(&self, spec: &str) -> Result<PythonEnv, PackagesError>;

    /// The git repository `source` checked out at its revision, cloned when not cached.
    fn git(&self, source: &GitSource) -> Result<GitCheckout, PackagesError>;
}

/// Every registry, each with its own cache under host's cache folder.
pub struct CachedPackages {
    pub npm: NpmCache,
    pub git: GitCache,
    pub pip: PipCache,
}

impl Packages for CachedPackages {
    fn npm(&self, spec: &str) -> Result<Package, PackagesError> {
        self.npm.npm(spec)
    }

    fn npm_install(&self, spec: &str) -> Result<Installed, PackagesError> {
        self.npm.npm_install(spec)
    }

    fn pip_install(&self, spec: &str) -> Result<PythonEnv, PackagesError> {
        self.pip.pip_install(spec)
    }

    fn git(&self, source: &GitSource) -> Result<GitCheckout, PackagesError> {
        self.git.checkout(source)
    }
}

/// No packages at all: for commands that must not reach a registry.
pub struct NoPackages;

impl Packages for NoPackages {
    fn npm(&self, _spec: &str) -> Result<Package, PackagesError> {
        Err(PackagesError::Unavailable)
    }

    fn npm_install(&self, _spec: &str) -> Result<Installed, PackagesError> {
        Err(PackagesError::Unavailable)
    }

    fn pip_install(&self, _spec: &str) -> Result<PythonEnv, PackagesError> {
        Err(PackagesError::Unavailable)
    }

    fn git(&self, _source: &GitSource) -> Result<GitCheckout, PackagesError> {
        Err(PackagesError::Unavailable)
    }
}

/// Records each package a run used in its manifest, under `settings.packages`, and lets the
/// script read the package's folder (`allow_read`), which lies outside the project.
pub struct RecordedPackages {
    inner: Arc<dyn Packages>,
    results: Arc<dyn crate::capabilities::results::Results>,
    allow_read: Box<dyn Fn(&std::path::Path) + Send + Sync>,
    used: Mutex<Vec<serde_json::Value>>,
}

impl RecordedPackages {
    pub fn new(
        inner: Arc<dyn Packages>,
        results: Arc<dyn crate::capabilities::results::Results>,
        allow_read: Box<dyn Fn(&std::path::Path) + Send + Sync>,
    ) -> Self {
        RecordedPackages { inner, results, allow_read, used: Mutex::new(Vec::new()) }
    }
}

impl RecordedPackages {
    fn record(&self, record: serde_json::Value) {
        if let Ok(mut used) = self.used.lock() {
            if !used.contains(&record) {
                used.push(record);
            }
            self.results.settings("packages", serde_json::Value::Array(used.clone()));
        }
    }
}

impl Packages for RecordedPackages {
    fn npm(&self, spec: &str) -> Result<Package, PackagesError> {
        let package = self.inner.npm(spec)?;
        (self.allow_read)(&package.dir);
        self.record(serde_json::json!({
            "registry": "npm", "name": package.name, "version": package.version, "sha256": package.sha256,
        }));
        Ok(package)
    }

    fn npm_install(&self, spec: &str) -> Result<Installed, PackagesError> {
        let installed = self.inner.npm_install(spec)?;
        (self.allow_read)(&installed.root);
        self.record(serde_json::json!({
            "registry": "npm", "name": installed.name, "version": installed.version, "installed": true,
            "lock_sha256": installed.lock_sha256,
        }));
        Ok(installed)
    }

    fn pip_install(&self, spec: &str) -> Result<PythonEnv, PackagesError> {
        let env = self.inner.pip_install(spec)?;
        (self.allow_read)(&env.root);
        self.record(serde_json::json!({
            "registry": "pypi", "name": env.name, "version": env.version, "installed": true,
            "lock_sha256": env.lock_sha256, "lock": env.lock,
        }));
        Ok(env)
    }

    fn git(&self, source: &GitSource) -> Result<GitCheckout, PackagesError> {
        let checkout = self.inner.git(source)?;
        (self.allow_read)(&checkout.dir);
        self.record(serde_json::json!({
            "registry": "git", "repo": checkout.repo, "rev": checkout.rev, "commit": checkout.commit,
            "paths": source.paths,
        }));
        Ok(checkout)
    }
}

/// `name@version` split, the version an exact `x.y.z` (with an optional pre-release or build
/// suffix); scoped names (`@scope/name`) keep their leading `@`.
pub fn pinned(spec: &str) -> Result<(String, String), PackagesError> {
    let not_pinned = || PackagesError::NotPinned { spec: spec.to_owned() };
    let (name, version) = match spec.strip_prefix('@') {
        Some(rest) => rest.split_once('@').map(|(name, version)| (format!("@{name}"), version)),
        None => spec.split_once('@').map(|(name, version)| (name.to_owned(), version)),
    }
    .ok_or_else(not_pinned)?;
    let name_ok = !name.is_empty()
        && name.trim_start_matches('@').split('/').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-._~".contains(c))
        });
    let core = version.split(['-', '+']).next().unwrap_or_default();
    let numbers: Vec<&str> = core.split('.').collect();
    let version_ok = numbers.len() == 3
        && numbers.iter().all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        && version.chars().all(|c| c.is_ascii_alphanumeric() || "-.+".contains(c));
    if name_ok && version_ok { Ok((name, version.to_owned())) } else { Err(not_pinned()) }
}

/// Moves a finished staging folder to `target` in one rename. When another run finished the
/// same package first, theirs is kept.
pub(crate) fn move_into_place(
    staging: tempfile::TempDir,
    target: &Path,
    complete: fn(&Path) -> bool,
) -> std::io::Result<()> {
    let staged = staging.keep();
    if let Err(error) = std::fs::rename(&staged, target) {
        let _ = std::fs::remove_dir_all(&staged);
        if !complete(target) {
            return Err(error);
        }
    }
    Ok(())
}

/// `packages::` for scripts.
pub const CAPABILITY: super::registry::Capability =
    super::registry::Capability::script("packages", |capabilities| rhai::module(capabilities.packages.clone()))
        .with_scratch(|capabilities| capabilities.packages = Arc::new(NoPackages));

#[cfg(test)]
mod tests;
