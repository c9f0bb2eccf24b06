//! The `text::` namespace as scripts see it: argument types, `()`, errors as catchable script
//! errors, and the examples of the API reference.

use ::rhai::{Dynamic, Engine};

use super::module;

fn engine() -> Engine {
    let mut engine = Engine::new();
    engine.register_static_module("text", module().into());
    engine
}

fn eval<T: Clone + Send + Sync + 'static>(script: &str) -> T {
    engine().eval::<T>(script).unwrap_or_else(|error| panic!("{script}: {error}"))
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
        (
            r#"text::sentences("- First point here. Second point here.")"#,
            r#"["First point here.", "Second point here."]"#,
        ),
        (r#"text::squash("  a\n\tb   c ")"#, r#""a b c""#),
        (r#"text::words("The TTL is 600s, isn't it?")"#, r#"["the", "ttl", "is", "600s", "isn", "it"]"#),
        (r#"text::stem("keys")"#, r#""key""#),
        (r#"text::porter_stem("running")"#, r#""run""#),
        (r#"text::porter_stem("generously")"#, r#""gener""#),
        (r#"text::is_stop_word("the")"#, "true"),
        (r#"text::content_words("What is the cache TTL now?")"#, r#"["cache", "ttl"]"#),
        (r#"text::terms("Which keys does it follow?")"#, r#"["key", "follow"]"#),
        (r#"text::whole_number("12")"#, "12"),
        (r#"text::whole_number("12a")"#, "()"),
        (r#"text::has_digit("k6")"#, "true"),
        (r#"text::unit("seconds")"#, r#""s""#),
        (r#"text::quantity("30-day")"#, r##"#{"number": "30", "unit": "day"}"##),
        (r#"text::quantity("20.11.1")"#, "()"),
        (r#"text::quantities("a concurrency of 5, TTL 600 seconds").map(|v| v.key)"#, r#"["concurrency", "s"]"#),
        (r#"text::contains_fact("TTL is 3000 s", "300")"#, "false"),
        (r#"text::add_days("2024-02-27", 3)"#, r#""2024-03-01""#),
        (r#"text::day_number("1970-01-02")"#, "1"),
        (r#"text::fixed(2.5, 0)"#, r#""3""#),
        (r#"text::fixed(0.1, 3)"#, r#""0.100""#),
        (r#"text::percent(0.875, 1)"#, r#""87.5%""#),
        (r#"text::signed(0.25, 2)"#, r#""+0.25""#),
        (r#"text::signed(-0.001, 2)"#, r#""+0.00""#),
        (r#"text::join([3, 1.5, "x"], " / ")"#, r#""3 / 1.5 / x""#),
    ];
    for (script, expected) in cases {
        let value: Dynamic = eval(script);
        let printed = engine().eval::<String>(&format!("to_debug({script})")).unwrap();
        assert_eq!(printed, expected, "{script} gave {value:?}");
    }
}

#[test]
fn stop_words_is_the_list_in_order() {
    assert_eq!(eval::<i64>("text::stop_words().len()"), 136);
    assert_eq!(eval::<String>("text::stop_words()[2]"), "the");
}

#[test]
fn formatting_takes_integers_and_unit() {
    assert_eq!(eval::<String>("text::fixed(3, 2)"), "3.00");
    assert_eq!(eval::<String>("text::fixed((), 2)"), "n/a");
    assert_eq!(eval::<String>("text::percent((), 1)"), "n/a");
    assert_eq!(eval::<String>("text::signed(-2, 1)"), "-2.0");
}

#[test]
fn formatting_refuses_other_values_and_places() {
    assert!(error_of(r#"text::fixed("1.5", 2)"#).contains("`value` must be a number or (), got string"));
    assert!(error_of("text::fixed(1.5, 12)").contains("`places` must be between 0 and 9, got 12"));
}

#[test]
fn join_prints_each_item_as_to_string_does() {
    assert_eq!(
        eval::<String>(r#"text::join([1, 2.0, "a", (), true, 'c', [1, "b"]], ",")"#),
        r#"1,2.0,a,,true,c,[1, "b"]"#
    );
    assert_eq!(eval::<String>(r#"text::join([], ", ")"#), "");
}

#[test]
fn fact_lists_must_hold_strings() {
    assert_eq!(eval::<i64>(r#"text::count_facts("port 4000 and 3000", ["4000", "300", "3000"])"#), 2);
    assert_eq!(
        eval::<String>(
            r#"text::facts_in("port 4000 and 3000", ["4000", "300", "3000"]).reduce(|s, f| s + f + ";", "")"#
        ),
        "4000;3000;"
    );
    assert!(error_of(r#"text::count_facts("x", ["a", 4000])"#).contains("`facts[1]` must be a string, got i64"));
    assert!(error_of(r#"text::facts_in("x", [()])"#).contains("`facts[0]` must be a string, got ()"));
}

#[test]
fn a_bad_date_is_a_catchable_error_naming_it() {
    let caught: String = eval(
        r#"let caught = "no error"; try { text::add_days("2024-1-5", 1); } catch (error) { caught = error; } caught"#,
    );
    assert_eq!(caught, "`2024-1-5` is not a date of the form YYYY-MM-DD");
    assert!(
        error_of(r#"text::day_number("2023-02-29")"#).contains("`2023-02-29` is not a date of the form YYYY-MM-DD")
    );
}

#[test]
fn a_table_prints_its_cells_as_to_string_does() {
    let table: String =
        eval(r#"text::table(["Run", "Score", "n"], [["a|b", 2.5, 3], ["c", (), 12]], #{ align: "lrr" })"#);
    assert_eq!(
        table,
        "\
| Run  | Score |   n |
|------|------:|----:|
| a\\|b |   2.5 |   3 |
| c    |       |  12 |
"
    );
    assert_eq!(eval::<String>(r#"text::table(["x"], [], #{})"#), "| x   |\n|-----|\n");
}

#[test]
fn a_table_names_the_row_or_option_at_fault() {
    assert!(
        error_of(r#"text::table(["a", "b"], [["1", "2"], ["1"]], #{})"#)
            .contains("`rows[1]` has 1 cells, the header has 2")
    );
    assert!(error_of(r#"text::table(["a"], [["1"], "row"], #{})"#).contains("`rows[1]` must be an array, got string"));
    let error = error_of(r#"text::table(["a", "b"], [], #{ align: "l" })"#);
    assert!(error.contains("invalid options for `text::table`: `align` has 1 letters for 2 columns"), "{error}");
    let error = error_of(r#"text::table(["a"], [], #{ algin: "l" })"#);
    assert!(error.contains("invalid options for `text::table`: unknown field `algin`"), "{error}");
    let error = error_of(r#"text::table(["a"], [], #{ align: 3 })"#);
    assert!(error.contains("invalid options for `text::table`") && error.contains("align"), "{error}");
    assert!(error_of(r#"text::table([], [], #{})"#).contains("a table needs at least one column"));
}
