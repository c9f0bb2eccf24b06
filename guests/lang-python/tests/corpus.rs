//! Every file in `fixtures/imports/python` gives exactly the imports in the `.json` next to it.

#![allow(clippy::expect_used, reason = "test helpers: a failed expectation is a failed test")]

use std::fs;
use std::path::{Path, PathBuf};

use guest_sdk::imports::{Imports, Source};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/python")
}

/// The corpus's source files: everything except the expected outputs and the README.
fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(corpus_dir())
        .expect("the corpus folder is readable")
        .map(|entry| entry.expect("a corpus entry is readable").path())
        .filter(|path| matches!(path.extension().and_then(|ext| ext.to_str()), Some("py" | "pyi")))
        .collect();
    files.sort();
    files
}

#[test]
fn the_corpus_has_at_least_eight_files() {
    let files = corpus_files();
    assert!(files.len() >= 8, "only {} corpus files in {}", files.len(), corpus_dir().display());
}

#[test]
fn every_corpus_file_gives_its_expected_imports() {
    let mut failures = Vec::new();
    for path in corpus_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let content = fs::read_to_string(&path).unwrap();
        let expected_path = path.with_file_name(format!("{name}.json"));
        let expected = fs::read_to_string(&expected_path)
            .unwrap_or_else(|error| panic!("{name}: no expected output {}: {error}", expected_path.display()));
        let expected: Imports =
            serde_json::from_str(&expected).unwrap_or_else(|error| panic!("{name}.json does not decode: {error}"));
        let actual = lang_python::extract_imports(Source { path: name.clone(), content }).unwrap();
        if actual != expected {
            failures.push(format!("{name}\n  expected: {expected:?}\n  actual:   {actual:?}"));
        }
    }
    assert!(failures.is_empty(), "{} corpus file(s) differ:\n{}", failures.len(), failures.join("\n"));
}
