//! The imports of a Go source file: one string per import spec, the package path alone, since a
//! Go import names no item (`import f "fmt"` → `fmt`).
//!
//! Recognised: single declarations (`import "fmt"`), grouped ones (`import ( … )`, specs on
//! separate lines or separated by `;`), aliased, dot and blank specs (`f "fmt"`, `. "math"`,
//! `_ "github.com/lib/pq"`: the alias is dropped), raw-string paths (`` `fmt` ``), any number of
//! declarations, and comments anywhere between tokens.
//!
//! Ignored: `import` inside comments, strings, raw strings and runes, and inside longer words
//! (`importer`); specs that are not `[name] "path"`; paths Go itself rejects (empty, with spaces,
//! control characters or the punctuation the spec forbids, so escape sequences are not decoded).
//!
//! Go requires every import declaration to come before the first other declaration, so the scan
//! stops at the first `func`, `type`, `var` or `const`, as `go/parser` does in its ImportsOnly
//! mode: that makes big files cost only their header, and text further down (code, embedded
//! snippets, an `import` appended below the code, which would not compile) is never reported.
//! An unterminated group ends at the next `import` or declaration keyword.

mod lexer;

use guest_sdk::imports::ImportList;
use lexer::{Lexer, Token};

pub fn language(_path: &str) -> &'static str {
    "go"
}

pub fn imports(content: &str) -> Vec<String> {
    let mut lexer = Lexer::new(content);
    let mut found = ImportList::default();
    let mut token = lexer.next_token();
    loop {
        token = match token {
            Token::Eof => break,
            Token::Word("import") => declaration(&mut lexer, &mut found),
            Token::Word(word) if ends_imports(word) => break,
            _ => lexer.next_token(),
        };
    }
    found.into_vec()
}

/// The keywords that start a declaration other than an import: none may precede an import.
fn ends_imports(word: &str) -> bool {
    matches!(word, "func" | "type" | "var" | "const")
}

/// Where an import spec (`[name] "path"`) has got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    /// Nothing yet: a name, `.` or the path may come.
    Start,
    /// After the name or `.`: only the path may come.
    Named,
    /// The path has been read, or the spec is malformed: the rest up to its end is ignored.
    Over,
}

/// What a token does to a spec in progress, and the path it completes, if any.
fn advance<'a>(spec: Spec, token: Token<'a>) -> (Spec, Option<&'a str>) {
    match (spec, token) {
        (Spec::Start, Token::Word(_) | Token::Punct(b'.')) => (Spec::Named, None),
        (Spec::Start | Spec::Named, Token::Literal(path)) => (Spec::Over, Some(path)),
        _ => (Spec::Over, None),
    }
}

/// After `import`: one spec, or a group. Answers the first token it did not use.
fn declaration<'a>(lexer: &mut Lexer<'a>, found: &mut ImportList) -> Token<'a> {
    let mut spec = Spec::Start;
    loop {
        let token = lexer.next_token();
        match token {
            // Go inserts no semicolon after `import`, so the spec may start on the next line.
            Token::Newline if spec == Spec::Start => {}
            Token::Punct(b'(') if spec == Spec::Start => return group(lexer, found),
            Token::Newline | Token::Punct(b';') | Token::Eof => return token,
            Token::Word(word) if word == "import" || ends_imports(word) => return token,
            _ => spec = record(spec, token, found),
        }
    }
}

/// The specs of `import ( … )`, up to its `)`. Answers the first token after the group.
fn group<'a>(lexer: &mut Lexer<'a>, found: &mut ImportList) -> Token<'a> {
    let mut spec = Spec::Start;
    loop {
        let token = lexer.next_token();
        match token {
            Token::Punct(b')') => return lexer.next_token(),
            Token::Eof => return token,
            // A group left open by an edit in progress: what follows is not part of it.
            Token::Word(word) if word == "import" || ends_imports(word) => return token,
            // Go ends a spec at `;` or at the line break it inserts one for; an empty spec is harmless.
            Token::Newline | Token::Punct(b';') => spec = Spec::Start,
            _ => spec = record(spec, token, found),
        }
    }
}

