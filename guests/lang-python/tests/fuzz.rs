//! Property tests: the scanner never panics, whatever it is given, and what it reports is always
//! well formed. `PROPTEST_CASES` overrides the number of cases (3,000 per property by default).

#![allow(clippy::expect_used, reason = "test helpers: a failed expectation is a failed test")]

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use guest_sdk::imports::Source;
use proptest::prelude::*;
use proptest::sample::Index;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(3_000);
    ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(cases) }
}

/// Pieces of Python that matter to the scanner, so random sequences hit its edge cases often.
const VOCABULARY: &[&str] = &[
    "import",
    "from",
    "as",
    " import ",
    "from . ",
    "..",
    ".",
    ",",
    "*",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ";",
    ":",
    ":=",
    "#",
    "# import x",
    "'",
    "\"",
    "'''",
    "\"\"\"",
    "r'",
    "rb\"",
    "f'",
    "b'''",
    "\\",
    "\\\n",
    "\n",
    "\r\n",
    "\r",
    " ",
    "    ",
    "\t",
    "os",
    "a.b",
    "x",
    "y",
    "__future__",
    "annotations",
    "reimport",
    "important",
    "if",
    "try",
    "TYPE_CHECKING",
    "yield",
    "None",
    "__import__('m')",
    "café",
    "\u{feff}",
    "1.5",
    "é",
];

fn python_like() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCABULARY), 0..48).prop_map(|pieces| pieces.concat())
}

fn extract(content: String) -> Vec<String> {
    lang_python::extract_imports(Source { path: "fuzz.py".into(), content: content.into() })
        .expect("extract_imports never fails")
        .imports
}

fn assert_well_formed(imports: &[String]) {
    let mut seen = HashSet::new();
    for import in imports {
        assert!(!import.is_empty(), "an empty import in {imports:?}");
        assert_eq!(import.trim(), import, "surrounding whitespace in {import:?}");
        assert!(!import.contains(['\n', '\r']), "a line break in {import:?}");
        assert!(seen.insert(import), "{import:?} reported twice in {imports:?}");
    }
}

fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/python");
        let mut files: Vec<_> = fs::read_dir(dir)
            .expect("the corpus folder is readable")
            .map(|entry| entry.expect("a corpus entry is readable").path())
            .filter(|path| matches!(path.extension().and_then(|ext| ext.to_str()), Some("py" | "pyi")))
            .collect();
        files.sort();
        files.iter().map(|path| fs::read_to_string(path).expect("a corpus file is UTF-8")).collect()
    })
}

/// The largest char boundary of `text` at or before the byte `index` picks.
fn boundary(text: &str, index: &Index) -> usize {
    let mut at = index.index(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_text_is_scanned_without_panicking_into_well_formed_imports(
        content in prop_oneof![any::<String>(), python_like()]
    ) {
        assert_well_formed(&extract(content));
    }

    #[test]
    fn a_corpus_file_truncated_or_spliced_anywhere_is_scanned_without_panicking(
        first in any::<Index>(),
        second in any::<Index>(),
        cut in any::<Index>(),
        resume in any::<Index>(),
        splice in any::<bool>(),
    ) {
        let files = corpus();
        let head = first.get(files);
        let head = &head[..boundary(head, &cut)];
        let content = if splice {
            let tail = second.get(files);
            format!("{head}{}", &tail[boundary(tail, &resume)..])
        } else {
            head.to_string()
        };
        assert_well_formed(&extract(content));
    }
}
