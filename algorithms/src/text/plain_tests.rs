//! Specification of `plain.rs`: markdown prose as plain text.

use super::*;

#[test]
fn links_keep_their_text_and_images_and_tags_go() {
    assert_eq!(
        plain("Use [`revalidateTag`](/docs/app/revalidateTag) instead ![x](a.png) <AppOnly>here</AppOnly>."),
        "Use `revalidateTag` instead  here."
    );
}

#[test]
fn block_markers_and_emphasis_go_and_code_spans_stay() {
    assert_eq!(
        plain("> **Good to know**: call `a**b`\n- one\n2. two\n## Title"),
        "Good to know: call `a**b`\none\ntwo\nTitle"
    );
}

#[test]
fn fenced_code_is_dropped() {
    assert_eq!(plain("Before\n```tsx\n# not a heading\n```\nAfter"), "Before\nAfter");
    assert_eq!(plain("Before\n~~~\nunclosed"), "Before");
}

#[test]
fn unbalanced_brackets_and_backticks_are_kept() {
    assert_eq!(plain("a [b c `d"), "a [b c `d");
    assert_eq!(plain("x < y"), "x < y");
}
