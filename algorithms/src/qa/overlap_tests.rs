//! Specification of `overlap.rs`: token F1 and BLEU-1, each case worked by hand.

use super::*;

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-12
}

#[test]
fn token_f1_compares_bags_of_stems() {
    // "she went to louvre in paris" (6 words) against "louvre in paris" (3): 3 shared,
    // P = 3/6, R = 3/3, F1 = 2 · ½ · 1 / (½ + 1) = 2/3.
    assert!(close(token_f1("She went to the Louvre, in Paris!", "the Louvre in Paris"), 2.0 / 3.0));
    // Stems: running → run, marathons → marathon, but ran stays ran: 1 shared of 2 and 2, F1 ½.
    assert!(close(token_f1("running marathons", "ran a marathon"), 0.5));
    assert!(close(token_f1("The Marathons.", "marathon"), 1.0));
}

#[test]
fn token_f1_counts_repeated_tokens_as_a_multiset() {
    // {dog, dog, cat} ∩ {dog, cat, cat} = {dog, cat}: P = R = 2/3, F1 = 2/3.
    assert!(close(token_f1("dog dog cat", "dog cat cat"), 2.0 / 3.0));
}

#[test]
fn token_f1_is_zero_when_nothing_is_shared_even_two_empty_answers() {
    assert_eq!(token_f1("blue", "red"), 0.0);
    assert_eq!(token_f1("", "red"), 0.0);
    assert_eq!(token_f1("red", ""), 0.0);
    // Both normalise to nothing; the official code still says 0.
    assert_eq!(token_f1("the", "a"), 0.0);
}

#[test]
fn bleu1_is_clipped_unigram_precision_times_the_brevity_penalty() {
    // [red, car] against [red, car]: p₁ = 1, BP = exp(1 − 2/2) = 1.
    assert!(close(bleu1("red car", "the red car"), 1.0));
    // [red] against [red, car]: p₁ = 1, BP = exp(1 − 2/1) = e⁻¹.
    assert!(close(bleu1("red", "red car"), (-1.0f64).exp()));
    // [red, red, red, car] against [red, car]: clipped matches 1 + 1 = 2, p₁ = 2/4, BP = 1
    // (longer than the gold).
    assert!(close(bleu1("red red red car", "red car"), 0.5));
}

#[test]
fn bleu1_does_not_stem_and_is_zero_for_an_empty_prediction() {
    assert_eq!(bleu1("cars", "car"), 0.0);
    assert_eq!(bleu1("the", "car"), 0.0);
    assert_eq!(bleu1("car", ""), 0.0);
}
