//! Property tests: the scanner never panics, and what it reports is always well formed.
//!
//! About 3,000 cases per property; set `PROPTEST_CASES` to run more or fewer.

// A panic in a test helper is a failed test, as in the `#[test]` functions clippy already exempts.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::sync::LazyLock;

use guest_sdk::imports::Source;
use proptest::prelude::*;

const DEFAULT_CASES: u32 = 3_000;

/// Rust's tokens that matter to the scanner, and the ones most likely to confuse it.
#[rustfmt::skip]
const VOCABULARY: &[&str] = &[
    // Words: keywords around imports, names, and lookalikes of `use`.
    "use", "use ", "pub", "pub(crate)", "extern", "crate", "self", "super", "as", "_", "fn", "mod", "std", "a",
    "HashMap", "reuse", "r#use", "$crate", "ü", "0",
    // Punctuation of use trees and of what surrounds them.
    "::", ":", "{", "}", ",", ";", "*", ".", "<", ">", "(", ")", "#", "#[", "]",
    // Pieces of literals: quotes, escapes, prefixes, raw-string hashes, lifetimes.
    "\"", "\\", "'", "'a", "'\\''", "'\"'", "b'", "r\"", "r#\"", "\"#", "r##\"", "\"##", "b\"", "br#\"", "c\"",
    // Comment markers and whitespace, Unicode whitespace included.
    "//", "///", "//!", "/*", "*/", "/**", " ", "\t", "\n", "\r\n", "\u{a0}", "\u{2028}",
];

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(DEFAULT_CASES)
}

fn extract(path: &str, content: String) -> Vec<String> {
    lang_rust::extract_imports(Source { path: path.into(), content: content.into() }).unwrap().imports
}

/// Strings of Rust-ish tokens, with arbitrary text mixed in now and then.
fn rustish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        8 => prop::sample::select(VOCABULARY).prop_map(str::to_string),
        1 => any::<String>(),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

/// Read once: every case of the splice property draws from it.
static CORPUS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/rust");
    let mut files: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "rs"))
        .collect();
    files.sort();
    files.into_iter().map(|path| fs::read_to_string(path).unwrap()).collect()
});

/// The largest char boundary at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len())).rev().find(|&index| text.is_char_boundary(index)).unwrap_or(0)
}

fn assert_well_formed(imports: &[String]) -> Result<(), TestCaseError> {
    let mut seen = HashSet::new();
    for import in imports {
        prop_assert!(!import.is_empty(), "an empty import in {imports:?}");
        prop_assert_eq!(import.trim(), import.as_str(), "surrounding whitespace in {:?}", imports);
        prop_assert!(!import.contains(['\n', '\r']), "a line break in {imports:?}");
        prop_assert!(seen.insert(import), "{import:?} reported twice in {imports:?}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn any_input_gives_well_formed_imports_without_panicking(
        content in prop_oneof![any::<String>(), rustish()],
    ) {
        assert_well_formed(&extract("fuzz.rs", content))?;
    }

    #[test]
    fn a_truncated_or_spliced_corpus_file_does_not_panic(
        file in any::<prop::sample::Index>(),
        other in any::<prop::sample::Index>(),
        cut in any::<prop::sample::Index>(),
        resume in any::<prop::sample::Index>(),
        splice in any::<bool>(),
    ) {
        let corpus = &*CORPUS;
        let first = file.get(corpus);
        let head = &first[..floor_boundary(first, cut.index(first.len() + 1))];
        let content = if splice {
            let second = other.get(corpus);
            format!("{head}{}", &second[floor_boundary(second, resume.index(second.len() + 1))..])
        } else {
            head.to_string()
        };
        assert_well_formed(&extract("spliced.rs", content))?;
    }
}
