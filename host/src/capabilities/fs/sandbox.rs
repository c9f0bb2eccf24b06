//! Path policy: which files a script may read and where it may write.
//!
//! Reads are allowed inside the project root and inside paths the user named on the command
//! line; writes inside the run directory, and inside export folders: folders under a path the
//! user named on the command line that the script opened for its artifacts (a benchmark checkout's
//! report folder). Every check is made twice: lexically (so `..` is refused even for files that
//! do not exist) and after resolving symlinks (so a link cannot lead out). This module decides;
//! it does not read or write.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::FilesError;

/// Where reads may happen.
#[derive(Debug, Clone)]
pub struct ReadPolicy {
    base: PathBuf,
    roots: Vec<PathBuf>,
    /// What the user typed on the command line, mapped to the canonical path it named from the
    /// working directory, so a script can pass `ARGS.sessions` straight to `fs::read_json`.
    given: BTreeMap<String, PathBuf>,
    /// Paths typed on the command line that name nothing yet (an output folder to create),
    /// absolute with their existing part canonical: they may be granted for writes, not read.
    named: BTreeMap<String, PathBuf>,
}

impl ReadPolicy {
    /// Reads resolve relative paths against `base` (the project root), which is also a root.
    pub fn new(base: &Path) -> Result<Self, FilesError> {
        let base = canonical(base, base.display().to_string())?;
        Ok(ReadPolicy { roots: vec![base.clone()], base, given: BTreeMap::new(), named: BTreeMap::new() })
    }

    /// Allows reading `typed` (a path the user gave on the command line, relative to `cwd`) and,
    /// if it is a folder, everything under it. Returns false when it names nothing.
    pub fn allow_given(&mut self, typed: &str, cwd: &Path) -> bool {
        let Ok(path) = std::fs::canonicalize(cwd.join(typed)) else {
            if let Some(path) = canonical_prefix(&normalize(&cwd.join(typed))) {
                self.named.insert(typed.to_string(), path);
            }
            return false;
        };
        if !self.roots.iter().any(|root| path.starts_with(root)) {
            self.roots.push(path.clone());
        }
        self.given.insert(typed.to_string(), path);
        true
    }

    /// Allows reading everything under `root` (an existing folder).
    pub fn add_root(&mut self, root: &Path) {
        if let Ok(root) = std::fs::canonicalize(root)
            && !self.roots.iter().any(|known| root.starts_with(known))
        {
            self.roots.push(root);
        }
    }

    /// The canonical path a script's `requested` path names, if reading it is allowed.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, FilesError> {
        if let Some(path) = self.given.get(requested) {
            return Ok(path.clone());
        }
        if requested.is_empty() {
            return Err(FilesError::EmptyPath);
        }
        let lexical = normalize(&self.base.join(requested));
        if !self.roots.iter().any(|root| lexical.starts_with(root)) {
            return Err(FilesError::Escapes { path: requested.to_string() });
        }
        let resolved = canonical(&lexical, requested.to_string())?;
        if !self.roots.iter().any(|root| resolved.starts_with(root)) {
            return Err(FilesError::Escapes { path: requested.to_string() });
        }
        Ok(resolved)
    }

    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The absolute path `requested` names (relative to the project root, `..` applied, the
    /// folder need not exist yet) if it lies under a folder the user named on the command line:
    /// the one kind of place outside the run directory a run may be given to write.
    pub fn granted(&self, requested: &str) -> Result<PathBuf, FilesError> {
        let not_granted = || FilesError::NotGranted { path: requested.to_string() };
        if requested.is_empty() {
            return Err(FilesError::EmptyPath);
        }
        let path = match self.given.get(requested).or_else(|| self.named.get(requested)) {
            Some(path) => path.clone(),
            None => normalize(&self.base.join(requested)),
        };
        // Symlinks in the part that exists are resolved, so none can lead out of the folder.
        let real = canonical_prefix(&path).ok_or_else(not_granted)?;
        let mut folders = self.given.values().filter(|given| given.is_dir()).chain(self.named.values());
        if folders.any(|folder| real.starts_with(folder)) { Ok(real) } else { Err(not_granted()) }
    }
}

