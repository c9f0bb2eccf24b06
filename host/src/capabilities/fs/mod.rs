//! The `fs` capability: reading the experiment's inputs (text, JSON, JSONL, TOML, Markdown).
//!
//! Reads go through [`ReadPolicy`], and every file read is hashed for the run manifest. This
//! capability never writes: outputs belong to `results`.

mod formats;
pub mod rhai;
mod sandbox;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde::Serialize;
use sha2::{Digest, Sha256};

pub use formats::{MarkdownDocument, MarkdownSection, parse_json, parse_jsonl, parse_markdown, parse_toml};
pub use sandbox::{ReadPolicy, WritePolicy};

/// What a failed file operation reports. Paths are as the script (or user) wrote them.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error(
        "path `{path}` is outside the project and the paths given on the command line; hint: pass it as a script argument to allow reading it"
    )]
    Escapes { path: String },
    #[error(
        "path `{path}` is outside the run directory; hint: results paths are relative to the run directory and may not use `..`"
    )]
    WriteEscapes { path: String },
    #[error(
        "path `{path}` is not under a folder given on the command line; hint: name the folder on the command line (with the script's flag for it, such as `--checkout DIR`) to let the run write there"
    )]
    NotGranted { path: String },
    #[error("an empty path was given")]
    EmptyPath,
    #[error("file `{path}` does not exist")]
    NotFound { path: String },
    #[error("cannot access `{path}`")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("file `{path}` is not valid UTF-8 (first bad byte at offset {offset})")]
    NotUtf8 { path: String, offset: usize },
    #[error("invalid {format} in `{path}` at line {line}, column {column}: {message}")]
    Syntax { format: &'static str, path: String, line: usize, column: usize, message: String },
}

/// A text file that was read, with the path as the script named it.
#[derive(Debug, Clone)]
pub struct Text {
    pub path: String,
    pub content: String,
}

/// Reading inputs. Object safe, so scripts and guests share one implementation and its policy.
pub trait Files: Send + Sync {
    /// The whole file as UTF-8 text.
    fn read_text(&self, path: &str) -> Result<Text, FilesError>;
    /// The whole file as bytes.
    fn read_bytes(&self, path: &str) -> Result<Vec<u8>, FilesError>;
    /// Records `path` as read for the run, as [`Self::read_bytes`] does, when the caller already
    /// holds its content from an earlier read in this process (`sha256` of its `bytes` bytes).
    fn record_read(&self, path: &str, sha256: &str, bytes: u64) -> Result<(), FilesError>;
    /// Whether `path` names an existing file or folder that may be read.
    fn exists(&self, path: &str) -> Result<bool, FilesError>;
    /// The entries of a folder, sorted by name, as paths usable with the other functions.
    fn list(&self, folder: &str) -> Result<Vec<String>, FilesError>;
    /// The canonical path that `path` names, if it may be read: for capabilities that hand a
    /// readable folder to something else (a workspace copied from it, a program's `cwd`).
    fn resolve(&self, path: &str) -> Result<PathBuf, FilesError>;
    /// The absolute path `path` names if it lies under a folder the user named on the command
    /// line (it need not exist yet): where [`crate::capabilities::results`] may export files.
    fn granted(&self, path: &str) -> Result<PathBuf, FilesError>;
    /// Lets scripts read `root` (an existing folder) and everything under it too: the run
    /// directory, so that a script reads back what the programs it started wrote there wherever
    /// `--out` put it; a package's folder in host's cache; an export folder.
    fn allow_root(&self, root: &std::path::Path);
}

/// One input file, as the manifest records it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct InputRecord {
    pub path: String,
    pub sha256: String,
    pub bytes: u64,
}

/// [`Files`] over the real file system, confined by a [`ReadPolicy`], hashing what it reads.
#[derive(Debug)]
pub struct SandboxFiles {
    policy: std::sync::RwLock<ReadPolicy>,
    inputs: Mutex<BTreeMap<PathBuf, InputRecord>>,
}

impl SandboxFiles {
    pub fn new(policy: ReadPolicy) -> Self {
        SandboxFiles { policy: std::sync::RwLock::new(policy), inputs: Mutex::new(BTreeMap::new()) }
    }

