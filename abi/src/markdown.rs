//! The contract of markdown guests: `parse_markdown` splits a documentation file into its
//! frontmatter and its sections, each with its code blocks, callouts and router, so that an
//! extractor can turn documentation into memories without parsing markdown itself.
//!
//! Sections come in document order, one per ATX heading `#` to `####` (an `#####` or `######`
//! line is content), and one for the text before the first heading when that text is not blank.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The name of the function markdown guests export.
pub const PARSE_MARKDOWN: &str = "parse_markdown";

/// A markdown file: what `parse_markdown` takes; borrowed where it can be, like
/// [`crate::imports::Source`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document<'a> {
    /// As the caller knows it; the parse does not depend on it.
    #[serde(borrow)]
    pub path: Cow<'a, str>,
    #[serde(borrow)]
    pub content: Cow<'a, str>,
}

/// What `parse_markdown` answers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parsed {
    /// The frontmatter's `title`, when it is there and not empty.
    pub title: Option<String>,
    /// The frontmatter's `description`, when it is there and not empty.
    pub description: Option<String>,
    /// Every top-level `key: value` of the frontmatter, quotes removed; empty without one.
    pub frontmatter: BTreeMap<String, String>,
    pub sections: Vec<Section>,
}

/// A heading and the text under it, up to the next heading of any level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Section {
    /// 1 to 4 for `#` to `####`; 0 for the text before the first heading (the preamble).
    pub level: u8,
    /// The heading's text without backticks or closing `#`s; the preamble's is the
    /// frontmatter's title, or empty.
    pub title: String,
    /// The titles from the nearest `#` heading down to this one, this one last. In a document
    /// without any `#` heading, the frontmatter's title (when there is one) stands first, as
    /// the page's title; the preamble's path is that title alone, or empty.
    pub headings: Vec<String>,
    /// The heading's 1-based line in the file (frontmatter lines counted); 0 for the preamble.
    pub line: usize,
    /// The section's own text after its heading line, trimmed, code blocks and blockquotes as
    /// written, without `<AppOnly>`/`<PagesOnly>` tag lines or whole-line `{/* … */}` comments.
    pub content: String,
    pub code_blocks: Vec<CodeBlock>,
    pub callouts: Vec<Callout>,
    /// Which Next.js router the heading is written for.
    pub router: Router,
}

/// A fenced code block (```` ``` ```` or `~~~`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeBlock {
    /// The first word of the fence's info string (`tsx` for ```` ```tsx filename="a.tsx" ````),
    /// or empty.
    pub language: String,
    /// The lines between the fences, without the fence's own indentation.
    pub code: String,
}

/// A blockquote written as a callout: `> **Good to know**: …` or `> [!NOTE]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Callout {
    /// `good-to-know`, `note`, `warning`, `tip`, `important` or `caution`.
    pub kind: String,
    /// The whole blockquote without its `>` markers and its label, trimmed.
    pub text: String,
}

/// Which router of the Next.js docs a heading belongs to: inside `<AppOnly>`, inside
/// `<PagesOnly>`, or neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Router {
    App,
    Pages,
    #[default]
    Both,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_with_an_unknown_field_is_refused() {
        let result: Result<Document, _> = serde_json::from_str(r#"{"path": "a.md", "content": "", "extra": 1}"#);
        assert!(result.is_err());
    }

    #[test]
    fn a_section_crosses_as_plain_json_with_its_router_in_lowercase() {
        let section = Section {
            level: 2,
            title: "Usage".into(),
            headings: vec!["updateTag".into(), "Usage".into()],
            line: 9,
            content: "Text".into(),
            code_blocks: vec![CodeBlock { language: "tsx".into(), code: "updateTag('a')".into() }],
            callouts: vec![Callout { kind: "good-to-know".into(), text: "It expires now.".into() }],
            router: Router::App,
        };
        let json = serde_json::to_value(&section).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "level": 2,
                "title": "Usage",
                "headings": ["updateTag", "Usage"],
                "line": 9,
                "content": "Text",
                "code_blocks": [{"language": "tsx", "code": "updateTag('a')"}],
                "callouts": [{"kind": "good-to-know", "text": "It expires now."}],
                "router": "app"
            })
        );
        assert_eq!(serde_json::from_value::<Section>(json).unwrap(), section);
    }
}
