//! A Rust lexer reduced to what import extraction needs: identifiers and the punctuation of use
//! trees come out as tokens; comments (nested block comments included), string, byte, C and raw
//! string literals, char literals, lifetimes and numbers are skipped as whole units, so a `use`
//! written inside any of them never reaches the parser.
//!
//! It works on bytes because every delimiter that matters is ASCII. A non-ASCII char is
//! whitespace if `char::is_whitespace` says so and an identifier char otherwise (a superset of
//! Rust's XID rules, which is enough to find boundaries); identifiers therefore start and end on
//! char boundaries, which makes slicing them back out of the `&str` safe.

/// What the parser sees. Everything it never needs to tell apart is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token<'a> {
    /// An identifier or keyword; `raw` marks `r#name`, whose `text` is the name without `r#`.
    Ident {
        text: &'a str,
        raw: bool,
    },
    /// `::`
    PathSep,
    Open,
    Close,
    Comma,
    Star,
    Semi,
    Dot,
    /// A literal, a lifetime, or punctuation a use tree never contains.
    Other,
}

/// Char literal escapes are at most `\u{10FFFF}`: a closing quote further away means the quote
/// was not a char literal, and looking no further keeps a stray `'\` from swallowing the file.
const MAX_ESCAPE_LEN: usize = 10;

