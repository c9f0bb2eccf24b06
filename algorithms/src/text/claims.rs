//! What an answer claims, read without understanding it: the specific values it names, its
//! numbers written as digits, and its clauses. The built-in judge of
//! `scripts/lib/cortex/judge.rhai` decides a score from these; see that module for how.

use std::sync::LazyLock;

use regex_lite::{Captures, Regex};

/// The specific things a text names, in order: the content of every code span (inline
/// backticks, or a fenced block as one item), then every token outside code that looks like a
/// value or an identifier: it has a digit, one of `_ / @ { }`, a `.` or `:` between two
/// letters or digits (`jwt.verify`, `redis:7`), or it is lowerCamelCase (`setInterval`).
/// Tokens are runs of ASCII letters, digits and `_@./:{}<>$%+-`, trimmed of `.:/-+` at both
/// ends and of a bracket whose partner is missing. Numbered-list markers (`1.` at the start of a line) and `e.g`, `i.e`, `etc` are not
/// specifics. Plain words, capitalised names and hyphenated words are not either: they say too
/// little to tell a wrong answer from a vague one.
pub fn specifics(text: &str) -> Vec<String> {
    let (code, prose) = split_code(text);
    let mut out: Vec<String> = code.into_iter().filter(|span| !span.is_empty()).collect();
    for line in prose.lines() {
        for token in tokens(without_list_marker(line)) {
            if looks_specific(token) {
                out.push(token.to_owned());
            }
        }
    }
    out
}

/// The text with numbers written in words turned into digits, so that key facts written as
/// digits are found in it: "two hundred" → "200", "fifty" → "50", "the fourth week" →
/// "week 4". Durations and percentages are also given in the units key facts use: for every
/// "N minutes" or "N hours" the number of seconds, and for every "N percent" "N%", appended on
/// a last line. Words are matched case-insensitively at word boundaries.
#[allow(clippy::expect_used, reason = "the patterns are constants, each compiled by the `numerals_*` tests")]
pub fn numerals(text: &str) -> String {
    static HUNDREDS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)\b(one|two|three|four|five|six|seven|eight|nine|ten)\s+hundred\b").expect("a valid pattern")
    });
    static WORDS: LazyLock<Regex> = LazyLock::new(|| {
        let words: Vec<&str> = NUMBER_WORDS.iter().map(|(word, _)| *word).collect();
        Regex::new(&format!(r"(?i)\b({})\b", words.join("|"))).expect("a valid pattern")
    });
    static WEEKS: LazyLock<Regex> = LazyLock::new(|| {
        let words: Vec<&str> = ORDINALS.iter().map(|(word, _)| *word).collect();
        Regex::new(&format!(r"(?i)\bthe\s+({})\s+week\b", words.join("|"))).expect("a valid pattern")
    });
    static DURATIONS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\b(\d+)\s*(minutes?|mins?|hours?)\b").expect("a valid pattern"));
    static PERCENTS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?i)\b(\d+)\s*percent\b").expect("a valid pattern"));

    let text = HUNDREDS.replace_all(text, |c: &Captures| (value_of(&c[1], &NUMBER_WORDS) * 100).to_string());
    let text = WORDS.replace_all(&text, |c: &Captures| value_of(&c[1], &NUMBER_WORDS).to_string());
    let text = WEEKS.replace_all(&text, |c: &Captures| format!("week {}", value_of(&c[1], &ORDINALS)));
    let mut extra = Vec::new();
    for c in DURATIONS.captures_iter(&text) {
        let Ok(n) = c[1].parse::<u64>() else { continue };
        let per = if c[2].to_ascii_lowercase().starts_with('m') { 60 } else { 3600 };
        extra.push(n.saturating_mul(per).to_string());
    }
    for c in PERCENTS.captures_iter(&text) {
        extra.push(format!("{}%", &c[1]));
    }
    if extra.is_empty() { text.into_owned() } else { format!("{text}\n{}", extra.join(" ")) }
}

