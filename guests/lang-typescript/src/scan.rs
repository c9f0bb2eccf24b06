//! The imports of a TypeScript or JavaScript file, found in one pass over its tokens.
//!
//! Each import is `module.name` for every name a statement imports, or `module` alone when it
//! names nothing; aliases never appear, the imported name does. Recognised:
//! - `import d from 'm'`, `import * as ns from 'm'`, `import 'm'` → `m`
//! - `import { a, b as c } from 'm'` → `m.a`, `m.b`; `import d, { a } from 'm'` → `m`, `m.a`;
//!   `import { default as d } from 'm'` → `m` (`default` is the default import)
//! - type-only forms: `import type { T } from 'm'`, `import { type T } from 'm'` → `m.T`
//! - re-exports: `export { a, b as c } from 'm'`, `export type { T } from 'm'` → `m.a`, `m.b`,
//!   `m.T`; `export * from 'm'`, `export * as ns from 'm'` → `m`
//! - `require('m')` → `m`; `const { a, b: c } = require('m')` → `m.a`, `m.b`; TS
//!   `import x = require('m')` → `m`
//! - dynamic imports with a literal argument: `import('m')`, `` import(`m`) `` → `m`
//! - any spacing, line breaks, comments and trailing commas between the tokens of a statement.
//!
//! Ignored: anything inside comments, strings and template literals (the code in a template's
//! `${ … }` is code, so a `require('m')` there counts); regex literals, told from a division by the
//! token before the `/`; calls whose argument is not a plain literal (`require(name)`,
//! `` import(`./${x}`) ``); member calls and properties (`obj.require('m')`, `import.meta`);
//! words that merely contain a keyword (`reimport`, `exports`); `export { x }` without `from`; TS
//! `import A = B.C` aliases. JSX text is read as code: an apostrophe in it opens a string that
//! ends with its line, so it can hide nothing beyond that line.
//!
//! Module specifiers and quoted names are reported as written between the quotes, trimmed, with
//! escapes left as they are; one that is empty or spans lines is skipped.

mod lexer;

use std::collections::VecDeque;

use guest_sdk::imports::ImportList;
use lexer::{Kind, Lexer, Token};

/// `typescript` for `.ts`, `.tsx`, `.mts` and `.cts` files, `javascript` for anything else.
pub fn language(path: &str) -> &'static str {
    let file_name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let extension = file_name.rsplit_once('.').map_or("", |(_, extension)| extension);
    if ["ts", "tsx", "mts", "cts"].iter().any(|ts| extension.eq_ignore_ascii_case(ts)) {
        "typescript"
    } else {
        "javascript"
    }
}

/// The imports of `content`, in source order, each once.
pub fn imports(content: &str) -> Vec<String> {
    let mut parser =
        Parser { lexer: Lexer::new(content), ahead: VecDeque::new(), previous: None, found: ImportList::default() };
    parser.run();
    parser.found.into_vec()
}

/// What an import names: `Some(name)`, or `None` for the module as a whole.
type Binding<'a> = Option<&'a str>;

/// Reads statements at a cursor over the token stream. Each rule looks ahead from the cursor
/// without consuming, and reports only once its whole statement has matched; the cursor then
/// skips the statement, or moves one token on when nothing matched.
struct Parser<'a> {
    lexer: Lexer<'a>,
    /// The tokens read ahead of the cursor; the front one is at the cursor.
    ahead: VecDeque<Token>,
    /// The kind of the token before the cursor: after a `.`, a keyword is a property name.
    previous: Option<Kind>,
    found: ImportList,
}

impl<'a> Parser<'a> {
    fn run(&mut self) {
        while let Some(token) = self.token(0) {
            let matched = if token.kind != Kind::Ident || self.previous == Some(Kind::Dot) {
                None
            } else {
                match self.lexer.text(token) {
                    "import" => self.import(),
                    "export" => self.export(),
                    "require" => self.require(),
                    "const" | "let" | "var" => self.destructured_require(),
                    _ => None,
                }
            };
            self.advance(matched.unwrap_or(1));
        }
    }

    // The token helpers take offsets from the cursor and read ahead as far as they are asked to.

    fn token(&mut self, offset: usize) -> Option<Token> {
        while self.ahead.len() <= offset {
            let token = self.lexer.next()?;
            self.ahead.push_back(token);
        }
        self.ahead.get(offset).copied()
    }