/// Where writes may happen: the run directory, and the export folders the run opened.
#[derive(Debug, Clone)]
pub struct WritePolicy {
    root: PathBuf,
    exports: Vec<PathBuf>,
}

impl WritePolicy {
    pub fn new(root: &Path) -> Result<Self, FilesError> {
        Ok(WritePolicy { root: canonical(root, root.display().to_string())?, exports: Vec::new() })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The export folders, canonical, in the order they were opened.
    pub fn exports(&self) -> &[PathBuf] {
        &self.exports
    }

    /// Opens `folder` (absolute, already checked with [`ReadPolicy::granted`]) for writes,
    /// creating it; returns its canonical path.
    pub fn add_export(&mut self, folder: &Path) -> Result<PathBuf, FilesError> {
        let shown = folder.display().to_string();
        fs_err::create_dir_all(folder).map_err(|source| FilesError::Io { path: shown.clone(), source })?;
        let folder = canonical(folder, shown)?;
        if !self.exports.contains(&folder) {
            self.exports.push(folder.clone());
        }
        Ok(folder)
    }

    /// The path `requested` names, with its parent folders created: relative to the run
    /// directory, or absolute inside the run directory or an export folder. Refused if it climbs
    /// with `..`, lies anywhere else, or a folder on the way links out.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, FilesError> {
        let escapes = || FilesError::WriteEscapes { path: requested.to_string() };
        let path = Path::new(requested);
        let plain = path.components().all(|part| matches!(part, Component::Normal(_) | Component::RootDir));
        if requested.is_empty() || !plain {
            return Err(escapes());
        }
        let target = self.root.join(path);
        let root = std::iter::once(&self.root)
            .chain(&self.exports)
            .filter(|root| target.starts_with(root) && target != **root)
            .max_by_key(|root| root.as_os_str().len())
            .ok_or_else(escapes)?;
        let parent = target.parent().unwrap_or(root);
        fs_err::create_dir_all(parent).map_err(|source| FilesError::Io { path: requested.to_string(), source })?;
        let parent = canonical(parent, requested.to_string())?;
        let linked_out = !parent.starts_with(root)
            || std::fs::symlink_metadata(&target).is_ok_and(|meta| meta.file_type().is_symlink());
        if linked_out {
            return Err(escapes());
        }
        Ok(target)
    }
}

fn canonical(path: &Path, shown: String) -> Result<PathBuf, FilesError> {
    std::fs::canonicalize(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => FilesError::NotFound { path: shown },
        _ => FilesError::Io { path: shown, source },
    })
}

/// `path` (absolute, normalized) with its longest existing part canonical, so that a folder to
/// be created is compared with canonical paths; `None` when nothing of it exists.
fn canonical_prefix(path: &Path) -> Option<PathBuf> {
    let existing = path.ancestors().find(|ancestor| ancestor.exists())?;
    let rest = path.strip_prefix(existing).ok()?;
    Some(std::fs::canonicalize(existing).ok()?.join(rest))
}

