//! The imports of a Rust source file, in one pass over its tokens.
//!
//! Recognised: `use` declarations wherever they appear (top level, functions, `mod` blocks, behind
//! attributes, with any `pub(…)` visibility), including groups, nested groups, `self` in a group,
//! globs, aliases, leading `::`, and `crate`/`self`/`super` prefixes; and `extern crate`.
//! Each imported name becomes `module.name` with the module written with `::`
//! (`use std::collections::HashMap;` → `std::collections.HashMap`); a single segment, a glob or a
//! group's `self` gives the module alone (`tokio`, `std::prelude`, `std::io`). Aliases are dropped.
//!
//! Ignored: anything inside comments (nested block and doc comments too) and literals (see
//! [`lexer`]); `use` that is not the keyword (`reuse`, `r#use`, `x.use`); `use<'a>` precise
//! capturing bounds; use trees with macro metavariables (`use $crate::x;`), which name no path
//! until expanded; `extern crate self`; and any declaration without its closing `;`, so a
//! truncated file reports only its complete declarations.

mod lexer;
mod use_tree;

use guest_sdk::imports::ImportList;

use lexer::{Lexer, Token};
use use_tree::{Step, UseTree, is_name};

pub fn language(_path: &str) -> &'static str {
    "rust"
}

pub fn imports(content: &str) -> Vec<String> {
    let mut found = ImportList::default();
    let mut tokens = Cursor::new(content);
    loop {
        // `x.use` is no keyword; only a `use` or `extern` that starts an item is.
        let after_dot = tokens.last == Token::Dot;
        let Some(token) = tokens.bump() else { break };
        match token {
            Token::Ident { text: "use", raw: false } if !after_dot => use_declaration(&mut tokens, &mut found),
            Token::Ident { text: "extern", raw: false } if !after_dot => extern_crate(&mut tokens, &mut found),
            _ => {}
        }
    }
    found.into_vec()
}

/// Tokens with one of look-ahead, so a declaration that turns out malformed can stop before the
/// token that broke it and leave it to the main loop (it may be the `use` of the next one).
struct Cursor<'a> {
    lexer: Lexer<'a>,
    peeked: Option<Option<Token<'a>>>,
    last: Token<'a>,
}

impl<'a> Cursor<'a> {
    fn new(content: &'a str) -> Self {
        Cursor { lexer: Lexer::new(content), peeked: None, last: Token::Other }
    }

    fn peek(&mut self) -> Option<Token<'a>> {
        *self.peeked.get_or_insert_with(|| self.lexer.next())
    }

    fn bump(&mut self) -> Option<Token<'a>> {
        let token = self.peeked.take().unwrap_or_else(|| self.lexer.next());
        if let Some(token) = token {
            self.last = token;
        }
        token
    }
}

/// `extern crate name;` or `extern crate name as alias;`, after the `extern`.
fn extern_crate(tokens: &mut Cursor, found: &mut ImportList) {
    if !matches!(tokens.peek(), Some(Token::Ident { text: "crate", raw: false })) {
        return;
    }
    tokens.bump();
    let Some(Token::Ident { text: name, raw }) = tokens.peek() else { return };
    if !is_name(name, raw) {
        return;
    }
    tokens.bump();
    if let Some(Token::Ident { text: "as", raw: false }) = tokens.peek() {
        tokens.bump();
        match tokens.peek() {
            Some(Token::Ident { text, raw }) if is_name(text, raw) || text == "_" => tokens.bump(),
            _ => return,
        };
    }
    if tokens.peek() == Some(Token::Semi) {
        tokens.bump();
        // `extern crate self as name;` renames the current crate: it imports nothing.
        if raw || name != "self" {
            found.push(name);
        }
    }
}

