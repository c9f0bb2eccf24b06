//! Properties that hold for any input: the scanner never panics, and what it reports is well
//! formed (non-empty, trimmed, on one line, each once). 3,000 cases per property by default;
//! set `PROPTEST_CASES` to change that.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use guest_sdk::imports::Source;
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(3000)
}

/// Scans `content` as a `.tsx` file and checks the shape of every import reported.
fn check_well_formed(content: &str) -> Result<(), TestCaseError> {
    let imports = lang_typescript::extract_imports(Source { path: "fuzz.tsx".into(), content: content.into() })
        .map_err(|failure| TestCaseError::fail(format!("extract_imports failed: {failure:?}")))?
        .imports;
    let mut seen = BTreeSet::new();
    for import in &imports {
        prop_assert!(!import.is_empty(), "an empty import in {imports:?}");
        prop_assert_eq!(import.trim(), import.as_str(), "untrimmed import");
        prop_assert!(!import.contains(['\n', '\r']), "an import spans lines: {:?}", import);
        prop_assert!(seen.insert(import.as_str()), "{:?} reported twice", import);
    }
    Ok(())
}

/// The pieces JavaScript and TypeScript are made of, the ones imports care about most.
const VOCABULARY: &[&str] = &[
    "import", "export", "require", "from", "type", "typeof", "as", "default", "const", "let", "var", "await", "return",
    "meta", "x", "React", "useState", "'react'", "\"./a\"", "`./b`", "'", "\"", "`", "${", "{", "}", "(", ")", "[",
    "]", "*", ",", ";", ":", "=", ".", "?.", "...", "/", "//", "/*", "*/", "\\", "<", ">", " ", "  ", "\t", "\n",
    "\r\n", "#!", "#", "$", "1", "0.5", "é", "日本", "\u{feff}", "\u{a0}", "\u{2028}",
];

fn vocabulary_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCABULARY), 0..80).prop_map(|pieces| pieces.concat())
}

/// The corpus files' contents; `tests/corpus.rs` checks that they are all there.
fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/typescript");
        let mut files: Vec<_> = fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| !matches!(path.extension().and_then(|ext| ext.to_str()), Some("json" | "md")))
            .collect();
        files.sort();
        files.iter().filter_map(|path| fs::read_to_string(path).ok()).collect()
    })
}

/// The char boundary at or before `fraction` of `text`'s length.
fn boundary(text: &str, fraction: f64) -> usize {
    let mut at = ((text.len() as f64) * fraction) as usize;
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn any_text_scans_without_panicking_into_well_formed_imports(
        text in prop_oneof![any::<String>(), vocabulary_text()],
    ) {
        check_well_formed(&text)?;
    }

    #[test]
    fn a_corpus_file_cut_or_spliced_anywhere_scans_without_panicking(
        first in any::<prop::sample::Index>(),
        second in any::<prop::sample::Index>(),
        cut in 0.0..=1.0f64,
        resume in 0.0..=1.0f64,
        splice in any::<bool>(),
    ) {
        let files = corpus();
        prop_assume!(!files.is_empty());
        let head = first.get(files);
        let head = &head[..boundary(head, cut)];
        check_well_formed(head)?;
        if splice {
            let tail = second.get(files);
            let tail = &tail[boundary(tail, resume)..];
            check_well_formed(&format!("{head}{tail}"))?;
        }
    }
}

/// Inputs built to make a backtracking scanner quadratic; a linear one reads them in moments.
#[test]
fn pathological_megabyte_inputs_finish() {
    let patterns = [
        "import { a, import { b, ",
        "import x, import y, ",
        "const { a: b, const { c, ",
        "[/[/",
        "`${`${",
        "{{{{",
        "}}}}",
        "'\n",
        "/* ",
        "export { a, export { ",
        "require(require(",
        "import(import(",
    ];
    for pattern in patterns {
        let text = pattern.repeat(1_000_000 / pattern.len());
        let started = std::time::Instant::now();
        let imports = lang_typescript::extract_imports(Source { path: "big.ts".into(), content: text.into() }).unwrap();
        let elapsed = started.elapsed();
        assert!(elapsed.as_secs() < 10, "{pattern:?} took {elapsed:?} ({} imports)", imports.imports.len());
    }
}

/// Without the corpus, the cut-and-splice property above would pass without checking anything.
#[test]
fn the_corpus_is_there_to_cut() {
    assert!(corpus().len() >= 8, "only {} corpus files loaded", corpus().len());
}