/// Removes `.` and applies `..` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, ReadPolicy) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project/data")).unwrap();
        std::fs::write(dir.path().join("project/data/a.json"), "{}").unwrap();
        std::fs::write(dir.path().join("outside.txt"), "secret").unwrap();
        let policy = ReadPolicy::new(&dir.path().join("project")).unwrap();
        (dir, policy)
    }

    #[test]
    fn reads_resolve_relative_to_the_project_root() {
        let (dir, policy) = project();
        let resolved = policy.resolve("data/a.json").unwrap();
        assert_eq!(resolved, dir.path().join("project/data/a.json").canonicalize().unwrap());
    }

    #[test]
    fn dot_dot_out_of_the_project_is_refused_even_when_the_file_exists() {
        let (_dir, policy) = project();
        let error = policy.resolve("../outside.txt").unwrap_err();
        assert!(matches!(error, FilesError::Escapes { .. }), "{error:?}");
    }

    #[test]
    fn an_absolute_path_outside_the_roots_is_refused() {
        let (dir, policy) = project();
        let outside = dir.path().join("outside.txt");
        let error = policy.resolve(outside.to_str().unwrap()).unwrap_err();
        assert!(matches!(error, FilesError::Escapes { .. }), "{error:?}");
    }

    #[test]
    fn a_symlink_leading_out_of_the_project_is_refused() {
        let (dir, policy) = project();
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), dir.path().join("project/link")).unwrap();
        let error = policy.resolve("link").unwrap_err();
        assert!(matches!(error, FilesError::Escapes { .. }), "{error:?}");
    }

    #[test]
    fn a_path_given_on_the_command_line_may_be_read_as_typed() {
        let (dir, mut policy) = project();
        assert!(policy.allow_given("outside.txt", dir.path()));
        assert_eq!(policy.resolve("outside.txt").unwrap(), dir.path().join("outside.txt").canonicalize().unwrap());
        assert!(!policy.allow_given("no-such-file", dir.path()));
    }

    #[test]
    fn a_missing_file_inside_the_project_is_not_found_rather_than_an_escape() {
        let (_dir, policy) = project();
        assert!(matches!(policy.resolve("data/missing.json"), Err(FilesError::NotFound { .. })));
    }

    #[test]
    fn writes_stay_inside_the_run_directory() {
        let dir = tempfile::tempdir().unwrap();
        let policy = WritePolicy::new(dir.path()).unwrap();
        assert!(policy.resolve("report/summary.md").unwrap().starts_with(policy.root()));
        for bad in ["../x.json", "/tmp/x.json", "a/../../x.json", ""] {
            assert!(matches!(policy.resolve(bad), Err(FilesError::WriteEscapes { .. })), "{bad}");
        }
    }

    #[test]
    fn an_export_folder_takes_absolute_paths_inside_it_and_nowhere_else() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let mut policy = WritePolicy::new(&run).unwrap();
        let export = policy.add_export(&dir.path().join("checkout/reports")).unwrap();
        let inside = export.join("set/tracking.json");
        assert_eq!(policy.resolve(inside.to_str().unwrap()).unwrap(), inside);
        let in_run = policy.root().join("a.json");
        assert_eq!(policy.resolve(in_run.to_str().unwrap()).unwrap(), in_run);
        let beside = dir.path().join("checkout/package.json");
        let climbing = format!("{}/../package.json", export.display());
        for bad in [beside.to_str().unwrap(), &climbing, export.to_str().unwrap()] {
            assert!(matches!(policy.resolve(bad), Err(FilesError::WriteEscapes { .. })), "{bad}");
        }
    }

    #[test]
    fn only_folders_under_a_path_given_on_the_command_line_are_granted() {
        let (dir, mut policy) = project();
        std::fs::create_dir(dir.path().join("checkout")).unwrap();
        assert!(policy.allow_given("checkout", dir.path()));
        let checkout = dir.path().join("checkout").canonicalize().unwrap();
        let reports = checkout.join("packages/benchmark/reports");
        assert_eq!(policy.granted(reports.to_str().unwrap()).unwrap(), reports);
        assert_eq!(policy.granted("checkout").unwrap(), checkout);
        for bad in ["data", "../outside.txt", &format!("{}/../x", checkout.display())] {
            assert!(matches!(policy.granted(bad), Err(FilesError::NotGranted { .. })), "{bad}");
        }
        // A folder named on the command line that does not exist yet may be created and written.
        assert!(!policy.allow_given("out/store", dir.path()));
        let store = dir.path().canonicalize().unwrap().join("out/store");
        assert_eq!(
            policy.granted(store.join("memories.corpus").to_str().unwrap()).unwrap(),
            store.join("memories.corpus")
        );
        assert!(
            matches!(policy.resolve(store.to_str().unwrap()), Err(FilesError::Escapes { .. })),
            "named, not readable"
        );
        std::os::unix::fs::symlink(dir.path(), checkout.join("up")).unwrap();
        let through_link = checkout.join("up/project");
        assert!(matches!(policy.granted(through_link.to_str().unwrap()), Err(FilesError::NotGranted { .. })));
    }

    #[test]
    fn a_write_through_a_symlinked_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let policy = WritePolicy::new(dir.path()).unwrap();
        assert!(matches!(policy.resolve("out/x.json"), Err(FilesError::WriteEscapes { .. })));
    }
}