/// The use tree after a `use` keyword, up to and including its `;`.
fn use_declaration(tokens: &mut Cursor, found: &mut ImportList) {
    let mut tree = UseTree::default();
    while let Some(token) = tokens.peek() {
        match tree.step(token) {
            Step::Continue => tokens.bump(),
            Step::Done => {
                tokens.bump();
                for import in tree.into_imports() {
                    found.push(import);
                }
                return;
            }
            Step::Stop => return,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(source: &str, expected: &[&str]) {
        assert_eq!(imports(source), expected, "source: {source:?}");
    }

    #[test]
    fn every_file_is_rust() {
        assert_eq!(language("src/main.rs"), "rust");
        assert_eq!(language(""), "rust");
    }

    #[test]
    fn a_path_import_reports_its_module_and_the_name() {
        check("use std::collections::HashMap;", &["std::collections.HashMap"]);
        check("use serde::Deserialize;", &["serde.Deserialize"]);
    }

    #[test]
    fn a_single_segment_reports_the_crate_alone() {
        check("use tokio;", &["tokio"]);
    }

    #[test]
    fn a_group_reports_each_name_under_its_prefix() {
        check("use a::b::{c, d::e};", &["a::b.c", "a::b::d.e"]);
    }

    #[test]
    fn nested_groups_report_each_name_under_the_full_prefix() {
        check("use a::b::{c, d::e, f::{g, h}};", &["a::b.c", "a::b::d.e", "a::b::f.g", "a::b::f.h"]);
    }

    #[test]
    fn self_in_a_group_reports_the_module_itself() {
        check("use std::io::{self, Read};", &["std::io", "std::io.Read"]);
        check("use a::{b::{self as c, d}};", &["a::b", "a::b.d"]);
    }

    #[test]
    fn a_glob_reports_the_module_alone() {
        check("use std::prelude::*;", &["std::prelude"]);
        check("use super::*;", &["super"]);
        check("use a::{b::*, c};", &["a::b", "a.c"]);
    }

    #[test]
    fn an_alias_reports_the_imported_name() {
        check("use std::fmt::Result as FmtResult;", &["std::fmt.Result"]);
        check("use a::{b as c, d};", &["a.b", "a.d"]);
    }

    #[test]
    fn an_underscore_alias_reports_the_imported_name() {
        check("use a::b as _;", &["a.b"]);
        check("use std::fmt::Write as _;", &["std::fmt.Write"]);
    }

    #[test]
    fn crate_self_and_super_prefixes_are_kept() {
        check("use crate::config::Settings;", &["crate::config.Settings"]);
        check("use super::parser::{parse, Error};", &["super::parser.parse", "super::parser.Error"]);
        check("use self::inner::thing;", &["self::inner.thing"]);
    }

    #[test]
    fn a_leading_path_separator_is_dropped() {
        check("use ::std::fmt;", &["std.fmt"]);
        check("use ::{a::b, c};", &["a.b", "c"]);
    }

    #[test]
    fn a_group_without_a_prefix_reports_each_tree() {
        check("use {a::b, c};", &["a.b", "c"]);
    }

    #[test]
    fn an_empty_group_imports_nothing() {
        check("use a::{};", &[]);
    }

    #[test]
    fn extern_crate_reports_the_crate() {
        check("extern crate serde;", &["serde"]);
        check("#[macro_use]\nextern crate log;", &["log"]);
    }

    #[test]
    fn extern_crate_with_an_alias_reports_the_crate() {
        check("extern crate foo as bar;", &["foo"]);
    }

    #[test]
    fn extern_crate_self_imports_nothing() {
        check("extern crate self as my_crate;", &[]);
    }

    #[test]
    fn extern_blocks_and_functions_are_not_imports() {
        check("extern \"C\" { fn abs(x: i32) -> i32; }\npub extern fn f() {}", &[]);
    }

    #[test]
    fn every_visibility_counts() {
        check(
            "pub use a::B;\npub(crate) use c::D;\npub(super) use e::F;\npub(in crate::x) use g::H;",
            &["a.B", "c.D", "e.F", "g.H"],
        );
    }

    #[test]
    fn use_inside_functions_modules_and_behind_attributes_counts() {
        check(
            "fn f() { use std::fs; }\nmod m { use a::b; }\n#[cfg(test)]\nuse c::d;\n#[cfg(test)]\nmod t { use super::*; }",
            &["std.fs", "a.b", "c.d", "super"],
        );
    }

    #[test]
    fn a_multi_line_tree_with_comments_and_trailing_commas_is_read_whole() {
        let source =
            "use std::{\n    // the clock\n    time::{Duration, /* not Foo */ Instant,},\n    fmt, // why\n};\n";
        check(source, &["std::time.Duration", "std::time.Instant", "std.fmt"]);
    }

    #[test]
    fn odd_spacing_and_crlf_line_endings_do_not_matter() {
        check("use   std :: fs ;\r\nuse\r\n\tstd::{\r\nio ,\r\n};\r\n", &["std.fs", "std.io"]);
    }

    #[test]
    fn use_in_line_block_and_doc_comments_is_ignored() {
        check("// use a::b;\n/* use c::d; /* use e; */ use f; */\n/// use g;\n//! use h;\n/** use i; */", &[]);
    }

    #[test]
    fn use_in_string_and_char_literals_is_ignored() {
        let source = r####"let a = "use a::b;"; let b = r##"use c::d; "# "##; let c = b"use e;";
let d = br##"use f;"##; let e = c"use g;"; let f = '"'; let g = "\" use h;";"####;
        check(source, &[]);
    }

    #[test]
    fn a_lifetime_does_not_open_a_char_literal() {
        check("fn f<'a>(x: &'a str) -> &'a str { x }\nuse a::b;\nconst Q: char = '\\'';\nuse c::d;", &["a.b", "c.d"]);
    }

    #[test]
    fn identifiers_containing_use_are_not_the_keyword() {
        check("let reuse = user::x; fn useful() {} unused::y;", &[]);
    }

    #[test]
    fn a_raw_identifier_use_is_not_the_keyword() {
        check("let r#use = 1; r#use;", &[]);
    }

    #[test]
    fn raw_identifiers_in_a_path_are_reported_without_the_prefix() {
        check("use r#async::r#type;", &["async.type"]);
    }

    #[test]
    fn keywords_only_newer_editions_reserve_are_names() {
        check(
            "use crate::gen::{dyn_trait, r#try};\nuse futures::r#async::Task;",
            &["crate::gen.dyn_trait", "crate::gen.try", "futures::async.Task"],
        );
    }

    #[test]
    fn underscore_is_an_alias_and_never_a_segment() {
        check("use a::_;\nuse _::b;\nuse c as _;", &["c"]);
    }

    #[test]
    fn a_field_or_method_named_use_is_ignored() {
        check("x.use; y.use(a::b);", &[]);
    }

    #[test]
    fn a_precise_capturing_bound_is_not_an_import() {
        check("fn f<'a>(x: &'a u8) -> impl Sized + use<'a> { x }\nuse a::b;", &["a.b"]);
    }

    #[test]
    fn a_macro_metavariable_path_is_not_an_import() {
        check("macro_rules! m { () => { use $crate::a::B; use std::fmt; } }", &["std.fmt"]);
    }

    #[test]
    fn imports_keep_source_order_and_appear_once() {
        check("use b::X;\nuse a::Y;\nuse b::X;\nfn f() { use a::Y; }", &["b.X", "a.Y"]);
    }

    #[test]
    fn a_declaration_without_its_semicolon_is_dropped_and_the_next_one_still_counts() {
        check("use a::b\nuse c::d;", &["c.d"]);
        check("use a::{b, c\nfn f() {}\nuse e;", &["e"]);
        check("use a::{b, c", &[]);
    }

    #[test]
    fn malformed_trees_report_nothing() {
        for source in
            ["use;", "use a b;", "use a::;", "use a::{b}}};", "use {a;", "use a, b;", "use a as;", "use *::a;"]
        {
            check(source, &[]);
        }
    }

    #[test]
    fn a_path_longer_than_any_real_one_is_refused() {
        let long = "a".repeat(use_tree::MAX_PATH_BYTES);
        check(&format!("use {long}::{{b, c}};\nuse d;"), &["d"]);
    }

    #[test]
    fn truncated_or_garbled_input_does_not_panic() {
        for source in ["'", "\"", "r#\"", "/*", "use", "use a::{", "'\\u{", "b'", "é", "use é::ü;", "extern crate"] {
            let _ = imports(source);
        }
        check("use é::ü;", &["é.ü"]);
    }
}
