//! The `workspace` capability: throwaway directories for one unit of work (an agent's attempt at
//! a task, a build), made empty or as a copy of a readable folder, optionally a git repository,
//! and removed when the run ends unless the user keeps them.
//!
//! Every path a script gives is confined to its workspace ([`tree::confine`]); the folder copied
//! from is checked by the `fs` read sandbox. Git runs through the [`Git`] trait so that its calls
//! can be recorded; this module never starts a program itself and knows nothing of Rhai.

mod git;
pub mod rhai;
mod tree;

/// `workspace::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "workspace",
    rhai: |capabilities| rhai::module(capabilities.workspaces.clone()),
    types: rhai::register_types,
    guest: None,
    finish: |capabilities, manifest| manifest.workspaces = capabilities.workspaces.finish(),
    // Over the scratch `proc` (before this in the registry's order): git cannot run.
    scratch: Some(|capabilities| {
        let run = &capabilities.run;
        let settings = WorkspaceSettings { run_id: run.id.clone(), run_dir: run.dir.clone(), keep: false };
        let git = Arc::new(ProcGit::new(capabilities.proc.clone(), capabilities.runtime.clone()));
        capabilities.workspaces = Arc::new(Workspaces::new(settings, capabilities.files.clone(), git));
    }),
};

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard};

use serde::{Deserialize, Serialize};

use crate::capabilities::fs::{Files, FilesError};
pub use git::ProcGit;
use tree::{Access, Exclusions, Snapshot};

/// Runs git for a workspace.
///
/// Implementations must set `GIT_AUTHOR_DATE` and `GIT_COMMITTER_DATE` to one fixed date (for
/// example `2000-01-01T00:00:00Z`): together with the identity passed as `-c` arguments, that
/// makes a commit's hash depend only on the files, so two workspaces made from the same folder
/// start at the same commit.
pub trait Git: Send + Sync {
    /// Runs `git <args>` in `cwd`; `Err` carries a readable reason (stderr, exit code).
    fn run(&self, cwd: &Path, args: &[&str]) -> Result<(), String>;
}

/// Settings of a run's workspaces, from the command line.
#[derive(Debug, Clone)]
pub struct WorkspaceSettings {
    pub run_id: String,
    pub run_dir: PathBuf,
    /// Leave every workspace on disk (`--keep-workspaces`), to look at after the run.
    pub keep: bool,
}

/// Where a workspace's directory is made.
#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Under {
    /// The system's temporary folder: `host-<run id>-<name>`.
    #[default]
    Temp,
    /// The run directory: `<run dir>/workspaces/<name>`.
    Run,
}

/// What a script asks for. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CreateOptions {
    /// A label for the directory name (`ws` when absent): letters, digits, `-`, `_` and `.`.
    #[serde(default)]
    pub name: Option<String>,
    /// A folder to copy: one the script may read, or a folder inside a workspace made earlier
    /// in the run (a template prepared once, copied per attempt).
    #[serde(default)]
    pub from: Option<String>,
    /// Names (`node_modules`, `*.log`, with `*` and `?`) matched against every part of a path,
    /// or relative paths (`app/EVAL.ts`): not copied, and not part of [`Workspace::diff`].
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub under: Under,
    /// Makes the workspace a git repository whose first commit holds the copied files.
    #[serde(default)]
    pub git: bool,
}

/// One workspace, as the run manifest records it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct WorkspaceRecord {
    pub name: String,
    pub path: String,
    pub from: Option<String>,
    /// Whether the directory is still on disk after the run.
    pub kept: bool,
    /// Files in the workspace when it was made (after the copy).
    pub files: u64,
}

/// What changed in a workspace since it was made: sorted paths relative to its root.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Diff {
    pub added: Vec<String>,
    pub modified: Vec<String>,
    pub removed: Vec<String>,
}

/// The reason a git command gave for failing.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct GitFailure(pub String);

