//! What a single line is, on its own: a heading, a code fence, a router tag, an MDX comment or a
//! blockquote line. Knows nothing of the lines around it; `document.rs` keeps that state.

use guest_sdk::markdown::Router;

/// The deepest heading that starts a section; `#####` and `######` lines are content.
pub const DEEPEST_LEVEL: u8 = 4;

/// The lines of `text`, split at `\r\n`, `\n` or a lone `\r` (CommonMark's line endings), so
/// that no line holds a line ending. A final line ending does not start another line.
pub fn split(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(['\r', '\n']) {
        lines.push(&rest[..at]);
        let ending = if rest[at..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[at + ending..];
    }
    if !rest.is_empty() {
        lines.push(rest);
    }
    lines
}

/// An ATX heading: up to three spaces, one to four `#`, a space or tab, then text that is not
/// empty once cleaned (see [`clean_title`]).
pub fn heading(line: &str) -> Option<(u8, String)> {
    let unindented = line.trim_start_matches(' ');
    if line.len() - unindented.len() > 3 {
        return None;
    }
    let text = unindented.trim_start_matches('#');
    let hashes = unindented.len() - text.len();
    if hashes == 0 || hashes > usize::from(DEEPEST_LEVEL) || !text.starts_with([' ', '\t']) {
        return None;
    }
    let title = clean_title(text);
    // `hashes` is 1..=4 here, so the conversion cannot fail.
    let level = u8::try_from(hashes).ok()?;
    (!title.is_empty()).then_some((level, title))
}

/// A heading's text without its closing `#`s (when a space precedes them, as CommonMark
/// says: `C#` keeps its `#`), without backticks, and trimmed.
fn clean_title(text: &str) -> String {
    let mut title = text.trim();
    let before_closing = title.trim_end_matches('#');
    if before_closing.is_empty() || before_closing.ends_with([' ', '\t']) {
        title = before_closing.trim_end();
    }
    title.replace('`', "").trim().to_string()
}

/// The opening line of a fenced code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// `` ` `` or `~`.
    pub marker: char,
    /// How many markers opened it: the closing fence needs as many or more.
    pub length: usize,
    /// Spaces before the fence, removed from each line of the code.
    pub indent: usize,
    pub language: String,
}

/// A fence opening: any indentation (fences sit indented in list items), three or more `` ` ``
/// or `~`, then an info string whose first word is the language. A backtick fence's info string
/// holds no backtick, so that inline code written as ```` ```a``` ```` opens nothing.
pub fn fence_opening(line: &str) -> Option<Fence> {
    let unindented = line.trim_start_matches(' ');
    let marker = unindented.chars().next().filter(|first| matches!(first, '`' | '~'))?;
    let info = unindented.trim_start_matches(marker);
    let length = unindented.len() - info.len();
    if length < 3 || (marker == '`' && info.contains('`')) {
        return None;
    }
    let language = info.split_whitespace().next().unwrap_or_default().to_string();
    Some(Fence { marker, length, indent: line.len() - unindented.len(), language })
}

impl Fence {
    /// Whether `line` closes this fence: the same marker, at least as many, nothing after.
    pub fn is_closed_by(&self, line: &str) -> bool {
        let unindented = line.trim_start_matches(' ');
        let rest = unindented.trim_start_matches(self.marker);
        unindented.len() - rest.len() >= self.length && rest.trim().is_empty()
    }

    /// A line of the code, without up to [`Fence::indent`] leading spaces.
    pub fn code_line<'a>(&self, line: &'a str) -> &'a str {
        let spaces = line.len() - line.trim_start_matches(' ').len();
        &line[spaces.min(self.indent)..]
    }
}

/// A line that is only a router tag: `<AppOnly>`, `</AppOnly>`, `<PagesOnly>` or
/// `</PagesOnly>`, with spaces allowed around it and before its `>` (the docs have
/// `</PagesOnly >`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouterTag {
    Open(Router),
    Close(Router),
}

pub fn router_tag(line: &str) -> Option<RouterTag> {
    let inner = line.trim().strip_prefix('<')?.strip_suffix('>')?.trim_end();
    let (closing, name) = match inner.strip_prefix('/') {
        Some(name) => (true, name),
        None => (false, inner),
    };
    let router = match name {
        "AppOnly" => Router::App,
        "PagesOnly" => Router::Pages,
        _ => return None,
    };
    Some(if closing { RouterTag::Close(router) } else { RouterTag::Open(router) })
}

/// A line that is only an MDX comment, `{/* … */}`: notes to the docs' editors, not content.
pub fn is_mdx_comment(line: &str) -> bool {
    let line = line.trim();
    line.len() >= 6 && line.starts_with("{/*") && line.ends_with("*/}")
}

