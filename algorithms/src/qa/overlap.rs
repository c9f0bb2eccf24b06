//! How much of a gold answer a prediction says: token F1 (the official LoCoMo score) and BLEU-1.

use std::collections::HashMap;

use super::normalize::{answer_tokens, normalize_answer, python_words};

/// Token F1, as the official `f1_score`: the bags (multisets) of [`answer_tokens`] of prediction
/// and gold, `shared` the size of their intersection, precision = shared / |prediction|,
/// recall = shared / |gold|, F1 = 2·P·R / (P + R). 0 when they share no token, so also when
/// either normalises to nothing (even both: "the" against "a" scores 0, not 1).
pub fn token_f1(prediction: &str, gold: &str) -> f64 {
    let predicted = answer_tokens(prediction);
    let expected = answer_tokens(gold);
    let shared = shared_count(&predicted, &expected);
    if shared == 0 {
        return 0.0;
    }
    let precision = shared as f64 / predicted.len() as f64;
    let recall = shared as f64 / expected.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// BLEU-1 of a prediction against one gold answer. LoCoMo's `evaluation.py` computes no BLEU
/// (its other scores are ROUGE-1 and BERTScore), so this is the standard sentence BLEU of
/// Papineni et al. (2002) with unigrams only, over the words of [`normalize_answer`] (not
/// stemmed): clipped unigram precision p₁ = Σ_w min(count_prediction(w), count_gold(w)) /
/// |prediction|, brevity penalty BP = 1 when |prediction| > |gold|, else exp(1 − |gold| /
/// |prediction|), BLEU-1 = BP · p₁. No smoothing; 0 when the prediction normalises to nothing.
pub fn bleu1(prediction: &str, gold: &str) -> f64 {
    let predicted = words(prediction);
    let expected = words(gold);
    if predicted.is_empty() {
        return 0.0;
    }
    let precision = shared_count(&predicted, &expected) as f64 / predicted.len() as f64;
    let (candidate, reference) = (predicted.len() as f64, expected.len() as f64);
    let brevity = if candidate > reference { 1.0 } else { (1.0 - reference / candidate).exp() };
    brevity * precision
}

fn words(answer: &str) -> Vec<String> {
    python_words(&normalize_answer(answer)).map(str::to_owned).collect()
}

/// The size of the multiset intersection of two bags of tokens.
fn shared_count(first: &[String], second: &[String]) -> usize {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for token in second {
        *counts.entry(token).or_default() += 1;
    }
    first
        .iter()
        .filter(|token| match counts.get_mut(token.as_str()) {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            _ => false,
        })
        .count()
}

#[cfg(test)]
#[path = "overlap_tests.rs"]
mod tests;
