//! Specification of `facts.rs`: text.rhai's `contains_fact` and `count_facts`.

use super::*;

#[test]
fn a_fact_matches_case_insensitively() {
    assert!(contains_fact("We use SendGrid for mail", "sendgrid"));
    assert!(contains_fact("we use sendgrid", "SENDGRID"));
}

#[test]
fn a_number_is_not_found_inside_a_longer_number() {
    assert!(!contains_fact("Grafana keeps 3000", "300"));
    assert!(!contains_fact("port 4000", "400"));
    assert!(!contains_fact("ttl_300", "300"), "`_` is a word char");
}

#[test]
fn every_occurrence_is_tried_until_one_stands_alone() {
    assert!(contains_fact("3000 or 300", "300"));
    assert!(contains_fact("x300, then 300.", "300"));
}

#[test]
fn overlapping_occurrences_are_tried_too() {
    // The first `a-a` follows `x`; the one that overlaps it stands alone.
    assert!(contains_fact("xa-a-a", "a-a"));
}

#[test]
fn punctuation_and_non_ascii_letters_are_boundaries() {
    assert!(contains_fact("(600 s)", "600 s"));
    assert!(contains_fact("ttl=300.", "300"));
    assert!(contains_fact("caféine", "caf"), "é is not an ASCII word char");
    assert!(contains_fact("`iron-session`", "iron-session"));
}

#[test]
fn a_fact_may_begin_or_end_with_a_boundary_char() {
    assert!(contains_fact("the key is arclight:{entity}:{id} here", "arclight:{entity}:{id}"));
    assert!(contains_fact("see .nvmrc", ".nvmrc"));
}

#[test]
fn an_empty_fact_or_text_matches_nothing() {
    assert!(!contains_fact("some text", ""));
    assert!(!contains_fact("", "x"));
    assert!(!contains_fact("", ""));
}

#[test]
fn lowercasing_that_changes_length_still_finds_the_fact() {
    // `İ` lowercases to two chars; the boundary is read on the lowercased text.
    assert!(contains_fact("İ 300", "300"));
    assert!(contains_fact("ΣΟΦΙΑ", "σοφια"));
}

#[test]
fn count_facts_counts_the_facts_found() {
    let facts = ["4000", "ARCLIGHT_PORT", "3000", "fastify"];
    assert_eq!(count_facts("The API listens on 4000, read from `ARCLIGHT_PORT`.", &facts), 2);
    assert_eq!(count_facts("anything", &[] as &[&str]), 0);
}

#[test]
fn facts_in_keeps_the_input_order_and_spelling() {
    let facts = ["Fastify", "4000", "React", "4000"];
    assert_eq!(facts_in("react and fastify on 4000", &facts), ["Fastify", "4000", "React", "4000"]);
    assert_eq!(facts_in("nothing here", &facts), Vec::<String>::new());
}
