//! Declared script flags: a script says once which flags it takes (name, type, default, where the
//! scenario may set it, allowed values, help), and [`resolve`] checks the run's arguments against
//! that declaration and returns every flag's value: the command line's, else the environment
//! variable's it names, else the scenario's, else the default. `--help` gives the help text
//! instead. Pure: no I/O (the environment comes in as a lookup), no Rhai.

use serde::Deserialize;
use serde_json::{Map, Value};

/// One declared flag, as a script writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlagSpec {
    /// `provider`, `scenario-id` or `scenario_id`: the value's key uses underscores.
    pub name: String,
    #[serde(rename = "type", default)]
    pub kind: FlagType,
    /// The value when the flag is absent (`default` is a reserved word in Rhai).
    #[serde(default)]
    pub default_value: Value,
    #[serde(default)]
    pub required: bool,
    /// The only values accepted, if given.
    #[serde(default)]
    pub allowed: Vec<Value>,
    /// A dotted path in the scenario (`verify.model`) whose value replaces the default.
    #[serde(default)]
    pub scenario: Option<String>,
    /// An environment variable (`LLM_MODEL`) whose value, when set and not empty, wins over the
    /// scenario and the default (the command line still wins over it).
    #[serde(default)]
    pub env: Option<String>,
    pub help: String,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FlagType {
    #[default]
    String,
    Int,
    Float,
    Bool,
    /// Repeatable: every value given, in order.
    List,
}

impl FlagType {
    fn name(self) -> &'static str {
        match self {
            FlagType::String => "text",
            FlagType::Int => "an integer",
            FlagType::Float => "a number",
            FlagType::Bool => "true or false",
            FlagType::List => "a list",
        }
    }
}