    fn resolve_path(&self, path: &str) -> Result<PathBuf, FilesError> {
        self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner).resolve(path)
    }

    /// Every file read so far, sorted by path.
    pub fn inputs(&self) -> Vec<InputRecord> {
        self.inputs.lock().map(|inputs| inputs.values().cloned().collect()).unwrap_or_default()
    }

    /// Records a file the host itself read for the run (the script, a module, the scenario).
    pub fn record(&self, path: &std::path::Path, bytes: &[u8]) {
        self.record_hashed(path, sha256_hex(bytes), bytes.len() as u64);
    }

    fn record_hashed(&self, path: &std::path::Path, sha256: String, bytes: u64) {
        let base = self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner).base().to_path_buf();
        let shown = match path.strip_prefix(&base) {
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        };
        let record = InputRecord { path: shown, sha256, bytes };
        if let Ok(mut inputs) = self.inputs.lock() {
            inputs.insert(path.to_path_buf(), record);
        }
    }
}

impl Files for SandboxFiles {
    fn read_bytes(&self, path: &str) -> Result<Vec<u8>, FilesError> {
        let resolved = self.resolve_path(path)?;
        let bytes = fs_err::read(&resolved).map_err(|source| FilesError::Io { path: path.to_string(), source })?;
        self.record(&resolved, &bytes);
        Ok(bytes)
    }

    fn record_read(&self, path: &str, sha256: &str, bytes: u64) -> Result<(), FilesError> {
        let resolved = self.resolve_path(path)?;
        self.record_hashed(&resolved, sha256.to_owned(), bytes);
        Ok(())
    }

    fn read_text(&self, path: &str) -> Result<Text, FilesError> {
        let bytes = self.read_bytes(path)?;
        let content = String::from_utf8(bytes).map_err(|error| FilesError::NotUtf8 {
            path: path.to_string(),
            offset: error.utf8_error().valid_up_to(),
        })?;
        Ok(Text { path: path.to_string(), content })
    }

    fn exists(&self, path: &str) -> Result<bool, FilesError> {
        match self.resolve_path(path) {
            Ok(_) => Ok(true),
            Err(FilesError::NotFound { .. }) => Ok(false),
            Err(error) => Err(error),
        }
    }

    fn resolve(&self, path: &str) -> Result<PathBuf, FilesError> {
        self.resolve_path(path)
    }

    fn granted(&self, path: &str) -> Result<PathBuf, FilesError> {
        self.policy.read().unwrap_or_else(std::sync::PoisonError::into_inner).granted(path)
    }

    fn allow_root(&self, root: &std::path::Path) {
        self.policy.write().unwrap_or_else(std::sync::PoisonError::into_inner).add_root(root);
    }

    fn list(&self, folder: &str) -> Result<Vec<String>, FilesError> {
        let resolved = self.resolve_path(folder)?;
        let entries =
            fs_err::read_dir(&resolved).map_err(|source| FilesError::Io { path: folder.to_string(), source })?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|source| FilesError::Io { path: folder.to_string(), source })?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        let prefix = folder.trim_end_matches('/');
        Ok(names.into_iter().map(|name| format!("{prefix}/{name}")).collect())
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// `fs::` for scripts.
pub const CAPABILITY: super::registry::Capability =
    super::registry::Capability::script("fs", |capabilities| rhai::module(capabilities.files.clone()));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_records_the_input_with_its_hash() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "abc").unwrap();
        let files = SandboxFiles::new(ReadPolicy::new(dir.path()).unwrap());
        assert_eq!(files.read_text("a.txt").unwrap().content, "abc");
        let inputs = files.inputs();
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0].path, "a.txt");
        assert_eq!(inputs[0].sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn invalid_utf8_names_the_file_and_offset() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bin.txt"), b"ok\xff").unwrap();
        let files = SandboxFiles::new(ReadPolicy::new(dir.path()).unwrap());
        let error = files.read_text("bin.txt").unwrap_err();
        assert_eq!(error.to_string(), "file `bin.txt` is not valid UTF-8 (first bad byte at offset 2)");
    }

    #[test]
    fn listing_is_sorted_and_gives_readable_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        for name in ["b.json", "a.json"] {
            std::fs::write(dir.path().join("data").join(name), "{}").unwrap();
        }
        let files = SandboxFiles::new(ReadPolicy::new(dir.path()).unwrap());
        let listed = files.list("data/").unwrap();
        assert_eq!(listed, vec!["data/a.json", "data/b.json"]);
        assert!(files.read_text(&listed[0]).is_ok());
        assert!(!files.exists("data/c.json").unwrap());
    }
}