/// The text of a blockquote line without its `>` and the one space after it.
pub fn blockquote(line: &str) -> Option<&str> {
    let quoted = line.trim_start().strip_prefix('>')?;
    Some(quoted.strip_prefix([' ', '\t']).unwrap_or(quoted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_at_every_kind_of_line_ending() {
        assert_eq!(split("a\r\nb\nc\rd"), ["a", "b", "c", "d"]);
        assert_eq!(split("a\n\nb\n"), ["a", "", "b"]);
        assert_eq!(split("\r\n\r\n"), ["", ""]);
        assert!(split("").is_empty());
    }

    #[test]
    fn one_to_four_hashes_and_a_space_make_a_heading() {
        assert_eq!(heading("# Title"), Some((1, "Title".into())));
        assert_eq!(heading("## Usage"), Some((2, "Usage".into())));
        assert_eq!(heading("####\tDeep"), Some((4, "Deep".into())));
        assert_eq!(heading("   ### Indented three"), Some((3, "Indented three".into())));
    }

    #[test]
    fn five_hashes_no_space_or_deep_indentation_is_not_a_heading() {
        assert_eq!(heading("##### Five"), None);
        assert_eq!(heading("###### Six"), None);
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("#!/usr/bin/env bash"), None);
        assert_eq!(heading("    # indented four"), None);
        assert_eq!(heading("text # not at the start"), None);
    }

    #[test]
    fn a_heading_without_text_is_not_a_heading() {
        assert_eq!(heading("#"), None);
        assert_eq!(heading("## "), None);
        assert_eq!(heading("## ##"), None);
        assert_eq!(heading("## ``"), None);
    }

    #[test]
    fn a_heading_title_loses_its_backticks_and_closing_hashes() {
        assert_eq!(heading("# `updateTag`"), Some((1, "updateTag".into())));
        assert_eq!(heading("## The `next.tags` option ##"), Some((2, "The next.tags option".into())));
        assert_eq!(heading("## C#"), Some((2, "C#".into())));
        assert_eq!(heading("## Usage   "), Some((2, "Usage".into())));
    }

    #[test]
    fn a_fence_opens_with_three_or_more_backticks_or_tildes() {
        let fence = fence_opening("```tsx filename=\"app/page.tsx\" switcher").unwrap();
        assert_eq!((fence.marker, fence.length, fence.indent, fence.language.as_str()), ('`', 3, 0, "tsx"));
        let fence = fence_opening("  ~~~~ bash").unwrap();
        assert_eq!((fence.marker, fence.length, fence.indent, fence.language.as_str()), ('~', 4, 2, "bash"));
        assert_eq!(fence_opening("```").unwrap().language, "");
        assert_eq!(fence_opening("``"), None);
        assert_eq!(fence_opening("```inline``` code"), None);
    }

    #[test]
    fn a_fence_closes_with_the_same_marker_at_least_as_long() {
        let fence = fence_opening("````md").unwrap();
        assert!(!fence.is_closed_by("```"));
        assert!(!fence.is_closed_by("~~~~"));
        assert!(!fence.is_closed_by("```` text"));
        assert!(fence.is_closed_by("````"));
        assert!(fence.is_closed_by("  `````  "));
    }

    #[test]
    fn code_lines_lose_the_fences_indentation_and_no_more() {
        let fence = fence_opening("  ```js").unwrap();
        assert_eq!(fence.code_line("    a()"), "  a()");
        assert_eq!(fence.code_line(" b()"), "b()");
        assert_eq!(fence.code_line("c()"), "c()");
    }

    #[test]
    fn router_tags_are_lines_that_are_only_the_tag() {
        assert_eq!(router_tag("<AppOnly>"), Some(RouterTag::Open(Router::App)));
        assert_eq!(router_tag("  </AppOnly>  "), Some(RouterTag::Close(Router::App)));
        assert_eq!(router_tag("<PagesOnly>"), Some(RouterTag::Open(Router::Pages)));
        assert_eq!(router_tag("</PagesOnly >"), Some(RouterTag::Close(Router::Pages)));
        assert_eq!(router_tag("<AppOnly>Route Handlers</AppOnly>"), None);
        assert_eq!(router_tag("<Other>"), None);
    }

    #[test]
    fn an_mdx_comment_line_is_recognised_whole() {
        assert!(is_mdx_comment("{/* DO NOT EDIT. */}"));
        assert!(!is_mdx_comment("{/* opens here"));
        assert!(!is_mdx_comment("text {/* and a comment */}"));
    }

    #[test]
    fn a_blockquote_line_loses_its_marker_and_one_space() {
        assert_eq!(blockquote("> text"), Some("text"));
        assert_eq!(blockquote(">"), Some(""));
        assert_eq!(blockquote(">  two"), Some(" two"));
        assert_eq!(blockquote("  > in a list"), Some("in a list"));
        assert_eq!(blockquote("text"), None);
    }
}