pub struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut lexer = Lexer { text, bytes: text.as_bytes(), pos: 0 };
        lexer.skip_shebang();
        lexer
    }

    fn byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos.saturating_add(ahead)).copied()
    }

    /// Moves forward, never past the end, so later slices stay in bounds.
    fn advance(&mut self, by: usize) {
        self.pos = self.pos.saturating_add(by).min(self.bytes.len());
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or("")
    }

    /// `#!/usr/bin/env …` on the first line is not Rust; `#![attr]` is.
    fn skip_shebang(&mut self) {
        if self.bytes.starts_with(b"#!") {
            let rest = self.bytes.get(2..).unwrap_or_default();
            if rest.iter().find(|byte| !is_whitespace(**byte)) != Some(&b'[') {
                self.skip_line();
            }
        }
    }

    fn skip_line(&mut self) {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        self.advance(rest.iter().position(|&byte| byte == b'\n').unwrap_or(rest.len()));
    }

    /// Rust block comments nest: `/* a /* b */ still a comment */`.
    fn skip_block_comment(&mut self) {
        self.advance(2);
        let mut depth = 1usize;
        while let Some(byte) = self.byte(0) {
            match (byte, self.byte(1)) {
                (b'/', Some(b'*')) => {
                    depth += 1;
                    self.advance(2);
                }
                (b'*', Some(b'/')) => {
                    self.advance(2);
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                _ => self.advance(1),
            }
        }
    }

    /// A `"…"` literal with backslash escapes; an unterminated one runs to the end of the input.
    fn skip_string(&mut self) {
        self.advance(1);
        while let Some(byte) = self.byte(0) {
            match byte {
                b'\\' => self.advance(2),
                b'"' => return self.advance(1),
                _ => self.advance(1),
            }
        }
    }

    /// At the `#…#"` after an `r`, `br` or `cr` prefix: true if a raw string starts here.
    fn at_raw_string(&self) -> bool {
        let hashes = self.count_hashes(0);
        self.byte(hashes) == Some(b'"')
    }

    fn count_hashes(&self, from: usize) -> usize {
        let rest = self.bytes.get(self.pos.saturating_add(from)..).unwrap_or_default();
        rest.iter().take_while(|&&byte| byte == b'#').count()
    }

    /// `r#"…"#`: no escapes; it ends at a quote followed by as many hashes as opened it.
    fn skip_raw_string(&mut self) {
        let hashes = self.count_hashes(0);
        self.advance(hashes + 1);
        while let Some(byte) = self.byte(0) {
            self.advance(1);
            if byte == b'"' && self.count_hashes(0) >= hashes {
                return self.advance(hashes);
            }
        }
    }

    fn char_at(&self, ahead: usize) -> Option<char> {
        self.text.get(self.pos.saturating_add(ahead)..).and_then(|rest| rest.chars().next())
    }

    /// Steps over the bytes at the cursor for which `keep` holds, in one tight loop: blanks and
    /// identifiers are most of a file, and a loop of its own keeps them off the main dispatch.
    fn skip_ascii(&mut self, keep: fn(u8) -> bool) {
        let rest = self.bytes.get(self.pos..).unwrap_or_default();
        self.pos += rest.iter().position(|&byte| !keep(byte)).unwrap_or(rest.len());
    }

    fn skip_word(&mut self) {
        loop {
            self.skip_ascii(is_ascii_word_byte);
            let Some(byte) = self.byte(0) else { return };
            match byte {
                byte if byte.is_ascii() => return,
                _ => match self.char_at(0) {
                    Some(c) if !c.is_whitespace() => self.advance(c.len_utf8()),
                    _ => return,
                },
            }
        }
    }

    /// An identifier, a raw identifier, or the prefix of a raw string (`r`, `br`, `cr`).
    fn word(&mut self) -> Token<'a> {
        let start = self.pos;
        self.skip_word();
        if self.pos == start {
            // Only reachable off a char boundary; stepping on guarantees progress.
            self.advance(1);
            return Token::Other;
        }
        let text = self.slice(start, self.pos);
        if matches!(text, "r" | "br" | "cr") && self.at_raw_string() {
            self.skip_raw_string();
            return Token::Other;
        }
        if text == "r" && self.byte(0) == Some(b'#') && self.byte(1).is_some_and(is_word_start) {
            self.advance(1);
            let start = self.pos;
            self.skip_word();
            let text = self.slice(start, self.pos);
            return if text.is_empty() { Token::Other } else { Token::Ident { text, raw: true } };
        }
        if text.is_empty() { Token::Other } else { Token::Ident { text, raw: false } }
    }

    /// A quote opens a char literal (`'x'`, `'\n'`, `'\u{1F600}'`) or a lifetime (`'a`, `'static`),
    /// which has no closing quote; telling them apart needs a look at what follows.
    fn quote(&mut self) -> Token<'a> {
        if self.byte(1) == Some(b'\\') {
            self.skip_escaped_char();
            return Token::Other;
        }
        match self.char_at(1) {
            Some(c) if self.byte(1 + c.len_utf8()) == Some(b'\'') => self.advance(2 + c.len_utf8()),
            Some(c) if c.is_alphabetic() || c == '_' => self.skip_lifetime(),
            _ => self.advance(1),
        }
        Token::Other
    }

    /// At `'\`: the escaped character right after the backslash may itself be a quote (`'\''`).
    fn skip_escaped_char(&mut self) {
        let from = self.pos + 3;
        let window = self.bytes.get(from..self.bytes.len().min(from + MAX_ESCAPE_LEN)).unwrap_or_default();
        match window.iter().position(|&byte| byte == b'\'') {
            Some(offset) => self.advance(3 + offset + 1),
            None => self.advance(1),
        }
    }

    /// `'a`, and the raw lifetime `'r#name`, whose name must not be read as a keyword.
    fn skip_lifetime(&mut self) {
        self.advance(1);
        let start = self.pos;
        self.skip_word();
        if self.slice(start, self.pos) == "r" && self.byte(0) == Some(b'#') && self.byte(1).is_some_and(is_word_start) {
            self.advance(1);
            self.skip_word();
        }
    }

    fn punctuation(&mut self, byte: u8) -> Token<'a> {
        let token = match byte {
            b':' if self.byte(1) == Some(b':') => {
                self.advance(2);
                return Token::PathSep;
            }
            b'{' => Token::Open,
            b'}' => Token::Close,
            b',' => Token::Comma,
            b'*' => Token::Star,
            b';' => Token::Semi,
            b'.' => Token::Dot,
            _ => Token::Other,
        };
        self.advance(1);
        token
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let byte = self.byte(0)?;
            match (byte, self.byte(1)) {
                (byte, _) if is_whitespace(byte) => self.skip_ascii(is_whitespace),
                (b'/', Some(b'/')) => self.skip_line(),
                (b'/', Some(b'*')) => self.skip_block_comment(),
                (b'"', _) => {
                    self.skip_string();
                    return Some(Token::Other);
                }
                (b'\'', _) => return Some(self.quote()),
                (b'0'..=b'9', _) => {
                    self.skip_word();
                    return Some(Token::Other);
                }
                (byte, _) if !byte.is_ascii() => match self.char_at(0) {
                    Some(c) if c.is_whitespace() => self.advance(c.len_utf8()),
                    _ => return Some(self.word()),
                },
                (byte, _) if is_word_start(byte) => return Some(self.word()),
                (byte, _) => return Some(self.punctuation(byte)),
            }
        }
    }
}

fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn is_word_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || !byte.is_ascii()
}

/// An ASCII byte of an identifier; a non-ASCII char is one too, unless it is whitespace.
fn is_ascii_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(text: &str) -> Vec<&str> {
        Lexer::new(text)
            .filter_map(|token| match token {
                Token::Ident { text, .. } => Some(text),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn line_and_doc_comments_hide_their_words() {
        assert_eq!(idents("a // use b\n/// use c\n//! use d\nz"), ["a", "z"]);
    }

    #[test]
    fn block_comments_nest() {
        assert_eq!(idents("a /* x /* use b */ use c */ z /** use d */"), ["a", "z"]);
    }

    #[test]
    fn strings_with_escaped_quotes_hide_their_words() {
        assert_eq!(idents(r#"a "use \" b" b"use c" c"use d" z"#), ["a", "b", "c", "z"]);
    }

    #[test]
    fn raw_strings_end_only_at_a_quote_with_as_many_hashes() {
        assert_eq!(idents(r###"a r##"use "# b"## br#"use c"# cr"use d" z"###), ["a", "z"]);
    }

    #[test]
    fn char_literals_hide_quotes_and_lifetimes_are_not_char_literals() {
        assert_eq!(idents(r#"a '"' '\'' '\u{1F600}' 'é' x<'a, 'static> use"#), ["a", "x", "use"]);
    }

    #[test]
    fn a_raw_lifetime_is_one_token() {
        assert_eq!(idents("'r#use: loop {}"), ["loop"]);
    }

    #[test]
    fn raw_identifiers_are_marked_and_lose_their_prefix() {
        let tokens: Vec<_> = Lexer::new("r#use r#type").collect();
        assert_eq!(tokens, [Token::Ident { text: "use", raw: true }, Token::Ident { text: "type", raw: true }]);
    }

    #[test]
    fn path_separators_are_one_token_and_single_colons_are_other() {
        let tokens: Vec<_> = Lexer::new("a::b: c").collect();
        assert_eq!(tokens.get(1), Some(&Token::PathSep));
        assert_eq!(tokens.get(3), Some(&Token::Other));
    }

    #[test]
    fn a_shebang_line_is_skipped_but_an_inner_attribute_is_not() {
        assert_eq!(idents("#!/usr/bin/env use\nz"), ["z"]);
        assert_eq!(idents("#![allow(x)]"), ["allow", "x"]);
    }

    #[test]
    fn unicode_whitespace_separates_words_and_unicode_letters_belong_to_them() {
        assert_eq!(idents("a\u{a0}b\u{2028}ü\u{3000}straße"), ["a", "b", "ü", "straße"]);
    }

    #[test]
    fn unterminated_literals_and_comments_run_to_the_end_without_panicking() {
        for text in ["\"use", "r#\"use", "/* use", "'", "'\\", "b'", "r#", "'\\u{", "/*/", "é'"] {
            assert!(idents(text).iter().all(|word| *word != "use"), "{text:?}");
        }
    }
}
