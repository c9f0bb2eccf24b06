//! Which files `host test` runs: a file named on the command line as it is, and every
//! `*_test.rhai` under a folder, in path order. It reads no file and runs nothing.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// How a test file's name ends.
pub const SUFFIX: &str = "_test.rhai";

/// The test files under `paths`, canonical, each once, in the order given and then path order.
pub fn test_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut seen = HashSet::new();
    let mut files = Vec::new();
    for path in paths {
        for file in files_under(path)? {
            if seen.insert(file.clone()) {
                files.push(file);
            }
        }
    }
    if files.is_empty() {
        let named: Vec<String> = paths.iter().map(|path| format!("`{}`", path.display())).collect();
        anyhow::bail!(
            "no `*{SUFFIX}` files under {}; hint: a test file sits beside the module it tests, e.g. \
             `scripts/lib/cortex/judge_test.rhai`",
            named.join(", ")
        );
    }
    Ok(files)
}

fn files_under(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !path.exists() {
        anyhow::bail!("path `{}` does not exist; hint: paths are relative to the working directory", path.display());
    }
    if path.is_file() {
        return Ok(vec![canonical(path)?]);
    }
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(path).sort_by_file_name() {
        let entry = entry.with_context(|| format!("cannot list the folder `{}`", path.display()))?;
        let is_test = entry.file_name().to_str().is_some_and(|name| name.ends_with(SUFFIX));
        if entry.file_type().is_file() && is_test {
            files.push(canonical(entry.path())?);
        }
    }
    Ok(files)
}

fn canonical(path: &Path) -> anyhow::Result<PathBuf> {
    fs_err::canonicalize(path).with_context(|| format!("cannot open `{}`", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in ["lib/b/two_test.rhai", "lib/a_test.rhai", "lib/a.rhai", "lib/b/notes_test.txt", "main_test.rhai"] {
            let path = dir.path().join("scripts").join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        dir
    }

    fn names(files: &[PathBuf], root: &Path) -> Vec<String> {
        let root = root.canonicalize().unwrap();
        files.iter().map(|file| file.strip_prefix(&root).unwrap().display().to_string()).collect()
    }

    #[test]
    fn a_folder_yields_its_test_files_in_path_order_and_nothing_else() {
        let dir = project();
        let files = test_files(&[dir.path().join("scripts")]).unwrap();
        assert_eq!(
            names(&files, dir.path()),
            ["scripts/lib/a_test.rhai", "scripts/lib/b/two_test.rhai", "scripts/main_test.rhai"]
        );
    }

    #[test]
    fn a_file_is_taken_as_it_is_and_a_file_named_twice_runs_once() {
        let dir = project();
        let module = dir.path().join("scripts/lib/a.rhai");
        let files = test_files(&[module.clone(), dir.path().join("scripts/lib"), module]).unwrap();
        assert_eq!(
            names(&files, dir.path()),
            ["scripts/lib/a.rhai", "scripts/lib/a_test.rhai", "scripts/lib/b/two_test.rhai"]
        );
    }

    #[test]
    fn a_missing_path_is_an_error_naming_it() {
        let dir = project();
        let error = test_files(&[dir.path().join("nope")]).unwrap_err().to_string();
        assert!(error.starts_with("path `") && error.contains("nope` does not exist"), "{error}");
    }

    #[test]
    fn a_folder_without_test_files_is_an_error_naming_the_paths() {
        let dir = project();
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let error = test_files(&[empty]).unwrap_err().to_string();
        assert!(error.starts_with("no `*_test.rhai` files under `") && error.contains("empty`"), "{error}");
    }
}
