//! The scanner never panics, and what it reports is always a clean, unique import string: on
//! arbitrary text, on text made of Go's own tokens, and on corpus files cut or spliced anywhere.
//! Runs 3,000 cases per property unless `PROPTEST_CASES` says otherwise.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

use guest_sdk::imports::Source;
use proptest::prelude::*;
use proptest::sample::{Index, select};

const DEFAULT_CASES: u32 = 3_000;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(DEFAULT_CASES)
}

/// Pieces of Go that matter to the scanner, and a few that try to confuse it.
#[rustfmt::skip]
const VOCABULARY: &[&str] = &[
    "import", "package", "func", "type", "var", "const", "main", "fmt", "f", "_", ".", "importer", "ñimport",
    "(", ")", "{", "}", ";", "=", "\"", "`", "'", "\\", "//", "/*", "*/", "\n", "\r\n", "\r", " ", "\t",
    "\"fmt\"", "`os`", "\"net/http\"", "\"github.com/lib/pq\"", "\" a b \"", "\"\"", "'\"'", "'`'", "'\\''",
    "\"\\\"\"", "é", "日本", "\u{feff}", "\u{0}", "0x1F", "1.5e3",
];

fn go_like_text() -> impl Strategy<Value = String> {
    prop::collection::vec(select(VOCABULARY), 0..80).prop_map(|pieces| pieces.concat())
}

fn scan(content: String) -> Vec<String> {
    let source = Source { path: "fuzz.go".into(), content: content.into() };
    lang_go::extract_imports(source).map(|imports| imports.imports).unwrap_or_default()
}

fn assert_clean(imports: &[String]) -> Result<(), TestCaseError> {
    let mut seen = HashSet::new();
    for import in imports {
        prop_assert!(!import.is_empty(), "an empty import in {imports:?}");
        prop_assert_eq!(import.trim(), import.as_str(), "surrounding whitespace in {:?}", import);
        prop_assert!(!import.contains(['\n', '\r']), "a line break in {import:?}");
        prop_assert!(seen.insert(import), "{import:?} reported twice in {imports:?}");
    }
    Ok(())
}

/// The corpus's Go files, read once for all cases.
fn corpus() -> &'static io::Result<Vec<String>> {
    static CORPUS: OnceLock<io::Result<Vec<String>>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/go");
        let mut files = fs::read_dir(dir)?
            .map(|entry| entry.map(|entry| entry.path()))
            .filter(|path| path.as_ref().map_or(true, |path| path.extension().is_some_and(|ext| ext == "go")))
            .collect::<io::Result<Vec<_>>>()?;
        files.sort();
        files.iter().map(fs::read_to_string).collect()
    })
}

/// `text[..at]` (or `text[at..]`), moved back to the nearest char boundary.
fn char_boundary(text: &str, at: Index) -> usize {
    let mut at = at.index(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn arbitrary_text_never_panics_and_gives_clean_unique_imports(
        text in prop_oneof![any::<String>(), go_like_text()],
    ) {
        assert_clean(&scan(text))?;
    }

    #[test]
    fn corpus_files_cut_or_spliced_anywhere_never_panic(
        head in any::<Index>(),
        tail in any::<Index>(),
        cut in any::<Index>(),
        join in any::<Index>(),
        truncate_only in any::<bool>(),
    ) {
        let files = corpus().as_ref().unwrap();
        prop_assert!(!files.is_empty());
        let head = head.get(files);
        let mut text = head[..char_boundary(head, cut)].to_string();
        if !truncate_only {
            let tail = tail.get(files);
            text.push_str(&tail[char_boundary(tail, join)..]);
        }
        assert_clean(&scan(text))?;
    }
}
