//! The grammar of a use tree (`a::b::{self, c as d, e::*}`), read one token at a time.
//!
//! A state machine rather than recursive descent, so that nesting depth costs no stack; the
//! imports it finds are held until the closing `;`, so a malformed or truncated declaration
//! reports nothing.

use guest_sdk::imports::ImportList;

use super::lexer::Token;

/// No real path is this long; refusing longer ones bounds the output of an adversarial group
/// like `a…a::{b, c, …}`, which would otherwise grow with (prefix length × names).
pub const MAX_PATH_BYTES: usize = 256;

pub enum Step {
    /// Consume the token and go on.
    Continue,
    /// The `;`: consume it; the tree is complete.
    Done,
    /// The token does not belong in a use tree: leave it, and drop the declaration.
    Stop,
}

/// Where the use-tree grammar stands, i.e. what may come next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Expect {
    /// Right after `use`: a path, `::`, `{` or `*`.
    #[default]
    Tree,
    /// After `{` or a `,` inside one: a tree, or `}` (empty group, trailing comma).
    GroupItem,
    /// After `::`: a segment, `{` or `*`.
    Segment,
    /// After a segment: `::`, `as`, or the end of this tree.
    PathGoesOn,
    /// After `as`: the alias.
    Alias,
    /// After an alias: the end of this tree, whose path is still to be reported.
    AliasDone,
    /// After `*` or `}`: the end of this tree, already reported.
    Closed,
}

/// One use declaration read so far.
#[derive(Default)]
pub struct UseTree<'a> {
    expect: Expect,
    /// The path so far, from the outermost prefix to the current segment.
    segments: Vec<&'a str>,
    /// For each open `{`, how many segments its prefix has.
    groups: Vec<usize>,
    /// Reported only when the `;` arrives; an `ImportList` so repeats take no room meanwhile.
    imports: ImportList,
}

impl<'a> UseTree<'a> {
    /// What the imports are once the tree is `Done`.
    pub fn into_imports(self) -> Vec<String> {
        self.imports.into_vec()
    }

    pub fn step(&mut self, token: Token<'a>) -> Step {
        use Expect::*;
        match (self.expect, token) {
            (Tree | GroupItem, Token::PathSep) => self.expecting(Segment),
            (Tree | GroupItem | Segment, Token::Ident { text, raw }) if is_name(text, raw) => {
                self.segments.push(text);
                if path_bytes(&self.segments) > MAX_PATH_BYTES { Step::Stop } else { self.expecting(PathGoesOn) }
            }
            (Tree | GroupItem | Segment, Token::Open) => {
                self.groups.push(self.segments.len());
                self.expecting(GroupItem)
            }
            (Tree | GroupItem | Segment, Token::Star) => {
                self.push_glob();
                self.expecting(Closed)
            }
            (PathGoesOn, Token::PathSep) => self.expecting(Segment),
            (PathGoesOn, Token::Ident { text: "as", raw: false }) => self.expecting(Alias),
            (Alias, Token::Ident { text, raw }) if is_name(text, raw) || text == "_" => self.expecting(AliasDone),
            (PathGoesOn | AliasDone | Closed, Token::Comma) => self.end_item(),
            (PathGoesOn | AliasDone | Closed, Token::Close) | (GroupItem, Token::Close) => self.end_group(),
            (PathGoesOn | AliasDone | Closed, Token::Semi) if self.groups.is_empty() => {
                self.end_path();
                Step::Done
            }
            _ => Step::Stop,
        }
    }

    fn expecting(&mut self, next: Expect) -> Step {
        self.expect = next;
        Step::Continue
    }

    /// A path tree ends with its last segment (or alias): that segment is what it imports.
    fn end_path(&mut self) {
        if matches!(self.expect, Expect::PathGoesOn | Expect::AliasDone)
            && let Some(import) = path_import(&self.segments)
        {
            self.imports.push(import);
        }
    }

    /// `,` ends one item of a group; the next starts again from the group's prefix.
    fn end_item(&mut self) -> Step {
        let Some(&prefix) = self.groups.last() else { return Step::Stop };
        self.end_path();
        self.segments.truncate(prefix);
        self.expecting(Expect::GroupItem)
    }

    fn end_group(&mut self) -> Step {
        self.end_path();
        let Some(prefix) = self.groups.pop() else { return Step::Stop };
        self.segments.truncate(prefix);
        self.expecting(Expect::Closed)
    }

    /// `a::b::*` imports everything in `a::b`: the module alone.
    fn push_glob(&mut self) {
        if !self.segments.is_empty() {
            self.imports.push(self.segments.join("::"));
        }
    }
}

/// `a::b::c` → `a::b.c`; `a::b::self` → `a::b`; `a` → `a`.
fn path_import(segments: &[&str]) -> Option<String> {
    let (last, module) = segments.split_last()?;
    Some(match (*last, module) {
        (last, []) => last.to_string(),
        ("self", module) => module.join("::"),
        (name, module) => format!("{}.{name}", module.join("::")),
    })
}

fn path_bytes(segments: &[&str]) -> usize {
    segments.iter().map(|segment| segment.len() + 2).sum()
}

/// Whether an identifier can name a crate, module or item: any raw identifier, and any other
/// but `_` and the keywords. `self`, `super` and `crate` are path segments, so they qualify;
/// keywords only some editions reserve (`async`, `dyn`, `try`, `gen`) qualify too, since older
/// code may use them as names.
pub fn is_name(word: &str, raw: bool) -> bool {
    raw || (word != "_" && !KEYWORDS.contains(&word))
}

#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in",
    "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "Self", "static", "struct", "trait",
    "true", "type", "unsafe", "use", "where", "while",
    // Reserved for the future in every edition.
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized", "virtual",
    "yield",
];
