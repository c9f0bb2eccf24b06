//! Specification of `porter.rs`: Porter's examples, and each of NLTK's departures from the
//! paper, with the stem NLTK 3.9.1 gives (checked with `PorterStemmer().stem`).

use super::*;

fn stems(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| porter_stem(word)).collect()
}

#[test]
fn step_1a_cuts_plurals() {
    assert_eq!(stems(&["caresses", "ponies", "caress", "cats"]), ["caress", "poni", "caress", "cat"]);
}

#[test]
fn step_1b_cuts_ed_and_ing_and_tidies_the_stem() {
    assert_eq!(
        stems(&["feed", "agreed", "plastered", "bled", "motoring", "sing"]),
        ["feed", "agre", "plaster", "bled", "motor", "sing"]
    );
    // at → ate, bl → ble, iz → ize; a double consonant loses one letter unless l, s or z;
    // m = 1 and cvc puts an e back.
    assert_eq!(
        stems(&["conflated", "troubled", "sized", "hopping", "falling", "hissing", "filing"]),
        ["conflat", "troubl", "size", "hop", "fall", "hiss", "file"]
    );
}

#[test]
fn steps_2_to_5_cut_derivational_suffixes() {
    assert_eq!(
        stems(&["relational", "conditional", "rational", "hopefulness", "triplicate"]),
        ["relat", "condit", "ration", "hope", "triplic"]
    );
    assert_eq!(
        stems(&["allowance", "adoption", "effective", "probate", "rate", "cease", "controll"]),
        ["allow", "adopt", "effect", "probat", "rate", "ceas", "control"]
    );
    assert_eq!(stems(&["generalization", "oscillators"]), ["gener", "oscil"]);
}

#[test]
fn nltk_maps_its_irregular_forms_without_stemming() {
    assert_eq!(
        stems(&["skies", "sky", "dying", "lying", "tying", "news", "innings", "howe"]),
        ["sky", "sky", "die", "lie", "tie", "news", "inning", "howe"]
    );
    assert_eq!(stems(&["proceed", "exceed", "succeed"]), ["proceed", "exceed", "succeed"]);
    // Only the exact lowercase form is looked up: NLTK stems "Sky" as an ordinary word.
    assert_eq!(stems(&["Sky", "SKIES", "Dying"]), ["ski", "ski", "dy"]);
}

#[test]
fn nltk_leaves_words_of_one_or_two_characters_alone_but_lowercased() {
    assert_eq!(stems(&["", "a", "is", "as", "IS", "ÀB"]), ["", "a", "is", "as", "is", "àb"]);
}

#[test]
fn nltk_keeps_the_e_of_four_letter_ies_and_ied_words() {
    assert_eq!(stems(&["dies", "ties", "flies", "died", "spied", "tried"]), ["die", "tie", "fli", "die", "spi", "tri"]);
}

#[test]
fn nltk_turns_final_y_to_i_only_after_a_consonant_that_is_not_alone() {
    assert_eq!(stems(&["happy", "enjoy", "try", "spy", "toy"]), ["happi", "enjoy", "tri", "spi", "toy"]);
}

#[test]
fn nltk_adds_fulli_logi_and_runs_alli_first() {
    assert_eq!(
        stems(&["fully", "hopefully", "geology", "theology", "archaeology", "radically"]),
        ["fulli", "hope", "geolog", "theolog", "archaeolog", "radic"]
    );
    assert_eq!(stems(&["additionally", "conformabli"]), ["addit", "conform"]);
}

#[test]
fn nltk_counts_a_two_letter_vowel_consonant_stem_as_cvc() {
    // "are", "ice", "use" keep their e (m = 1 and *o holds for "ar", "ic", "us").
    assert_eq!(stems(&["are", "ice", "use", "eve", "ore"]), ["are", "ice", "use", "eve", "ore"]);
}

#[test]
fn y_alternates_between_consonant_and_vowel_along_a_run() {
    assert_eq!(stems(&["syzygy", "yyy", "yyyy", "ayyy", "sayyid"]), ["syzygi", "yyy", "yyyi", "ayyy", "sayyid"]);
    // A long run of y cannot exhaust the stack (NLTK itself hits Python's recursion limit here).
    let long = "y".repeat(100_000);
    assert_eq!(porter_stem(&long).len(), long.len());
}

#[test]
fn digits_and_other_letters_are_consonants() {
    assert_eq!(stems(&["2022", "covid19", "cafés", "naïve"]), ["2022", "covid19", "café", "naïv"]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { failure_persistence: None, ..proptest::prelude::ProptestConfig::with_cases(512) })]

    #[test]
    fn any_text_stems_without_failing_and_a_lowercase_word_never_grows(
        word in "[a-zy]{0,12}|\\PC{0,12}",
    ) {
        let stem = porter_stem(&word);
        if word.bytes().all(|byte| byte.is_ascii_lowercase()) {
            // Every rule that adds letters cuts at least as many: step 1b's `e` follows a cut
            // `-ed` or `-ing`, and step 2's replacements are never longer than their suffixes.
            proptest::prop_assert!(stem.len() <= word.len(), "{word} → {stem}");
        }
    }
}
