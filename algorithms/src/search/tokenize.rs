//! Tokenizers: the Cortex benchmark's BM25 tokenizer, a tokenizer modelled on SQLite FTS5's
//! `unicode61`, and OpenClaw's FTS5 query builder (openclaw-memory.md §3.2).
//!
//! Text in, tokens out: no scoring and no index here. The `unicode61` model follows SQLite's
//! rules (token characters, case folding, which diacritics go) but uses Rust's current Unicode
//! tables, where SQLite uses Unicode 6.1; the two disagree only on characters added since then
//! and on a few symbols Unicode counts as alphabetic (circled letters).

use serde::{Deserialize, Serialize};
use unicode_normalization::char::{decompose_canonical, is_combining_mark};

/// Which tokenizer turns document and query text into terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tokenizer {
    /// The Cortex benchmark's tokenizer: see [`benchmark_tokens`].
    Benchmark,
    /// FTS5 `unicode61` with its default `remove_diacritics=1`.
    #[default]
    Unicode61,
    /// FTS5 `unicode61` with `remove_diacritics=0`.
    Unicode61KeepDiacritics,
    /// FTS5 `unicode61` with `remove_diacritics=2`.
    Unicode61RemoveAllDiacritics,
}

impl Tokenizer {
    pub fn tokenize(self, text: &str) -> Vec<String> {
        match self {
            Tokenizer::Benchmark => benchmark_tokens(text),
            Tokenizer::Unicode61 => unicode61_tokens(text, RemoveDiacritics::Simple),
            Tokenizer::Unicode61KeepDiacritics => unicode61_tokens(text, RemoveDiacritics::None),
            Tokenizer::Unicode61RemoveAllDiacritics => unicode61_tokens(text, RemoveDiacritics::Complex),
        }
    }
}

/// The Cortex benchmark's BM25 tokenizer (cortex-benchmark-original.md §2, Phase 3): lowercase,
/// split on `[^a-z0-9]+`, drop tokens of length ≤ 1. No stop words, no stemming.
///
/// Lowercasing comes first, so accented and other non-ASCII letters act as separators
/// (`café` gives `caf`), as they did in the original.
pub fn benchmark_tokens(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|character: char| !(character.is_ascii_lowercase() || character.is_ascii_digit()))
        .filter(|token| token.len() > 1)
        .map(str::to_owned)
        .collect()
}

/// FTS5 `unicode61`'s `remove_diacritics` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoveDiacritics {
    /// `0`: keep every diacritic.
    None,
    /// `1` (the default): remove a single diacritic from a Latin letter; letters carrying two or
    /// more (Vietnamese `ấ`) are kept as they are.
    Simple,
    /// `2`: remove diacritics from Latin letters however many they carry.
    Complex,
}

/// Tokens as FTS5's `unicode61` tokenizer produces them.
///
/// * Token characters: the general categories `L*`, `N*` and `Co` (private use); everything else
///   separates tokens. ASCII is handled as SQLite does: only `[A-Za-z0-9]` are token characters,
///   so `_` separates.
/// * Inside a token, the combining diacritics SQLite recognises (a subset of U+0300–U+0331) stay
///   part of the token; with diacritic removal on they are dropped.
/// * Case folding to lowercase, then (by `mode`) diacritic removal from Latin letters in
///   U+00C0–U+024F and U+1E00–U+1EFF, the ranges SQLite's table covers.
pub fn unicode61_tokens(text: &str, mode: RemoveDiacritics) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut in_token = false;
    for character in text.chars() {
        let continues = is_unicode61_token_char(character) || (in_token && is_sqlite_diacritic(character));
        if continues {
            in_token = true;
            push_folded(&mut current, character, mode);
        } else if in_token {
            tokens.push(std::mem::take(&mut current));
            in_token = false;
        }
    }
    if in_token {
        tokens.push(current);
    }
    // A token made only of dropped diacritics cannot happen (a token starts with a token
    // character), but folding can in principle empty one; FTS5 would still emit it, and an
    // empty term matches nothing, so dropping it changes no result.
    tokens.retain(|token| !token.is_empty());
    tokens
}