    fn advance(&mut self, count: usize) {
        for _ in 0..count {
            match self.ahead.pop_front().or_else(|| self.lexer.next()) {
                Some(token) => self.previous = Some(token.kind),
                None => return,
            }
        }
    }

    fn is_punct(&mut self, offset: usize, punct: u8) -> bool {
        self.token(offset).is_some_and(|token| token.kind == Kind::Punct(punct))
    }

    fn is_word(&mut self, offset: usize, word: &str) -> bool {
        self.ident(offset) == Some(word)
    }

    fn ident(&mut self, offset: usize) -> Option<&'a str> {
        let token = self.token(offset).filter(|token| token.kind == Kind::Ident)?;
        Some(self.lexer.text(token))
    }

    /// A string literal's text, if it is usable as a module or a name.
    fn literal(&mut self, offset: usize) -> Option<&'a str> {
        let token = self.token(offset).filter(|token| token.kind == Kind::Str)?;
        clean(self.lexer.text(token))
    }

    /// An identifier or a string literal: what `import { a, "b-c" as d }` names.
    fn name(&mut self, offset: usize) -> Option<&'a str> {
        self.ident(offset).and_then(clean).or_else(|| self.literal(offset))
    }

    fn report(&mut self, module: &str, bindings: &[Binding<'_>]) {
        if bindings.is_empty() {
            self.found.push(module);
        }
        for binding in bindings {
            self.found.push_named(module, *binding);
        }
    }

    /// `import …` at the cursor, static or dynamic.
    fn import(&mut self) -> Option<usize> {
        match self.token(1)?.kind {
            Kind::Punct(b'(') => self.dynamic_import(),
            Kind::Str => {
                let module = self.literal(1)?;
                self.report(module, &[]);
                Some(2)
            }
            _ => self.static_import(),
        }
    }

    /// `import('m')`, optionally with options after a comma.
    fn dynamic_import(&mut self) -> Option<usize> {
        let module = self.literal(2)?;
        if !(self.is_punct(3, b')') || self.is_punct(3, b',')) {
            return None;
        }
        self.report(module, &[]);
        Some(4)
    }

    /// `import [type] [default] [, * as ns | { … }] from 'm'`.
    fn static_import(&mut self) -> Option<usize> {
        let mut at = self.skip_import_modifier(1);
        let mut bindings = Vec::new();
        if self.ident(at).is_some() {
            bindings.push(None);
            at += 1;
            if !self.is_punct(at, b',') {
                return self.module_clause(at, &bindings);
            }
            at += 1;
        }
        at = if self.is_punct(at, b'*') { self.namespace(at, &mut bindings)? } else { self.named(at, &mut bindings)? };
        self.module_clause(at, &bindings)
    }

    /// Steps over `type` (and Flow's `typeof`, and the `defer` and `source` proposals) in front of
    /// the bindings, unless the word is itself the default binding: `import type from 'm'`,
    /// `import type, { a } from 'm'`.
    fn skip_import_modifier(&mut self, at: usize) -> usize {
        if !matches!(self.ident(at), Some("type" | "typeof" | "defer" | "source")) {
            return at;
        }
        let modifies = match self.token(at + 1).map(|token| token.kind) {
            Some(Kind::Punct(b'{' | b'*')) => true,
            Some(Kind::Ident) => !(self.is_word(at + 1, "from") && self.literal(at + 2).is_some()),
            _ => false,
        };
        if modifies { at + 1 } else { at }
    }

    /// `* as ns` at `at`: the offset after it.
    fn namespace(&mut self, at: usize, bindings: &mut Vec<Binding<'a>>) -> Option<usize> {
        if !(self.is_punct(at, b'*') && self.is_word(at + 1, "as") && self.name(at + 2).is_some()) {
            return None;
        }
        bindings.push(None);
        Some(at + 3)
    }

    /// `{ a, type b, c as d, "e-f" as g, }` at `at`: the offset after its `}`.
    fn named(&mut self, at: usize, bindings: &mut Vec<Binding<'a>>) -> Option<usize> {
        if !self.is_punct(at, b'{') {
            return None;
        }
        let mut at = at + 1;
        loop {
            if self.is_punct(at, b'}') {
                return Some(at + 1);
            }
            // A specifier is at most four words (`type a as b`); counting them keeps a runaway
            // list from being read far.
            let start = at;
            while at - start < 4 && self.name(at).is_some() {
                at += 1;
            }
            if at > start {
                bindings.push(self.specifier(start, at - start)?);
            }
            if self.is_punct(at, b',') {
                at += 1;
            } else if !self.is_punct(at, b'}') {
                return None;
            }
        }
    }

    /// The imported name of the `len` words at `start`: `a`, `type a`, `a as b` or `type a as b`,
    /// where `type as` and `type as as b` import `as`, and `type as b` imports `type`.
    fn specifier(&mut self, start: usize, len: usize) -> Option<Binding<'a>> {
        let imported = match len {
            1 => start,
            2 if self.is_word(start, "type") => start + 1,
            3 if self.is_word(start + 1, "as") => start,
            4 if self.is_word(start, "type") && self.is_word(start + 2, "as") => start + 1,
            _ => return None,
        };
        self.name(imported).map(binding)
    }

    /// `from 'm'` at `at`: reports `bindings` of `m` and returns the offset after it.
    fn module_clause(&mut self, at: usize, bindings: &[Binding<'_>]) -> Option<usize> {
        if !self.is_word(at, "from") {
            return None;
        }
        let module = self.literal(at + 1)?;
        self.report(module, bindings);
        Some(at + 2)
    }

    /// `export [type] { … } from 'm'`, `export [type] * [as ns] from 'm'`. Other exports
    /// import nothing.
    fn export(&mut self) -> Option<usize> {
        let mut at = 1;
        if self.is_word(at, "type") && (self.is_punct(at + 1, b'{') || self.is_punct(at + 1, b'*')) {
            at += 1;
        }
        let mut bindings = Vec::new();
        if self.is_punct(at, b'*') {
            at += 1;
            if self.is_word(at, "as") {
                self.name(at + 1)?;
                at += 2;
            }
            bindings.push(None);
        } else {
            at = self.named(at, &mut bindings)?;
        }
        self.module_clause(at, &bindings)
    }

    /// `require('m')`.
    fn require(&mut self) -> Option<usize> {
        let module = self.call_argument(1)?;
        self.report(module, &[]);
        Some(4)
    }

    /// `('m')` at `open`: the literal.
    fn call_argument(&mut self, open: usize) -> Option<&'a str> {
        if !self.is_punct(open, b'(') {
            return None;
        }
        let argument = self.literal(open + 1)?;
        self.is_punct(open + 2, b')').then_some(argument)
    }

    /// `const { a, b: c, 'd': e } = require('m')`: one name per property taken from the module.
    /// Other patterns (nested, defaults, rest), and properties taken from something the module
    /// gives (`require('m').sub`, `require('m')()`), fall back to `require('m')` alone.
    fn destructured_require(&mut self) -> Option<usize> {
        if !self.is_punct(1, b'{') {
            return None;
        }
        let mut bindings = Vec::new();
        let mut at = 2;
        while !self.is_punct(at, b'}') {
            bindings.push(binding(self.name(at)?));
            at += 1;
            if self.is_punct(at, b':') {
                self.ident(at + 1)?;
                at += 2;
            }
            if self.is_punct(at, b',') {
                at += 1;
            } else if !self.is_punct(at, b'}') {
                return None;
            }
        }
        at += 1;
        if !(self.is_punct(at, b'=') && self.is_word(at + 1, "require")) {
            return None;
        }
        let module = self.call_argument(at + 2)?;
        if matches!(self.token(at + 5).map(|token| token.kind), Some(Kind::Dot | Kind::Punct(b'(' | b'['))) {
            return None;
        }
        self.report(module, &bindings);
        Some(at + 5)
    }
}

