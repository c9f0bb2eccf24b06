//! Python packages from PyPI: one virtual environment per pinned package (`<python> -m venv`),
//! the package and its dependencies installed into it by the environment's own pip, and what
//! pip resolved written down (`pip freeze --all`) as the lock. Built in a temporary folder inside
//! the cache, then moved into place in one rename, like npm installs, so an interrupted install
//! leaves nothing that looks complete and two runs installing at once both end with one
//! environment.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use super::{PackagesError, PythonEnv, move_into_place};

/// The lock: `pip freeze --all` of the finished environment, one `name==version` a line.
const LOCK: &str = "host-lock.txt";
/// SHA-256 of the lock, written last: an environment without it is not complete.
const LOCK_SHA256: &str = "host-lock-sha256";

/// Python environments under `<cache>/pip/<name>==<version>-py<major>.<minor>/` (the name
/// normalised as PyPI does, the Python's version as the one that made it): a virtual
/// environment (`bin/python`, `lib/`, `pyvenv.cfg`) holding the package and its dependencies,
/// `host-lock.txt` and `host-lock-sha256`.
pub struct PipCache {
    root: PathBuf,
    /// The Python that makes the environments, and any leading arguments (`["python3"]`).
    command: Vec<String>,
    notify: Box<dyn Fn(&str) + Send + Sync>,
}

impl PipCache {
    /// `root` is host's cache folder; `command` the Python that makes the environments and any
    /// arguments before `-m venv` (`["python3"]`).
    pub fn new(root: &Path, command: &[&str], notify: Box<dyn Fn(&str) + Send + Sync>) -> Self {
        PipCache { root: root.join("pip"), command: command.iter().map(|part| (*part).to_owned()).collect(), notify }
    }

    /// The PyPI package `spec` (`name==version`, the version exact) installed with its
    /// dependencies into a Python environment of its own, when not cached.
    pub fn pip_install(&self, spec: &str) -> Result<PythonEnv, PackagesError> {
        let (name, version) = pinned_pip(spec)?;
        let python_version = self.python_version(spec)?;
        let target = self.root.join(format!("{name}=={version}-py{python_version}"));
        let fetched = !complete(&target);
        if fetched {
            self.install(spec, &name, &target)?;
        }
        let cache = |source| PackagesError::Cache { path: target.clone(), source };
        let lock_sha256 = fs_err::read_to_string(target.join(LOCK_SHA256)).map_err(cache)?.trim().to_owned();
        let lock = lock_lines(&fs_err::read_to_string(target.join(LOCK)).map_err(cache)?);
        Ok(PythonEnv { name, version, python: target.join("bin/python"), root: target, lock, lock_sha256, fetched })
    }

    /// The Python as a command, with its leading arguments.
    fn python(&self) -> Option<Command> {
        let (program, leading) = self.command.split_first()?;
        let mut command = Command::new(program);
        command.args(leading);
        Some(command)
    }

    fn fail(&self, spec: &str, reason: String) -> PackagesError {
        PackagesError::PipInstall { spec: spec.to_owned(), program: self.command.join(" "), reason }
    }

    /// The Python's `major.minor`: environments of two Pythons never share a folder.
    fn python_version(&self, spec: &str) -> Result<String, PackagesError> {
        let mut command = self.python().ok_or_else(|| self.fail(spec, "no Python was given".into()))?;
        command.args(["-c", "import sys;print(\"%d.%d\"%sys.version_info[:2])"]);
        let said = run(command, "`python -c` (asking its version)").map_err(|reason| self.fail(spec, reason))?;
        let version = String::from_utf8_lossy(&said).trim().to_owned();
        let numbers: Vec<&str> = version.split('.').collect();
        if numbers.len() != 2 || !numbers.iter().all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())) {
            return Err(self.fail(spec, format!("it gave `{version}` for its version, not `<major>.<minor>`")));
        }
        Ok(version)
    }

    fn install(&self, spec: &str, name: &str, target: &Path) -> Result<(), PackagesError> {
        let cache = |source| PackagesError::Cache { path: self.root.clone(), source };
        fs_err::create_dir_all(&self.root).map_err(cache)?;
        // The environment is made in its staging folder and then renamed. A virtual environment is
        // not relocatable in general: the scripts pip writes into `bin/` keep the staging path in
        // their shebangs. What host uses of it moves safely: `bin/python` (a link to the Python
        // that made it) finds the environment by its `pyvenv.cfg` beside it, and every program is
        // run as `bin/python -m <module>`, never through those scripts.
        let staging = tempfile::Builder::new().prefix(".install-").tempdir_in(&self.root).map_err(cache)?;
        (self.notify)(&format!(
            "installing {spec} and its dependencies from PyPI into a new Python environment at {} (this takes a minute or two)",
            target.display()
        ));
        let mut venv = self.python().ok_or_else(|| self.fail(spec, "no Python was given".into()))?;
        venv.args(["-m", "venv"]).arg(staging.path());
        run(venv, "`python -m venv`").map_err(|reason| self.fail(spec, reason))?;
        let python = staging.path().join("bin/python");
        let mut install = Command::new(&python);
        install.args(["-m", "pip", "install", "--disable-pip-version-check", "--no-input", spec]);
        run(install, "`pip install`").map_err(|reason| self.fail(spec, reason))?;
        let mut freeze = Command::new(&python);
        freeze.args(["-m", "pip", "freeze", "--all", "--disable-pip-version-check"]);
        let frozen = run(freeze, "`pip freeze`").map_err(|reason| self.fail(spec, reason))?;
        let lock = lock_lines(&String::from_utf8_lossy(&frozen));
        let listed =
            lock.iter().any(|line| line.split_once("==").is_some_and(|(listed, _)| normalised(listed) == name));
        if !listed {
            return Err(self.fail(spec, format!("`pip freeze` does not list `{name}` after the install")));
        }
        fs_err::write(staging.path().join(LOCK), &frozen).map_err(cache)?;
        fs_err::write(staging.path().join(LOCK_SHA256), hex::encode(Sha256::digest(&frozen))).map_err(cache)?;
        move_into_place(staging, target, complete).map_err(cache)
    }
}

