//! How a call's input crosses into a guest (`abi`'s calling convention): JSON, with a top-level
//! string `content` split off and sent as raw UTF-8 after it. The host then never escapes the
//! text and the guest never unescapes or copies it. This module only encodes; `abi.rs` writes.

use serde::Serialize;
use serde_json::{Map, Value};

/// A call's input, encoded for the guest.
#[derive(Debug)]
pub struct Input<'a> {
    /// The input as JSON, without `content` when that travels raw.
    pub(super) json: Vec<u8>,
    /// `content`'s text, sent as it is.
    pub(super) raw: Option<&'a str>,
}

impl<'a> Input<'a> {
    /// `value` with its top-level string `content`, if it has one, as raw text: how calls send
    /// their input unless told otherwise.
    pub fn split(value: &'a Value) -> Result<Input<'a>, serde_json::Error> {
        match value {
            Value::Object(fields) => match fields.get(::abi::RAW_FIELD) {
                Some(Value::String(content)) => Input::with_content(fields, content),
                _ => Input::json(value),
            },
            _ => Input::json(value),
        }
    }

    /// `value` all as JSON, `content` included: the general form, which every guest also
    /// accepts (the benchmark compares it with the split one).
    pub fn json(value: &Value) -> Result<Input<'a>, serde_json::Error> {
        Ok(Input { json: serde_json::to_vec(value)?, raw: None })
    }

    /// The object `fields` (any `content` among them left out) with `content` as raw text.
    pub fn with_content(fields: &Map<String, Value>, content: &'a str) -> Result<Input<'a>, serde_json::Error> {
        Ok(Input { json: serde_json::to_vec(&WithoutContent(fields))?, raw: Some(content) })
    }

    /// Bytes written into the guest for this input.
    pub fn len(&self) -> usize {
        self.json.len() + self.raw.map_or(0, str::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An object without its `content` field, serialised without copying the rest.
struct WithoutContent<'a>(&'a Map<String, Value>);

impl Serialize for WithoutContent<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().filter(|(name, _)| name.as_str() != ::abi::RAW_FIELD))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parts(input: &Input<'_>) -> (Value, Option<String>) {
        (serde_json::from_slice(&input.json).unwrap(), input.raw.map(str::to_string))
    }

    #[test]
    fn a_string_content_travels_raw_and_the_rest_as_json() {
        let value = json!({ "path": "a.ts", "content": "import x from \"y\"\n" });
        let input = Input::split(&value).unwrap();
        assert_eq!(parts(&input), (json!({ "path": "a.ts" }), Some("import x from \"y\"\n".into())));
        assert_eq!(input.len(), input.json.len() + 18);
    }

    #[test]
    fn an_input_without_a_string_content_is_all_json() {
        for value in [json!(null), json!([1, 2]), json!({ "mib": 8 }), json!({ "content": 3 })] {
            assert_eq!(parts(&Input::split(&value).unwrap()), (value.clone(), None), "{value}");
        }
    }

    #[test]
    fn the_json_form_keeps_content_in_the_json() {
        let value = json!({ "path": "a.go", "content": "package a" });
        assert_eq!(parts(&Input::json(&value).unwrap()), (value, None));
    }

    #[test]
    fn separate_content_wins_over_a_content_field() {
        let fields = json!({ "path": "a.py", "content": "stale" });
        let input = Input::with_content(fields.as_object().unwrap(), "import os").unwrap();
        assert_eq!(parts(&input), (json!({ "path": "a.py" }), Some("import os".into())));
    }
}
