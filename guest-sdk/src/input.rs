//! A call's input as the host hands it over: JSON, then, when the input had a string `content`
//! field, that text as raw UTF-8 (see `abi`'s calling convention). Decoding puts the field back
//! as a borrowed `&str`, so a guest function's input type sees the input the caller wrote, and a
//! `Cow<str>` or `&str` field reads the text where the host wrote it: no unescaping, no copy.

use std::fmt;

use abi::Failure;
use serde::Deserialize;
use serde::de::value::BorrowedStrDeserializer;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};

/// The bytes of one input, owned for the length of the call.
pub struct Input {
    bytes: Vec<u8>,
    json_len: usize,
    has_raw: bool,
}

impl Input {
    /// `bytes` holding `json_len` bytes of JSON, then (when `has_raw`) the raw `content`.
    /// A `json_len` past the end counts as all JSON, which then fails to decode.
    pub fn new(bytes: Vec<u8>, json_len: usize, has_raw: bool) -> Input {
        let json_len = json_len.min(bytes.len());
        Input { bytes, json_len, has_raw }
    }

    /// The input as `I`, borrowing from these bytes; a failure names what did not decode.
    pub fn decode<'a, I: Deserialize<'a>>(&'a self) -> Result<I, Failure> {
        let (json, raw) = self.bytes.split_at(self.json_len);
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let decoded = if self.has_raw {
            let content = std::str::from_utf8(raw).map_err(|error| {
                Failure::invalid_input(format!("the input's raw `{}` is not UTF-8: {error}", abi::RAW_FIELD))
            })?;
            I::deserialize(WithContent { json: &mut deserializer, content })
        } else {
            I::deserialize(&mut deserializer)
        };
        decoded
            .and_then(|input| deserializer.end().map(|()| input))
            .map_err(|error| Failure::invalid_input(format!("input did not decode: {error}")))
    }
}

/// The JSON object with `content` added as its last field.
struct WithContent<'a, 'j> {
    json: &'j mut serde_json::Deserializer<serde_json::de::SliceRead<'a>>,
    content: &'a str,
}

impl<'de> Deserializer<'de> for WithContent<'de, '_> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.json.deserialize_any(Appending { visitor, content: self.content })
    }

    // An object is present, so an `Option` of the input type is `Some` of it, and a newtype
    // around it reads the object itself, as they would from the same input sent as JSON.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    // Whatever else the type asks for, the JSON is an object (the host sends raw text with no
    // other kind of input), so every request is read as one.
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// Hands the type's visitor the object's fields followed by `content`.
struct Appending<'a, V> {
    visitor: V,
    content: &'a str,
}

impl<'a, V: Visitor<'a>> Visitor<'a> for Appending<'a, V> {
    type Value = V::Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "an object (the input has a raw `{}`, so it is one)", abi::RAW_FIELD)
    }

    fn visit_map<M: MapAccess<'a>>(self, map: M) -> Result<V::Value, M::Error> {
        self.visitor.visit_map(Fields { map, content: Some(self.content), map_done: false, at_content: false })
    }
}

struct Fields<'a, M> {
    map: M,
    /// Until its key has been read.
    content: Option<&'a str>,
    map_done: bool,
    /// The key just read was `content`'s.
    at_content: bool,
}

impl<'a, M: MapAccess<'a>> MapAccess<'a> for Fields<'a, M> {
    type Error = M::Error;

    fn next_key_seed<K: DeserializeSeed<'a>>(&mut self, seed: K) -> Result<Option<K::Value>, M::Error> {
        if !self.map_done {
            // The seed is used once, so the key is read here or not at all.
            let mut seed = Some(seed);
            let key = self.map.next_key_seed(Forward(&mut seed))?;
            if key.is_some() {
                return Ok(key);
            }
            self.map_done = true;
            let Some(seed) = seed else { return Ok(None) };
            return self.content_key(seed);
        }
        Ok(None)
    }

    fn next_value_seed<S: DeserializeSeed<'a>>(&mut self, seed: S) -> Result<S::Value, M::Error> {
        match (self.at_content, self.content) {
            (true, Some(content)) => {
                self.at_content = false;
                self.content = None;
                seed.deserialize(BorrowedStrDeserializer::new(content))
            }
            _ => self.map.next_value_seed(seed),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint().map(|fields| fields + usize::from(self.content.is_some()))
    }
}

impl<'a, M: MapAccess<'a>> Fields<'a, M> {
    fn content_key<K: DeserializeSeed<'a>>(&mut self, seed: K) -> Result<Option<K::Value>, M::Error> {
        if self.content.is_none() {
            return Ok(None);
        }
        self.at_content = true;
        seed.deserialize(BorrowedStrDeserializer::new(abi::RAW_FIELD)).map(Some)
    }
}

