//! Script arguments: what follows `--` on the command line, as a map a script can read.

use serde_json::{Map, Value};

/// Parses `--key value`, `--key=value` and `--flag` into an object.
///
/// - Dashes in keys become underscores, so `--dry-run` is `ARGS.dry_run`.
/// - A flag followed by nothing, or by another `--option`, is `true`.
/// - Values that read as integers, floats or `true`/`false` get that type; others stay strings.
/// - A repeated key collects its values into an array.
/// - Tokens that are not options (positional arguments) appear only in the raw list.
pub fn parse_script_args(raw: &[String]) -> Value {
    let mut parsed = Map::new();
    let mut index = 0;
    while let Some(token) = raw.get(index) {
        index += 1;
        let Some(option) = token.strip_prefix("--").filter(|option| !option.is_empty()) else {
            continue;
        };
        let (key, value) = match option.split_once('=') {
            Some((key, value)) => (key, typed(value)),
            None => match raw.get(index) {
                Some(next) if !next.starts_with("--") => {
                    index += 1;
                    (option, typed(next))
                }
                _ => (option, Value::Bool(true)),
            },
        };
        let key = key.replace('-', "_");
        match parsed.remove(&key) {
            None => parsed.insert(key, value),
            Some(Value::Array(mut values)) => {
                values.push(value);
                parsed.insert(key, Value::Array(values))
            }
            Some(previous) => parsed.insert(key, Value::Array(vec![previous, value])),
        };
    }
    Value::Object(parsed)
}

fn typed(text: &str) -> Value {
    if let Ok(number) = text.parse::<i64>()
        && number.to_string() == text
    {
        return Value::from(number);
    }
    // Only plain decimal notation: `007`, `inf` or `NaN` are names, not numbers.
    let unsigned = text.trim_start_matches(['-', '+']);
    let leading_zero = unsigned.len() > 1 && unsigned.starts_with('0') && !unsigned.starts_with("0.");
    if let Ok(number) = text.parse::<f64>()
        && number.is_finite()
        && text.contains(['.', 'e', 'E'])
        && !leading_zero
    {
        return Value::from(number);
    }
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(tokens: &[&str]) -> Value {
        parse_script_args(&tokens.iter().map(|token| token.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options_flags_and_types() {
        let parsed =
            parse(&["--trials", "3", "--dry-run", "--judge-temperature=0.5", "--profile", "ubundi", "--offset", "-2"]);
        assert_eq!(
            parsed,
            json!({"trials": 3, "dry_run": true, "judge_temperature": 0.5, "profile": "ubundi", "offset": -2})
        );
    }

    #[test]
    fn a_flag_before_another_option_is_true() {
        assert_eq!(parse(&["--verbose", "--seed", "7"]), json!({"verbose": true, "seed": 7}));
    }

    #[test]
    fn repeated_options_collect_into_an_array() {
        assert_eq!(parse(&["--tag", "a", "--tag", "b", "--tag=c"]), json!({"tag": ["a", "b", "c"]}));
    }

    #[test]
    fn values_that_only_look_numeric_stay_strings() {
        assert_eq!(
            parse(&["--suffix", "007", "--name", "inf", "--flag", "false"]),
            json!({"suffix": "007", "name": "inf", "flag": false})
        );
    }

    #[test]
    fn positional_tokens_are_not_options() {
        assert_eq!(parse(&["input.json", "--", "--x", "1"]), json!({"x": 1}));
    }
}