fn is_unicode61_token_char(character: char) -> bool {
    if character.is_ascii() {
        return character.is_ascii_alphanumeric();
    }
    let letter_or_number = (character.is_alphabetic() || character.is_numeric()) && !is_combining_mark(character);
    letter_or_number || is_private_use(character)
}

fn is_private_use(character: char) -> bool {
    matches!(character, '\u{E000}'..='\u{F8FF}' | '\u{F0000}'..='\u{FFFFD}' | '\u{100000}'..='\u{10FFFD}')
}

/// The combining marks SQLite's `unicode61` treats as removable diacritics: bit `i` of the first
/// mask is U+0300 + i, bit `i` of the second is U+0320 + i (the masks of `fts5_unicode2.c`).
fn is_sqlite_diacritic(character: char) -> bool {
    const LOW: u32 = 0x0802_9FDF;
    const HIGH: u32 = 0x0003_61F8;
    match u32::from(character) {
        code @ 0x300..=0x31F => LOW & (1 << (code - 0x300)) != 0,
        code @ 0x320..=0x331 => HIGH & (1 << (code - 0x320)) != 0,
        _ => false,
    }
}

fn push_folded(out: &mut String, character: char, mode: RemoveDiacritics) {
    if is_sqlite_diacritic(character) {
        if mode == RemoveDiacritics::None {
            out.push(character);
        }
        return;
    }
    for lower in character.to_lowercase() {
        if mode == RemoveDiacritics::None {
            out.push(lower);
        } else if is_sqlite_diacritic(lower) {
            // `İ` lowercases to `i` + U+0307; SQLite folds it straight to `i`.
        } else {
            out.push(strip_latin_diacritic(lower, mode));
        }
    }
}

/// The base letter of a Latin letter with diacritics, per `mode`; any other character as is.
fn strip_latin_diacritic(character: char, mode: RemoveDiacritics) -> char {
    if !matches!(character, '\u{00C0}'..='\u{024F}' | '\u{1E00}'..='\u{1EFF}') {
        return character;
    }
    let mut base = None;
    let mut marks = 0usize;
    let mut decomposable = true;
    decompose_canonical(character, |part| {
        if base.is_none() {
            base = Some(part);
        } else if is_combining_mark(part) {
            marks += 1;
        } else {
            decomposable = false;
        }
    });
    match base {
        Some(letter) if decomposable && letter.is_ascii_alphabetic() && marks >= 1 => {
            if marks == 1 || mode == RemoveDiacritics::Complex { letter } else { character }
        }
        _ => character,
    }
}

/// Which characters OpenClaw's query builder keeps as token characters (§3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryTokenPattern {
    /// `[\p{L}\p{N}_]+`, from 2026.2.15.
    #[default]
    Unicode,
    /// `[A-Za-z0-9_]+`, before 2026.2.15.
    Ascii,
}

impl QueryTokenPattern {
    fn matches(self, character: char) -> bool {
        match self {
            QueryTokenPattern::Ascii => character.is_ascii_alphanumeric() || character == '_',
            QueryTokenPattern::Unicode => {
                character == '_'
                    || ((character.is_alphabetic() || character.is_numeric()) && !is_combining_mark(character))
            }
        }
    }
}

/// The raw query tokens of §3.2: maximal runs of `pattern`, in order, duplicates kept, case kept.
/// No stop-word removal and no lowercasing happen here.
pub fn fts_query_tokens(raw: &str, pattern: QueryTokenPattern) -> Vec<&str> {
    raw.split(|character: char| !pattern.matches(character)).filter(|token| !token.is_empty()).collect()
}