/// A seed that is consumed only if the map really has another key, so that at the map's end
/// it is still there for `content`'s key.
struct Forward<'s, K>(&'s mut Option<K>);

impl<'a, K: DeserializeSeed<'a>> DeserializeSeed<'a> for Forward<'_, K> {
    type Value = K::Value;

    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<K::Value, D::Error> {
        match self.0.take() {
            Some(seed) => seed.deserialize(deserializer),
            None => Err(serde::de::Error::custom("a map key was read twice")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use abi::imports::Source;
    use serde_json::{Value, json};

    use super::*;

    fn split(json: &str, content: Option<&str>) -> Input {
        let mut bytes = json.as_bytes().to_vec();
        bytes.extend_from_slice(content.unwrap_or("").as_bytes());
        Input::new(bytes, json.len(), content.is_some())
    }

    #[test]
    fn raw_content_comes_back_as_the_content_field_borrowed_not_copied() {
        let input = split(r#"{"path":"a.ts"}"#, Some("import x from 'y'\n"));
        let source: Source<'_> = input.decode().unwrap();
        assert_eq!(source.path, "a.ts");
        assert!(matches!(source.content, Cow::Borrowed("import x from 'y'\n")));
    }

    #[test]
    fn raw_content_reads_like_the_same_input_sent_as_json() {
        let text = "line \"one\"\n\ttwo \\ é 🦀";
        let raw: Value = split(r#"{"b":[1,2],"a":null}"#, Some(text)).decode().unwrap();
        let json: Value =
            split(&json!({ "b": [1, 2], "a": null, "content": text }).to_string(), None).decode().unwrap();
        assert_eq!(raw, json);
    }

    #[test]
    fn an_input_without_raw_content_is_plain_json() {
        let input = split(r#"{"path":"a.py","content":"import os"}"#, None);
        let source: Source<'_> = input.decode().unwrap();
        assert_eq!(source.content, "import os");
        let nothing: Value = split("null", None).decode().unwrap();
        assert_eq!(nothing, Value::Null);
    }

    #[test]
    fn raw_content_that_is_not_utf8_is_refused_as_invalid_input() {
        let mut bytes = br#"{"path":"a.ts"}"#.to_vec();
        bytes.extend_from_slice(b"import \xff");
        let failure = Input::new(bytes, 15, true).decode::<Source<'_>>().unwrap_err();
        assert_eq!(failure.kind, abi::FailureKind::InvalidInput);
        assert!(failure.message.starts_with("the input's raw `content` is not UTF-8"), "{failure}");
    }

    #[test]
    fn a_content_field_in_both_parts_is_a_duplicate() {
        let failure = split(r#"{"path":"a","content":"x"}"#, Some("y")).decode::<Source<'_>>().unwrap_err();
        assert!(failure.message.contains("duplicate field `content`"), "{failure}");
    }

    #[test]
    fn an_optional_or_newtype_input_reads_raw_content_as_it_reads_json() {
        #[derive(Debug, PartialEq, Deserialize)]
        struct Wrapped<'a>(#[serde(borrow)] Source<'a>);
        let raw = split(r#"{"path":"a.go"}"#, Some("import \"fmt\""));
        let json = split(r#"{"path":"a.go","content":"import \"fmt\""}"#, None);
        let optional: Option<Source<'_>> = raw.decode().unwrap();
        assert_eq!(optional, json.decode::<Option<Source<'_>>>().unwrap());
        assert_eq!(optional.map(|source| source.path), Some("a.go".into()));
        let wrapped: Wrapped<'_> = raw.decode().unwrap();
        assert_eq!(wrapped, json.decode::<Wrapped<'_>>().unwrap());
        assert!(matches!(wrapped.0.content, Cow::Borrowed("import \"fmt\"")));
    }

    #[test]
    fn raw_content_with_an_input_that_is_not_an_object_is_refused() {
        let failure = split("[1]", Some("text")).decode::<Value>().unwrap_err();
        assert!(failure.message.contains("an object"), "{failure}");
    }

    #[test]
    fn unknown_fields_are_still_refused_and_trailing_bytes_still_fail() {
        let unknown = split(r#"{"path":"a","extra":1}"#, Some("x")).decode::<Source<'_>>().unwrap_err();
        assert!(unknown.message.contains("unknown field `extra`"), "{unknown}");
        let trailing = split(r#"{"path":"a"} x"#, Some("x")).decode::<Source<'_>>().unwrap_err();
        assert!(trailing.message.contains("trailing characters"), "{trailing}");
    }
}
