//! The tokens of JavaScript and TypeScript, as far as finding imports needs them.
//!
//! The lexer's job is to keep the parser out of comments, strings, template literals and regex
//! literals, so every byte is looked at once and nothing is ever re-read. Whitespace and comments
//! produce no token. Strings and templates end where the language ends them; one that is left open
//! ends at its line's end (a string) or at the end of the file (a template), so a stray quote costs
//! at most one line. `${ … }` inside a template is code: its tokens come out like any others, and
//! braces are counted so that its `}` resumes the template.

/// What a token is; its text is `src[start..end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// An identifier or keyword, `#private` names included.
    Ident,
    /// `'…'`, `"…"` or a template literal without `${`; the token spans the text between the quotes.
    Str,
    /// A template literal's text up to a `${`: an expression follows.
    TemplateHead,
    /// A value that is not a usable literal: the rest of a template after a `${ … }`, or a string
    /// left open.
    Opaque,
    Number,
    Regex,
    /// `.` or `?.`: the word after it is a property, not a variable.
    Dot,
    /// `...`
    Spread,
    /// Any other punctuation, one byte at a time.
    Punct(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// The keywords after which a `/` starts a regex literal rather than a division.
const KEYWORDS_BEFORE_AN_EXPRESSION: [&str; 14] = [
    "return",
    "typeof",
    "instanceof",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "case",
    "do",
    "else",
    "yield",
    "await",
];

pub(super) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// One entry per open `{`: `true` for a template's `${`, whose `}` resumes the template.
    braces: Vec<bool>,
    /// The last token produced, which decides whether a `/` starts a regex.
    last: Option<Token>,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(src: &'a str) -> Self {
        let mut lexer = Lexer { src, pos: 0, braces: Vec::new(), last: None };
        // A `#!/usr/bin/env node` line would otherwise read as `#`, `!` and a regex.
        if src.starts_with("#!") {
            lexer.skip_line_comment();
        }
        lexer
    }

    /// The text of `token`; empty if its bounds are not on char boundaries (they always are).
    pub(super) fn text(&self, token: Token) -> &'a str {
        self.src.get(token.start..token.end).unwrap_or("")
    }

    fn byte(&self, offset: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + offset).copied()
    }

    fn bump(&mut self, count: usize) {
        self.pos = (self.pos + count).min(self.src.len());
    }

    /// The char at the cursor, when the cursor is on a char boundary.
    fn char_here(&self) -> Option<char> {
        self.src.get(self.pos..).and_then(|rest| rest.chars().next())
    }

    fn token(&self, kind: Kind, start: usize) -> Token {
        Token { kind, start, end: self.pos }
    }

    fn scan(&mut self) -> Option<Token> {
        loop {
            let byte = self.byte(0)?;
            let token = match byte {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                    self.bump(1);
                    continue;
                }
                b'/' if self.byte(1) == Some(b'/') => {
                    self.skip_line_comment();
                    continue;
                }
                b'/' if self.byte(1) == Some(b'*') => {
                    self.skip_block_comment();
                    continue;
                }
                b'/' if self.regex_allowed() => self.regex(),
                b'\'' | b'"' => self.string(byte),
                b'`' => {
                    self.bump(1);
                    self.template(true)
                }
                b'{' => {
                    self.braces.push(false);
                    self.fixed(Kind::Punct(byte), 1)
                }
                b'}' if self.braces.pop() == Some(true) => {
                    self.bump(1);
                    self.template(false)
                }
                b'.' if self.byte(1) == Some(b'.') && self.byte(2) == Some(b'.') => self.fixed(Kind::Spread, 3),
                b'.' if self.byte(1).is_some_and(|next| next.is_ascii_digit()) => self.number(),
                b'.' => self.fixed(Kind::Dot, 1),
                // `a?.5:1` is a conditional, not optional chaining.
                b'?' if self.byte(1) == Some(b'.') && !self.byte(2).is_some_and(|next| next.is_ascii_digit()) => {
                    self.fixed(Kind::Dot, 2)
                }
                b'0'..=b'9' => self.number(),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' | b'#' => self.ident(),
                0x80.. => match self.char_here() {
                    Some(c) if is_space(c) => {
                        self.bump(c.len_utf8());
                        continue;
                    }
                    _ => self.ident(),
                },
                _ => self.fixed(Kind::Punct(byte), 1),
            };
            return Some(token);
        }
    }

    fn fixed(&mut self, kind: Kind, len: usize) -> Token {
        let start = self.pos;
        self.bump(len);
        self.token(kind, start)
    }

    fn skip_line_comment(&mut self) {
        while self.byte(0).is_some_and(|byte| byte != b'\n' && byte != b'\r') {
            self.bump(1);
        }
    }

    fn skip_block_comment(&mut self) {
        self.bump(2);
        while let Some(byte) = self.byte(0) {
            self.bump(1);
            if byte == b'*' && self.byte(0) == Some(b'/') {
                self.bump(1);
                return;
            }
        }
    }

    /// A `/` after a value divides; anywhere else it starts a regex. `)` and `}` count as ending a
    /// value, which misreads only a regex statement after a block or an `if (…)`.
    fn regex_allowed(&self) -> bool {
        let Some(last) = self.last else { return true };
        match last.kind {
            Kind::Ident => KEYWORDS_BEFORE_AN_EXPRESSION.contains(&self.text(last)),
            Kind::Punct(b')' | b']' | b'}') => false,
            Kind::Punct(_) | Kind::Spread | Kind::TemplateHead => true,
            Kind::Str | Kind::Opaque | Kind::Number | Kind::Regex | Kind::Dot => false,
        }
    }

    fn regex(&mut self) -> Token {
        let start = self.pos;
        self.bump(1);
        let mut in_class = false;
        while let Some(byte) = self.byte(0) {
            match byte {
                // A regex cannot span lines: one left open ends with its line.
                b'\n' | b'\r' => break,
                b'\\' if matches!(self.byte(1), Some(b'\n' | b'\r')) => self.bump(1),
                b'\\' => self.bump(2),
                b'[' => {
                    in_class = true;
                    self.bump(1);
                }
                b']' => {
                    in_class = false;
                    self.bump(1);
                }
                b'/' if !in_class => {
                    self.bump(1);
                    self.skip_word_bytes();
                    break;
                }
                _ => self.bump(1),
            }
        }
        self.token(Kind::Regex, start)
    }

    fn string(&mut self, quote: u8) -> Token {
        self.bump(1);
        let start = self.pos;
        while let Some(byte) = self.byte(0) {
            match byte {
                b'\\' if self.byte(1) == Some(b'\r') && self.byte(2) == Some(b'\n') => self.bump(3),
                b'\\' => self.bump(2),
                b'\n' | b'\r' => break,
                _ if byte == quote => {
                    let token = self.token(Kind::Str, start);
                    self.bump(1);
                    return token;
                }
                _ => self.bump(1),
            }
        }
        self.token(Kind::Opaque, start)
    }

    /// The template's text from the cursor (just after the `` ` `` when `head`, just after a
    /// `${ … }` otherwise) to its closing `` ` `` or next `${`.
    fn template(&mut self, head: bool) -> Token {
        let start = self.pos;
        while let Some(byte) = self.byte(0) {
            match byte {
                b'\\' => self.bump(2),
                b'`' => {
                    let token = self.token(if head { Kind::Str } else { Kind::Opaque }, start);
                    self.bump(1);
                    return token;
                }
                b'$' if self.byte(1) == Some(b'{') => {
                    let token = self.token(Kind::TemplateHead, start);
                    self.bump(2);
                    self.braces.push(true);
                    return token;
                }
                _ => self.bump(1),
            }
        }
        self.token(Kind::Opaque, start)
    }

    /// Digits, letters, `_` and `.`: enough to step over `0x1F`, `1.5e3` and `10n` as one token.
    fn number(&mut self) -> Token {
        let start = self.pos;
        while self.byte(0).is_some_and(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.') {
            self.bump(1);
        }
        self.token(Kind::Number, start)
    }

    fn ident(&mut self) -> Token {
        let start = self.pos;
        // The first byte is already known to start a word (`#` only may start one).
        match self.char_here() {
            Some(c) => self.bump(c.len_utf8()),
            None => self.bump(1),
        }
        self.skip_word_bytes();
        self.token(Kind::Ident, start)
    }

    /// ASCII letters, digits, `_`, `$`, and any non-ASCII char that is not whitespace.
    fn skip_word_bytes(&mut self) {
        while let Some(byte) = self.byte(0) {
            match byte {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'$' => self.bump(1),
                0x80.. => match self.char_here() {
                    Some(c) if is_space(c) => return,
                    Some(c) => self.bump(c.len_utf8()),
                    None => self.bump(1),
                },
                _ => return,
            }
        }
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let token = self.scan()?;
        self.last = Some(token);
        Some(token)
    }
}

