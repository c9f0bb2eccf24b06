//! The Rhai namespace `json::`.

use rhai::{Dynamic, EvalAltResult, Module, NativeCallContext};

use crate::capabilities::{docs::function, script_error};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

pub fn module() -> Module {
    let mut module = Module::new();

    function(
        "parse",
        &["text: &str", "Dynamic"],
        "
Parses JSON text into maps, arrays, strings, numbers and booleans (`null` becomes `()`).
A syntax error is a catchable error naming the line and column.
Example: `let reply = json::parse(\"{\\\"score\\\": 3}\"); print(reply.score);`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, text: &str| -> Result<Dynamic> {
        let value = super::parse(text).map_err(|error| script_error(&context, &error))?;
        rhai::serde::to_dynamic(value)
    });

    function(
        "objects_in",
        &["text: &str", "Array"],
        "
Every JSON object written in `text`, in order, as maps: how to read a model's reply that wraps
its JSON in prose or a code fence. An object nested in a found one is part of it; text that is
not a valid object is skipped, so a reply without one gives `[]`.
Example: `let verdict = json::objects_in(reply.text).filter(|o| \"score\" in o);`",
    )
    .set_into_module(&mut module, |text: &str| -> Result<rhai::Array> {
        super::objects_in(text)
            .into_iter()
            .map(|object| rhai::serde::to_dynamic(serde_json::Value::Object(object)))
            .collect()
    });

    function(
        "stringify",
        &["value: Dynamic", "String"],
        "
Compact JSON text for a value; map keys come out sorted.
Example: `let line = json::stringify(#{ id: 1, tags: [\"a\"] });`",
    )
    .set_into_module(&mut module, |value: Dynamic| -> Result<String> {
        let value: serde_json::Value = rhai::serde::from_dynamic(&value)?;
        Ok(value.to_string())
    });

    function(
        "pretty",
        &["value: Dynamic", "String"],
        "
Indented JSON text for a value, for humans.
Example: `log::info(json::pretty(summary));`",
    )
    .set_into_module(&mut module, |context: NativeCallContext, value: Dynamic| -> Result<String> {
        let value: serde_json::Value = rhai::serde::from_dynamic(&value)?;
        serde_json::to_string_pretty(&value).map_err(|error| script_error(&context, &error))
    });

    module
}
