//! Where a script's project lives: the folder that holds `scripts/`, against which script
//! imports, relative input paths and the default `runs/` folder resolve.

use std::path::{Path, PathBuf};

/// The project a script belongs to.
#[derive(Debug, Clone)]
pub struct Project {
    /// Canonical path of the project root.
    pub root: PathBuf,
}

impl Project {
    /// The project of `script`: the parent of the nearest enclosing `scripts/` folder, or the
    /// script's own folder when it is not inside one.
    pub fn of_script(script: &Path) -> std::io::Result<Self> {
        let script = fs_err::canonicalize(script)?;
        let folder = script.parent().unwrap_or(Path::new("/"));
        let root = folder
            .ancestors()
            .find(|ancestor| ancestor.file_name().is_some_and(|name| name == "scripts"))
            .and_then(Path::parent)
            .unwrap_or(folder)
            .to_path_buf();
        Ok(Project { root })
    }

    /// `scripts/` under the root: where `import "lib/x"` looks.
    pub fn scripts(&self) -> PathBuf {
        self.root.join("scripts")
    }

    /// The scenario used when none is given: `scenarios/<script stem>.toml`, if it exists.
    pub fn default_scenario(&self, script: &Path) -> Option<PathBuf> {
        let stem = script.file_stem()?;
        let candidate = self.root.join("scenarios").join(stem).with_extension("toml");
        candidate.is_file().then_some(candidate)
    }

    /// `path` relative to the root when it is inside, as written otherwise; for messages and
    /// manifests, so that they read the same on every machine.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(relative) => relative.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// Where host keeps caches shared between runs and projects (LLM answers, later embeddings and
/// model weights): `$HOST_CACHE_DIR`, else `$XDG_CACHE_HOME/host`, else `~/.cache/host`.
pub fn cache_root() -> PathBuf {
    let from = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
    from("HOST_CACHE_DIR")
        .or_else(|| from("XDG_CACHE_HOME").map(|cache| cache.join("host")))
        .or_else(|| from("HOME").map(|home| home.join(".cache/host")))
        .unwrap_or_else(|| std::env::temp_dir().join("host-cache"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_under_scripts_belongs_to_the_folder_above_it() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("scripts/examples");
        std::fs::create_dir_all(&nested).unwrap();
        std::fs::write(nested.join("hello.rhai"), "").unwrap();
        let project = Project::of_script(&nested.join("hello.rhai")).unwrap();
        assert_eq!(project.root, dir.path().canonicalize().unwrap());
    }

    #[test]
    fn a_loose_script_belongs_to_its_own_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("loose.rhai"), "").unwrap();
        let project = Project::of_script(&dir.path().join("loose.rhai")).unwrap();
        assert_eq!(project.root, dir.path().canonicalize().unwrap());
    }
}