/// The FTS5 MATCH expression OpenClaw builds (§3.2): every token double-quoted and the tokens
/// joined with ` AND `. `None` when the query has no token, meaning "no keyword leg".
pub fn fts_match_expression(raw: &str, pattern: QueryTokenPattern) -> Option<String> {
    let tokens = fts_query_tokens(raw, pattern);
    if tokens.is_empty() {
        return None;
    }
    // The token pattern never matches `"`, so OpenClaw's removal of quotes is a no-op here.
    let quoted: Vec<String> = tokens.iter().map(|token| format!("\"{token}\"")).collect();
    Some(quoted.join(" AND "))
}

/// An FTS5 query as the engine sees it after parsing: a list of phrases, each the `unicode61`
/// tokens of one quoted string, all of which must match (AND).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FtsQuery {
    pub phrases: Vec<Vec<String>>,
}

/// What FTS5 evaluates for OpenClaw's query: each raw token becomes a phrase of its `unicode61`
/// tokens. A token with an underscore (`memory_search`) becomes the two-term phrase
/// `memory search`, which must match adjacent terms; a token with no `unicode61` token character
/// at all (`_`) becomes an empty phrase, which matches no row.
pub fn fts_query(raw: &str, pattern: QueryTokenPattern, tokenizer: Tokenizer) -> Option<FtsQuery> {
    let tokens = fts_query_tokens(raw, pattern);
    if tokens.is_empty() {
        return None;
    }
    Some(FtsQuery { phrases: tokens.iter().map(|token| tokenizer.tokenize(token)).collect() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmark_tokens_lowercase_split_on_non_alphanumerics_and_drop_single_characters() {
        assert_eq!(
            benchmark_tokens("Use bun + vitest, port 3001; a I x9"),
            ["use", "bun", "vitest", "port", "3001", "x9"]
        );
    }

    #[test]
    fn benchmark_tokens_treat_accented_letters_and_underscore_as_separators() {
        assert_eq!(benchmark_tokens("café memory_search naïve"), ["caf", "memory", "search", "na", "ve"]);
    }

    #[test]
    fn benchmark_tokens_of_only_single_characters_are_empty() {
        assert!(benchmark_tokens("a b c 1 2 3 ! ?").is_empty());
        assert!(benchmark_tokens("").is_empty());
    }

    #[test]
    fn unicode61_folds_case_and_splits_on_punctuation_and_underscore() {
        let tokens = unicode61_tokens("Alice prefers GREEN tea. memory_search x", RemoveDiacritics::Simple);
        assert_eq!(tokens, ["alice", "prefers", "green", "tea", "memory", "search", "x"]);
    }

    #[test]
    fn unicode61_removes_single_diacritics_by_default() {
        assert_eq!(unicode61_tokens("Café NAÏVE Ångström", RemoveDiacritics::Simple), ["cafe", "naive", "angstrom"]);
    }

    #[test]
    fn unicode61_keeps_letters_with_two_diacritics_unless_complex() {
        // U+1EA5 LATIN SMALL LETTER A WITH CIRCUMFLEX AND ACUTE.
        assert_eq!(unicode61_tokens("gấu", RemoveDiacritics::Simple), ["gấu"]);
        assert_eq!(unicode61_tokens("gấu", RemoveDiacritics::Complex), ["gau"]);
    }

    #[test]
    fn unicode61_keeps_diacritics_when_asked() {
        assert_eq!(unicode61_tokens("Café", RemoveDiacritics::None), ["café"]);
    }

    #[test]
    fn unicode61_drops_decomposed_combining_diacritics_inside_a_token() {
        assert_eq!(unicode61_tokens("cafe\u{0301} ok", RemoveDiacritics::Simple), ["cafe", "ok"]);
        // A diacritic cannot start a token: after a space it is a separator.
        assert_eq!(unicode61_tokens("a \u{0301}b", RemoveDiacritics::Simple), ["a", "b"]);
    }

    #[test]
    fn unicode61_leaves_non_latin_scripts_unstripped() {
        // Cyrillic й is outside SQLite's diacritic table, Greek capitals still fold.
        assert_eq!(unicode61_tokens("Йогурт ΑΘΗΝΑ 東京", RemoveDiacritics::Simple), ["йогурт", "αθηνα", "東京"]);
    }

    #[test]
    fn unicode61_counts_private_use_as_token_characters() {
        assert_eq!(unicode61_tokens("a\u{E000}b c", RemoveDiacritics::Simple), ["a\u{E000}b", "c"]);
    }

    #[test]
    fn tokenizer_enum_dispatches_to_each_tokenizer() {
        assert_eq!(Tokenizer::Benchmark.tokenize("Café x"), ["caf"]);
        assert_eq!(Tokenizer::Unicode61.tokenize("Café x"), ["cafe", "x"]);
        assert_eq!(Tokenizer::Unicode61KeepDiacritics.tokenize("Café"), ["café"]);
        assert_eq!(Tokenizer::Unicode61RemoveAllDiacritics.tokenize("Ấ"), ["a"]);
    }

    // openclaw-memory.md §7 TV2: `alice tea` becomes `"alice" AND "tea"`.
    #[test]
    fn tv2_query_alice_tea_becomes_quoted_and_join() {
        assert_eq!(
            fts_match_expression("alice tea", QueryTokenPattern::Unicode).as_deref(),
            Some("\"alice\" AND \"tea\"")
        );
    }

    // openclaw-memory.md §7 TV2: a natural-language question keeps every word, case and stop words.
    #[test]
    fn tv2_question_keeps_all_six_words_with_their_case() {
        let expression = fts_match_expression("What did Alice say about tea?", QueryTokenPattern::Unicode);
        assert_eq!(
            expression.as_deref(),
            Some("\"What\" AND \"did\" AND \"Alice\" AND \"say\" AND \"about\" AND \"tea\"")
        );
    }

    #[test]
    fn query_without_tokens_has_no_keyword_leg() {
        assert_eq!(fts_match_expression("  ?!  ", QueryTokenPattern::Unicode), None);
        assert_eq!(fts_query("", QueryTokenPattern::Unicode, Tokenizer::Unicode61), None);
    }

    #[test]
    fn ascii_pattern_splits_where_the_unicode_pattern_keeps_letters() {
        assert_eq!(fts_query_tokens("café über", QueryTokenPattern::Unicode), ["café", "über"]);
        assert_eq!(fts_query_tokens("café über", QueryTokenPattern::Ascii), ["caf", "ber"]);
    }

    #[test]
    fn query_tokens_keep_duplicates_and_underscores() {
        assert_eq!(
            fts_query_tokens("tea tea memory_search", QueryTokenPattern::Unicode),
            ["tea", "tea", "memory_search"]
        );
    }

    #[test]
    fn fts_query_turns_underscored_tokens_into_phrases_and_bare_underscores_into_empty_phrases() {
        let query = fts_query("memory_search _ Café", QueryTokenPattern::Unicode, Tokenizer::Unicode61).unwrap();
        let expected: Vec<Vec<String>> = vec![vec!["memory".into(), "search".into()], vec![], vec!["cafe".into()]];
        assert_eq!(query.phrases, expected);
    }

    #[test]
    fn tokenizers_survive_a_megabyte_of_mixed_text() {
        let text = "Ünïcödé words, 東京 and ascii_words 123! ".repeat(26_000);
        assert!(text.len() > 1_000_000);
        let unicode = unicode61_tokens(&text, RemoveDiacritics::Simple);
        assert_eq!(unicode.len(), 26_000 * 7);
        assert_eq!(&unicode[..7], ["unicode", "words", "東京", "and", "ascii", "words", "123"]);
        assert_eq!(benchmark_tokens(&text).len(), 26_000 * 5, "ü, ï, ö, é split `unicode` into one-letter pieces");
    }
}
