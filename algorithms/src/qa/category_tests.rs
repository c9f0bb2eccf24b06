//! Specification of `category.rs`: the category codes and the official rule of each.

use serde_json::json;

use super::*;

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-12
}

#[test]
fn codes_map_to_the_datas_categories_not_the_papers_order() {
    let named: Vec<(i64, &str)> = Category::ALL.iter().map(|category| (category.code(), category.name())).collect();
    assert_eq!(named, [(1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop"), (5, "adversarial")]);
    for category in Category::ALL {
        assert_eq!(Category::from_code(category.code()), Ok(category));
    }
    assert_eq!(Category::from_code(0), Err(QaError::UnknownCategory { code: 0 }));
    assert_eq!(Category::from_code(6), Err(QaError::UnknownCategory { code: 6 }));
}

#[test]
fn the_official_file_holds_1986_questions_1540_of_them_in_categories_1_to_4() {
    let all: usize = Category::ALL.iter().map(|category| category.official_count()).sum();
    let answerable: usize = Category::ALL[..4].iter().map(|category| category.official_count()).sum();
    assert_eq!((all, answerable), (1986, 1540));
}

#[test]
fn gold_numbers_are_written_as_python_writes_them() {
    assert_eq!(gold_text(&json!("Paris")), Ok("Paris".to_owned()));
    assert_eq!(gold_text(&json!(2022)), Ok("2022".to_owned()));
    assert_eq!(gold_text(&json!(3.0)), Ok("3.0".to_owned()));
    assert_eq!(gold_text(&json!(3.5)), Ok("3.5".to_owned()));
    assert_eq!(gold_text(&json!(1e15)), Ok("1000000000000000.0".to_owned()));
    assert_eq!(gold_text(&json!(1e16)), Ok("1e+16".to_owned()));
    assert_eq!(gold_text(&json!(0.0001)), Ok("0.0001".to_owned()));
    assert_eq!(gold_text(&json!(0.000015)), Ok("1.5e-05".to_owned()));
    assert_eq!(gold_text(&json!(u64::MAX)), Ok("18446744073709551615".to_owned()));
    assert_eq!(gold_text(&json!(null)), Err(QaError::GoldAnswer { kind: "null" }));
    assert_eq!(gold_text(&json!(["a"])), Err(QaError::GoldAnswer { kind: "a list" }));
}

#[test]
fn temporal_and_single_hop_are_token_f1_against_the_whole_gold() {
    // [7, may, 2023] against [may, 2023]: P = 2/3, R = 1, F1 = 0.8.
    assert!(close(score(Category::Temporal, "7 May 2023", "May, 2023"), 0.8));
    assert!(close(score(Category::SingleHop, "7 May 2023", "May, 2023"), 0.8));
}

#[test]
fn open_domain_cuts_the_gold_at_its_first_semicolon() {
    let gold = "Likely yes; she said she loves it";
    // Cut: [like, ye] (likely → like, yes → ye) against [ye]: P = 1, R = ½, F1 = 2/3.
    assert!(close(score(Category::OpenDomain, "yes", gold), 2.0 / 3.0));
    // Whole, as single-hop takes it: 7 gold words, 1 shared, P = 1, R = 1/7, F1 = 0.25.
    assert!(close(score(Category::SingleHop, "yes", gold), 0.25));
}

#[test]
fn multi_hop_averages_over_gold_parts_the_best_f1_of_any_prediction_part() {
    // Prediction parts [red, car], [blue, bike], [kite]; gold parts [blue, bike], [green, car].
    // "blue bike": best 1 (bikes → bike). "green car": best ½ against [red, car] (P = R = ½).
    // Mean (1 + ½) / 2 = 0.75.
    assert!(close(score(Category::MultiHop, "red car, blue bikes, a kite", "blue bike, green car"), 0.75));
    // Order does not matter, articles vanish: both gold parts are found whole.
    assert!(close(score(Category::MultiHop, "the red car, a blue bike", "blue bike, red car"), 1.0));
    // A prediction without commas is one part: "red car blue bike" against each gold part,
    // P = 2/4, R = 1, F1 = 2/3 each.
    assert!(close(score(Category::MultiHop, "red car and blue bike", "blue bike, red car"), 2.0 / 3.0));
    // An empty gold part (a trailing comma) scores 0 and still counts: (1 + 0) / 2.
    assert!(close(score(Category::MultiHop, "red car", "red car,"), 0.5));
}

#[test]
fn adversarial_scores_an_abstention_whatever_the_gold() {
    assert_eq!(score(Category::Adversarial, "Not mentioned in the conversation.", "her cat"), 1.0);
    assert_eq!(score(Category::Adversarial, "NO INFORMATION AVAILABLE", ""), 1.0);
    assert_eq!(score(Category::Adversarial, "There is no information about it", "x"), 0.0);
    assert_eq!(score(Category::Adversarial, "her cat", "her cat"), 0.0);
}

mod properties {
    use proptest::prelude::*;

    use super::super::*;
    use crate::qa::{evidence_recall, token_f1};

    /// Text that leans on what the rules look at: commas, semicolons, the dropped words,
    /// punctuation, odd whitespace and non-ASCII letters.
    fn answer() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                Just("a".to_owned()),
                Just("The".to_owned()),
                Just("and".to_owned()),
                Just(",".to_owned()),
                Just(";".to_owned()),
                Just("not mentioned".to_owned()),
                Just("\u{1c}".to_owned()),
                "[a-zé²’ .!-]{0,8}".prop_map(|text| text),
                any::<String>(),
            ],
            0..8,
        )
        .prop_map(|parts| parts.join(" "))
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(256) })]

        #[test]
        fn every_score_is_between_zero_and_one(prediction in answer(), gold in answer(), code in 1i64..=5) {
            let category = Category::from_code(code).unwrap();
            let value = score(category, &prediction, &gold);
            prop_assert!((0.0..=1.0).contains(&value), "{value}");
        }

        #[test]
        fn token_f1_is_symmetric_and_one_on_itself_when_anything_is_left(first in answer(), second in answer()) {
            prop_assert_eq!(token_f1(&first, &second), token_f1(&second, &first));
            let own = token_f1(&first, &first);
            prop_assert!(own == 1.0 || crate::qa::answer_tokens(&first).is_empty(), "{own}");
        }

        #[test]
        fn evidence_recall_is_a_share(
            evidence in prop::collection::vec("[DS]?[0-9]{0,2}:?[0-9]{0,2}", 0..5),
            retrieved in prop::collection::vec("[DS]?[0-9]{0,2}:?[0-9]{0,2}", 0..5),
        ) {
            let value = evidence_recall(&evidence, &retrieved);
            prop_assert!((0.0..=1.0).contains(&value), "{value}");
        }
    }
}
