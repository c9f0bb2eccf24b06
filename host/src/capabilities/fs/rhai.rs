//! The Rhai namespace `fs::`: thin wrappers over [`Files`] and the format parsers.

use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, Module, NativeCallContext};

use super::{Files, parse_json, parse_jsonl, parse_markdown, parse_toml};
use crate::capabilities::{docs::function, script_error};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

pub fn module(files: Arc<dyn Files>) -> Module {
    let mut module = Module::new();

    let reader = files.clone();
    function(
        "read_text",
        &["path: &str", "String"],
        "
Reads a UTF-8 text file. Relative paths start at the project root; paths given on the
command line may be passed exactly as typed. Every file read is hashed into the manifest.
Example: `let notes = fs::read_text(\"fixtures/notes.md\");`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str| -> Result<String> {
        Ok(reader.read_text(path).map_err(|error| script_error(&context, &error))?.content)
    });

    let reader = files.clone();
    function(
        "read_json",
        &["path: &str", "Dynamic"],
        "
Reads and parses a JSON file; a syntax error names the file, line and column.
Example: `let sessions = fs::read_json(ARGS.sessions ?? \"fixtures/cortex/v1.1/seed-data.json\");`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str| -> Result<Dynamic> {
        let text = reader.read_text(path).map_err(|error| script_error(&context, &error))?;
        let value = parse_json(&text.path, &text.content).map_err(|error| script_error(&context, &error))?;
        rhai::serde::to_dynamic(value)
    });

    let reader = files.clone();
    function(
        "read_jsonl",
        &["path: &str", "Array"],
        "
Reads a JSON Lines file into an array, one element per non-blank line.
Example: `for row in fs::read_jsonl(\"fixtures/answers.jsonl\") { print(row.prompt); }`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str| -> Result<Array> {
        let text = reader.read_text(path).map_err(|error| script_error(&context, &error))?;
        let values = parse_jsonl(&text.path, &text.content).map_err(|error| script_error(&context, &error))?;
        values.into_iter().map(rhai::serde::to_dynamic).collect()
    });

    let reader = files.clone();
    function(
        "read_toml",
        &["path: &str", "Map"],
        "
Reads a TOML file into a map; dates become RFC 3339 strings.
Example: `let defaults = fs::read_toml(\"scenarios/cortex_v11.toml\");`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str| -> Result<Dynamic> {
        let text = reader.read_text(path).map_err(|error| script_error(&context, &error))?;
        let value = parse_toml(&text.path, &text.content).map_err(|error| script_error(&context, &error))?;
        rhai::serde::to_dynamic(value)
    });

    let reader = files.clone();
    function(
        "read_markdown",
        &["path: &str", "Map"],
        "
Reads a Markdown file split at its headings (outside code fences):
`#{ title, text, sections: [#{ heading, level, line, body }] }`. Text before the first
heading is a section of level 0.
Example: `for s in fs::read_markdown(\"docs/guide.md\").sections { print(s.heading); }`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str| -> Result<Dynamic> {
        let text = reader.read_text(path).map_err(|error| script_error(&context, &error))?;
        rhai::serde::to_dynamic(parse_markdown(&text.content))
    });

    let reader = files.clone();
    function(
        "exists",
        &["path: &str", "bool"],
        "
Whether a file or folder exists and may be read.
Example: `if fs::exists(\"fixtures/extra.json\") { ... }`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str| -> Result<bool> {
        reader.exists(path).map_err(|error| script_error(&context, &error))
    });

    let reader = files.clone();
    function(
        "sha256",
        &["path: &str", "String"],
        "
The sha256 of a file's bytes, in lowercase hex, as the manifest records it: how a script
checks that a data file is the published one.
Example: `if fs::sha256(path) != OFFICIAL_SHA256 { log::warn(`${path} is not the official file`); }`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str| -> Result<String> {
        let bytes = reader.read_bytes(path).map_err(|error| script_error(&context, &error))?;
        Ok(super::sha256_hex(&bytes))
    });

    let reader = files.clone();
    function(
        "resolve",
        &["path: &str", "String"],
        "
The absolute path (symlinks resolved) that a readable path names: a folder given on the command
line as the user typed it, relative to where they typed it, becomes one path every `fs::`
function and program accepts.
Example: `let checkout = fs::resolve(flags.checkout); let sets = fs::read_json(`${checkout}/sets.json`);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str| -> Result<String> {
        let resolved = reader.resolve(path).map_err(|error| script_error(&context, &error))?;
        Ok(resolved.display().to_string())
    });

    let reader = files;
    function(
        "list",
        &["folder: &str", "Array"],
        "
The entries of a folder, sorted by name, as paths that the other `fs::` functions accept.
Example: `for path in fs::list(\"fixtures/docs\") { let doc = fs::read_markdown(path); }`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, folder: &str| -> Result<Array> {
        let entries = reader.list(folder).map_err(|error| script_error(&context, &error))?;
        Ok(entries.into_iter().map(Dynamic::from).collect())
    });

    module
}