/// Whitespace outside ASCII, the byte order mark included (a file may start with one).
fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens of `src` as (kind, text) pairs.
    fn tokens(src: &str) -> Vec<(Kind, &str)> {
        let lexer = Lexer::new(src);
        let mut out = Vec::new();
        for token in Lexer::new(src) {
            out.push((token.kind, lexer.text(token)));
        }
        out
    }

    fn texts(src: &str) -> Vec<&str> {
        tokens(src).into_iter().map(|(_, text)| text).collect()
    }

    #[test]
    fn comments_produce_no_tokens() {
        assert_eq!(texts("a // import x from 'y'\n/* import 'z' */ b"), ["a", "b"]);
    }

    #[test]
    fn an_unterminated_block_comment_runs_to_the_end_of_the_file() {
        assert_eq!(texts("a /* import 'z'\nimport 'w'"), ["a"]);
    }

    #[test]
    fn a_string_token_spans_the_text_between_its_quotes() {
        assert_eq!(tokens(r#"'a' "b\"c""#), [(Kind::Str, "a"), (Kind::Str, r#"b\"c"#)]);
    }

    #[test]
    fn a_string_left_open_ends_with_its_line() {
        assert_eq!(
            tokens("x = 'open\nimport"),
            [(Kind::Ident, "x"), (Kind::Punct(b'='), "="), (Kind::Opaque, "open"), (Kind::Ident, "import")]
        );
    }

    #[test]
    fn a_template_without_substitutions_is_a_string() {
        assert_eq!(tokens("`./a`"), [(Kind::Str, "./a")]);
    }

    #[test]
    fn code_inside_a_substitution_is_tokenized_and_its_braces_counted() {
        assert_eq!(
            tokens("`a ${ {b: `c`} } d` e"),
            [
                (Kind::TemplateHead, "a "),
                (Kind::Punct(b'{'), "{"),
                (Kind::Ident, "b"),
                (Kind::Punct(b':'), ":"),
                (Kind::Str, "c"),
                (Kind::Punct(b'}'), "}"),
                (Kind::Opaque, " d"),
                (Kind::Ident, "e"),
            ]
        );
    }

    #[test]
    fn a_slash_after_an_operator_starts_a_regex_that_may_hold_quotes_and_slashes() {
        assert_eq!(texts(r"x = /'[/]\/*/g; y"), ["x", "=", r"/'[/]\/*/g", ";", "y"]);
    }

    #[test]
    fn a_slash_after_a_value_divides() {
        assert_eq!(texts("a / b / c"), ["a", "/", "b", "/", "c"]);
        assert_eq!(texts("(a) / 2 / 'x'"), ["(", "a", ")", "/", "2", "/", "x"]);
    }

    #[test]
    fn a_slash_after_return_starts_a_regex() {
        assert_eq!(texts("return /a'b/.test(s)"), ["return", "/a'b/", ".", "test", "(", "s", ")"]);
    }

    #[test]
    fn member_dots_and_spreads_are_single_tokens() {
        assert_eq!(
            tokens("a?.b ...c d.e"),
            [
                (Kind::Ident, "a"),
                (Kind::Dot, "?."),
                (Kind::Ident, "b"),
                (Kind::Spread, "..."),
                (Kind::Ident, "c"),
                (Kind::Ident, "d"),
                (Kind::Dot, "."),
                (Kind::Ident, "e")
            ]
        );
    }

    #[test]
    fn words_that_contain_a_keyword_are_one_token() {
        assert_eq!(
            texts("reimport myrequire #require $import importé"),
            ["reimport", "myrequire", "#require", "$import", "importé"]
        );
    }

    #[test]
    fn a_byte_order_mark_and_a_shebang_are_skipped() {
        assert_eq!(texts("\u{feff}import"), ["import"]);
        assert_eq!(texts("#!/usr/bin/env node\nimport"), ["import"]);
    }
}
