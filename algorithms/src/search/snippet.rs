//! OpenClaw's result snippet and citation (openclaw-memory.md §3.6, §3.8): what the model sees
//! of a chunk. Pure string shaping; MMR compares these snippets, not the full chunks.

use super::text::{js_trim, utf16_prefix};

/// `SNIPPET_MAX_CHARS` (§3.6): snippets are the first 700 UTF-16 units of the chunk.
pub const SNIPPET_MAX_CHARS: usize = 700;

/// The first `max_units` UTF-16 units of `text`, cut before a surrogate pair rather than inside
/// it, with no ellipsis.
pub fn snippet(text: &str, max_units: usize) -> &str {
    utf16_prefix(text, max_units)
}

/// `path#L<start>-L<end>`, or `path#L<start>` for a single line (§3.8).
pub fn citation(path: &str, start_line: usize, end_line: usize) -> String {
    if start_line == end_line { format!("{path}#L{start_line}") } else { format!("{path}#L{start_line}-L{end_line}") }
}

/// The snippet as OpenClaw returns it with citations on: `snippet.trim()`, a blank line, then
/// `Source: <citation>` (§3.8).
pub fn with_citation(snippet: &str, path: &str, start_line: usize, end_line: usize) -> String {
    format!("{}\n\nSource: {}", js_trim(snippet), citation(path, start_line, end_line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippet_is_the_first_700_units() {
        let chunk = "x".repeat(1600);
        assert_eq!(snippet(&chunk, SNIPPET_MAX_CHARS).len(), 700);
        assert_eq!(snippet("short", SNIPPET_MAX_CHARS), "short");
    }

    #[test]
    fn snippet_drops_a_surrogate_pair_that_would_be_cut() {
        let chunk = format!("{}😀tail", "a".repeat(699));
        assert_eq!(snippet(&chunk, SNIPPET_MAX_CHARS), "a".repeat(699));
        let accented = "é".repeat(800);
        assert_eq!(snippet(&accented, SNIPPET_MAX_CHARS).chars().count(), 700);
    }

    #[test]
    fn citation_uses_a_range_only_for_several_lines() {
        assert_eq!(citation("memory/2026-03-01.md", 3, 9), "memory/2026-03-01.md#L3-L9");
        assert_eq!(citation("MEMORY.md", 4, 4), "MEMORY.md#L4");
    }

    #[test]
    fn citation_is_appended_to_the_trimmed_snippet() {
        assert_eq!(with_citation("  note\n", "MEMORY.md", 1, 2), "note\n\nSource: MEMORY.md#L1-L2");
    }
}
