//! Path policy: which files a script may read and where it may write.
//!
//! Reads are allowed inside the project root and inside paths the user named on the command
//! line; writes only inside the run directory. Both are checked twice: lexically (so `..` is
//! refused even for files that do not exist) and after resolving symlinks (so a link cannot
//! lead out). This module decides; it does not read or write.

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
}

impl ReadPolicy {
    /// Reads resolve relative paths against `base` (the project root), which is also a root.
    pub fn new(base: &Path) -> Result<Self, FilesError> {
        let base = canonical(base, base.display().to_string())?;
        Ok(ReadPolicy { roots: vec![base.clone()], base, given: BTreeMap::new() })
    }

    /// Allows reading `typed` (a path the user gave on the command line, relative to `cwd`) and,
    /// if it is a folder, everything under it. Returns false when it names nothing.
    pub fn allow_given(&mut self, typed: &str, cwd: &Path) -> bool {
        let Ok(path) = std::fs::canonicalize(cwd.join(typed)) else {
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
}

/// Where writes may happen: the run directory only.
#[derive(Debug, Clone)]
pub struct WritePolicy {
    root: PathBuf,
}

impl WritePolicy {
    pub fn new(root: &Path) -> Result<Self, FilesError> {
        Ok(WritePolicy { root: canonical(root, root.display().to_string())? })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path `requested` (relative to the run directory) names, with its parent folders
    /// created; refused if it is absolute, climbs with `..`, or a folder on the way links out.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, FilesError> {
        let relative = Path::new(requested);
        let plain = relative.components().all(|part| matches!(part, Component::Normal(_)));
        if requested.is_empty() || !plain {
            return Err(FilesError::WriteEscapes { path: requested.to_string() });
        }
        let target = self.root.join(relative);
        let parent = target.parent().unwrap_or(&self.root);
        fs_err::create_dir_all(parent).map_err(|source| FilesError::Io { path: requested.to_string(), source })?;
        let parent = canonical(parent, requested.to_string())?;
        let linked_out = !parent.starts_with(&self.root)
            || std::fs::symlink_metadata(&target).is_ok_and(|meta| meta.file_type().is_symlink());
        if linked_out {
            return Err(FilesError::WriteEscapes { path: requested.to_string() });
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
    fn a_write_through_a_symlinked_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let policy = WritePolicy::new(dir.path()).unwrap();
        assert!(matches!(policy.resolve("out/x.json"), Err(FilesError::WriteEscapes { .. })));
    }
}
