//! npm packages: `npm pack <name>@<version>` into a temporary folder inside the cache, unpacked
//! with `tar`, then moved into place in one rename, so an interrupted fetch leaves nothing that
//! looks complete and two runs fetching at once both end with the same package. Programs that
//! need their dependencies are installed the same way, with `npm install` in the temporary folder.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use super::{Installed, Package, PackagesError, move_into_place, pinned};

/// The npm packages under `<cache>/npm/<name>@<version>/` (`/` in a scoped name becomes `+`):
/// the archive, `package/` unpacked and `sha256`; installs with their dependencies under
/// `<cache>/npm-install/<name>@<version>/`: `package.json`, `package-lock.json`, `node_modules/`
/// and `lock-sha256`.
pub struct NpmCache {
    root: PathBuf,
    installs: PathBuf,
    /// The npm client and any leading arguments (`["npm"]`).
    command: Vec<String>,
    notify: Box<dyn Fn(&str) + Send + Sync>,
}

impl NpmCache {
    /// `root` is host's cache folder; `command` the npm client and any arguments before `pack`
    /// (`["npm"]`).
    pub fn new(root: &Path, command: &[&str], notify: Box<dyn Fn(&str) + Send + Sync>) -> Self {
        NpmCache {
            root: root.join("npm"),
            installs: root.join("npm-install"),
            command: command.iter().map(|part| (*part).to_owned()).collect(),
            notify,
        }
    }

    /// The npm client as a command, with its leading arguments.
    fn client(&self) -> Option<Command> {
        let (program, leading) = self.command.split_first()?;
        let mut command = Command::new(program);
        command.args(leading);
        Some(command)
    }

    fn fetch(&self, spec: &str, target: &Path) -> Result<(), PackagesError> {
        let cache = |source| PackagesError::Cache { path: self.root.clone(), source };
        let fail =
            |reason: String| PackagesError::Fetch { spec: spec.to_owned(), program: self.command.join(" "), reason };
        fs_err::create_dir_all(&self.root).map_err(cache)?;
        let staging = tempfile::Builder::new().prefix(".fetch-").tempdir_in(&self.root).map_err(cache)?;
        (self.notify)(&format!("fetching {spec} from the npm registry into {}", target.display()));
        let packed = self
            .client()
            .ok_or_else(|| fail("no npm client was given".into()))?
            .args(["pack", spec, "--silent", "--pack-destination"])
            .arg(staging.path())
            .output()
            .map_err(|error| fail(error.to_string()))?;
        if !packed.status.success() {
            return Err(fail(String::from_utf8_lossy(&packed.stderr).trim().to_owned()));
        }
        let archive = only_archive(staging.path()).ok_or_else(|| fail("it wrote no .tgz archive".into()))?;
        let unpacked = Command::new("tar")
            .arg("-xzf")
            .arg(&archive)
            .arg("-C")
            .arg(staging.path())
            .output()
            .map_err(|error| fail(format!("cannot run `tar`: {error}")))?;
        if !unpacked.status.success() {
            return Err(fail(format!("cannot unpack it: {}", String::from_utf8_lossy(&unpacked.stderr).trim())));
        }
        if !staging.path().join("package/package.json").is_file() {
            return Err(fail("the archive has no package/package.json".into()));
        }
        let digest = sha256(&archive).map_err(cache)?;
        fs_err::write(staging.path().join("sha256"), &digest).map_err(cache)?;
        move_into_place(staging, target, complete).map_err(cache)
    }

    fn install(&self, spec: &str, name: &str, target: &Path) -> Result<(), PackagesError> {
        let cache = |source| PackagesError::Cache { path: self.installs.clone(), source };
        let fail =
            |reason: String| PackagesError::Fetch { spec: spec.to_owned(), program: self.command.join(" "), reason };
        fs_err::create_dir_all(&self.installs).map_err(cache)?;
        let staging = tempfile::Builder::new().prefix(".install-").tempdir_in(&self.installs).map_err(cache)?;
        (self.notify)(&format!(
            "installing {spec} and its dependencies from the npm registry into {}",
            target.display()
        ));
        fs_err::write(staging.path().join("package.json"), "{\"private\": true}\n").map_err(cache)?;
        let installed = self
            .client()
            .ok_or_else(|| fail("no npm client was given".into()))?
            .args(["install", "--no-audit", "--no-fund", "--save-exact", "--loglevel=error", spec])
            .current_dir(staging.path())
            .output()
            .map_err(|error| fail(error.to_string()))?;
        if !installed.status.success() {
            return Err(fail(String::from_utf8_lossy(&installed.stderr).trim().to_owned()));
        }
        if !staging.path().join("node_modules").join(name).join("package.json").is_file() {
            return Err(fail(format!("it installed no `node_modules/{name}`")));
        }
        let digest = sha256(&staging.path().join("package-lock.json")).map_err(cache)?;
        fs_err::write(staging.path().join("lock-sha256"), &digest).map_err(cache)?;
        move_into_place(staging, target, installed_complete).map_err(cache)
    }
}

impl NpmCache {
    /// The npm package `spec` (`name@version`, the version exact), fetched when not cached.
    pub fn npm(&self, spec: &str) -> Result<Package, PackagesError> {
        let (name, version) = pinned(spec)?;
        let target = self.root.join(format!("{}@{version}", name.replace('/', "+")));
        let fetched = !complete(&target);
        if fetched {
            self.fetch(spec, &target)?;
        }
        let cache = |source| PackagesError::Cache { path: target.clone(), source };
        let sha256 = fs_err::read_to_string(target.join("sha256")).map_err(cache)?.trim().to_owned();
        let archive = only_archive(&target).ok_or_else(|| {
            cache(std::io::Error::new(std::io::ErrorKind::NotFound, "the package's archive is missing"))
        })?;
        Ok(Package { name, version, dir: target.join("package"), archive, sha256, fetched })
    }

    /// The npm package `spec` installed with its dependencies, when not cached.
    pub fn npm_install(&self, spec: &str) -> Result<Installed, PackagesError> {
        let (name, version) = pinned(spec)?;
        let target = self.installs.join(format!("{}@{version}", name.replace('/', "+")));
        let fetched = !installed_complete(&target);
        if fetched {
            self.install(spec, &name, &target)?;
        }
        let cache = |source| PackagesError::Cache { path: target.clone(), source };
        let lock_sha256 = fs_err::read_to_string(target.join("lock-sha256")).map_err(cache)?.trim().to_owned();
        let dir = target.join("node_modules").join(&name);
        Ok(Installed { name, version, dir, root: target, lock_sha256, fetched })
    }
}

/// An install is complete when its `lock-sha256` was written (the last step before the move).
fn installed_complete(target: &Path) -> bool {
    target.join("lock-sha256").is_file() && target.join("node_modules").is_dir()
}

/// A cached package is complete when its `sha256` was written (the last step before the move).
fn complete(target: &Path) -> bool {
    target.join("sha256").is_file() && target.join("package/package.json").is_file()
}

fn only_archive(dir: &Path) -> Option<PathBuf> {
    let mut archives: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "tgz"))
        .collect();
    archives.sort();
    (archives.len() == 1).then(|| archives.remove(0))
}

fn sha256(path: &Path) -> std::io::Result<String> {
    let mut file = fs_err::File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}
