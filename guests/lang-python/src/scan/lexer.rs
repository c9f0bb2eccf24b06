//! Just enough of Python's tokenizer to find import statements: names, the punctuation an import
//! uses, and the ends of logical lines. Comments, string literals of every kind (with any prefix,
//! single or triple quoted) and numbers are skipped as opaque `Other` tokens, so text inside them
//! can never look like an import. Brackets are counted because a newline inside them does not end
//! a statement.
//!
//! Everything that matters is ASCII, so the lexer walks bytes; a byte of 0x80 or above is taken
//! as part of an identifier, which keeps every slice it makes on a char boundary.

/// What a token is, as far as import statements care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind<'a> {
    /// An identifier or a keyword.
    Name(&'a str),
    Dot,
    Comma,
    Star,
    LParen,
    RParen,
    /// A `:` outside brackets: what follows may be the body of a compound statement.
    Colon,
    /// The end of a logical line or a `;`: the next token starts a statement.
    Break,
    /// Anything else: strings, numbers, operators, other brackets.
    Other,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Token<'a> {
    pub(super) kind: Kind<'a>,
    /// The first token on its physical line (a backslash continuation does not start a line).
    pub(super) line_start: bool,
    /// Inside an open bracket, where newlines do not end statements.
    pub(super) nested: bool,
}

