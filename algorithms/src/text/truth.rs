//! What a ground truth asks an answer to state, read without understanding it: its sentences,
//! each as the facts an answer would name, and which of those facts an answer states. The
//! built-in judge (`scripts/lib/cortex/judge.rhai`) derives its key facts from these when a
//! dataset gives none; it must not decide a score here.

use super::claims::{looks_specific, numerals, split_code, tokens};
use super::facts::contains_fact;
use super::words::{is_stop_word, stem, terms, words};

/// The sentences of a ground truth, each as the facts an answer would have to name to state it,
/// in order; a sentence left with no fact is dropped.
///
/// A sentence ends after `.`, `!`, `?` or `;` followed by white space, outside code spans, and
/// not after `e.g.`, `i.e.`, `etc.` or `vs.`. What parentheses enclose is supporting detail
/// ("600 seconds (10 minutes)", "lodash (replaced with native JS)"), so a sentence's facts come
/// from the rest of it, or from all of it when the rest has none. Its facts are its *names*: every code span, and
/// every token (as [`super::specifics`] cuts them) that is a specific, has a capital after a
/// small letter (`SendGrid`), is all capitals (`ESM`, two letters or more), is hyphenated
/// (`iron-session`, `date-fns`: package names are), or is capitalised and not the sentence's
/// first word nor a stop word (`Redis`, `Vite-compatible`). A sentence
/// without names is stated in plain words, so its facts are its content words instead
/// (`words::content_words`, once each). A fact the question already states proves nothing and
/// is left out: a name the question contains, a word whose stem is among the question's terms.
pub fn truth_facts(truth: &str, question: &str) -> Vec<Vec<String>> {
    let asked: Vec<String> = terms(question);
    let mut out = Vec::new();
    for sentence in truth_sentences(truth) {
        let mut facts = sentence_facts(&without_parentheses(&sentence), question, &asked);
        if facts.is_empty() {
            facts = sentence_facts(&sentence, question, &asked);
        }
        if !facts.is_empty() {
            out.push(facts);
        }
    }
    out
}

/// The facts of one sentence (see [`truth_facts`]).
fn sentence_facts(sentence: &str, question: &str, asked: &[String]) -> Vec<String> {
    let (code, prose) = split_code(sentence);
    let mut names: Vec<String> = code.into_iter().filter(|span| !span.is_empty()).collect();
    for (index, token) in tokens(&prose).enumerate() {
        if is_name(token, index == 0) {
            names.push(token.to_owned());
        }
    }
    let names = distinct(names.into_iter().filter(|name| !contains_fact(question, name)));
    if names.is_empty() {
        distinct(words(&prose).into_iter().filter(|word| !is_stop_word(word) && !asked.contains(&stem(word))))
    } else {
        names
    }
}

/// The text without its parentheticals: what a `(` after white space (or at the start) and its
/// `)` enclose, nested parentheses too, is dropped with them; a `(` right after a word is code
/// (`Error(...)`) and stays; an unclosed parenthetical keeps the rest.
fn without_parentheses(text: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    let mut pending = String::new();
    let mut previous = ' ';
    for c in text.chars() {
        let opens = c == '(' && (depth > 0 || previous.is_whitespace());
        previous = c;
        match c {
            '(' if opens => {
                depth += 1;
                pending.push(c);
            }
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    pending.clear();
                } else {
                    pending.push(c);
                }
            }
            _ if depth > 0 => pending.push(c),
            _ => out.push(c),
        }
    }
    out.push_str(&pending);
    out
}

/// The `facts` an answer states, in their order. A fact is stated when [`contains_fact`] finds
/// it in the answer with its numbers as digits ([`numerals`]), or when its words, each stemmed,
/// follow one another among the answer's: "400-line" is stated by "400 lines", "WebSockets" by
/// "a WebSocket", "Vite-compatible" by "Vite compatible"; "fastify-raw-body" is not stated by
/// "`@fastify/formbody` keeps the raw body".
pub fn stated<S: AsRef<str>>(answer: &str, facts: &[S]) -> Vec<String> {
    let digits = numerals(answer);
    let said: Vec<String> = words(&digits).iter().map(|word| stem(word)).collect();
    facts
        .iter()
        .map(AsRef::as_ref)
        .filter(|fact| {
            let run: Vec<String> = words(fact).iter().map(|word| stem(word)).collect();
            contains_fact(&digits, fact) || (!run.is_empty() && said.windows(run.len()).any(|window| window == run))
        })
        .map(str::to_owned)
        .collect()
}

fn is_name(token: &str, first: bool) -> bool {
    let chars: Vec<char> = token.chars().collect();
    let camel = chars.windows(2).any(|pair| pair[0].is_ascii_lowercase() && pair[1].is_ascii_uppercase());
    let letters = chars.iter().filter(|c| c.is_ascii_alphabetic()).count();
    let capitals = letters >= 2 && chars.iter().all(|c| !c.is_ascii_lowercase());
    let capitalised = chars.first().is_some_and(char::is_ascii_uppercase) && !is_stop_word(&token.to_lowercase());
    let hyphenated =
        chars.windows(3).any(|w| w[1] == '-' && w[0].is_ascii_alphanumeric() && w[2].is_ascii_alphanumeric());
    looks_specific(token) || camel || capitals || hyphenated || (capitalised && !first)
}

/// The ground truth cut into sentences (see [`truth_facts`]), trimmed, empty ones dropped.
fn truth_sentences(truth: &str) -> Vec<String> {
    let chars: Vec<char> = truth.chars().collect();
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_code = false;
    for (i, &c) in chars.iter().enumerate() {
        current.push(c);
        if c == '`' {
            in_code = !in_code;
        }
        let ends = !in_code
            && matches!(c, '.' | '!' | '?' | ';')
            && chars.get(i + 1).is_some_and(|next| next.is_whitespace())
            && !ends_in_abbreviation(&current);
        if ends {
            push_sentence(&mut out, &current);
            current.clear();
        }
    }
    push_sentence(&mut out, &current);
    out
}

fn ends_in_abbreviation(text: &str) -> bool {
    let last = text.rsplit(char::is_whitespace).next().unwrap_or_default().to_lowercase();
    matches!(last.trim_start_matches('('), "e.g." | "i.e." | "etc." | "vs.")
}

fn push_sentence(out: &mut Vec<String>, text: &str) {
    let text = text.trim();
    if !text.is_empty() {
        out.push(text.to_owned());
    }
}

/// The values once each, compared without case, first spelling kept.
fn distinct(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for value in values {
        if !out.iter().any(|seen| seen.eq_ignore_ascii_case(&value)) {
            out.push(value);
        }
    }
    out
}

#[cfg(test)]
#[path = "truth_tests.rs"]
mod tests;
