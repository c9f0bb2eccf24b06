//! Decoding what a script wrote (a map) into a capability's boundary type, naming the field at
//! fault: serde's own messages say what was wrong (`invalid type: integer, expected a string`)
//! but not where. Shared by every capability that takes a request or options map.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A value that does not fit the type: the field when one can be named, and serde's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: Option<String>,
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.field {
            Some(field) => write!(formatter, "`{field}`: {}", self.message),
            None => formatter.write_str(&self.message),
        }
    }
}

/// Decodes `value` into `T`. On failure each field is tried alone on top of `minimal` (the
/// smallest valid value) to find the one at fault; an unknown field is named by serde itself.
pub fn decode<T: DeserializeOwned>(value: Value, minimal: &Value) -> Result<T, FieldError> {
    let whole = match serde_json::from_value::<T>(value.clone()) {
        Ok(decoded) => return Ok(decoded),
        Err(error) => error.to_string(),
    };
    if let Value::Object(fields) = value
        && !whole.starts_with("unknown field")
    {
        for (name, field) in fields {
            let mut probe = minimal.clone();
            probe[name.as_str()] = field;
            if let Err(error) = serde_json::from_value::<T>(probe) {
                return Err(FieldError { field: Some(name), message: error.to_string() });
            }
        }
    }
    Err(FieldError { field: None, message: whole })
}

/// Seconds written as an integer (`30`) or a float (`0.5`): scripts write both. For
/// `#[serde(deserialize_with = "...")]`.
pub fn seconds<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    let value = Value::deserialize(deserializer)?;
    value.as_f64().ok_or_else(|| serde::de::Error::custom(format!("expected a number of seconds, got `{value}`")))
}

/// [`seconds`] for an optional field (with `#[serde(default)]`).
pub fn optional_seconds<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    seconds(deserializer).map(Some)
}
