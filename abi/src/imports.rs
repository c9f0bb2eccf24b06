//! The contract of language strategies: guests that export `extract_imports`.
//!
//! Import strings follow the memory-hook spec: `module.name` for each name a statement imports
//! (`next/cache.updateTag`, `react.useState`), and the module alone when the statement names
//! nothing (a default, namespace, glob, blank or side-effect import: `react`, `./styles.css`).
//! Strings keep the language's own module syntax (`next/cache`, `a.b`, `std::collections`), appear
//! in source order, and each appears once.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The name of the function every language strategy exports.
pub const EXTRACT_IMPORTS: &str = "extract_imports";

/// A source file: what `extract_imports` takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// As the caller knows it; strategies may use the extension (`.tsx`), never the file system.
    pub path: String,
    pub content: String,
}

/// What `extract_imports` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Imports {
    /// `typescript`, `javascript`, `python`, `go`, `rust`, …
    pub language: String,
    pub imports: Vec<String>,
}

/// Collects import strings in first-seen order without repeats.
#[derive(Debug, Default, Clone)]
pub struct ImportList {
    imports: Vec<String>,
    seen: BTreeSet<String>,
}

impl ImportList {
    pub fn push(&mut self, import: impl Into<String>) {
        let import = import.into();
        if !import.is_empty() && self.seen.insert(import.clone()) {
            self.imports.push(import);
        }
    }

    /// `module.name`, or `module` when `name` is `None`.
    pub fn push_named(&mut self, module: &str, name: Option<&str>) {
        match name {
            Some(name) if !name.is_empty() => self.push(format!("{module}.{name}")),
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
    fn an_import_list_keeps_first_seen_order_and_drops_repeats() {
        let mut list = ImportList::default();
        list.push_named("react", Some("useState"));
        list.push_named("next/cache", None);
        list.push_named("react", Some("useState"));
        list.push("");
        assert_eq!(list.into_vec(), ["react.useState", "next/cache"]);
    }
}