/// The clauses of a text: cut after `.`, `?`, `!`, `;` or `:` followed by white space, at every
/// line break, and before ", but"; trimmed, empty ones dropped. "I don't know the exact value,
/// but it is usually 100" gives two clauses, so the guess after an admission stands alone.
pub fn clauses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        for part in line.split(", but ") {
            let chars: Vec<char> = part.chars().collect();
            let mut current = String::new();
            for (i, &c) in chars.iter().enumerate() {
                current.push(c);
                if matches!(c, '.' | '?' | '!' | ';' | ':') && chars.get(i + 1).is_some_and(|n| n.is_whitespace()) {
                    push_trimmed(&mut out, &current);
                    current.clear();
                }
            }
            push_trimmed(&mut out, &current);
        }
    }
    out
}

const NUMBER_WORDS: [(&str, u64); 20] = [
    ("zero", 0),
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("fifteen", 15),
    ("twenty", 20),
    ("thirty", 30),
    ("forty", 40),
    ("fifty", 50),
    ("sixty", 60),
    ("hundred", 100),
];

const ORDINALS: [(&str, u64); 8] = [
    ("first", 1),
    ("second", 2),
    ("third", 3),
    ("fourth", 4),
    ("fifth", 5),
    ("sixth", 6),
    ("seventh", 7),
    ("eighth", 8),
];

fn value_of(word: &str, table: &[(&str, u64)]) -> u64 {
    let word = word.to_ascii_lowercase();
    table.iter().find(|(name, _)| *name == word).map_or(0, |(_, value)| *value)
}

/// The code spans of a text (fenced blocks whole, then inline spans, trimmed) and the prose
/// with every span replaced by a space. An unclosed backtick is prose.
pub(super) fn split_code(text: &str) -> (Vec<String>, String) {
    let mut code = Vec::new();
    let mut prose = String::new();
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        prose.push_str(&rest[..start]);
        let fence = if rest[start..].starts_with("```") { "```" } else { "`" };
        let body = &rest[start + fence.len()..];
        let Some(end) = body.find(fence) else {
            prose.push_str(&rest[start..]);
            rest = "";
            break;
        };
        code.push(body[..end].trim().to_owned());
        prose.push(' ');
        rest = &body[end + fence.len()..];
    }
    prose.push_str(rest);
    (code, prose)
}

fn without_list_marker(line: &str) -> &str {
    let trimmed = line.trim_start();
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    let rest = &trimmed[digits..];
    if digits > 0 && (rest.starts_with(". ") || rest.starts_with(") ")) { &rest[2..] } else { line }
}

pub(super) fn tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || "_@./:{}<>$%+-".contains(c)))
        .map(trim_token)
        .filter(|token| !token.is_empty() && !matches!(token.to_ascii_lowercase().as_str(), "e.g" | "i.e" | "etc"))
}

/// A token without the punctuation around it: `.:/-+` at either end, and a bracket (`<>{}`)
/// at an end when its partner is not in the token.
fn trim_token(token: &str) -> &str {
    let mut token = token;
    loop {
        let before = token;
        token = token.trim_matches(|c: char| ".:/-+".contains(c));
        for (open, close) in [('<', '>'), ('{', '}')] {
            if token.ends_with(close) && !token.contains(open) {
                token = &token[..token.len() - 1];
            }
            if token.starts_with(open) && !token.contains(close) {
                token = &token[1..];
            }
        }
        if token == before {
            return token;
        }
    }
}

pub(super) fn looks_specific(token: &str) -> bool {
    let chars: Vec<char> = token.chars().collect();
    let inner_dot_or_colon = chars
        .windows(3)
        .any(|w| matches!(w[1], '.' | ':') && w[0].is_ascii_alphanumeric() && w[2].is_ascii_alphanumeric());
    let lower_camel = {
        let lower = chars.iter().take_while(|c| c.is_ascii_lowercase()).count();
        lower > 0 && chars.get(lower).is_some_and(char::is_ascii_uppercase)
    };
    chars.iter().any(|c| c.is_ascii_digit() || "_/@{}".contains(*c)) || inner_dot_or_colon || lower_camel
}

fn push_trimmed(out: &mut Vec<String>, text: &str) {
    let text = text.trim();
    if !text.is_empty() {
        out.push(text.to_owned());
    }
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
