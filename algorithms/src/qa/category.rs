//! LoCoMo's five question categories and the official rule that scores each.

use serde_json::Value;

use super::QaError;
use super::normalize::python_strip;
use super::overlap::token_f1;

/// A LoCoMo question category, by the code in the data's `category` field. The order is the
/// data's, not the paper's: several public harnesses map the codes wrongly (checked by reading
/// the questions; `CATEGORY_MAPPING` of the official `evaluation.py` agrees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Category {
    /// 1: answers that join facts from several turns, often a list.
    MultiHop,
    /// 2: when something happened.
    Temporal,
    /// 3: open-domain and commonsense questions.
    OpenDomain,
    /// 4: one supporting turn.
    SingleHop,
    /// 5: questions about things the conversation never says.
    Adversarial,
}

impl Category {
    /// All five, in code order.
    pub const ALL: [Category; 5] =
        [Category::MultiHop, Category::Temporal, Category::OpenDomain, Category::SingleHop, Category::Adversarial];

    pub fn from_code(code: i64) -> Result<Category, QaError> {
        match code {
            1 => Ok(Category::MultiHop),
            2 => Ok(Category::Temporal),
            3 => Ok(Category::OpenDomain),
            4 => Ok(Category::SingleHop),
            5 => Ok(Category::Adversarial),
            _ => Err(QaError::UnknownCategory { code }),
        }
    }

    pub fn code(self) -> i64 {
        self as i64 + 1
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Category::MultiHop => "multi-hop",
            Category::Temporal => "temporal",
            Category::OpenDomain => "open-domain",
            Category::SingleHop => "single-hop",
            Category::Adversarial => "adversarial",
        }
    }

    /// How many questions of this category the official `locomo10.json` holds (1,986 in all,
    /// 1,540 in categories 1 to 4, which most published results use): a reader of the file
    /// can check it read every question.
    pub fn official_count(self) -> usize {
        match self {
            Category::MultiHop => 282,
            Category::Temporal => 321,
            Category::OpenDomain => 96,
            Category::SingleHop => 841,
            Category::Adversarial => 446,
        }
    }
}

/// A gold `answer` field as the text the official evaluation scores: a string as it is, a
/// number as Python's `str()` writes it (`2022`, `3.5`, `1e+16`), since some gold answers in
/// the data are bare numbers.
pub fn gold_text(answer: &Value) -> Result<String, QaError> {
    match answer {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(match (number.as_i64(), number.as_u64(), number.as_f64()) {
            (Some(integer), ..) => integer.to_string(),
            (None, Some(integer), _) => integer.to_string(),
            (None, None, Some(float)) => python_float(float),
            (None, None, None) => number.to_string(),
        }),
        Value::Null => Err(QaError::GoldAnswer { kind: "null" }),
        Value::Bool(_) => Err(QaError::GoldAnswer { kind: "a boolean" }),
        Value::Array(_) => Err(QaError::GoldAnswer { kind: "a list" }),
        Value::Object(_) => Err(QaError::GoldAnswer { kind: "an object" }),
    }
}

/// Python's `repr` of a float: the shortest digits that read back, with `.0` on whole numbers,
/// and an exponent of at least two digits and a sign below 1e-4 or from 1e16. Rust's `{:?}`
/// makes the same choices but writes the exponent bare (`1e16`, `1e-7`).
fn python_float(value: f64) -> String {
    let written = format!("{value:?}");
    let Some((mantissa, exponent)) = written.split_once('e') else {
        return written;
    };
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(digits) => ('-', digits),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// The official score of one prediction, by the rule of its category:
///
/// - Temporal, open-domain, single-hop: [`token_f1`] against the whole gold answer, except that
///   for open-domain the gold is first cut at its first `;` (and trimmed).
/// - Multi-hop: prediction and gold are each split at `,` (before normalising) and the parts
///   trimmed; the score is the mean, over the gold's parts, of the best [`token_f1`] of any
///   prediction part.
/// - Adversarial: 1 when the lowercased prediction contains "no information available" or
///   "not mentioned", else 0; the gold is not read.
pub fn score(category: Category, prediction: &str, gold: &str) -> f64 {
    match category {
        Category::Temporal | Category::SingleHop => token_f1(prediction, gold),
        Category::OpenDomain => token_f1(prediction, python_strip(gold.split(';').next().unwrap_or(gold))),
        Category::MultiHop => {
            let predictions: Vec<&str> = prediction.split(',').map(python_strip).collect();
            let golds: Vec<&str> = gold.split(',').map(python_strip).collect();
            let best = |part: &str| predictions.iter().map(|predicted| token_f1(predicted, part)).fold(0.0, f64::max);
            golds.iter().map(|part| best(part)).sum::<f64>() / golds.len() as f64
        }
        Category::Adversarial => {
            let lower = prediction.to_lowercase();
            let abstains = lower.contains("no information available") || lower.contains("not mentioned");
            if abstains { 1.0 } else { 0.0 }
        }
    }
}

#[cfg(test)]
#[path = "category_tests.rs"]
mod tests;
