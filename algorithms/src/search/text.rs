//! JavaScript string semantics the simulated systems rely on: lengths and cut positions in UTF-16
//! code units, and `String.prototype.trim`. Both reference systems are TypeScript, so "characters"
//! in their constants (1,600-character windows, 700-character snippets) are UTF-16 units.
//!
//! A Rust `str` cannot hold the lone surrogate that JavaScript produces when it cuts between the
//! two halves of a pair, so every helper here that cuts moves such a cut back by one unit, to
//! the start of the astral character. That is the only place where results can differ from
//! JavaScript, and only for text with characters outside the Basic Multilingual Plane.

/// Length in UTF-16 code units (JavaScript's `string.length`).
pub fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// Whether JavaScript's `trim()` removes `character`.
///
/// JavaScript trims WhiteSpace and LineTerminator: the Unicode `White_Space` set minus U+0085
/// (NEXT LINE), plus U+FEFF (BYTE ORDER MARK). Rust's `char::is_whitespace` differs in exactly
/// those two characters, hence this function.
pub fn is_js_whitespace(character: char) -> bool {
    match character {
        '\u{0085}' => false,
        '\u{FEFF}' => true,
        other => other.is_whitespace(),
    }
}

/// JavaScript's `string.trim()`.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

/// Walks a string forward, turning UTF-16 offsets into byte offsets.
///
/// Offsets must be requested in non-decreasing order; that keeps cutting a 1 MB text into
/// windows linear instead of quadratic.
#[derive(Debug, Clone)]
pub struct Utf16Cursor<'a> {
    text: &'a str,
    byte: usize,
    unit: usize,
}

impl<'a> Utf16Cursor<'a> {
    pub fn new(text: &'a str) -> Self {
        Self { text, byte: 0, unit: 0 }
    }

    /// Byte offset of the last character boundary at or before UTF-16 offset `target`, and the
    /// UTF-16 offset of that boundary (smaller than `target` only when `target` falls inside a
    /// surrogate pair, or beyond the end of the text).
    pub fn seek(&mut self, target: usize) -> (usize, usize) {
        let rest = self.text.get(self.byte..).unwrap_or_default();
        for character in rest.chars() {
            let units = character.len_utf16();
            if self.unit + units > target {
                break;
            }
            self.unit += units;
            self.byte += character.len_utf8();
        }
        (self.byte, self.unit)
    }
}

/// The longest prefix of `text` that is at most `max_units` UTF-16 units long and does not end
/// in the middle of a surrogate pair.
pub fn utf16_prefix(text: &str, max_units: usize) -> &str {
    let (byte, _) = Utf16Cursor::new(text).seek(max_units);
    text.get(..byte).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_len_counts_astral_characters_as_two_units() {
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("é"), 1);
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len("𠀀a"), 3);
    }

    #[test]
    fn js_trim_removes_bom_but_keeps_next_line() {
        assert_eq!(js_trim("\u{FEFF} a \u{3000}"), "a");
        assert_eq!(js_trim("\u{0085}a"), "\u{0085}a");
        assert_eq!(js_trim(" \t\r\n"), "");
    }

    #[test]
    fn utf16_prefix_never_splits_a_surrogate_pair() {
        assert_eq!(utf16_prefix("ab😀c", 3), "ab");
        assert_eq!(utf16_prefix("ab😀c", 4), "ab😀");
        assert_eq!(utf16_prefix("abc", 10), "abc");
        assert_eq!(utf16_prefix("abc", 0), "");
    }

    #[test]
    fn cursor_seeks_forward_through_mixed_text() {
        let text = "a😀bé";
        let mut cursor = Utf16Cursor::new(text);
        assert_eq!(cursor.seek(1), (1, 1));
        assert_eq!(cursor.seek(2), (1, 1), "inside the pair: moved back to its start");
        assert_eq!(cursor.seek(3), (5, 3));
        assert_eq!(cursor.seek(99), (text.len(), 5));
    }
}
