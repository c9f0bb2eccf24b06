//! The contract of language strategies: guests that export `extract_imports`.
//!
//! Import strings follow the memory-hook spec: `module.name` for each name a statement imports
//! (`next/cache.updateTag`, `react.useState`), and the module alone when the statement names
//! nothing (a default, namespace, glob, blank or side-effect import: `react`, `./styles.css`).
//! Strings keep the language's own module syntax (`next/cache`, `a.b`, `std::collections`), appear
//! in source order, and each appears once.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The name of the function every language strategy exports.
pub const EXTRACT_IMPORTS: &str = "extract_imports";

/// A source file: what `extract_imports` takes. Both fields borrow from the call's input where
/// they can (in a guest, `content` arrives as raw text and is never copied), and own a copy
/// where they must (a JSON string with escapes); either way they read as `&str`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source<'a> {
    /// As the caller knows it; strategies may use the extension (`.tsx`), never the file system.
    #[serde(borrow)]
    pub path: Cow<'a, str>,
    #[serde(borrow)]
    pub content: Cow<'a, str>,
}

/// What `extract_imports` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Imports {
    /// `typescript`, `javascript`, `python`, `go`, `rust`, …
    pub language: String,
    pub imports: Vec<String>,
}

/// Collects import strings in first-seen order without repeats. A repeat costs a lookup and no
/// allocation: a file may import the same thing many times, and a strategy calls this for each.
#[derive(Debug, Default, Clone)]
pub struct ImportList {
    imports: Vec<String>,
    seen: BTreeSet<String>,
    /// Where `push_named` writes `module.name` before looking it up.
    scratch: String,
}

impl ImportList {
    pub fn push(&mut self, import: impl AsRef<str>) {
        let import = import.as_ref();
        if !import.is_empty() && !self.seen.contains(import) {
            self.seen.insert(import.to_owned());
            self.imports.push(import.to_owned());
        }
    }

    /// `module.name`, or `module` when `name` is `None`.
    pub fn push_named(&mut self, module: &str, name: Option<&str>) {
        match name {
            Some(name) if !name.is_empty() => {
                let mut qualified = std::mem::take(&mut self.scratch);
                qualified.clear();
                qualified.extend([module, ".", name]);
                self.push(&qualified);
                self.scratch = qualified;
            }
            _ => self.push(module),
        }
    }

    pub fn len(&self) -> usize {
        self.imports.len()
    }

    pub fn is_empty(&self) -> bool {
        self.imports.is_empty()
    }

    pub fn into_vec(self) -> Vec<String> {
        self.imports
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_borrows_its_text_from_json_without_escapes_and_copies_it_otherwise() {
        let plain: Source<'_> = serde_json::from_str(r#"{"path":"a.ts","content":"import 'x'"}"#).unwrap();
        assert!(matches!(plain.content, Cow::Borrowed("import 'x'")));
        let escaped: Source<'_> = serde_json::from_str(r#"{"path":"a.ts","content":"a\nb"}"#).unwrap();
        assert!(matches!(escaped.content, Cow::Owned(ref text) if text == "a\nb"));
    }

    #[test]
    fn an_import_list_keeps_first_seen_order_and_drops_repeats() {
        let mut list = ImportList::default();
        list.push_named("react", Some("useState"));
        list.push_named("next/cache", None);
        list.push_named("react", Some("useState"));
        list.push("");
        assert_eq!(list.into_vec(), ["react.useState", "next/cache"]);
    }
}
