//! Native test helpers for language strategies (not compiled for wasm): check an
//! `extract_imports` function against a corpus folder of source files, each with its expected
//! output beside it as `<file>.json`.

use std::path::{Path, PathBuf};

use crate::Failure;
use crate::imports::{Imports, Source};

/// The corpus's source files: everything but the expected outputs (`.json`) and the README
/// (`.md`), sorted so that reports come in a stable order.
pub fn corpus_files(folder: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        let is_source = !matches!(path.extension().and_then(|extension| extension.to_str()), Some("json" | "md"));
        if path.is_file() && is_source {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Runs `extract` on every corpus file in `folder` and compares with its `<file>.json`, which
/// must also be pretty-printed with two-space indentation (so hand edits stay reviewable).
/// Answers how many files were checked, or a report of every problem found.
pub fn check_corpus(folder: &Path, extract: impl Fn(Source<'_>) -> Result<Imports, Failure>) -> Result<usize, String> {
    let files = corpus_files(folder).map_err(|error| format!("cannot list `{}`: {error}", folder.display()))?;
    let problems: Vec<String> = files.iter().filter_map(|file| check_file(file, &extract).err()).collect();
    if problems.is_empty() {
        Ok(files.len())
    } else {
        Err(format!("{} of {} corpus files have problems:\n{}", problems.len(), files.len(), problems.join("\n")))
    }
}

fn check_file(file: &Path, extract: &impl Fn(Source<'_>) -> Result<Imports, Failure>) -> Result<(), String> {
    let name = file.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let content = std::fs::read_to_string(file).map_err(|error| format!("{name}: {error}"))?;
    let expected_path = file.with_file_name(format!("{name}.json"));
    let text = std::fs::read_to_string(&expected_path)
        .map_err(|error| format!("{name}: no expected output at `{}`: {error}", expected_path.display()))?;
    let expected: Imports =
        serde_json::from_str(&text).map_err(|error| format!("{name}.json does not decode: {error}"))?;
    if serde_json::to_string_pretty(&expected).ok().as_deref() != Some(text.trim_end()) {
        return Err(format!("{name}.json is not pretty-printed with two-space indentation"));
    }
    let actual = extract(Source { path: name.as_str().into(), content: content.into() })
        .map_err(|failure| format!("{name}: extract_imports failed: {failure}"))?;
    if actual != expected {
        return Err(format!(
            "{name}:\n  expected {} {:?}\n  actual   {} {:?}",
            expected.language, expected.imports, actual.language, actual.imports
        ));
    }
    Ok(())
}