/// What the arguments amount to.
#[derive(Debug, PartialEq)]
pub enum Resolved {
    /// Every declared flag's value, keyed with underscores.
    Values(Value),
    /// `--help` was given: the text to print.
    Help(String),
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FlagsError {
    #[error("invalid flag declaration {index}: {message}")]
    Declaration { index: usize, message: String },
    #[error("unknown flag `--{flag}`; the flags are: {valid}; hint: `host run {script} -- --help`")]
    Unknown { flag: String, valid: String, script: String },
    #[error("missing `--{flag}`: {help}; hint: `host run {script} -- --help`")]
    Missing { flag: String, help: String, script: String },
    #[error("`--{flag}` must be {expected}, got `{got}`")]
    Type { flag: String, expected: &'static str, got: String },
    #[error("`--{flag}` must be one of {allowed}, got `{got}`")]
    NotAllowed { flag: String, allowed: String, got: String },
}

fn dashed(name: &str) -> String {
    name.replace('_', "-")
}

/// An environment lookup: a variable's value, `None` when unset or empty.
pub type Environment<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Checks `args` (the parsed script arguments) against `specs`; `env` supplies values named by
/// `env` fields, `scenario` those named by `scenario` paths; `script` is how help and hints name
/// the script.
pub fn resolve(
    specs: &[FlagSpec],
    args: &Value,
    env: Environment<'_>,
    scenario: Option<&Value>,
    script: &str,
) -> Result<Resolved, FlagsError> {
    let keys: Vec<String> = specs.iter().map(|spec| spec.name.replace('-', "_")).collect();
    let given = args.as_object().cloned().unwrap_or_default();
    if given.get("help") == Some(&Value::Bool(true)) && !keys.iter().any(|key| key == "help") {
        return Ok(Resolved::Help(help(specs, scenario, script)));
    }
    for flag in given.keys() {
        if !keys.contains(flag) {
            let valid = specs.iter().map(|spec| format!("`--{}`", dashed(&spec.name))).collect::<Vec<_>>().join(", ");
            return Err(FlagsError::Unknown { flag: dashed(flag), valid, script: script.to_string() });
        }
    }
    let mut values = Map::new();
    for (spec, key) in specs.iter().zip(&keys) {
        let flag = dashed(key);
        let from_env = spec.env.as_deref().and_then(env);
        let value = match (given.get(key), from_env) {
            (Some(value), _) => convert(spec.kind, value, &flag)?,
            (None, Some(text)) => from_text(spec.kind, &text, &flag)?,
            (None, None) => match scenario_value(spec, scenario) {
                Some(value) => convert(spec.kind, &value, &flag)?,
                None if spec.required => {
                    return Err(FlagsError::Missing { flag, help: spec.help.clone(), script: script.to_string() });
                }
                None if spec.default_value.is_null() && spec.kind == FlagType::List => Value::Array(Vec::new()),
                None => spec.default_value.clone(),
            },
        };
        if !spec.allowed.is_empty() && !value.is_null() && !spec.allowed.contains(&value) {
            let allowed =
                spec.allowed.iter().map(|allowed| format!("`{}`", plain(allowed))).collect::<Vec<_>>().join(", ");
            return Err(FlagsError::NotAllowed { flag, allowed, got: plain(&value) });
        }
        values.insert(key.clone(), value);
    }
    Ok(Resolved::Values(Value::Object(values)))
}

/// Checks a declaration before any argument is looked at.
pub fn check_declaration(specs: &[FlagSpec]) -> Result<(), FlagsError> {
    for (index, spec) in specs.iter().enumerate() {
        let bad = |message: String| Err(FlagsError::Declaration { index, message });
        let valid_name =
            !spec.name.is_empty() && spec.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid_name {
            return bad(format!("`name` `{}` must be letters, digits, `-` and `_`", spec.name));
        }
        if specs[..index].iter().any(|earlier| earlier.name.replace('-', "_") == spec.name.replace('-', "_")) {
            return bad(format!("`{}` is declared twice", spec.name));
        }
        if !spec.default_value.is_null() && convert(spec.kind, &spec.default_value, &spec.name).is_err() {
            return bad(format!("the default of `{}` is not {}", spec.name, spec.kind.name()));
        }
    }
    Ok(())
}

fn scenario_value(spec: &FlagSpec, scenario: Option<&Value>) -> Option<Value> {
    let path = spec.scenario.as_deref()?;
    let mut value = scenario?;
    for part in path.split('.') {
        value = value.get(part)?;
    }
    Some(value.clone())
}

/// `value` as the flag's type: text also takes numbers (`--model 4` is the text `4`), a float
/// takes integers, a list takes one value or many.
fn convert(kind: FlagType, value: &Value, flag: &str) -> Result<Value, FlagsError> {
    let wrong = || FlagsError::Type { flag: flag.to_string(), expected: kind.name(), got: plain(value) };
    match (kind, value) {
        (FlagType::String, Value::String(_)) => Ok(value.clone()),
        (FlagType::String, Value::Number(number)) => Ok(Value::String(number.to_string())),
        (FlagType::Int, Value::Number(number)) if number.is_i64() => Ok(value.clone()),
        (FlagType::Float, Value::Number(number)) => number.as_f64().map(Value::from).ok_or_else(wrong),
        (FlagType::Bool, Value::Bool(_)) => Ok(value.clone()),
        (FlagType::List, Value::Array(items)) => {
            Ok(Value::Array(items.iter().map(|item| Value::String(plain(item))).collect()))
        }
        (FlagType::List, Value::String(_) | Value::Number(_)) => Ok(Value::Array(vec![Value::String(plain(value))])),
        _ => Err(wrong()),
    }
}

/// An environment variable's text as the flag's type: numbers and `true`/`false` are parsed, a
/// list is split at commas.
fn from_text(kind: FlagType, text: &str, flag: &str) -> Result<Value, FlagsError> {
    let wrong = || FlagsError::Type { flag: flag.to_string(), expected: kind.name(), got: text.to_string() };
    match kind {
        FlagType::String => Ok(Value::String(text.to_string())),
        FlagType::Int => text.trim().parse::<i64>().map(Value::from).map_err(|_| wrong()),
        FlagType::Float => {
            text.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number).ok_or_else(wrong)
        }
        FlagType::Bool => match text.trim() {
            "true" | "1" => Ok(Value::Bool(true)),
            "false" | "0" => Ok(Value::Bool(false)),
            _ => Err(wrong()),
        },
        FlagType::List => {
            Ok(Value::Array(text.split(',').map(|item| Value::String(item.trim().to_string())).collect()))
        }
    }
}

/// A value as a person typed it: text without quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The help text: one line per flag, with its type, default (the scenario's when it sets one)
/// and allowed values.
pub fn help(specs: &[FlagSpec], scenario: Option<&Value>, script: &str) -> String {
    let mut text = format!("Flags of {script} (after `--`):\n");
    for spec in specs {
        let placeholder = match spec.kind {
            FlagType::Bool => String::new(),
            FlagType::List => " <value>...".to_string(),
            kind => format!(" <{}>", if kind == FlagType::String { "text" } else { "number" }),
        };
        let mut notes = Vec::new();
        if spec.required {
            notes.push("required".to_string());
        } else if let Some(value) = scenario_value(spec, scenario) {
            notes.push(format!("default: {} (from the scenario)", plain(&value)));
        } else if !spec.default_value.is_null() {
            notes.push(format!("default: {}", plain(&spec.default_value)));
        }
        if let Some(variable) = &spec.env {
            notes.push(format!("env: {variable}"));
        }
        if !spec.allowed.is_empty() {
            notes.push(format!("one of: {}", spec.allowed.iter().map(plain).collect::<Vec<_>>().join(", ")));
        }
        if spec.kind == FlagType::List {
            notes.push("repeatable".to_string());
        }
        let notes = if notes.is_empty() { String::new() } else { format!(" [{}]", notes.join("; ")) };
        text.push_str(&format!("  --{}{placeholder}\n      {}{notes}\n", dashed(&spec.name), spec.help));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn specs() -> Vec<FlagSpec> {
        serde_json::from_value(json!([
            {"name": "provider", "required": true, "help": "the model provider"},
            {"name": "model", "default_value": "gpt-5.1-codex-mini", "scenario": "verify.model", "help": "the model id"},
            {"name": "repetitions", "type": "int", "default_value": 1, "help": "runs per scenario"},
            {"name": "scenario-id", "type": "list", "help": "verify only these"},
            {"name": "mode", "default_value": "paired", "allowed": ["paired", "ghx"], "help": "which modes"},
            {"name": "confirm", "type": "bool", "default_value": false, "help": "run the confirmation"}
        ]))
        .expect("a declaration")
    }

    fn resolved(args: Value, scenario: Option<&Value>) -> Result<Value, FlagsError> {
        match resolve(&specs(), &args, &|_| None, scenario, "scripts/x.rhai")? {
            Resolved::Values(values) => Ok(values),
            Resolved::Help(text) => panic!("unexpected help: {text}"),
        }
    }

    #[test]
    fn an_environment_variable_wins_over_the_scenario_but_not_over_the_command_line() {
        let specs: Vec<FlagSpec> = serde_json::from_value(json!([
            {"name": "model", "env": "LLM_MODEL", "scenario": "roles.model", "default_value": "gpt-4o-mini", "help": "m"},
            {"name": "passes", "type": "int", "env": "PASSES", "default_value": 1, "help": "p"},
        ]))
        .expect("specs");
        let scenario = json!({"roles": {"model": "from-scenario"}});
        let env = |name: &str| match name {
            "LLM_MODEL" => Some("from-env".to_string()),
            "PASSES" => Some("3".to_string()),
            _ => None,
        };
        let values = |args: Value| match resolve(&specs, &args, &env, Some(&scenario), "scripts/x.rhai") {
            Ok(Resolved::Values(values)) => values,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(values(json!({})), json!({"model": "from-env", "passes": 3}));
        assert_eq!(values(json!({"model": "given"}))["model"], json!("given"));
        let typo = |_: &str| Some("three".to_string());
        assert_eq!(
            resolve(&specs, &json!({}), &typo, None, "scripts/x.rhai"),
            Err(FlagsError::Type { flag: "passes".into(), expected: "an integer", got: "three".into() })
        );
        let help = help(&specs, Some(&scenario), "scripts/x.rhai");
        assert!(help.contains("[default: from-scenario (from the scenario); env: LLM_MODEL]"), "{help}");
    }

    #[test]
    fn command_line_values_win_over_the_scenario_which_wins_over_defaults() {
        let scenario = json!({"verify": {"model": "from-scenario"}});
        let values = resolved(json!({"provider": "openai", "scenario_id": "a-001"}), Some(&scenario)).expect("valid");
        assert_eq!(
            values,
            json!({"provider": "openai", "model": "from-scenario", "repetitions": 1, "scenario_id": ["a-001"], "mode": "paired", "confirm": false})
        );
        let values = resolved(json!({"provider": "openai", "model": 5, "scenario_id": ["a", "b"]}), Some(&scenario))
            .expect("valid");
        assert_eq!((values["model"].clone(), values["scenario_id"].clone()), (json!("5"), json!(["a", "b"])));
    }

    #[test]
    fn each_bad_argument_is_an_error_naming_the_flag() {
        let errors: Vec<String> = [
            json!({}),
            json!({"provider": "openai", "repetitons": 2}),
            json!({"provider": "openai", "repetitions": "two"}),
            json!({"provider": "openai", "mode": "mcp"}),
            json!({"provider": "openai", "confirm": "yes"}),
        ]
        .into_iter()
        .map(|args| resolved(args, None).expect_err("invalid").to_string())
        .collect();
        assert_eq!(errors[0], "missing `--provider`: the model provider; hint: `host run scripts/x.rhai -- --help`");
        assert!(
            errors[1].starts_with("unknown flag `--repetitons`; the flags are: `--provider`, `--model`"),
            "{}",
            errors[1]
        );
        assert_eq!(errors[2], "`--repetitions` must be an integer, got `two`");
        assert_eq!(errors[3], "`--mode` must be one of `paired`, `ghx`, got `mcp`");
        assert_eq!(errors[4], "`--confirm` must be true or false, got `yes`");
    }

    #[test]
    fn help_lists_every_flag_with_its_default_or_the_scenarios() {
        let scenario = json!({"verify": {"model": "gpt-5.3-codex"}});
        let Ok(Resolved::Help(text)) =
            resolve(&specs(), &json!({"help": true}), &|_| None, Some(&scenario), "scripts/x.rhai")
        else {
            panic!("help expected");
        };
        assert!(text.contains("  --provider <text>\n      the model provider [required]\n"), "{text}");
        assert!(
            text.contains("  --model <text>\n      the model id [default: gpt-5.3-codex (from the scenario)]\n"),
            "{text}"
        );
        assert!(text.contains("  --mode <text>\n      which modes [default: paired; one of: paired, ghx]\n"), "{text}");
        assert!(text.contains("  --scenario-id <value>...\n      verify only these [repeatable]\n"), "{text}");
        assert!(text.contains("  --confirm\n      run the confirmation [default: false]\n"), "{text}");
    }

    #[test]
    fn a_declaration_with_a_twice_declared_flag_or_a_mistyped_default_is_refused() {
        let twice: Vec<FlagSpec> =
            serde_json::from_value(json!([{"name": "a-b", "help": "x"}, {"name": "a_b", "help": "y"}])).expect("specs");
        assert!(check_declaration(&twice).expect_err("twice").to_string().contains("`a_b` is declared twice"));
        let typed: Vec<FlagSpec> =
            serde_json::from_value(json!([{"name": "n", "type": "int", "default_value": "one", "help": "x"}]))
                .expect("specs");
        assert!(
            check_declaration(&typed).expect_err("typed").to_string().contains("the default of `n` is not an integer")
        );
    }
}