/// An imported name; `default` is the default import, which names the module alone.
fn binding(name: &str) -> Binding<'_> {
    (name != "default").then_some(name)
}

/// `text` trimmed, unless that leaves it empty or it spans lines.
fn clean(text: &str) -> Option<&str> {
    let text = text.trim();
    let spans_lines = text.contains(['\n', '\r', '\u{2028}', '\u{2029}']);
    (!text.is_empty() && !spans_lines).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(src: &str, expected: &[&str]) {
        assert_eq!(imports(src), expected, "imports of {src:?}");
    }

    // Languages.

    #[test]
    fn typescript_extensions_are_typescript_and_the_rest_javascript() {
        for path in ["a.ts", "src/b.tsx", "c.mts", "d.cts", "e.d.ts", "F.TS"] {
            assert_eq!(language(path), "typescript", "{path}");
        }
        for path in ["a.js", "b.jsx", "c.mjs", "d.cjs", "Makefile", "dir.ts/file.js"] {
            assert_eq!(language(path), "javascript", "{path}");
        }
    }

    // Static imports.

    #[test]
    fn a_default_import_reports_the_module() {
        check("import React from 'react'", &["react"]);
    }

    #[test]
    fn a_named_import_reports_each_name_under_its_module() {
        check(r#"import { useState, useEffect } from "react""#, &["react.useState", "react.useEffect"]);
    }

    #[test]
    fn a_named_import_with_an_alias_reports_the_imported_name() {
        check("import { useEffect as useFx } from 'react'", &["react.useEffect"]);
    }

    #[test]
    fn a_default_import_with_named_imports_reports_the_module_then_the_names() {
        check("import React, { useState } from 'react'", &["react", "react.useState"]);
    }

    #[test]
    fn importing_default_by_name_reports_the_module() {
        check("import { default as X, y } from 'm'", &["m", "m.y"]);
    }

    #[test]
    fn a_namespace_import_reports_the_module() {
        check("import * as path from 'node:path'", &["node:path"]);
        check("import fs, * as all from 'fs'", &["fs"]);
    }

    #[test]
    fn a_side_effect_import_reports_the_module() {
        check("import './globals.css'", &["./globals.css"]);
    }

    #[test]
    fn an_empty_named_list_reports_the_module() {
        check("import {} from 'm'", &["m"]);
    }

    #[test]
    fn a_quoted_imported_name_is_reported_like_an_identifier() {
        check(r#"import { "kebab-name" as kebab } from 'm'"#, &["m.kebab-name"]);
    }

    #[test]
    fn import_attributes_after_the_module_are_ignored() {
        check("import data from './data.json' with { type: 'json' }", &["./data.json"]);
    }

    // Type-only imports.

    #[test]
    fn a_type_only_import_reports_its_names() {
        check("import type { Metadata } from 'next'", &["next.Metadata"]);
        check("import type Default from 'm'", &["m"]);
        check("import type * as types from 'm'", &["m"]);
    }

    #[test]
    fn an_inline_type_modifier_is_not_part_of_the_name() {
        check("import { type Foo, bar, type Baz as B } from 'x'", &["x.Foo", "x.bar", "x.Baz"]);
    }

    #[test]
    fn a_binding_called_type_is_a_binding_not_a_modifier() {
        check("import type from 'a'", &["a"]);
        check("import type, { b } from 'c'", &["c", "c.b"]);
        check("import { type } from 'd'", &["d.type"]);
        check("import { type as t } from 'e'", &["e.type"]);
        check("import { type as as x, type as } from 'f'", &["f.as"]);
    }

    // Re-exports.

    #[test]
    fn a_named_re_export_reports_the_exported_names_before_any_alias() {
        check("export { a, b as c } from 'm'", &["m.a", "m.b"]);
    }

    #[test]
    fn a_glob_re_export_reports_the_module() {
        check("export * from 'm'", &["m"]);
        check("export * as ns from 'n'", &["n"]);
    }

    #[test]
    fn a_type_only_re_export_reports_its_names() {
        check("export type { T } from 'm'", &["m.T"]);
        check("export type * from 'n'", &["n"]);
    }

    #[test]
    fn re_exporting_default_reports_the_module() {
        check("export { default } from './Button'", &["./Button"]);
        check("export { default as Card, type CardProps } from './Card'", &["./Card", "./Card.CardProps"]);
    }

    #[test]
    fn an_export_without_from_imports_nothing() {
        check("export { a, b }; export const c = 1; export default d", &[]);
    }

    // require.

    #[test]
    fn a_require_call_reports_the_module() {
        check("const fs = require('fs')", &["fs"]);
    }

    #[test]
    fn a_destructured_require_reports_each_property_before_any_rename() {
        check(
            "const { readFile, writeFile: wf } = require('fs/promises')",
            &["fs/promises.readFile", "fs/promises.writeFile"],
        );
    }

    #[test]
    fn a_property_read_off_a_require_reports_the_module() {
        check("const x = require('y').z", &["y"]);
    }

    #[test]
    fn a_destructuring_pattern_too_complex_to_read_falls_back_to_the_module() {
        check("const { a = 1, ...rest } = require('m')", &["m"]);
        check("let { a: { b } } = require('n')", &["n"]);
        check("const { c } = require('o').sub; const { d } = require('p')('q')", &["o", "p"]);
    }

    #[test]
    fn a_require_whose_argument_is_not_a_literal_is_skipped() {
        check("require(name); require('a' + b); require(`./${x}`)", &[]);
    }

    #[test]
    fn a_typescript_import_equals_require_reports_the_module() {
        check("import fs = require('fs')", &["fs"]);
        check("export import type Ts = require('typescript')", &["typescript"]);
    }

    #[test]
    fn a_typescript_namespace_alias_imports_nothing() {
        check("import Names = Outer.Inner.Names", &[]);
    }

    // Dynamic imports.

    #[test]
    fn a_dynamic_import_reports_the_module() {
        check("const chunk = import('./chunk')", &["./chunk"]);
        check(r#"const x = await import("x")"#, &["x"]);
        check("import('./opts', { with: { type: 'json' } })", &["./opts"]);
    }

    #[test]
    fn a_template_literal_without_substitutions_is_a_string() {
        check("import(`./a`)", &["./a"]);
    }

    #[test]
    fn a_dynamic_import_whose_argument_is_not_a_literal_is_skipped() {
        check("import(name); import(`./${name}`); import('./a' + b)", &[]);
    }

    #[test]
    fn import_meta_is_not_an_import() {
        check("const url = import.meta.url", &[]);
    }

    // Layout.

    #[test]
    fn a_multi_line_list_with_comments_and_a_trailing_comma_is_read_whole() {
        let src = "import {\n  a, // the first\n  /* b, */\n  c as d,\n} from 'm';\n";
        check(src, &["m.a", "m.c"]);
    }

    #[test]
    fn spacing_does_not_matter() {
        check("import{a}from'b';import   *   as   x   from   \"y\"", &["b.a", "y"]);
        check("import\r\nz\r\nfrom\r\n'z'\r\n", &["z"]);
    }

    #[test]
    fn the_output_keeps_source_order_and_drops_repeats() {
        check("import b from 'b'; import a from 'a'; const b2 = require('b')", &["b", "a"]);
    }

    #[test]
    fn a_specifier_is_trimmed_and_one_spanning_lines_is_skipped() {
        check("import ' m '; import(`a\nb`); import 'c\\\nd'; import ''", &["m"]);
    }

    // What is not an import.

    #[test]
    fn imports_inside_comments_are_ignored() {
        check("// import a from 'a'\n/* require('b')\n import('c') */ import 'd'", &["d"]);
    }

    #[test]
    fn imports_inside_strings_are_ignored() {
        check(r#"const s = "import a from 'a'"; const t = 'require("b")'"#, &[]);
    }

    #[test]
    fn imports_inside_template_text_are_ignored_but_code_in_substitutions_is_read() {
        check("const s = `import a from 'a' ${ require('b') } ${ { c: `require('c')` } } import 'd'`", &["b"]);
    }

    #[test]
    fn a_regex_literal_is_skipped() {
        check("const re = /import x from 'y'/; import 'z'", &["z"]);
        check("if (/'/.test(s)) {}\nimport 'after'", &["after"]);
    }

    #[test]
    fn a_division_is_not_mistaken_for_a_regex() {
        check("const half = total / 2; const q = a / b; import 'after' // c/d", &["after"]);
    }

    #[test]
    fn words_that_contain_a_keyword_are_not_imports() {
        check("reimport('a'); myrequire('b'); exports.foo = 1; requireX('c'); importer.x", &[]);
    }

    #[test]
    fn member_calls_named_like_keywords_are_not_imports() {
        check("obj.require('a'); obj?.require('b'); loader.import('c'); require.resolve('d')", &[]);
    }

    #[test]
    fn a_spread_require_is_a_require() {
        check("const all = { ...require('a') }", &["a"]);
    }

    #[test]
    fn an_unterminated_string_hides_only_the_rest_of_its_line() {
        check("const s = 'open\nimport 'next'", &["next"]);
    }

    #[test]
    fn truncated_statements_report_nothing_and_do_not_panic() {
        for src in
            ["import", "import {", "import { a", "import { a } from", "export *", "require(", "import(", "'", "`${"]
        {
            check(src, &[]);
        }
    }
}
