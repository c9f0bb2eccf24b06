//! Numbers with what they measure, as the local Cortex memory reads them to find a changed
//! value (`unit_of`, `parse_quantity` and `extract_values` of `scripts/lib/cortex/local.rhai`).

use super::words::{is_stop_word, words};

/// The unit a word names, normalised ("seconds" → "s", "days" → "day", "percent" → "%"), or ""
/// when it names none.
pub fn unit(word: &str) -> &'static str {
    match word {
        "s" | "sec" | "secs" | "second" | "seconds" => "s",
        "ms" | "millisecond" | "milliseconds" => "ms",
        "min" | "mins" | "minute" | "minutes" => "min",
        "h" | "hour" | "hours" => "h",
        "d" | "day" | "days" => "day",
        "week" | "weeks" => "week",
        "month" | "months" => "month",
        "%" | "percent" => "%",
        "request" | "requests" => "requests",
        "connection" | "connections" => "connections",
        "character" | "characters" => "characters",
        _ => "",
    }
}

/// A number as written, with the unit glued to it ("" when none).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Quantity {
    pub number: String,
    pub unit: String,
}

/// A token read as a quantity: it starts with an ASCII digit; the number is the leading run of
/// digits and dots (a dot only after a digit), with at most one dot and not ending in one; what
/// follows is nothing, `%`, or a [`unit`] word, after an optional `-`. "600" → ("600", ""),
/// "80%" → ("80", "%"), "30-day" → ("30", "day"), "2.5h" → ("2.5", "h"); "20.11.1", "3.",
/// "k6" and "4x" are no quantity.
pub fn quantity(token: &str) -> Option<Quantity> {
    if !token.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut digits = String::new();
    let mut rest = String::new();
    let mut dots = 0;
    let mut in_number = true;
    for c in token.chars() {
        if in_number && c.is_ascii_digit() {
            digits.push(c);
        } else if in_number && c == '.' && !digits.is_empty() {
            digits.push(c);
            dots += 1;
        } else {
            in_number = false;
            rest.push(c);
        }
    }
    if digits.is_empty() || dots > 1 || digits.ends_with('.') {
        return None;
    }
    let unit = match rest.as_str() {
        "" | "%" => rest.as_str(),
        _ => unit(rest.strip_prefix('-').unwrap_or(&rest)),
    };
    if unit.is_empty() && !rest.is_empty() {
        return None;
    }
    Some(Quantity { number: digits, unit: unit.to_owned() })
}

/// A number found in a text and the key it is measured by.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Value {
    pub number: String,
    /// The unit ("s", "%", "day", ...) or, when `unit` is false, the word that names what the
    /// number measures ("max", "concurrency", "port").
    pub key: String,
    pub unit: bool,
}

/// The numbers of a text with what they measure (`extract_values` of local.rhai).
///
/// The text is lowercased; `` ` ( ) { } [ ] ' " ; : = * `` become spaces, ", " a space and any
/// other comma nothing ("10,000" → "10000"); it is split at single spaces (only), and each token
/// loses its trailing `.`, `?` and `!`. A token that is a [`quantity`] gives a value: its key is
/// the glued unit, else the [`unit`] the next token names, else (with `unit` false) the nearest
/// earlier token that is not a stop word, when that is a plain word (its [`words`] are itself),
/// not "week" or "day" (a time reference such as "week 2" is no value) and no quantity.
/// Quantities without a key are dropped.
pub fn quantities(content: &str) -> Vec<Value> {
    let mut text = content.to_lowercase();
    for mark in ['`', '(', ')', '{', '}', '[', ']', '\'', '"', ';', ':', '=', '*'] {
        text = text.replace(mark, " ");
    }
    let text = text.replace(", ", " ").replace(',', "");
    let tokens: Vec<&str> =
        text.split(' ').map(|raw| raw.trim_end_matches(['.', '?', '!'])).filter(|token| !token.is_empty()).collect();
    let mut values = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let Some(parsed) = quantity(token) else { continue };
        let mut key = parsed.unit;
        if key.is_empty()
            && let Some(next) = tokens.get(i + 1)
        {
            key = unit(next).to_owned();
        }
        let is_unit = !key.is_empty();
        if !is_unit && let Some(candidate) = tokens[..i].iter().rev().find(|token| !is_stop_word(token)) {
            let plain = matches!(words(candidate).as_slice(), [only] if only == candidate);
            if plain && *candidate != "week" && *candidate != "day" && quantity(candidate).is_none() {
                key = (*candidate).to_owned();
            }
        }
        if !key.is_empty() {
            values.push(Value { number: parsed.number, key, unit: is_unit });
        }
    }
    values
}

#[cfg(test)]
#[path = "quantities_tests.rs"]
mod tests;
