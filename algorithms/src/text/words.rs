//! Words: the Cortex benchmark's tokenizer, the one stop-word list, the plural-`s` stemmer and
//! small number tests, as the local Cortex memory (`scripts/lib/cortex/local/`) uses them.

use std::collections::HashSet;
use std::sync::LazyLock;

use crate::search::tokenize::benchmark_tokens;

/// Words too common to say what a text is about: the `stopwords` of `lexicon()` in local.rhai,
/// in its order, less `it's`, which no tokenizer here can produce (the benchmark tokenizer cuts
/// at the apostrophe, and `quantities` blanks apostrophes out).
#[rustfmt::skip]
pub const STOP_WORDS: [&str; 136] = [
    "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "to", "in", "on", "at", "by", "for", "with",
    "from", "into", "onto", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did",
    "done", "doing", "have", "has", "had", "having", "it", "its", "this", "that", "these", "those", "there", "here",
    "what", "which", "who", "whom", "whose", "why", "how", "when", "where", "we", "our", "ours", "us", "you", "your",
    "yours", "they", "their", "them", "he", "she", "his", "her", "i", "me", "my", "mine", "not", "no", "nor", "can",
    "could", "would", "should", "will", "shall", "may", "might", "must", "just", "also", "too", "very", "than",
    "about", "over", "under", "up", "down", "out", "off", "all", "any", "each", "every", "some", "such", "only",
    "own", "same", "other", "both", "few", "more", "most", "less", "least", "again", "further", "once", "use", "uses",
    "using", "used", "get", "gets", "got", "make", "makes", "made", "like", "via", "per", "now", "today", "currently",
    "current", "still", "yes", "ok",
];

static STOP_SET: LazyLock<HashSet<&'static str>> = LazyLock::new(|| STOP_WORDS.into_iter().collect());

/// The Cortex benchmark's terms of a text: lowercase, split at anything but ASCII `a-z0-9`,
/// tokens of one char dropped ([`benchmark_tokens`]).
pub fn words(text: &str) -> Vec<String> {
    benchmark_tokens(text)
}

/// A word without a final plural `s`: dropped when the word is longer than 3 chars and ends in
/// `s` but not `ss` ("keys" → "key", "class" stays, "bus" stays).
pub fn stem(word: &str) -> String {
    if word.chars().count() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word[..word.len() - 1].to_owned()
    } else {
        word.to_owned()
    }
}

/// Whether `word` is in [`STOP_WORDS`] (exactly: lowercase, no trimming).
pub fn is_stop_word(word: &str) -> bool {
    STOP_SET.contains(word)
}

/// The [`words`] of a text that are not stop words, in order, repeats kept.
pub fn content_words(text: &str) -> Vec<String> {
    words(text).into_iter().filter(|word| !is_stop_word(word)).collect()
}

/// The [`content_words`] of a text, each stemmed: the BM25 terms of local.rhai's `stemmed`
/// (which joins them with spaces).
pub fn terms(text: &str) -> Vec<String> {
    words(text).into_iter().filter(|word| !is_stop_word(word)).map(|word| stem(&word)).collect()
}

/// The share of `words` that are among the [`words`] of `text`, each of `words` counted (repeats
/// too); 0 when `words` is empty. The built-in answerer's word overlap.
pub fn overlap(words: &[String], text: &str) -> f64 {
    if words.is_empty() {
        return 0.0;
    }
    let present: HashSet<String> = self::words(text).into_iter().collect();
    words.iter().filter(|word| present.contains(*word)).count() as f64 / words.len() as f64
}

/// The value of a token made only of ASCII digits, 1 to 9 of them (`whole_number` of
/// local.rhai), else `None`.
pub fn whole_number(token: &str) -> Option<i64> {
    let digits_only = !token.is_empty() && token.bytes().all(|byte| byte.is_ascii_digit());
    if !digits_only || token.len() > 9 {
        return None;
    }
    token.parse().ok()
}

/// Whether a text holds an ASCII digit (`has_digit` of local.rhai).
pub fn has_digit(text: &str) -> bool {
    text.bytes().any(|byte| byte.is_ascii_digit())
}

#[cfg(test)]
#[path = "words_tests.rs"]
mod tests;
