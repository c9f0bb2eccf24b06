//! Just enough of Go's lexical grammar to find import declarations: words, string literals,
//! newlines and single punctuation bytes, with comments, runes and numbers skipped. Everything
//! that matters is ASCII, so the lexer walks bytes and every token boundary falls on an ASCII
//! byte (or the end), which keeps the slices it hands out on char boundaries.

/// One token of a Go source file, as far as the import scanner cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token<'a> {
    /// An identifier or keyword (`import`, `fmt`, `_`); non-ASCII letters count as word bytes.
    Word(&'a str),
    /// The contents of a terminated string literal, between its quotes, undecoded.
    Literal(&'a str),
    /// A line break, or a block comment spanning one: Go's semicolon insertion happens there.
    Newline,
    /// Any other single ASCII byte: `(`, `)`, `;`, `.`, operators.
    Punct(u8),
    /// Something that can never be part of an import: a number, a rune, an unterminated string.
    Other,
    Eof,
}

pub struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str) -> Self {
        // Go tools accept (and ignore) a byte order mark at the very start of a file.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        Lexer { text, bytes: text.as_bytes(), pos: 0 }
    }

    pub fn next_token(&mut self) -> Token<'a> {
        loop {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Token::Eof;
            };
            match byte {
                b' ' | b'\t' | b'\r' => self.pos += 1,
                b'\n' => {
                    self.pos += 1;
                    return Token::Newline;
                }
                b'/' if self.byte_at(1) == Some(b'/') => self.skip_line_comment(),
                b'/' if self.byte_at(1) == Some(b'*') => {
                    if self.skip_block_comment() {
                        return Token::Newline;
                    }
                }
                b'"' => return self.interpreted_string(),
                b'`' => return self.raw_string(),
                b'\'' => return self.rune(),
                b'0'..=b'9' => {
                    self.word_end();
                    return Token::Other;
                }
                _ if is_word_byte(byte) => {
                    let start = self.pos;
                    self.word_end();
                    return self.slice(start, self.pos).map_or(Token::Other, Token::Word);
                }
                _ => {
                    self.pos += 1;
                    return Token::Punct(byte);
                }
            }
        }
    }

    fn byte_at(&self, offset: usize) -> Option<u8> {
        self.bytes.get(self.pos.saturating_add(offset)).copied()
    }

    fn slice(&self, start: usize, end: usize) -> Option<&'a str> {
        self.text.get(start..end)
    }

    fn word_end(&mut self) {
        while self.byte_at(0).is_some_and(is_word_byte) {
            self.pos += 1;
        }
    }

    /// Stops before the line break, so the caller still sees the `Newline` a line comment ends with.
    fn skip_line_comment(&mut self) {
        while self.byte_at(0).is_some_and(|byte| byte != b'\n') {
            self.pos += 1;
        }
    }

    /// Whether the comment spanned a line break: Go then treats it as one. An unterminated comment
    /// runs to the end of the file.
    fn skip_block_comment(&mut self) -> bool {
        self.pos += 2;
        let mut spans_lines = false;
        while let Some(byte) = self.byte_at(0) {
            if byte == b'*' && self.byte_at(1) == Some(b'/') {
                self.pos += 2;
                return spans_lines;
            }
            spans_lines |= byte == b'\n';
            self.pos += 1;
        }
        spans_lines
    }

    /// `"…"` with backslash escapes. A line break or the end of the file before the closing quote
    /// leaves the literal unterminated, and the line break is left for the next token.
    fn interpreted_string(&mut self) -> Token<'a> {
        self.pos += 1;
        let start = self.pos;
        while let Some(byte) = self.byte_at(0) {
            match byte {
                b'"' => {
                    self.pos += 1;
                    return self.slice(start, self.pos - 1).map_or(Token::Other, Token::Literal);
                }
                b'\n' => return Token::Other,
                b'\\' if self.byte_at(1).is_some_and(|next| next != b'\n') => self.pos += 2,
                _ => self.pos += 1,
            }
        }
        Token::Other
    }

    /// `` `…` ``: no escapes, may span lines; unterminated, it runs to the end of the file.
    fn raw_string(&mut self) -> Token<'a> {
        self.pos += 1;
        let start = self.pos;
        while let Some(byte) = self.byte_at(0) {
            self.pos += 1;
            if byte == b'`' {
                return self.slice(start, self.pos - 1).map_or(Token::Other, Token::Literal);
            }
        }
        Token::Other
    }

    /// `'x'`, `'\''`: skipped so that a quote inside a rune does not open a string.
    fn rune(&mut self) -> Token<'a> {
        self.pos += 1;
        while let Some(byte) = self.byte_at(0) {
            match byte {
                b'\'' => {
                    self.pos += 1;
                    break;
                }
                b'\n' => break,
                b'\\' if self.byte_at(1).is_some_and(|next| next != b'\n') => self.pos += 2,
                _ => self.pos += 1,
            }
        }
        Token::Other
    }
}

/// Letters, digits, `_`, and every byte of a non-ASCII character (Go allows Unicode letters in
/// identifiers; treating all of them as word bytes keeps `ñimport` one word, never `import`).
fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}
