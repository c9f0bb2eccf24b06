//! Specification of `claims.rs`: the specifics an answer names, its numbers as digits, and its
//! clauses.

use super::*;

#[test]
fn specifics_are_code_spans_then_value_like_tokens() {
    assert_eq!(
        specifics("Set `maxRetriesPerRequest` to 0 on redis:7, see apps/api/src and jwt.verify."),
        ["maxRetriesPerRequest", "0", "redis:7", "apps/api/src", "jwt.verify"]
    );
    assert_eq!(specifics("We call setInterval every 25_000 ms"), ["setInterval", "25_000"]);
    assert_eq!(specifics("Keys look like arclight:{entity}:{id}."), ["arclight:{entity}:{id}"]);
}

#[test]
fn plain_names_and_hyphenated_words_are_not_specifics() {
    assert!(specifics("TypeScript and GitHub Actions with a short-lived, cache-aside JWT store.").is_empty());
    assert!(specifics("Keys are namespaced, e.g. by entity, i.e. per kind, etc.").is_empty());
}

#[test]
fn list_markers_are_not_specifics_but_numbers_in_lists_are() {
    assert_eq!(specifics("1. the cache\n2) the queue at 600 s\n- week 3"), ["600", "3"]);
}

#[test]
fn a_fenced_block_is_one_specific_and_hides_its_tokens() {
    let answer = "Like this:\n```ts\nexport const c = new Redis(url, { maxRetriesPerRequest: null });\n```\nThe API keeps the default.";
    assert_eq!(specifics(answer), ["ts\nexport const c = new Redis(url, { maxRetriesPerRequest: null });"]);
}

#[test]
fn an_unclosed_backtick_is_read_as_prose() {
    assert_eq!(specifics("the `v2 path is /api/v2"), ["v2", "api/v2"]);
}

#[test]
fn numerals_turns_number_words_into_digits() {
    assert_eq!(numerals("Fifty per page, up to two hundred"), "50 per page, up to 200");
    assert_eq!(numerals("in the fifth week"), "in week 5");
    assert_eq!(numerals("Someone said none"), "Someone said none", "whole words only");
}

#[test]
fn numerals_gives_durations_in_seconds_and_percentages_with_a_sign() {
    assert_eq!(numerals("Five minutes, or 2 hours"), "5 minutes, or 2 hours\n300 7200");
    assert_eq!(numerals("eighty percent? 80 percent"), "eighty percent? 80 percent\n80%");
}

#[test]
fn numerals_leaves_text_without_numbers_alone() {
    assert_eq!(numerals("no numbers here"), "no numbers here");
    assert_eq!(numerals(""), "");
}

#[test]
fn clauses_cut_at_sentence_ends_line_breaks_and_but() {
    assert_eq!(
        clauses("I don't have the config, but it's usually 100. Check it: the file.\nMaybe `X`?"),
        ["I don't have the config", "it's usually 100.", "Check it:", "the file.", "Maybe `X`?"]
    );
    assert_eq!(clauses("v1.2 stays whole"), ["v1.2 stays whole"]);
    assert!(clauses("  \n ").is_empty());
}

#[test]
fn tokens_keep_their_brackets_when_both_halves_are_there() {
    assert_eq!(specifics("use arclight:org:<uuid>. or {id}: and (x_y)"), ["arclight:org:<uuid>", "{id}", "x_y"]);
}