/// Runs `command` (in the user's environment, so pip's configuration, index and proxies apply)
/// and returns its standard output; when it fails, what `step` failed with and the last lines it
/// wrote, where pip puts its reason.
fn run(mut command: Command, step: &str) -> Result<Vec<u8>, String> {
    let output = command.output().map_err(|error| format!("cannot start {step}: {error}"))?;
    if output.status.success() {
        return Ok(output.stdout);
    }
    let said =
        if output.stderr.iter().any(|byte| !byte.is_ascii_whitespace()) { &output.stderr } else { &output.stdout };
    let said = String::from_utf8_lossy(said);
    let lines: Vec<&str> = said.lines().map(str::trim_end).filter(|line| !line.trim().is_empty()).collect();
    let last = lines[lines.len().saturating_sub(LAST_LINES)..].join("\n");
    Err(if last.is_empty() { format!("{step} failed ({})", output.status) } else { format!("{step} failed: {last}") })
}

/// How many of a failed step's last lines of output an error quotes.
const LAST_LINES: usize = 10;

fn lock_lines(text: &str) -> Vec<String> {
    text.lines().map(str::trim).filter(|line| !line.is_empty()).map(str::to_owned).collect()
}

/// An environment is complete when its `host-lock-sha256` was written (the last step before the
/// move).
fn complete(target: &Path) -> bool {
    target.join(LOCK_SHA256).is_file() && target.join(LOCK).is_file() && target.join("bin/python").exists()
}

/// `name==version` split, the name normalised as PyPI does (lowercase, each run of `-`, `_` and
/// `.` one `-`) and the version an exact PEP 440 release in its canonical form: two or more
/// numbers, then optionally `a`, `b` or `rc` with a number, `.post` with a number, `.dev` with a
/// number (`2.2.1`, `1.0.0rc1`, `1.0.0.post1`). No extras, markers, ranges, wildcards, epochs
/// or local versions.
pub fn pinned_pip(spec: &str) -> Result<(String, String), PackagesError> {
    let not_pinned = || PackagesError::NotPinnedPip { spec: spec.to_owned() };
    let (name, version) = spec.split_once("==").ok_or_else(not_pinned)?;
    let name_ok = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if name_ok && exact_version(version) { Ok((normalised(name), version.to_owned())) } else { Err(not_pinned()) }
}

/// A PyPI name as PyPI compares names (PEP 503).
fn normalised(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if "-_.".contains(c) {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

fn exact_version(version: &str) -> bool {
    let mut rest = version;
    let mut numbers = 0;
    while let Some(after) = number(rest) {
        numbers += 1;
        rest = after;
        match rest.strip_prefix('.') {
            Some(next) if number(next).is_some() => rest = next,
            _ => break,
        }
    }
    for tags in [&["a", "b", "rc"][..], &[".post"], &[".dev"]] {
        if let Some(after) = tags.iter().find_map(|tag| rest.strip_prefix(tag).and_then(number)) {
            rest = after;
        }
    }
    numbers >= 2 && rest.is_empty()
}

/// What follows the digits `text` starts with, if it starts with one.
fn number(text: &str) -> Option<&str> {
    let end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    (end > 0).then(|| &text[end..])
}
