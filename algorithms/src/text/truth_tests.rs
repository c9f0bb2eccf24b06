//! Specification of `truth.rs`: the facts of a ground truth's sentences, and which an answer
//! states.

use super::*;

#[test]
fn each_sentence_gives_its_names() {
    assert_eq!(
        truth_facts(
            "Port 4000, read from ARCLIGHT_PORT. Grafana already used 3000 on the team's laptops.",
            "What port does the API use?"
        ),
        [vec!["4000", "ARCLIGHT_PORT"], vec!["3000"]]
    );
}

#[test]
fn names_are_specifics_camel_case_capitals_and_capitalised_words_inside_a_sentence() {
    assert_eq!(
        truth_facts(
            "We moved to SendGrid from Resend for SOC compliance, via `mail.ts` and Vite-compatible tooling.",
            "Why?"
        ),
        [vec!["mail.ts", "SendGrid", "Resend", "SOC", "Vite-compatible"]]
    );
}

#[test]
fn hyphenated_identifiers_are_names() {
    assert_eq!(
        truth_facts("We use fastify-raw-body and iron-session now.", "Which plugins?"),
        [vec!["fastify-raw-body", "iron-session"]]
    );
}

#[test]
fn the_first_word_of_a_sentence_is_no_name_for_its_capital_alone() {
    assert_eq!(
        truth_facts("Medians resist outliers. Then Priya saw them in December.", "Why medians?"),
        [vec!["resist", "outliers"], vec!["Priya", "December"]]
    );
}

#[test]
fn a_sentence_without_names_is_stated_in_its_content_words() {
    assert_eq!(
        truth_facts("It keeps the history readable and enables automated changelogs.", "Why do we squash commits?"),
        [vec!["keeps", "history", "readable", "enables", "automated", "changelogs"]]
    );
}

#[test]
fn what_the_question_already_states_is_left_out_and_an_empty_sentence_dropped() {
    assert_eq!(
        truth_facts("Redis. The Redis cache holds sessions for 600 s.", "Which cache holds our Redis sessions?"),
        [vec!["600"]]
    );
}

#[test]
fn sentences_end_outside_code_and_not_after_abbreviations() {
    assert_eq!(
        truth_facts("Use `a. B` e.g. Zod; then Pino. Ship it.", "What?"),
        [vec!["a. B", "Zod"], vec!["Pino"], vec!["ship"]]
    );
}

#[test]
fn a_fact_is_stated_exactly_or_by_its_words_in_a_row_stemmed() {
    let facts = ["Vite-compatible", "400-line", "WebSockets", "600", "ARCLIGHT_PORT", "SOC"];
    assert_eq!(
        stated("It is Vite compatible, keeps PRs under 400 lines, uses a WebSocket and ten minutes.", &facts),
        ["Vite-compatible", "400-line", "WebSockets", "600"]
    );
}

#[test]
fn the_words_of_a_fact_scattered_over_the_answer_do_not_state_it() {
    assert!(stated("It uses `@fastify/formbody` to keep the raw body.", &["fastify-raw-body"]).is_empty());
    assert!(stated("It is compatible with Vite.", &["Vite-compatible"]).is_empty());
}

#[test]
fn a_number_inside_a_longer_number_is_not_stated() {
    assert!(stated("port 30000", &["3000"]).is_empty());
}

#[test]
fn parentheticals_are_supporting_detail_unless_nothing_else_names_a_fact() {
    assert_eq!(
        truth_facts("lodash (native JS does it), and moment (replaced by date-fns).", "Which packages went?"),
        [vec!["lodash", "moment"]]
    );
    assert_eq!(truth_facts("The cache (Redis 7).", "Which cache?"), [vec!["Redis", "7"]]);
    assert_eq!(truth_facts("Call new Error(`${op}: ${message}`).", "How?"), [vec!["${op}: ${message}", "Error"]]);
}