fn record(spec: Spec, token: Token<'_>, found: &mut ImportList) -> Spec {
    let (spec, path) = advance(spec, token);
    if let Some(path) = path.filter(|path| is_import_path(path)) {
        found.push(path);
    }
    spec
}

/// Go's own restriction on import paths: non-empty, graphic characters only, no spaces and none
/// of ``!"#$%&'()*,:;<=>?[\]^`{|}`` or U+FFFD. A backslash escape is therefore never a path.
fn is_import_path(path: &str) -> bool {
    const FORBIDDEN: &str = "!\"#$%&'()*,:;<=>?[\\]^`{|}\u{fffd}";
    !path.is_empty() && path.chars().all(|c| !c.is_whitespace() && !c.is_control() && !FORBIDDEN.contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(source: &str) -> Vec<String> {
        imports(source)
    }

    #[test]
    fn the_language_is_always_go() {
        assert_eq!(language("cmd/server/main.go"), "go");
        assert_eq!(language("no_extension"), "go");
    }

    #[test]
    fn a_single_import_reports_its_package_path() {
        assert_eq!(scan("package main\n\nimport \"fmt\"\n"), ["fmt"]);
    }

    #[test]
    fn a_grouped_import_reports_each_path_in_order() {
        assert_eq!(scan("package x\nimport (\n\t\"context\"\n\t\"net/http\"\n)\n"), ["context", "net/http"]);
    }

    #[test]
    fn a_named_import_with_an_alias_reports_the_path_not_the_alias() {
        assert_eq!(scan("import f \"fmt\"\nimport (\n\tstr \"strings\"\n)\n"), ["fmt", "strings"]);
    }

    #[test]
    fn a_dot_import_reports_the_path() {
        assert_eq!(scan("import . \"math\"\nimport (\n\t. \"sort\"\n)"), ["math", "sort"]);
    }

    #[test]
    fn a_blank_import_reports_the_path() {
        assert_eq!(scan("import _ \"github.com/lib/pq\"\nimport (_ \"embed\")"), ["github.com/lib/pq", "embed"]);
    }

    #[test]
    fn a_raw_string_path_reports_its_contents() {
        assert_eq!(scan("import `fmt`\nimport (\n\tx `os/exec`\n)"), ["fmt", "os/exec"]);
    }

    #[test]
    fn several_declarations_are_all_reported_in_source_order() {
        let source = "package a\nimport \"os\"\nimport (\n\t\"io\"\n)\nimport \"bufio\"\n";
        assert_eq!(scan(source), ["os", "io", "bufio"]);
    }

    #[test]
    fn a_path_imported_twice_is_reported_once() {
        assert_eq!(scan("import \"fmt\"\nimport f \"fmt\"\nimport `fmt`"), ["fmt"]);
    }

    #[test]
    fn specs_separated_by_semicolons_on_one_line_are_all_reported() {
        assert_eq!(scan("import (\"a\"; b \"b/c\"; . \"d\";_ \"e\")"), ["a", "b/c", "d", "e"]);
    }

    #[test]
    fn a_one_line_declaration_followed_by_a_semicolon_is_reported() {
        assert_eq!(scan("package p; import \"fmt\"; import \"os\"; func main() {}"), ["fmt", "os"]);
    }

    #[test]
    fn comments_between_and_inside_groups_are_skipped() {
        let source = "import (\n\t// \"commented/out\"\n\t\"fmt\" // trailing\n\t/* \"block\" */ \"os\"\n\t/*\n\
                      \"multi/line\"\n\t*/\n\tlog /* alias */ \"log\"\n)\n// import \"after\"\nimport /* x */ \"io\"\n";
        assert_eq!(scan(source), ["fmt", "os", "log", "io"]);
    }

    #[test]
    fn import_inside_a_comment_is_ignored() {
        assert_eq!(scan("// import \"fmt\"\n/* import \"os\"\n import \"io\" */\npackage p\n"), Vec::<String>::new());
    }

    #[test]
    fn import_inside_strings_raw_strings_and_runes_is_ignored() {
        let source = "package p\nimport \"fmt\"\nvar _ = \"import \\\"os\\\"\"\n";
        assert_eq!(scan(source), ["fmt"]);
        assert_eq!(scan("x := `\nimport \"os\"\n`\nimport \"io\""), ["io"]);
        assert_eq!(scan("x := '\"'; import \"io\"; y := \"\\\"import \\\"z\\\"\""), ["io"]);
    }

    #[test]
    fn identifiers_containing_import_are_not_the_keyword() {
        assert_eq!(scan("importer \"a\"\nreimport \"b\"\nimport_ \"c\"\nñimport \"d\"\nimport \"e\""), ["e"]);
    }

    #[test]
    fn the_scan_stops_at_the_first_other_declaration() {
        let source =
            "package p\nimport \"fmt\"\nfunc main() {\n\tfmt.Println(\"import \\\"x\\\"\")\n}\nimport \"late\"\n";
        assert_eq!(scan(source), ["fmt"]);
        for keyword in ["type", "var", "const"] {
            assert_eq!(scan(&format!("import \"a\"\n{keyword} x int\nimport \"b\"\n")), ["a"]);
        }
    }

    #[test]
    fn a_declaration_keyword_inside_a_comment_or_string_does_not_stop_the_scan() {
        assert_eq!(scan("// func main\n/* type */\nimport \"a\"\nimport (\n\t// var x\n\t\"b\"\n)"), ["a", "b"]);
    }

    #[test]
    fn the_path_may_start_on_the_line_after_import() {
        assert_eq!(scan("import\n\t\"fmt\"\nimport\n(\n\"os\"\n)"), ["fmt", "os"]);
    }

    #[test]
    fn odd_spacing_and_crlf_line_endings_are_accepted() {
        let source = "package main\r\n\r\nimport(\r\n   f    \"fmt\"\r\n\t\t\"os\"   )\r\nimport\t\"io\"\r\n";
        assert_eq!(scan(source), ["fmt", "os", "io"]);
    }

    #[test]
    fn a_leading_byte_order_mark_is_ignored() {
        assert_eq!(scan("\u{feff}import \"fmt\""), ["fmt"]);
    }

    #[test]
    fn a_file_without_imports_reports_nothing() {
        assert_eq!(scan("package util\n\nfunc Max(a, b int) int { return a }\n"), Vec::<String>::new());
        assert_eq!(scan(""), Vec::<String>::new());
    }

    #[test]
    fn an_unterminated_group_ends_at_the_next_declaration() {
        let source = "import (\n\t\"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n";
        assert_eq!(scan(source), ["fmt"]);
        assert_eq!(scan("import (\n\"a\"\nimport \"b\""), ["a", "b"]);
    }

    #[test]
    fn a_malformed_spec_is_skipped_to_its_end_and_the_next_spec_still_counts() {
        assert_eq!(scan("import (\n\ta b \"x\"\n\t= \"y\"\n\t\"p\" \"q\"\n\t\"ok\"\n)"), ["p", "ok"]);
    }

    #[test]
    fn paths_go_rejects_are_not_reported() {
        let source = "import (\n\"\"\n\" fmt\"\n\"a b\"\n`multi\nline`\n\"\\x66mt\"\n\"ok/path-v2.1_~+@x\"\n)";
        assert_eq!(scan(source), ["ok/path-v2.1_~+@x"]);
    }

    #[test]
    fn non_ascii_paths_are_kept_whole() {
        assert_eq!(scan("import \"example.com/café\""), ["example.com/café"]);
    }

    #[test]
    fn truncated_input_never_panics() {
        for source in ["import", "import (", "import \"fm", "import `fm", "/* import", "import '", "import f", "\""] {
            let _ = scan(source);
        }
        assert_eq!(scan("import (\n\"fmt\""), ["fmt"]);
    }
}
