//! Specification of `words.rs`: the tokenizer, the stop-word list, the stemmer and the number
//! tests, as local.rhai used them.

use super::*;

#[test]
fn words_are_the_benchmark_tokenizers_terms() {
    assert_eq!(words("The TTL is 600s, isn't it?"), ["the", "ttl", "is", "600s", "isn", "it"]);
    assert_eq!(words("café x"), ["caf"]);
    assert!(words("").is_empty());
}

#[test]
fn the_stop_list_is_the_lexicons_list_without_its_unreachable_entry() {
    assert_eq!(STOP_WORDS.len(), 136);
    assert_eq!(STOP_WORDS[..4], ["a", "an", "the", "and"]);
    assert_eq!(STOP_WORDS[STOP_WORDS.len() - 2..], ["yes", "ok"]);
    let distinct: HashSet<&str> = STOP_WORDS.into_iter().collect();
    assert_eq!(distinct.len(), STOP_WORDS.len(), "no word twice");
    // `it's` was in the lexicon; the tokenizer cuts at the apostrophe and drops one-letter
    // tokens, so no word can ever be `it's`.
    assert!(!is_stop_word("it's"));
    assert_eq!(words("it's"), ["it"]);
}

#[test]
fn every_stop_word_is_a_token_the_tokenizer_can_produce() {
    for word in STOP_WORDS {
        assert!(word == "a" || word == "i" || words(word) == [word], "{word}");
    }
}

#[test]
fn is_stop_word_is_an_exact_lowercase_lookup() {
    assert!(is_stop_word("the"));
    assert!(is_stop_word("currently"));
    assert!(!is_stop_word("The"));
    assert!(!is_stop_word(" the"));
    assert!(!is_stop_word("in on"));
    assert!(!is_stop_word(""));
}

#[test]
fn content_words_drop_stop_words_and_keep_order_and_repeats() {
    assert_eq!(content_words("What is the cache TTL now? The cache!"), ["cache", "ttl", "cache"]);
}

#[test]
fn stem_drops_a_final_s_from_words_longer_than_three() {
    assert_eq!(stem("keys"), "key");
    assert_eq!(stem("follows"), "follow");
    assert_eq!(stem("digests"), "digest");
    assert_eq!(stem("bus"), "bus");
    assert_eq!(stem("class"), "class");
    assert_eq!(stem("ms"), "ms");
    assert_eq!(stem(""), "");
}

#[test]
fn stem_counts_chars_not_bytes() {
    // Three chars, five bytes: too short to lose its `s`.
    assert_eq!(stem("éés"), "éés");
    assert_eq!(stem("ééés"), "ééé");
}

#[test]
fn terms_are_content_words_stemmed_after_the_stop_word_test() {
    assert_eq!(terms("Which keys does it follow? Its uses..."), ["key", "follow"]);
    // "uses" is a stop word before stemming; "uses" stemmed would be "use", also one.
    assert_eq!(terms("queues pass"), ["queue", "pass"]);
}

#[test]
fn whole_number_reads_one_to_nine_ascii_digits() {
    assert_eq!(whole_number("0"), Some(0));
    assert_eq!(whole_number("007"), Some(7));
    assert_eq!(whole_number("123456789"), Some(123_456_789));
    assert_eq!(whole_number("1234567890"), None);
    assert_eq!(whole_number(""), None);
    assert_eq!(whole_number("12a"), None);
    assert_eq!(whole_number("-1"), None);
    assert_eq!(whole_number("+1"), None);
    assert_eq!(whole_number("１２"), None, "fullwidth digits are not ASCII");
}

#[test]
fn has_digit_looks_for_ascii_digits_only() {
    assert!(has_digit("k6"));
    assert!(!has_digit("kilo"));
    assert!(!has_digit("٣"));
    assert!(!has_digit(""));
}

#[test]
fn overlap_is_the_share_of_the_words_found_among_the_texts_words() {
    let words = |list: &[&str]| list.iter().map(|word| word.to_string()).collect::<Vec<_>>();
    assert_eq!(overlap(&words(&["cache", "ttl"]), "The TTL is 600 s"), 0.5);
    assert_eq!(overlap(&words(&["ttl", "ttl", "cache"]), "ttl"), 2.0 / 3.0, "repeats count each time");
    assert_eq!(overlap(&words(&["foo"]), "foo_bar"), 1.0, "words split at `_` as the tokenizer does");
    assert_eq!(overlap(&[], "anything"), 0.0);
}