/// What a failed workspace operation reports; paths are as the script wrote them.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("invalid workspace `name` `{name}`; hint: use 1 to 64 letters, digits, `-`, `_` and `.`")]
    Name { name: String },
    #[error(
        "invalid `exclude` pattern `{pattern}`; hint: use a name (`node_modules`, `*.log`) or a relative path without `..` (`app/EVAL.ts`)"
    )]
    Pattern { pattern: String },
    #[error("cannot copy `from` folder `{from}` into a workspace")]
    From {
        from: String,
        #[source]
        source: FilesError,
    },
    #[error("`from` `{from}` is not a folder; hint: a workspace is made from a folder")]
    NotAFolder { from: String },
    #[error("cannot create a workspace directory in `{parent}`")]
    Create {
        parent: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot copy `{from}` into workspace `{workspace}`")]
    Copy {
        from: String,
        workspace: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read the files of workspace `{workspace}`")]
    Snapshot {
        workspace: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`git {command}` failed in workspace `{workspace}`")]
    Git {
        command: String,
        workspace: String,
        #[source]
        source: GitFailure,
    },
    #[error("workspace `{workspace}` is not a git repository; hint: create it with `git: true`")]
    NoGit { workspace: String },
    #[error("path `{path}` leaves workspace `{workspace}`; hint: give a path relative to the workspace root")]
    Leaves { path: String, workspace: String },
    #[error("path `{path}` leaves workspace `{workspace}` through a symlink")]
    LinksOut { path: String, workspace: String },
    #[error("path `{path}` names no file in workspace `{workspace}`; hint: give a path like `src/main.rs`")]
    NoFile { path: String, workspace: String },
    #[error("file `{path}` does not exist in workspace `{workspace}`")]
    NotFound { path: String, workspace: String },
    #[error("file `{path}` in workspace `{workspace}` is not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 { path: String, workspace: String, offset: usize },
    #[error("cannot access `{path}` in workspace `{workspace}`")]
    Io {
        path: String,
        workspace: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot remove workspace `{workspace}`")]
    Remove {
        workspace: String,
        #[source]
        source: std::io::Error,
    },
    #[error("workspace `{workspace}` was cleaned up; hint: create another with `workspace::create`")]
    Closed { workspace: String },
}

/// Identity and settings for every git command, so that commits do not depend on the user's
/// configuration (the dates come from the [`Git`] implementation).
const GIT_SETTINGS: [&str; 8] = [
    "-c",
    "user.name=host",
    "-c",
    "user.email=host@localhost",
    "-c",
    "commit.gpgsign=false",
    "-c",
    "core.autocrlf=false",
];

/// The message of a git workspace's first commit; fixed, so the hash depends only on the files.
const FIRST_COMMIT: &str = "workspace: initial files";

/// Attempts at a fresh directory name before giving up (each with a new unique part).
const NAME_ATTEMPTS: usize = 64;

/// The workspaces of one run: makes them, and removes them when the run ends.
pub struct Workspaces {
    settings: WorkspaceSettings,
    files: Arc<dyn Files>,
    git: Arc<dyn Git>,
    created: Mutex<Vec<Arc<Workspace>>>,
}

impl Workspaces {
    pub fn new(settings: WorkspaceSettings, files: Arc<dyn Files>, git: Arc<dyn Git>) -> Self {
        Workspaces { settings, files, git, created: Mutex::new(Vec::new()) }
    }

    /// Makes a workspace: a fresh directory, the copy, the snapshot [`Workspace::diff`] compares
    /// against, and the first commit. On failure nothing is left behind (unless kept).
    pub fn create(&self, options: CreateOptions) -> Result<Arc<Workspace>, WorkspaceError> {
        let label = options.name.unwrap_or_else(|| "ws".to_string());
        let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if label.is_empty() || label.len() > 64 || !label.chars().all(valid) {
            return Err(WorkspaceError::Name { name: label });
        }
        let exclusions = Exclusions::new(&options.exclude).map_err(|pattern| WorkspaceError::Pattern { pattern })?;
        let source = match &options.from {
            Some(from) => Some(self.source(from)?),
            None => None,
        };
        let (name, path) = self.make_directory(&label, options.under)?;
        let mut workspace = Workspace {
            name,
            path,
            from: options.from,
            keep: self.settings.keep,
            git: options.git.then(|| self.git.clone()),
            exclusions,
            initial: Snapshot::new(),
            open: RwLock::new(true),
        };
        if let Err(error) = workspace.fill(source.as_deref()) {
            if !workspace.keep {
                let _ = fs_err::remove_dir_all(&workspace.path);
            }
            return Err(error);
        }
        let workspace = Arc::new(workspace);
        self.created.lock().unwrap_or_else(PoisonError::into_inner).push(workspace.clone());
        Ok(workspace)
    }

    /// At run end: removes every workspace not already cleaned up, unless the settings keep
    /// them; one record per workspace created, for the run manifest.
    pub fn finish(&self) -> Vec<WorkspaceRecord> {
        let created = self.created.lock().unwrap_or_else(PoisonError::into_inner).clone();
        created.iter().map(|workspace| workspace.finish()).collect()
    }

    /// The folder to copy: one the script may read, or (a template prepared once, then copied per
    /// attempt) a folder inside a workspace this run made.
    fn source(&self, from: &str) -> Result<PathBuf, WorkspaceError> {
        let inside_a_workspace = std::fs::canonicalize(from).ok().filter(|path| {
            let created = self.created.lock().unwrap_or_else(PoisonError::into_inner);
            created.iter().any(|workspace| path.starts_with(&workspace.path))
        });
        let source = match inside_a_workspace {
            Some(path) => path,
            None => {
                self.files.resolve(from).map_err(|source| WorkspaceError::From { from: from.to_string(), source })?
            }
        };
        if !source.is_dir() {
            return Err(WorkspaceError::NotAFolder { from: from.to_string() });
        }
        Ok(source)
    }

    /// A directory no other workspace (of this process or another) has: `create_dir` is atomic,
    /// so a name another run took first is an `AlreadyExists` and the next attempt tries another.
    fn make_directory(&self, label: &str, under: Under) -> Result<(String, PathBuf), WorkspaceError> {
        let parent = match under {
            Under::Temp => std::env::temp_dir(),
            Under::Run => self.settings.run_dir.join("workspaces"),
        };
        let failed = |source| WorkspaceError::Create { parent: parent.display().to_string(), source };
        fs_err::create_dir_all(&parent).map_err(failed)?;
        let run_id: String =
            self.settings.run_id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
        for _ in 0..NAME_ATTEMPTS {
            let name = format!("{label}-{}", crate::run_record::unique_part());
            let leaf = match under {
                Under::Temp => format!("host-{run_id}-{name}"),
                Under::Run => name.clone(),
            };
            let path = parent.join(leaf);
            match fs_err::create_dir(&path) {
                Ok(()) => return Ok((name, fs_err::canonicalize(&path).map_err(failed)?)),
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(failed(error)),
            }
        }
        Err(failed(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "every directory name tried was taken")))
    }
}

/// A directory for one unit of work.
pub struct Workspace {
    name: String,
    path: PathBuf,
    from: Option<String>,
    keep: bool,
    git: Option<Arc<dyn Git>>,
    exclusions: Exclusions,
    initial: Snapshot,
    /// Whether the workspace may still be used. Operations hold it for reading and cleanup for
    /// writing, so the directory is never removed under a running operation.
    open: RwLock<bool>,
}

impl Workspace {
    /// The absolute (canonical) path of the directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The label and unique part (`eval-3fa9c1`), unique within the run.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes `text` to the file `relative`, creating its parent folders.
    pub fn write(&self, relative: &str, text: &str) -> Result<(), WorkspaceError> {
        let _open = self.open()?;
        let target = tree::confine(&self.path, relative, &self.name, Access::File)?;
        if let Some(parent) = target.parent() {
            fs_err::create_dir_all(parent).map_err(|source| self.io(relative, source))?;
        }
        fs_err::write(&target, text).map_err(|source| self.io(relative, source))
    }

    /// The file `relative` as UTF-8 text.
    pub fn read(&self, relative: &str) -> Result<String, WorkspaceError> {
        let _open = self.open()?;
        let target = tree::confine(&self.path, relative, &self.name, Access::File)?;
        let bytes = fs_err::read(&target).map_err(|source| self.io(relative, source))?;
        String::from_utf8(bytes).map_err(|error| WorkspaceError::NotUtf8 {
            path: relative.to_string(),
            workspace: self.name.clone(),
            offset: error.utf8_error().valid_up_to(),
        })
    }

    /// Whether `relative` names an existing file or folder (`""` is the workspace itself).
    pub fn exists(&self, relative: &str) -> Result<bool, WorkspaceError> {
        let _open = self.open()?;
        let target = tree::confine(&self.path, relative, &self.name, Access::Any)?;
        Ok(target.exists())
    }

    /// Every file below `relative` (`""` or `.`: the whole workspace), recursively, relative
    /// to the workspace root, sorted and `/`-separated; never `.git/`.
    pub fn list(&self, relative: &str) -> Result<Vec<String>, WorkspaceError> {
        let _open = self.open()?;
        let target = tree::confine(&self.path, relative, &self.name, Access::Any)?;
        if !target.exists() {
            return Err(WorkspaceError::NotFound { path: relative.to_string(), workspace: self.name.clone() });
        }
        let files =
            tree::files(&self.path, &target, &Exclusions::default()).map_err(|source| self.io(relative, source))?;
        Ok(files.into_iter().map(|(path, _)| path).collect())
    }

    /// Removes the file or folder (recursively) `relative`; a symlink is removed, not followed.
    pub fn remove(&self, relative: &str) -> Result<(), WorkspaceError> {
        let _open = self.open()?;
        let target = tree::confine(&self.path, relative, &self.name, Access::Entry)?;
        let metadata = fs_err::symlink_metadata(&target).map_err(|source| self.io(relative, source))?;
        let removed = if metadata.is_dir() { fs_err::remove_dir_all(&target) } else { fs_err::remove_file(&target) };
        removed.map_err(|source| self.io(relative, source))
    }

    /// What changed since the workspace was made, leaving out `.git/` and the exclusions.
    pub fn diff(&self) -> Result<Diff, WorkspaceError> {
        let _open = self.open()?;
        let now = tree::snapshot(&self.path, &self.exclusions)
            .map_err(|source| WorkspaceError::Snapshot { workspace: self.name.clone(), source })?;
        Ok(tree::diff(&self.initial, &now))
    }

    /// Commits every change (`git add -A`, then `git commit --allow-empty -m message`).
    pub fn commit(&self, message: &str) -> Result<(), WorkspaceError> {
        let _open = self.open()?;
        self.git(&["add", "-A"])?;
        self.git(&["commit", "-q", "--allow-empty", "-m", message])
    }

    /// Removes the directory now (unless the run keeps workspaces); the workspace may not be used
    /// afterwards. Calling it again does nothing.
    pub fn cleanup(&self) -> Result<(), WorkspaceError> {
        let mut open = self.open.write().unwrap_or_else(PoisonError::into_inner);
        if *open && !self.keep {
            match fs_err::remove_dir_all(&self.path) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(WorkspaceError::Remove { workspace: self.name.clone(), source }),
            }
        }
        *open = false;
        Ok(())
    }

    /// Copies `source` in, takes the initial snapshot and makes the first commit.
    fn fill(&mut self, source: Option<&Path>) -> Result<(), WorkspaceError> {
        if let Some(source) = source {
            tree::copy(source, &self.path, &self.exclusions).map_err(|error| WorkspaceError::Copy {
                from: self.from.clone().unwrap_or_default(),
                workspace: self.name.clone(),
                source: error,
            })?;
        }
        self.initial = tree::snapshot(&self.path, &self.exclusions)
            .map_err(|source| WorkspaceError::Snapshot { workspace: self.name.clone(), source })?;
        if self.git.is_some() {
            self.git(&["-c", "init.defaultBranch=main", "init", "-q"])?;
            self.git(&["add", "-A"])?;
            self.git(&["commit", "-q", "--allow-empty", "-m", FIRST_COMMIT])?;
        }
        Ok(())
    }

    fn finish(&self) -> WorkspaceRecord {
        // A failure leaves the directory in place, which `kept` then reports.
        let _ = self.cleanup();
        WorkspaceRecord {
            name: self.name.clone(),
            path: self.path.display().to_string(),
            from: self.from.clone(),
            kept: fs_err::symlink_metadata(&self.path).is_ok(),
            files: self.initial.len() as u64,
        }
    }

    fn open(&self) -> Result<RwLockReadGuard<'_, bool>, WorkspaceError> {
        let open = self.open.read().unwrap_or_else(PoisonError::into_inner);
        if *open { Ok(open) } else { Err(WorkspaceError::Closed { workspace: self.name.clone() }) }
    }

    fn git(&self, args: &[&str]) -> Result<(), WorkspaceError> {
        let Some(git) = &self.git else {
            return Err(WorkspaceError::NoGit { workspace: self.name.clone() });
        };
        let command = args.iter().find(|arg| !arg.starts_with('-') && !arg.contains('=')).unwrap_or(&"");
        let all: Vec<&str> = GIT_SETTINGS.iter().chain(args).copied().collect();
        git.run(&self.path, &all).map_err(|reason| WorkspaceError::Git {
            command: (*command).to_string(),
            workspace: self.name.clone(),
            source: GitFailure(reason),
        })
    }

    fn io(&self, relative: &str, source: std::io::Error) -> WorkspaceError {
        match source.kind() {
            std::io::ErrorKind::NotFound => {
                WorkspaceError::NotFound { path: relative.to_string(), workspace: self.name.clone() }
            }
            _ => WorkspaceError::Io { path: relative.to_string(), workspace: self.name.clone(), source },
        }
    }
}
