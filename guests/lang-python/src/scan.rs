//! The imports of a Python source file, in one pass over its tokens.
//!
//! Recognised, wherever a statement can start (a new logical line at any indentation, after `;`,
//! or after the `:` of a one-line compound statement such as `if TYPE_CHECKING: import x`):
//!
//! - `import a.b as c, d` reports each module: `a.b`, `d`.
//! - `from m import x, y as z` reports `m.x`, `m.y`; the list may be parenthesised over several
//!   lines, with comments and a trailing comma, or continued with backslashes.
//! - `from m import *` reports the module alone: `m`.
//! - Relative modules keep their dots: `from . import v` is `.v`, `from ..core import s` is
//!   `..core.s`.
//!
//! Ignored: anything inside comments and string literals (docstrings, prefixed strings such as
//! `rb''`, f-strings), `import` inside a longer identifier (`reimport`) or after a dot, and the
//! dynamic forms `__import__('x')` and `importlib.import_module('x')`: they are ordinary calls
//! whose module is often computed, and the spec names only the two statement forms.
//!
//! Broken input is scanned as far as it makes sense: an incomplete name (`import a.`) is dropped,
//! and an `import` or `from` at the start of a line inside a bracket that was never closed starts
//! a new statement, since that can never happen in valid Python.

mod lexer;

use guest_sdk::imports::ImportList;
use lexer::{Kind, Lexer, Token};

pub fn language(_path: &str) -> &'static str {
    "python"
}

pub fn imports(content: &str) -> Vec<String> {
    // A byte order mark would otherwise glue itself to the first word of the file.
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let mut parser = Parser { tokens: Lexer::new(content), found: ImportList::default() };
    parser.run();
    parser.found.into_vec()
}

/// Python's hard keywords: never a module or an imported name. Soft keywords (`match`, `type`)
/// are ordinary names.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
    "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
    "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
];

fn is_keyword(word: &str) -> bool {
    KEYWORDS.contains(&word)
}

impl Token<'_> {
    /// `import` or `from` at the start of a line inside an open bracket: the bracket was never
    /// closed (valid Python cannot put either keyword there), so a statement starts here.
    fn restarts_statement(&self) -> bool {
        self.line_start && self.nested && matches!(self.kind, Kind::Name("import" | "from"))
    }

    fn ends_statement(&self) -> bool {
        self.kind == Kind::Break || self.restarts_statement()
    }
}

struct Parser<'a> {
    tokens: Lexer<'a>,
    found: ImportList,
}

impl<'a> Parser<'a> {
    fn run(&mut self) {
        let mut at_statement_start = true;
        while let Some(token) = self.tokens.next() {
            let starts = at_statement_start || token.restarts_statement();
            at_statement_start = matches!(token.kind, Kind::Break | Kind::Colon);
            match token.kind {
                Kind::Name("import") if starts => {
                    self.tokens.close_brackets();
                    self.import_statement();
                }
                Kind::Name("from") if starts => self.import_from_statement(),
                _ => {}
            }
        }
    }

    /// After `import`: `a.b [as c], d ...`, each module reported whole.
    fn import_statement(&mut self) {
        loop {
            let Some(module) = self.dotted_name() else { return };
            if !self.at_name_end(false) {
                return;
            }
            self.found.push(module);
            self.skip_alias();
            if !self.eat(Kind::Comma) {
                return;
            }
        }
    }

    /// After `from`: `module import *`, `module import names` or `module import (names)`.
    fn import_from_statement(&mut self) {
        let Some(module) = self.imported_module() else { return };
        if !self.eat_keyword("import") {
            return;
        }
        // Only now is this surely an import; if it began inside an unclosed bracket, leave it.
        self.tokens.close_brackets();
        if self.eat(Kind::Star) {
            if self.at_end() {
                self.found.push(module);
            }
            return;
        }
        let parenthesised = self.eat(Kind::LParen);
        self.imported_names(&module, parenthesised);
    }

    /// The leading dots of a relative import, then an optional dotted name: `..core.db`, `.`, `os`.
    fn imported_module(&mut self) -> Option<String> {
        let mut module = String::new();
        while self.eat(Kind::Dot) {
            module.push('.');
        }
        if self.peek_identifier().is_some() {
            module.push_str(&self.dotted_name()?);
        }
        (!module.is_empty()).then_some(module)
    }

    /// `x, y as z` after `from module import`, each reported as `module.name`.
    fn imported_names(&mut self, module: &str, parenthesised: bool) {
        loop {
            let Some(name) = self.identifier() else { return };
            if !self.at_name_end(parenthesised) {
                return;
            }
            // `module.name`, where a relative module's trailing dot is the separator (`..x`).
            self.found.push_named(module.strip_suffix('.').unwrap_or(module), Some(name));
            self.skip_alias();
            if !self.eat(Kind::Comma) {
                return;
            }
        }
    }

