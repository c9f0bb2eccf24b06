//! Every file in `fixtures/imports/rust` yields exactly the imports its `.json` twin lists.

// A panic in a test helper is a failed test, as in the `#[test]` functions clippy already exempts.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};

use guest_sdk::imports::{Imports, Source};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/rust")
}

/// The corpus's source files, sorted so failures come in a stable order.
fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(corpus_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "rs"))
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
fn every_corpus_file_yields_its_expected_imports() {
    let mut failures = Vec::new();
    for file in corpus_files() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let content = fs::read_to_string(&file).unwrap();
        let expected_path = file.with_file_name(format!("{name}.json"));
        let expected_text = fs::read_to_string(&expected_path)
            .unwrap_or_else(|error| panic!("{name}: no expected output at {}: {error}", expected_path.display()));
        let expected: Imports = serde_json::from_str(&expected_text)
            .unwrap_or_else(|error| panic!("{}: not an Imports object: {error}", expected_path.display()));
        let actual = lang_rust::extract_imports(Source { path: name.clone(), content }).unwrap();
        if actual != expected {
            failures.push(format!("{name}:\n  expected: {expected:?}\n  actual:   {actual:?}"));
        }
    }
    assert!(failures.is_empty(), "{} corpus file(s) differ:\n{}", failures.len(), failures.join("\n"));
}
