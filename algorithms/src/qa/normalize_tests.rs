//! Specification of `normalize.rs`: the official normalisation, step by step and in order.

use super::*;

#[test]
fn commas_case_punctuation_and_the_four_words_go_and_spaces_collapse() {
    // "The cat's toy, and A ball." → no comma → lowercase → no punctuation
    // ("the cats toy and a ball") → the, and, a become spaces → spaces collapse.
    assert_eq!(normalize_answer("The cat's toy, and A ball."), "cats toy ball");
    assert_eq!(normalize_answer("  7 May   2023 \n"), "7 may 2023");
}

#[test]
fn the_four_words_go_only_as_whole_words() {
    assert_eq!(normalize_answer("theatre and anthem bandana, an ant"), "theatre anthem bandana ant");
}

#[test]
fn punctuation_goes_before_the_four_words_so_it_can_glue_them_to_a_neighbour() {
    // The hyphen is dropped first, so "the-end" becomes the single word "theend", which stays.
    assert_eq!(normalize_answer("the-end"), "theend");
    assert_eq!(normalize_answer("(the) end"), "end");
    assert_eq!(normalize_answer("don't at 9 a.m."), "dont at 9 am");
}

#[test]
fn word_boundaries_are_unicode_ones() {
    // A curly apostrophe is not ASCII punctuation and not a word character: "the" stands alone.
    assert_eq!(normalize_answer("the’s"), "’s");
    // Accented letters are word characters: "thé" is not "the".
    assert_eq!(normalize_answer("thé a"), "thé");
    // A superscript digit is a number but not a decimal digit, so not a word character.
    assert_eq!(normalize_answer("a²"), "²");
}

#[test]
fn whitespace_is_what_python_splits_on() {
    // U+001C to U+001F separate words for Python's `str.split()`, though not Unicode
    // `White_Space`; a no-break space is both.
    assert_eq!(normalize_answer("red\u{1c}car\u{a0}now"), "red car now");
}

#[test]
fn nothing_left_is_the_empty_string() {
    assert_eq!(normalize_answer(""), "");
    assert_eq!(normalize_answer("The, a; and!"), "");
}

#[test]
fn answer_tokens_are_the_porter_stems_of_the_normalised_words() {
    assert_eq!(answer_tokens("Running the marathons, happily!"), ["run", "marathon", "happili"]);
    assert!(answer_tokens("a an the and").is_empty());
}

#[test]
fn the_dropped_word_pattern_compiles() {
    assert!(dropped_words().is_match("and"));
}
