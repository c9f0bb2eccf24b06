//! The official normalisation of an answer, step by step as `normalize_answer` in LoCoMo's
//! `evaluation.py` takes them, and the stemmed words token F1 compares.

use std::sync::LazyLock;

use regex::Regex;

use crate::text::porter_stem;

/// The four words dropped from answers, as whole words (a run of Unicode word characters:
/// letters, marks, decimal digits, connector punctuation and joiners, as the `regex` module's
/// `\b` draws the line, which the `regex` crate's `\b` draws the same way).
static DROPPED_WORDS: LazyLock<Regex> = LazyLock::new(dropped_words);

#[expect(clippy::expect_used, reason = "the pattern is a constant, and a test compiles it")]
fn dropped_words() -> Regex {
    Regex::new(r"\b(a|an|the|and)\b").expect("a valid pattern")
}

/// An answer as the official evaluation compares it, in its order: commas removed, lowercased,
/// ASCII punctuation removed (Python's `string.punctuation`, 32 characters), the whole words
/// `a`, `an`, `the` and `and` replaced by a space, then runs of whitespace collapsed to one
/// space and the ends trimmed.
///
/// Whitespace is what Python's `str.split()` splits on: Unicode `White_Space` plus the four
/// separators U+001C to U+001F.
pub fn normalize_answer(answer: &str) -> String {
    let lower = answer.replace(',', "").to_lowercase();
    let unpunctuated: String = lower.chars().filter(|letter| !letter.is_ascii_punctuation()).collect();
    let without_articles = DROPPED_WORDS.replace_all(&unpunctuated, " ");
    python_words(&without_articles).collect::<Vec<_>>().join(" ")
}

/// The Porter stems ([`porter_stem`], NLTK's) of the words of [`normalize_answer`]: the bag token
/// F1 compares.
pub fn answer_tokens(answer: &str) -> Vec<String> {
    python_words(&normalize_answer(answer)).map(porter_stem).collect()
}

/// The words of `text` as Python's `str.split()` with no argument cuts them.
pub(super) fn python_words(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_python_whitespace).filter(|word| !word.is_empty())
}

/// `text` without the leading and trailing whitespace Python's `str.strip()` removes.
pub(super) fn python_strip(text: &str) -> &str {
    text.trim_matches(is_python_whitespace)
}

fn is_python_whitespace(letter: char) -> bool {
    letter.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&letter)
}

#[cfg(test)]
#[path = "normalize_tests.rs"]
mod tests;