pub(super) struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    depth: usize,
    line_start: bool,
    peeked: Option<Option<Token<'a>>>,
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        match self.peeked.take() {
            Some(token) => token,
            None => self.lex(),
        }
    }
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Lexer { text, pos: 0, depth: 0, line_start: true, peeked: None }
    }

    pub(super) fn peek(&mut self) -> Option<Token<'a>> {
        match self.peeked {
            Some(token) => token,
            None => {
                let token = self.lex();
                self.peeked = Some(token);
                token
            }
        }
    }

    /// Forgets open brackets, for when an import statement proves that one was never closed. Call
    /// it with nothing peeked, so the next token is lexed at the new depth.
    pub(super) fn close_brackets(&mut self) {
        self.depth = 0;
    }

    fn byte(&self, offset: usize) -> Option<u8> {
        self.text.as_bytes().get(self.pos.saturating_add(offset)).copied()
    }

    /// Moves on by `n` bytes, never past the end.
    fn advance(&mut self, n: usize) {
        self.pos = self.pos.saturating_add(n).min(self.text.len());
    }

    /// The length of the line break at `offset`: `\r\n`, `\n` or a lone `\r`, or 0 for none.
    fn newline_len(&self, offset: usize) -> usize {
        match (self.byte(offset), self.byte(offset.saturating_add(1))) {
            (Some(b'\r'), Some(b'\n')) => 2,
            (Some(b'\r' | b'\n'), _) => 1,
            _ => 0,
        }
    }

    fn lex(&mut self) -> Option<Token<'a>> {
        self.skip_trivia();
        let line_start = self.line_start;
        let nested = self.depth > 0;
        let kind = self.lex_kind()?;
        self.line_start = kind == Kind::Break;
        Some(Token { kind, line_start, nested })
    }

    /// Skips what never makes a token: blanks, comments, backslash continuations, and line breaks
    /// inside brackets.
    fn skip_trivia(&mut self) {
        while let Some(byte) = self.byte(0) {
            match byte {
                b' ' | b'\t' | b'\x0c' => self.advance(1),
                b'#' => self.skip_comment(),
                b'\\' if self.newline_len(1) > 0 => self.advance(1 + self.newline_len(1)),
                b'\r' | b'\n' if self.depth > 0 => {
                    self.advance(self.newline_len(0));
                    self.line_start = true;
                }
                _ => return,
            }
        }
    }

    fn skip_comment(&mut self) {
        let rest = self.text.as_bytes().get(self.pos..).unwrap_or_default();
        let len = rest.iter().position(|&byte| byte == b'\n' || byte == b'\r').unwrap_or(rest.len());
        self.advance(len);
    }

    fn lex_kind(&mut self) -> Option<Kind<'a>> {
        let byte = self.byte(0)?;
        let starts_number = byte.is_ascii_digit() || (byte == b'.' && self.byte(1).is_some_and(|b| b.is_ascii_digit()));
        let kind = match byte {
            b'\r' | b'\n' => {
                self.advance(self.newline_len(0));
                Kind::Break
            }
            b'\'' | b'"' => {
                self.skip_string();
                Kind::Other
            }
            _ if starts_number => {
                self.skip_number();
                Kind::Other
            }
            _ if is_identifier_start(byte) => self.word(),
            _ => {
                self.advance(1);
                self.punctuation(byte)
            }
        };
        Some(kind)
    }

    fn punctuation(&mut self, byte: u8) -> Kind<'a> {
        match byte {
            b'.' => Kind::Dot,
            b',' => Kind::Comma,
            b'*' => Kind::Star,
            b'(' => {
                self.depth = self.depth.saturating_add(1);
                Kind::LParen
            }
            b')' => {
                self.depth = self.depth.saturating_sub(1);
                Kind::RParen
            }
            b'[' | b'{' => {
                self.depth = self.depth.saturating_add(1);
                Kind::Other
            }
            b']' | b'}' => {
                self.depth = self.depth.saturating_sub(1);
                Kind::Other
            }
            b';' if self.depth == 0 => Kind::Break,
            // `:=` is the walrus operator, not the colon that opens a block.
            b':' if self.depth == 0 && self.byte(0) != Some(b'=') => Kind::Colon,
            _ => Kind::Other,
        }
    }

    /// An identifier or keyword, or a string literal when the word is a prefix such as `rb`.
    fn word(&mut self) -> Kind<'a> {
        let start = self.pos;
        while self.byte(0).is_some_and(is_identifier_continue) {
            self.advance(1);
        }
        let word = self.text.get(start..self.pos).unwrap_or_default();
        if matches!(self.byte(0), Some(b'\'' | b'"')) && is_string_prefix(word) {
            self.skip_string();
            return Kind::Other;
        }
        if word.is_empty() { Kind::Other } else { Kind::Name(word) }
    }

    /// Digits, letters, `_` and `.`: loose, but enough to keep `1.5` and `0x1f` from being names.
    fn skip_number(&mut self) {
        while self.byte(0).is_some_and(|byte| is_identifier_continue(byte) || byte == b'.') {
            self.advance(1);
        }
    }

    /// Skips a string literal starting at its opening quote. F-strings are skipped like plain
    /// strings: their `{}` fields are not scanned.
    fn skip_string(&mut self) {
        let Some(quote) = self.byte(0) else { return };
        if self.byte(1) == Some(quote) && self.byte(2) == Some(quote) {
            self.advance(3);
            self.skip_triple_quoted_body(quote);
        } else {
            self.advance(1);
            self.skip_single_quoted_body(quote);
        }
    }

    fn skip_single_quoted_body(&mut self, quote: u8) {
        while let Some(byte) = self.byte(0) {
            match byte {
                // Even in a raw string a backslash keeps the next quote from closing it.
                b'\\' => self.advance(1 + self.newline_len(1).max(1)),
                // An unterminated string: Python rejects it; ending it at the line keeps the rest.
                b'\r' | b'\n' => return,
                _ => {
                    self.advance(1);
                    if byte == quote {
                        return;
                    }
                }
            }
        }
    }

    fn skip_triple_quoted_body(&mut self, quote: u8) {
        while let Some(byte) = self.byte(0) {
            if byte == b'\\' {
                self.advance(2);
            } else if byte == quote && self.byte(1) == Some(quote) && self.byte(2) == Some(quote) {
                self.advance(3);
                return;
            } else {
                self.advance(1);
            }
        }
    }
}

fn is_identifier_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || byte >= 0x80
}

