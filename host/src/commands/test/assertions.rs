//! The assertions test files call: `assert`, `assert_eq`, `assert_ne` and `assert_near`,
//! registered on the engine of `host test` only (scripts never see them). A failure is a
//! script error whose message carries the values; Rhai places it at the call.

use rhai::{Array, Dynamic, Engine, EvalAltResult, ImmutableString, Map, Position};

type Checked = Result<(), Box<EvalAltResult>>;

/// Registers the assertions on `engine`.
pub fn register(engine: &mut Engine) {
    engine
        .register_fn("assert", |condition: Dynamic| assert(&condition, None))
        .register_fn("assert", |condition: Dynamic, message: Dynamic| assert(&condition, Some(&message)))
        .register_fn("assert_eq", |actual: Dynamic, expected: Dynamic| assert_eq(&actual, &expected))
        .register_fn("assert_ne", |actual: Dynamic, other: Dynamic| assert_ne(&actual, &other))
        .register_fn("assert_near", |actual: Dynamic, expected: Dynamic, tolerance: Dynamic| {
            assert_near(&actual, &expected, &tolerance)
        });
}

fn failure(message: String) -> Checked {
    Err(Box::new(EvalAltResult::ErrorRuntime(message.into(), Position::NONE)))
}

fn assert(condition: &Dynamic, message: Option<&Dynamic>) -> Checked {
    match (condition.as_bool(), message) {
        (Ok(true), _) => Ok(()),
        (Ok(false), None) => failure("assertion failed".into()),
        (Ok(false), Some(message)) => failure(format!("assertion failed: {message}")),
        (Err(kind), _) => failure(format!("`assert` takes a boolean condition, got a value of type `{kind}`")),
    }
}

fn assert_eq(actual: &Dynamic, expected: &Dynamic) -> Checked {
    if same(actual, expected) {
        Ok(())
    } else {
        failure(format!("assert_eq failed: actual {actual:?}, expected {expected:?}"))
    }
}

fn assert_ne(actual: &Dynamic, other: &Dynamic) -> Checked {
    if same(actual, other) { failure(format!("assert_ne failed: both are {actual:?}")) } else { Ok(()) }
}

fn assert_near(actual: &Dynamic, expected: &Dynamic, tolerance: &Dynamic) -> Checked {
    let (Some(a), Some(e), Some(t)) = (number(actual), number(expected), number(tolerance)) else {
        return failure(format!("`assert_near` takes three numbers, not {actual:?}, {expected:?} and {tolerance:?}"));
    };
    if (a - e).abs() <= t {
        Ok(())
    } else {
        failure(format!("assert_near failed: actual {actual:?}, expected {expected:?} ± {tolerance:?}"))
    }
}

/// A number as a float; integers beyond 2^53 lose precision, which no tolerance notices.
fn number(value: &Dynamic) -> Option<f64> {
    value.as_float().ok().or_else(|| value.as_int().ok().map(|int| int as f64))
}

/// Equality as Rhai's `==` reads it for plain data: an integer equals the float of the same
/// value, arrays and maps are equal element by element, and values of unrelated types differ.
pub fn same(left: &Dynamic, right: &Dynamic) -> bool {
    if let (Ok(a), Ok(b)) = (left.as_int(), right.as_int()) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (number(left), number(right)) {
        return a == b;
    }
    if let (Some(a), Some(b)) = (left.read_lock::<Array>(), right.read_lock::<Array>()) {
        return a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| same(x, y));
    }
    if let (Some(a), Some(b)) = (left.read_lock::<Map>(), right.read_lock::<Map>()) {
        return a.len() == b.len() && a.iter().all(|(key, x)| b.get(key).is_some_and(|y| same(x, y)));
    }
    if let (Some(a), Some(b)) = (left.read_lock::<ImmutableString>(), right.read_lock::<ImmutableString>()) {
        return *a == *b;
    }
    left.type_name() == right.type_name() && left.to_string() == right.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(script: &str) -> Result<(), Box<EvalAltResult>> {
        let mut engine = Engine::new();
        register(&mut engine);
        engine.run(script)
    }

    fn message(script: &str) -> String {
        match *run(script).unwrap_err() {
            EvalAltResult::ErrorRuntime(value, position) => {
                assert!(!position.is_none(), "the failure is placed at the call");
                value.to_string()
            }
            other => panic!("not a runtime error: {other}"),
        }
    }

    #[test]
    fn equal_values_pass_whatever_their_shape() {
        run(r#"assert_eq([1, "a", #{b: [2.0]}], [1, "a", #{b: [2]}]); assert_eq((), ()); assert(true, "fine");"#)
            .unwrap();
    }

    #[test]
    fn a_failed_assert_eq_names_both_values_in_debug_form() {
        assert_eq!(message(r#"assert_eq("abc", "abd")"#), r#"assert_eq failed: actual "abc", expected "abd""#);
        assert_eq!(message("assert_eq([1, 2], [1])"), "assert_eq failed: actual [1, 2], expected [1]");
    }

    #[test]
    fn values_of_unrelated_types_are_not_equal() {
        assert_eq!(message(r#"assert_eq(1, "1")"#), r#"assert_eq failed: actual 1, expected "1""#);
        assert!(!same(&Dynamic::from(true), &Dynamic::from("true")));
    }

    #[test]
    fn a_map_with_an_extra_key_is_not_equal() {
        assert!(message("assert_eq(#{a: 1, b: 2}, #{a: 1})").starts_with("assert_eq failed: actual #{"));
    }

    #[test]
    fn assert_fails_with_its_message_and_refuses_a_non_boolean() {
        assert_eq!(message(r#"assert(1 > 2, "one is not above two")"#), "assertion failed: one is not above two");
        assert_eq!(message("assert(false)"), "assertion failed");
        assert_eq!(message("assert(1)"), "`assert` takes a boolean condition, got a value of type `i64`");
    }

    #[test]
    fn assert_ne_and_assert_near_fail_with_their_values() {
        assert_eq!(message("assert_ne([1], [1.0])"), "assert_ne failed: both are [1]");
        run("assert_near(0.6309, 0.631, 0.001)").unwrap();
        assert_eq!(message("assert_near(0.5, 0.6, 0.01)"), "assert_near failed: actual 0.5, expected 0.6 ± 0.01");
    }
}
