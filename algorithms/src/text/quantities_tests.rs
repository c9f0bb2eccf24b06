//! Specification of `quantities.rs`: local.rhai's `unit_of`, `parse_quantity` and
//! `extract_values`, with the examples its comments give.

use super::*;

fn q(number: &str, unit: &str) -> Option<Quantity> {
    Some(Quantity { number: number.into(), unit: unit.into() })
}

fn v(number: &str, key: &str, unit: bool) -> Value {
    Value { number: number.into(), key: key.into(), unit }
}

#[test]
fn unit_normalises_the_unit_words() {
    assert_eq!(unit("seconds"), "s");
    assert_eq!(unit("sec"), "s");
    assert_eq!(unit("milliseconds"), "ms");
    assert_eq!(unit("mins"), "min");
    assert_eq!(unit("hours"), "h");
    assert_eq!(unit("days"), "day");
    assert_eq!(unit("d"), "day");
    assert_eq!(unit("weeks"), "week");
    assert_eq!(unit("month"), "month");
    assert_eq!(unit("percent"), "%");
    assert_eq!(unit("%"), "%");
    assert_eq!(unit("request"), "requests");
    assert_eq!(unit("connections"), "connections");
    assert_eq!(unit("character"), "characters");
    assert_eq!(unit("Seconds"), "", "case matters: callers lowercase first");
    assert_eq!(unit("years"), "");
    assert_eq!(unit(""), "");
}

#[test]
fn a_quantity_is_a_number_with_nothing_a_percent_or_a_unit_glued_on() {
    assert_eq!(quantity("600"), q("600", ""));
    assert_eq!(quantity("80%"), q("80", "%"));
    assert_eq!(quantity("30-day"), q("30", "day"));
    assert_eq!(quantity("600s"), q("600", "s"));
    assert_eq!(quantity("2.5h"), q("2.5", "h"));
    assert_eq!(quantity("10-percent"), q("10", "%"));
    assert_eq!(quantity("5-%"), q("5", "%"));
    assert_eq!(quantity("0.95"), q("0.95", ""));
}

#[test]
fn versions_trailing_dots_and_other_suffixes_are_no_quantity() {
    assert_eq!(quantity("20.11.1"), None);
    assert_eq!(quantity("3."), None);
    assert_eq!(quantity("4x"), None);
    assert_eq!(quantity("10--day"), None);
    assert_eq!(quantity("80%%"), None);
    assert_eq!(quantity("5%-"), None);
}

#[test]
fn a_quantity_starts_with_an_ascii_digit() {
    assert_eq!(quantity("k6"), None);
    assert_eq!(quantity(".5"), None);
    assert_eq!(quantity("-5"), None);
    assert_eq!(quantity(""), None);
    assert_eq!(quantity("٣"), None);
}

#[test]
fn the_key_is_the_unit_word_that_follows() {
    assert_eq!(quantities("The TTL is now 600 seconds."), [v("600", "s", true)]);
    assert_eq!(quantities("Keep 30-day retention"), [v("30", "day", true)]);
    assert_eq!(quantities("Alert at 80% disk"), [v("80", "%", true)]);
}

#[test]
fn without_a_unit_the_key_is_the_nearest_content_word_before() {
    assert_eq!(quantities("a concurrency of 5"), [v("5", "concurrency", false)]);
    assert_eq!(quantities("`max: 25`"), [v("25", "max", false)]);
    assert_eq!(quantities("Run the API on port 4000, not 3000"), [v("4000", "port", false)]);
}

#[test]
fn a_number_after_a_stop_word_reaching_a_non_word_has_no_key() {
    // "not" is a stop word; before it is "4000", itself a quantity.
    assert_eq!(quantities("port 4000 not 3000"), [v("4000", "port", false)]);
}

#[test]
fn a_time_reference_gives_no_key() {
    assert!(quantities("In week 2 we moved").is_empty());
    assert!(quantities("on day 12").is_empty());
}

#[test]
fn urls_paths_and_versions_give_no_key() {
    assert!(quantities("see apps/api 3").is_empty());
    assert!(quantities("Node 20.11.1 pinned").is_empty());
    assert!(quantities("v2.0 20").is_empty());
}

#[test]
fn commas_join_thousands_and_separate_items() {
    assert_eq!(quantities("limit 10,000 requests"), [v("10000", "requests", true)]);
    assert_eq!(quantities("retries 3, 5 seconds"), [v("3", "retries", false), v("5", "s", true)]);
}

#[test]
fn trailing_stops_are_stripped_and_marks_blanked() {
    assert_eq!(quantities("Timeout is 30?!"), [v("30", "timeout", false)]);
    assert_eq!(quantities("(ttl=300)"), [v("300", "ttl", false)]);
}

#[test]
fn the_text_is_split_at_spaces_only() {
    // A line break does not separate tokens: "ttl\n300" is one token, not a number.
    assert!(quantities("ttl\n300").is_empty());
}

#[test]
fn no_text_no_values() {
    assert!(quantities("").is_empty());
    assert!(quantities("   ").is_empty());
}