fn is_identifier_continue(byte: u8) -> bool {
    is_identifier_start(byte) || byte.is_ascii_digit()
}

fn is_string_prefix(word: &str) -> bool {
    const PREFIXES: [&str; 11] = ["r", "u", "b", "f", "t", "br", "rb", "fr", "rf", "tr", "rt"];
    PREFIXES.iter().any(|prefix| prefix.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Kind<'_>> {
        Lexer::new(text).map(|token| token.kind).collect()
    }

    #[test]
    fn names_dots_and_commas_are_tokens_and_blanks_are_not() {
        assert_eq!(
            kinds("import a . b ,c"),
            [Kind::Name("import"), Kind::Name("a"), Kind::Dot, Kind::Name("b"), Kind::Comma, Kind::Name("c")]
        );
    }

    #[test]
    fn a_comment_runs_to_the_end_of_its_line() {
        assert_eq!(kinds("a # import os\nb"), [Kind::Name("a"), Kind::Break, Kind::Name("b")]);
    }

    #[test]
    fn a_string_with_any_prefix_is_one_opaque_token() {
        for text in ["'import os'", "\"import os\"", "r'import'", "Rb\"x\"", "f'{import}'", "u'x'", "'''a\n'b'\n'''"] {
            assert_eq!(kinds(text), [Kind::Other], "{text:?}");
        }
    }

    #[test]
    fn an_escaped_quote_does_not_close_a_string_even_a_raw_one() {
        assert_eq!(kinds(r"r'a\'b' x"), [Kind::Other, Kind::Name("x")]);
        assert_eq!(kinds(r#""""a\"""" x"#), [Kind::Other, Kind::Name("x")]);
    }

    #[test]
    fn an_unterminated_single_quoted_string_ends_at_its_line() {
        assert_eq!(kinds("'abc\nx"), [Kind::Other, Kind::Break, Kind::Name("x")]);
    }

    #[test]
    fn a_word_that_is_not_a_prefix_before_a_quote_stays_a_name() {
        assert_eq!(kinds("x'a'"), [Kind::Name("x"), Kind::Other]);
    }

    #[test]
    fn newlines_inside_brackets_and_after_a_backslash_do_not_break_the_line() {
        assert_eq!(kinds("(a\nb)"), [Kind::LParen, Kind::Name("a"), Kind::Name("b"), Kind::RParen]);
        assert_eq!(kinds("a\\\r\nb"), [Kind::Name("a"), Kind::Name("b")]);
    }

    #[test]
    fn crlf_and_lone_cr_each_end_one_line() {
        assert_eq!(kinds("a\r\nb\rc"), [Kind::Name("a"), Kind::Break, Kind::Name("b"), Kind::Break, Kind::Name("c")]);
    }

    #[test]
    fn a_colon_opens_a_block_only_outside_brackets_and_not_as_walrus() {
        assert_eq!(kinds("a:"), [Kind::Name("a"), Kind::Colon]);
        assert_eq!(kinds("[a:]"), [Kind::Other, Kind::Name("a"), Kind::Other, Kind::Other]);
        assert_eq!(kinds("a:=1"), [Kind::Name("a"), Kind::Other, Kind::Other, Kind::Other]);
    }

    #[test]
    fn numbers_are_not_names_or_dots() {
        assert_eq!(kinds("1.5 .5 0x1f"), [Kind::Other, Kind::Other, Kind::Other]);
    }

    #[test]
    fn non_ascii_identifiers_are_names() {
        assert_eq!(kinds("import café"), [Kind::Name("import"), Kind::Name("café")]);
    }

    #[test]
    fn tokens_know_whether_they_start_a_line_and_whether_they_are_nested() {
        let tokens: Vec<_> = Lexer::new("a (\nb").map(|token| (token.line_start, token.nested)).collect();
        assert_eq!(tokens, [(true, false), (false, false), (true, true)]);
    }
}
