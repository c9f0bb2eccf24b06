//! Properties that hold for any input: the parser never panics, and what it answers is well
//! formed (levels 0 to 4, lines in order, each heading path ending at its own title, titles on
//! one line). 3,000 cases per property by default; set `PROPTEST_CASES` to change that.

use std::fs;
use std::path::Path;
use std::sync::OnceLock;

use guest_sdk::markdown::{Document, Parsed};
use proptest::prelude::*;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(3000)
}

fn parse(content: &str) -> Result<Parsed, TestCaseError> {
    doc_markdown::parse_markdown(Document { path: "fuzz.md".into(), content: content.into() })
        .map_err(|failure| TestCaseError::fail(format!("parse_markdown failed: {failure:?}")))
}

/// Parses `content` and checks the shape of what comes back.
fn check_well_formed(content: &str) -> Result<(), TestCaseError> {
    let parsed = parse(content)?;
    let line_count = content.split(['\n', '\r']).count();
    let mut previous_line = None;
    for (index, section) in parsed.sections.iter().enumerate() {
        prop_assert!(section.level <= 4, "level {} in {section:?}", section.level);
        prop_assert_eq!(section.level == 0, section.line == 0, "only the preamble has line 0: {:?}", section);
        prop_assert!(section.level > 0 || index == 0, "a preamble after a heading: {section:?}");
        prop_assert!(previous_line.is_none_or(|previous| section.line > previous), "lines out of order");
        prop_assert!(section.line <= line_count, "line {} past the end", section.line);
        previous_line = Some(section.line);
        prop_assert!(!section.title.contains(['\n', '\r']), "a title spans lines: {:?}", section.title);
        prop_assert!(section.headings.len() <= 5, "a path deeper than four levels and a title");
        if section.level > 0 {
            prop_assert!(!section.title.is_empty() && !section.title.contains('`'), "title {:?}", section.title);
            prop_assert_eq!(section.headings.last(), Some(&section.title), "the path ends elsewhere");
        } else {
            prop_assert!(!section.content.is_empty(), "a blank preamble was kept");
        }
        prop_assert_eq!(section.content.trim(), section.content.as_str(), "untrimmed content");
        for block in &section.code_blocks {
            prop_assert!(!block.language.contains(char::is_whitespace), "language {:?}", block.language);
        }
        for callout in &section.callouts {
            let known = ["good-to-know", "note", "warning", "tip", "important", "caution"];
            prop_assert!(known.contains(&callout.kind.as_str()), "kind {:?}", callout.kind);
            prop_assert_eq!(callout.text.trim(), callout.text.as_str(), "untrimmed callout");
        }
    }
    let title = parsed.frontmatter.get("title").filter(|title| !title.is_empty());
    prop_assert_eq!(parsed.title.as_ref(), title, "the title is not the frontmatter's");
    Ok(())
}

/// The pieces the docs are made of, the ones the parser cares about most.
const VOCABULARY: &[&str] = &[
    "---",
    "title: ",
    "description: ",
    "'",
    "\"",
    "\\",
    ":",
    "#",
    "# ",
    "## ",
    "### ",
    "#### ",
    "##### ",
    "   ",
    "    ",
    "`",
    "```",
    "````",
    "~~~",
    "tsx",
    " filename=\"a.tsx\"",
    ">",
    "> ",
    "**",
    "Good to know",
    "Note",
    "Warning",
    "Tip",
    "Important",
    "[!NOTE]",
    "[!",
    "]",
    "<AppOnly>",
    "</AppOnly>",
    "<PagesOnly>",
    "</PagesOnly >",
    "{/*",
    "*/}",
    "- ",
    "1. ",
    "|",
    "text",
    "updateTag",
    " ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "é",
    "日本",
    "\u{feff}",
    "\u{a0}",
    "\u{2028}",
];

fn vocabulary_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(VOCABULARY), 0..80).prop_map(|pieces| pieces.concat())
}

/// The corpus files' contents; `tests/corpus.rs` checks that they are all there.
fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/markdown");
        let mut files: Vec<_> = fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
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
    fn any_text_parses_without_panicking_into_well_formed_sections(
        text in prop_oneof![any::<String>(), vocabulary_text()],
    ) {
        check_well_formed(&text)?;
    }

    #[test]
    fn a_corpus_file_cut_or_spliced_anywhere_parses_without_panicking(
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

/// Inputs built to make a parser that rescans quadratic; a one-pass one reads them in moments.
#[test]
fn pathological_megabyte_inputs_finish() {
    let patterns = [
        "```\n",
        "````\n```\n",
        "# a\n",
        "#### a\n## b\n",
        "> **Note**: a\n",
        ">\n",
        "<AppOnly>\n",
        "</PagesOnly>\n",
        "---\n",
        "---\na: b\n",
        "\r",
        "\n",
        "#",
        "`",
    ];
    for pattern in patterns {
        let text = pattern.repeat(1_000_000 / pattern.len());
        let started = std::time::Instant::now();
        let parsed = parse(&text).unwrap();
        let elapsed = started.elapsed();
        assert!(elapsed.as_secs() < 10, "{pattern:?} took {elapsed:?} ({} sections)", parsed.sections.len());
    }
}

/// Without the corpus, the cut-and-splice property above would pass without checking anything.
#[test]
fn the_corpus_is_there_to_cut() {
    assert!(corpus().len() >= 6, "only {} corpus files loaded", corpus().len());
}
