//! Fact matching: whether a text states a key fact, as the judge and the retrieval hit rate
//! decide it (`contains_fact`, `is_word_char` and `count_facts` of
//! `scripts/lib/cortex/text.rhai`).

/// Whether `text` contains `fact`, case-insensitively (both lowercased by Rust's
/// `to_lowercase`) and at token boundaries: an occurrence counts when the char before it and the
/// char after it are not ASCII `a-z`, `0-9` or `_` (the start and end of the text count as
/// boundaries). Every occurrence is tried, overlapping ones included, so `300` is not found in
/// `3000` but is in `3000 or 300`. An empty fact is never contained.
pub fn contains_fact(text: &str, fact: &str) -> bool {
    occurs(&text.to_lowercase(), &fact.to_lowercase())
}

/// How many of `facts` [`contains_fact`] finds in `text`, the text lowercased once.
pub fn count_facts<S: AsRef<str>>(text: &str, facts: &[S]) -> usize {
    let haystack = text.to_lowercase();
    facts.iter().filter(|fact| occurs(&haystack, &fact.as_ref().to_lowercase())).count()
}

/// The `facts` that [`contains_fact`] finds in `text`, in their order, the text lowercased once.
pub fn facts_in<S: AsRef<str>>(text: &str, facts: &[S]) -> Vec<String> {
    let haystack = text.to_lowercase();
    facts
        .iter()
        .filter(|fact| occurs(&haystack, &fact.as_ref().to_lowercase()))
        .map(|fact| fact.as_ref().to_owned())
        .collect()
}

/// Whether the lowercased `needle` occurs in the lowercased `haystack` between boundaries.
fn occurs(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(found) = haystack.get(from..).and_then(|rest| rest.find(needle)) {
        let at = from + found;
        let before = haystack[..at].chars().next_back();
        let after = haystack[at + needle.len()..].chars().next();
        if !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char) {
            return true;
        }
        // The next try starts one char further on, so overlapping occurrences are tried too.
        from = at + haystack[at..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'
}

#[cfg(test)]
#[path = "facts_tests.rs"]
mod tests;
