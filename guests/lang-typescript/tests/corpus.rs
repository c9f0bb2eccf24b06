//! Every file in `fixtures/imports/typescript/` yields exactly the imports in its `.json` twin.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use guest_sdk::imports::{Imports, Source};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/typescript")
}

/// The corpus's source files: everything but the expected outputs and the README.
fn corpus_files() -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(corpus_dir())? {
        let path = entry?.path();
        let is_source = !matches!(path.extension().and_then(|ext| ext.to_str()), Some("json" | "md"));
        if path.is_file() && is_source {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[test]
fn the_corpus_has_at_least_eight_files() {
    let files = corpus_files().unwrap();
    assert!(files.len() >= 8, "only {} corpus files: {files:?}", files.len());
}

#[test]
fn every_corpus_file_yields_its_expected_imports() {
    let mut failures = Vec::new();
    for path in corpus_files().unwrap() {
        let name = path.file_name().and_then(|name| name.to_str()).expect("corpus file names are UTF-8").to_string();
        let content = fs::read_to_string(&path).unwrap_or_else(|error| panic!("{name}: {error}"));
        let expected_path = path.with_file_name(format!("{name}.json"));
        let expected = fs::read_to_string(&expected_path)
            .unwrap_or_else(|error| panic!("{name}: no expected output at {}: {error}", expected_path.display()));
        let expected: Imports =
            serde_json::from_str(&expected).unwrap_or_else(|error| panic!("{name}.json does not parse: {error}"));
        let actual = lang_typescript::extract_imports(Source { path: name.clone(), content })
            .unwrap_or_else(|failure| panic!("{name}: extract_imports failed: {failure:?}"));
        if actual != expected {
            failures.push(format!(
                "{name}:\n  expected {} {:#?}\n  actual   {} {:#?}",
                expected.language, expected.imports, actual.language, actual.imports
            ));
        }
    }
    assert!(failures.is_empty(), "{} corpus file(s) differ:\n{}", failures.len(), failures.join("\n"));
}