    /// `a`, `a.b.c`; `None` when there is no name or it stops at a dot.
    fn dotted_name(&mut self) -> Option<String> {
        let mut name = self.identifier()?.to_string();
        while self.eat(Kind::Dot) {
            name.push('.');
            name.push_str(self.identifier()?);
        }
        Some(name)
    }

    fn skip_alias(&mut self) {
        if self.eat_keyword("as") {
            self.identifier();
        }
    }

    /// Whether a name just read is complete: what follows is an alias, a comma or the end (a
    /// closing parenthesis in a parenthesised list). Anything else means the statement is broken.
    fn at_name_end(&mut self, parenthesised: bool) -> bool {
        match self.tokens.peek() {
            Some(token) => match token.kind {
                Kind::Name("as") | Kind::Comma => true,
                Kind::RParen => parenthesised,
                _ => token.ends_statement(),
            },
            None => true,
        }
    }

    fn at_end(&mut self) -> bool {
        self.tokens.peek().is_none_or(|token| token.ends_statement())
    }

    fn peek_identifier(&mut self) -> Option<&'a str> {
        match self.tokens.peek()?.kind {
            Kind::Name(word) if !is_keyword(word) => Some(word),
            _ => None,
        }
    }

    fn identifier(&mut self) -> Option<&'a str> {
        let word = self.peek_identifier()?;
        self.tokens.next();
        Some(word)
    }

    fn eat(&mut self, kind: Kind<'_>) -> bool {
        let matches = self.tokens.peek().is_some_and(|token| token.kind == kind);
        if matches {
            self.tokens.next();
        }
        matches
    }

    fn eat_keyword(&mut self, keyword: &str) -> bool {
        self.eat(Kind::Name(keyword))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imports_of(content: &str) -> Vec<String> {
        imports(content)
    }

    #[test]
    fn every_python_file_is_python() {
        assert_eq!(language("app/views.py"), "python");
        assert_eq!(language("stubs/models.pyi"), "python");
    }

    #[test]
    fn a_plain_import_reports_the_module() {
        assert_eq!(imports_of("import os\n"), ["os"]);
    }

    #[test]
    fn an_import_of_several_modules_reports_each() {
        assert_eq!(imports_of("import os, sys\n"), ["os", "sys"]);
    }

    #[test]
    fn an_import_with_an_alias_reports_the_module_not_the_alias() {
        assert_eq!(imports_of("import a.b as c\n"), ["a.b"]);
        assert_eq!(imports_of("import numpy as np, pandas as pd"), ["numpy", "pandas"]);
    }

    #[test]
    fn a_dotted_import_reports_the_whole_dotted_module() {
        assert_eq!(imports_of("import a.b.c"), ["a.b.c"]);
    }

    #[test]
    fn a_from_import_reports_module_dot_name() {
        assert_eq!(imports_of("from a.b import x\n"), ["a.b.x"]);
    }

    #[test]
    fn a_named_import_with_an_alias_reports_the_imported_name() {
        assert_eq!(imports_of("from a.b import x, y as z\n"), ["a.b.x", "a.b.y"]);
    }

    #[test]
    fn a_parenthesised_import_may_span_lines_with_comments_and_a_trailing_comma() {
        let source = "from a import (\n  x,  # note\n  y as z,\n)\nimport b\n";
        assert_eq!(imports_of(source), ["a.x", "a.y", "b"]);
    }

    #[test]
    fn a_backslash_continues_an_import_onto_the_next_line() {
        assert_eq!(imports_of("from a import x, \\\n    y\n"), ["a.x", "a.y"]);
        assert_eq!(imports_of("import os, \\\r\n    sys\r\n"), ["os", "sys"]);
    }

    #[test]
    fn a_glob_import_reports_the_module_alone() {
        assert_eq!(imports_of("from a import *\n"), ["a"]);
    }

    #[test]
    fn a_relative_import_keeps_its_leading_dots() {
        assert_eq!(imports_of("from . import views"), [".views"]);
        assert_eq!(imports_of("from .models import User"), [".models.User"]);
        assert_eq!(imports_of("from ..core.db import session"), ["..core.db.session"]);
        assert_eq!(imports_of("from .. import x"), ["..x"]);
        assert_eq!(imports_of("from ... import x"), ["...x"]);
        assert_eq!(imports_of("from .import x"), [".x"]);
    }

    #[test]
    fn a_future_import_is_an_ordinary_from_import() {
        assert_eq!(imports_of("from __future__ import annotations\n"), ["__future__.annotations"]);
    }

    #[test]
    fn statements_separated_by_semicolons_each_count() {
        assert_eq!(imports_of("import os; import sys\n"), ["os", "sys"]);
        assert_eq!(imports_of("x = 1; from a import b"), ["a.b"]);
    }

    #[test]
    fn imports_nested_in_blocks_count() {
        let source = "\
if TYPE_CHECKING:
    from a import A
try:
    import ujson as json
except ImportError:
    import json
def load():
    import yaml
";
        assert_eq!(imports_of(source), ["a.A", "ujson", "json", "yaml"]);
    }

    #[test]
    fn an_import_after_the_colon_of_a_one_line_block_counts() {
        assert_eq!(imports_of("if TYPE_CHECKING: from a import A\n"), ["a.A"]);
        assert_eq!(imports_of("try: import ujson as json\nexcept ImportError: import json\n"), ["ujson", "json"]);
    }

    #[test]
    fn the_same_import_twice_is_reported_once_in_first_seen_order() {
        assert_eq!(imports_of("import b\nimport a\nimport b\nfrom c import d\nfrom c import d\n"), ["b", "a", "c.d"]);
    }

    #[test]
    fn imports_in_comments_are_ignored() {
        assert_eq!(imports_of("# import os\nx = 1  # from a import b\n"), Vec::<String>::new());
    }

    #[test]
    fn imports_in_single_and_double_quoted_strings_are_ignored() {
        assert_eq!(imports_of("x = 'import os'\ny = \"from a import b\"\n"), Vec::<String>::new());
    }

    #[test]
    fn imports_in_docstrings_and_triple_quoted_strings_are_ignored() {
        let source = "\"\"\"Usage:\n\nimport os\nfrom a import b\n\"\"\"\nx = '''\nimport sys\n'''\nimport real\n";
        assert_eq!(imports_of(source), ["real"]);
    }

    #[test]
    fn imports_in_prefixed_strings_are_ignored() {
        let source = "a = r'\nimport a'\nb = b'import b'\nc = f\"{x}\nimport c\"\nd = rb'''\nimport d\n'''\nimport e\n";
        assert_eq!(imports_of(source), ["e"]);
    }

    #[test]
    fn an_escaped_quote_does_not_end_a_string() {
        assert_eq!(imports_of("x = 'it\\'s; import os'\nimport sys\n"), ["sys"]);
    }

    #[test]
    fn import_inside_a_longer_identifier_is_not_an_import() {
        assert_eq!(imports_of("reimport os\nimportant = 1\nfrom_x = 2\n"), Vec::<String>::new());
    }

    #[test]
    fn dynamic_imports_are_not_reported() {
        let source = "import importlib\nmod = importlib.import_module('x')\nother = __import__('y')\n";
        assert_eq!(imports_of(source), ["importlib"]);
    }

    #[test]
    fn from_in_the_middle_of_a_statement_is_not_an_import() {
        assert_eq!(imports_of("raise Error from cause\nyield from a\nx = (yield from b)\n"), Vec::<String>::new());
    }

    #[test]
    fn odd_spacing_and_spaced_dots_still_read_as_one_name() {
        assert_eq!(imports_of("from   a . b   import  ( c )\nimport  x . y  as  z"), ["a.b.c", "x.y"]);
    }

    #[test]
    fn crlf_line_endings_read_like_lf() {
        assert_eq!(imports_of("import os\r\nfrom a import (\r\n  b,\r\n)\r\n"), ["os", "a.b"]);
    }

    #[test]
    fn a_byte_order_mark_does_not_hide_the_first_import() {
        assert_eq!(imports_of("\u{feff}import os\n"), ["os"]);
    }

    #[test]
    fn an_incomplete_name_is_dropped_but_the_rest_is_kept() {
        assert_eq!(imports_of("import a.\nimport b\nfrom c. import d\nfrom e import\n"), ["b"]);
    }

    #[test]
    fn an_import_left_in_an_unclosed_bracket_still_counts() {
        assert_eq!(imports_of("x = foo(\nimport os\nprint(1)\nimport sys\n"), ["os", "sys"]);
        assert_eq!(imports_of("from a import (b,\n    c\nfrom d import e\n"), ["a.b", "a.c", "d.e"]);
    }

    #[test]
    fn a_truncated_file_keeps_what_was_complete() {
        assert_eq!(imports_of("from a import (b, c"), ["a.b", "a.c"]);
        assert_eq!(imports_of("import os\ns = '''import sys"), ["os"]);
        assert_eq!(imports_of("import os\n'"), ["os"]);
    }

    #[test]
    fn keywords_are_never_modules_or_names() {
        assert_eq!(imports_of("import if\nfrom a import None\n"), Vec::<String>::new());
    }

    #[test]
    fn soft_keywords_and_non_ascii_names_are_ordinary_names() {
        assert_eq!(imports_of("from typing import type, match\nimport café"), ["typing.type", "typing.match", "café"]);
    }
}
