//! Specification of `sentences.rs`: the cutting rules of text.rhai's `sentences` and
//! local.rhai's `pieces` and `collapse`, with their edge cases.

use super::*;

#[test]
fn a_sentence_ends_at_a_stop_followed_by_a_space_and_a_capital() {
    assert_eq!(
        sentences("The cache TTL is 300 s. Redis holds the sessions now."),
        ["The cache TTL is 300 s.", "Redis holds the sessions now."]
    );
}

#[test]
fn a_break_needs_a_capital_digit_or_backtick_after_the_space() {
    assert_eq!(sentences("We chose it, e.g. for speed and for cost."), ["We chose it, e.g. for speed and for cost."]);
    assert_eq!(
        sentences("Ports are listed below. 4000 is the API port."),
        ["Ports are listed below.", "4000 is the API port."]
    );
    assert_eq!(
        sentences("Keys are stored here! `RESEND_API_KEY` is one."),
        ["Keys are stored here!", "`RESEND_API_KEY` is one."]
    );
    assert_eq!(sentences("Is it ready now? Yes, it shipped today."), ["Is it ready now?", "Yes, it shipped today."]);
}

#[test]
fn a_stop_needs_exactly_one_space_before_the_next_sentence() {
    assert_eq!(sentences("It stays one sentence.  Two spaces here."), ["It stays one sentence.  Two spaces here."]);
    assert_eq!(sentences("No space after the stop.Next part here."), ["No space after the stop.Next part here."]);
}

#[test]
fn every_line_break_ends_a_sentence() {
    assert_eq!(
        sentences("first line is long enough\nsecond line is long enough"),
        ["first line is long enough", "second line is long enough"]
    );
}

#[test]
fn bullets_and_heading_marks_are_stripped_repeatedly() {
    assert_eq!(sentences("- * # Heading text here"), ["Heading text here"]);
    assert_eq!(sentences("## Section title here"), ["Section title here"]);
    assert_eq!(sentences("  *   starred point made here  "), ["starred point made here"]);
}

#[test]
fn a_dash_without_a_space_is_no_bullet() {
    assert_eq!(sentences("-flag is passed to the tool"), ["-flag is passed to the tool"]);
}

#[test]
fn fragments_under_twelve_chars_are_dropped() {
    assert_eq!(sentences("Got it. Do it now. Twelve chars"), ["Twelve chars"]);
    assert_eq!(sentences("- Elevenchars"), Vec::<String>::new());
    // Counted in chars, not bytes: eleven chars of two bytes each are still eleven.
    assert_eq!(sentences("ééééééééééé"), Vec::<String>::new());
    assert_eq!(sentences("éééééééééééé"), ["éééééééééééé"]);
}

#[test]
fn empty_and_whitespace_text_has_no_sentences() {
    assert!(sentences("").is_empty());
    assert!(sentences("\n\n   \n").is_empty());
    assert!(sentences("#").is_empty());
}

#[test]
fn a_stop_needs_a_char_after_its_space_to_cut() {
    assert_eq!(sentences("The last one ends here. "), ["The last one ends here."]);
    assert_eq!(sentences("It ends right here. A"), ["It ends right here."]);
}

#[test]
fn a_code_block_is_one_piece_without_its_language_tag() {
    let message = "Done:\n```ts\nconst port = 4000;\nawait app.listen({ port });\n```\nThat is all.";
    assert_eq!(pieces(message), ["Done:", "const port = 4000; await app.listen({ port });", "That is all."]);
}

#[test]
fn a_first_code_line_with_a_space_is_code_not_a_tag() {
    assert_eq!(pieces("```\nnpm install\n```"), ["npm install"]);
    assert_eq!(pieces("```npm install\nnpm test```"), ["npm install npm test"]);
}

#[test]
fn a_one_line_block_keeps_its_only_word() {
    assert_eq!(pieces("Run ```make``` now."), ["Run", "make", "now."]);
}

#[test]
fn a_block_of_only_a_tag_gives_nothing() {
    assert_eq!(pieces("```sh\n```"), Vec::<String>::new());
    assert_eq!(pieces("``````"), Vec::<String>::new());
}

#[test]
fn prose_is_cut_after_a_stop_and_a_space_whatever_follows() {
    assert_eq!(
        pieces("Sounds good. add it. Why? Because! done"),
        ["Sounds good.", "add it.", "Why?", "Because!", "done"]
    );
}

#[test]
fn prose_is_never_cut_inside_a_backticked_span() {
    assert_eq!(pieces("Pin `20.11.1. Then` here. Next one."), ["Pin `20.11.1. Then` here.", "Next one."]);
    assert_eq!(pieces("Key `arclight:{entity}:{id}`. Done."), ["Key `arclight:{entity}:{id}`.", "Done."]);
}

#[test]
fn a_line_break_inside_a_backticked_span_is_squashed_not_cut() {
    assert_eq!(pieces("See `a\nb` here.\nNext"), ["See `a b` here.", "Next"]);
}

#[test]
fn an_unmatched_backtick_gains_a_closing_one() {
    // The original splits at every backtick and puts the odd parts back between two.
    assert_eq!(pieces("Set `FOO to 1. Done"), ["Set `FOO to 1. Done`"]);
}

#[test]
fn an_unclosed_fence_makes_the_rest_code() {
    assert_eq!(pieces("Try this:\n```py\nprint(1)\n"), ["Try this:", "print(1)"]);
}

#[test]
fn squash_turns_line_feeds_and_tabs_into_single_spaces_and_trims() {
    assert_eq!(squash("  a\n\tb   c "), "a b c");
    assert_eq!(squash(""), "");
    assert_eq!(squash(" \n\t "), "");
}

#[test]
fn squash_keeps_inner_carriage_returns_but_trims_them_at_the_ends() {
    assert_eq!(squash("\r a\r\nb \r"), "a\r b");
}

#[test]
fn a_captured_message_is_cut_after_every_end_mark_before_a_space_and_keeps_its_marks() {
    let text = "The deploy key rotates monthly. Ok! Is the cache warm?\nv1.2 ships Friday at noon\nshort";
    assert_eq!(
        captured_sentences(text),
        ["The deploy key rotates monthly.", "Is the cache warm?", "v1.2 ships Friday at noon"]
    );
    let loose =
        "A single outlier PR (e.g. one left open) doubles the mean.\n- Deploys go out on Tuesdays.\n# 2026-02-16";
    assert_eq!(
        captured_sentences(loose),
        [
            "A single outlier PR (e.g.",
            "one left open) doubles the mean.",
            "- Deploys go out on Tuesdays.",
            "# 2026-02-16"
        ]
    );
    assert_ne!(captured_sentences(loose), sentences(loose), "the answerer's rule cuts this text otherwise");
}
