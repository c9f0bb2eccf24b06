//! Every file of `fixtures/imports/go/` gives exactly the imports its `.json` lists.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use guest_sdk::imports::{Imports, Source};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/go")
}

/// The corpus's source files: everything but the expected outputs and the README.
fn corpus_files() -> io::Result<Vec<PathBuf>> {
    let mut files = fs::read_dir(corpus_dir())?
        .map(|entry| entry.map(|entry| entry.path()))
        .filter(|path| path.as_ref().map_or(true, |path| path.extension().is_some_and(|ext| ext == "go")))
        .collect::<io::Result<Vec<_>>>()?;
    files.sort();
    Ok(files)
}

#[test]
fn the_corpus_has_at_least_eight_files_each_with_its_expected_output() {
    let files = corpus_files().unwrap();
    assert!(files.len() >= 8, "only {} corpus files in {}", files.len(), corpus_dir().display());
    for file in &files {
        let expected = PathBuf::from(format!("{}.json", file.display()));
        assert!(expected.is_file(), "{} has no {}", file.display(), expected.display());
    }
}

#[test]
fn every_corpus_file_gives_its_expected_imports() {
    let mut failures = Vec::new();
    for file in corpus_files().unwrap() {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let content = fs::read_to_string(&file).unwrap();
        let expected_json = fs::read_to_string(format!("{}.json", file.display())).unwrap();
        let expected: Imports =
            serde_json::from_str(&expected_json).unwrap_or_else(|error| panic!("{name}.json does not parse: {error}"));
        let actual = lang_go::extract_imports(Source { path: name.clone(), content }).unwrap();
        if actual != expected {
            failures.push(format!(
                "{name}:\n  expected: {} {:?}\n  actual:   {} {:?}",
                expected.language, expected.imports, actual.language, actual.imports
            ));
        }
    }
    assert!(failures.is_empty(), "corpus mismatches:\n{}", failures.join("\n"));
}

#[test]
fn the_expected_outputs_are_pretty_printed_with_two_space_indentation() {
    for file in corpus_files().unwrap() {
        let path = format!("{}.json", file.display());
        let text = fs::read_to_string(&path).unwrap();
        let imports: Imports = serde_json::from_str(&text).unwrap();
        let pretty = serde_json::to_string_pretty(&imports).unwrap();
        assert_eq!(text.trim_end(), pretty, "{path} is not in canonical pretty form");
    }
}
