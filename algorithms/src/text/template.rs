//! Prompt templates: Jinja syntax through minijinja (`{{ name }}`, `{% if name %}…{% endif %}`,
//! `{% for x in items %}`), with no HTML escaping, strict about names: a placeholder the values
//! do not define is an error naming the template, the line and the values there are, never an
//! empty string in a prompt. One trailing newline of the template is dropped, so a template file
//! may end its last line.

use std::collections::BTreeSet;

use minijinja::{Environment, UndefinedBehavior};

use super::{Result, TextError};

/// `template` (called `name` in errors) filled from `values`, a map of names to strings,
/// numbers, booleans, lists or maps.
pub fn render(name: &str, template: &str, values: &serde_json::Value) -> Result<String> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    let fail = |error: minijinja::Error| TextError::Template {
        name: name.to_string(),
        line: error.line(),
        message: error.detail().map_or_else(|| error.kind().to_string(), str::to_string),
    };
    let compiled = env.template_from_named_str(name, template).map_err(fail)?;
    let known: BTreeSet<&str> = match values {
        serde_json::Value::Object(map) => map.keys().map(String::as_str).collect(),
        _ => return Err(TextError::TemplateValues { name: name.to_string() }),
    };
    if let Some(unknown) = compiled.undeclared_variables(false).into_iter().find(|used| !known.contains(used.as_str()))
    {
        return Err(TextError::Placeholder {
            name: name.to_string(),
            line: line_of(template, &unknown),
            placeholder: unknown,
            known: known.into_iter().collect::<Vec<_>>().join(", "),
        });
    }
    compiled.render(minijinja::Value::from_serialize(values)).map_err(fail)
}

/// The first line (1-based) where `word` appears inside `{{ }}` or `{% %}`, for the error.
fn line_of(template: &str, word: &str) -> Option<usize> {
    template.lines().position(|line| line.contains(word) && (line.contains("{{") || line.contains("{%"))).map(|i| i + 1)
}

#[cfg(test)]
#[path = "template_tests.rs"]
mod tests;
