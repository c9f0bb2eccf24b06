//! The `qa::` namespace as scripts see it: the examples of the API reference, and bad input as
//! catchable script errors.

use ::rhai::{Dynamic, Engine};

use super::module;

fn engine() -> Engine {
    let mut engine = Engine::new();
    engine.register_static_module("qa", module().into());
    engine
}

fn printed(script: &str) -> String {
    engine().eval::<String>(&format!("to_debug({script})")).unwrap_or_else(|error| panic!("{script}: {error}"))
}

fn error_of(script: &str) -> String {
    match engine().eval::<Dynamic>(script) {
        Ok(value) => panic!("{script} gave {value:?}, not an error"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn the_examples_of_the_api_reference_hold() {
    let cases = [
        (r#"qa::category(2).name"#, r#""temporal""#),
        (r#"qa::gold_text(2022)"#, r#""2022""#),
        (r#"qa::gold_text("7 May 2023")"#, r#""7 May 2023""#),
        (r#"qa::normalize("The cat, and a Dog!")"#, r#""cat dog""#),
        (r#"qa::categories().map(|c| c.official_count)"#, "[282, 321, 96, 841, 446]"),
        (r#"qa::score(5, "Not mentioned in the conversation.", "")"#, "1.0"),
        (r#"qa::score(1, "Paris, Rome", "Rome, Berlin")"#, "0.5"),
        (r#"qa::evidence_recall(["D1:3", "D2:4"], ["D1:3", "D9:9"])"#, "0.5"),
        (r#"qa::evidence_recall(["D1:3", "D2:4"], ["S2"])"#, "0.5"),
        (r#"qa::bleu1("7 May 2023", "7 May 2023")"#, "1.0"),
    ];
    for (script, expected) in cases {
        assert_eq!(printed(script), expected, "{script}");
    }
    let f1: f64 = engine().eval(r#"qa::token_f1("in May 2023", "7 May 2023")"#).unwrap();
    assert!((f1 - 2.0 / 3.0).abs() < 1e-9, "{f1}");
}

#[test]
fn an_unknown_category_is_a_script_error_with_the_hint() {
    let error = error_of("qa::score(7, \"a\", \"b\")");
    assert!(error.contains("`7` is not a LoCoMo category"), "{error}");
    assert!(error.contains("hint:"), "{error}");
    assert!(error_of("qa::category(0)").contains("`0` is not a LoCoMo category"));
}

#[test]
fn a_gold_answer_that_is_not_text_or_a_number_is_an_error() {
    assert!(error_of("qa::gold_text([1, 2])").contains("got a list"));
    assert!(error_of("qa::gold_text(())").contains("got null"));
    assert!(error_of(r#"qa::evidence_recall([1], [])"#).contains("`evidence[0]` must be a string"));
}
