//! Script errors for people: the message, `path:line:col`, the offending source line with a
//! caret, and the chain of calls and imports that led there.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Mutex;

use rhai::{EvalAltResult, Position};

/// The text of every script file a run compiled, by shown path, for quoting source lines.
#[derive(Debug, Default)]
pub struct Sources {
    files: Mutex<HashMap<String, String>>,
}

impl Sources {
    /// Whether the script or any module it imports contains `needle`.
    pub fn any_contains(&self, needle: &str) -> bool {
        self.files.lock().is_ok_and(|files| files.values().any(|text| text.contains(needle)))
    }

    pub fn insert(&self, shown: &str, text: &str) {
        if let Ok(mut files) = self.files.lock() {
            files.insert(shown.to_string(), text.to_string());
        }
    }

    fn line(&self, shown: &str, number: usize) -> Option<String> {
        let files = self.files.lock().ok()?;
        files.get(shown)?.lines().nth(number.checked_sub(1)?).map(str::to_string)
    }
}

/// One script error, located.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub message: String,
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Outermost first: where the failing function was called, or the module imported.
    pub notes: Vec<String>,
    pub hint: Option<String>,
}

impl Diagnostic {
    /// Locates `error`, raised while running the file shown as `file`.
    pub fn from_error(error: &EvalAltResult, file: &str) -> Self {
        let mut file = file.to_string();
        let mut notes = Vec::new();
        let mut current = error;
        loop {
            match current {
                EvalAltResult::ErrorInFunctionCall(name, source, inner, position) => {
                    notes.push(format!("in call to `{name}` at {}", place(&file, *position)));
                    if !source.is_empty() {
                        file = source.clone();
                    }
                    current = inner;
                }
                EvalAltResult::ErrorInModule(module, inner, position) => {
                    notes.push(format!("in module `{module}` imported at {}", place(&file, *position)));
                    file = module.clone();
                    current = inner;
                }
                _ => break,
            }
        }
        let position = current.position();
        let message = leaf_message(current);
        Diagnostic { hint: hint(current), message, file, line: position.line(), column: position.position(), notes }
    }

    /// `file:line:col`, or just the file when the error has no position.
    pub fn place(&self) -> String {
        match (self.line, self.column) {
            (Some(line), Some(column)) => format!("{}:{line}:{column}", self.file),
            (Some(line), None) => format!("{}:{line}", self.file),
            _ => self.file.clone(),
        }
    }

    /// The multi-line report shown on stderr.
    pub fn render(&self, sources: &Sources) -> String {
        let mut out = format!("error: {}\n  --> {}\n", self.message, self.place());
        if let Some(number) = self.line
            && let Some(text) = sources.line(&self.file, number)
        {
            let gutter = " ".repeat(number.to_string().len());
            let _ = writeln!(out, "{gutter} |\n{number} | {text}");
            if let Some(column) = self.column {
                let _ = writeln!(out, "{gutter} | {}^", " ".repeat(column.saturating_sub(1)));
            }
        }
        for note in self.notes.iter().rev() {
            let _ = writeln!(out, "  = note: {note}");
        }
        if let Some(hint) = &self.hint {
            let _ = writeln!(out, "  = hint: {hint}");
        }
        out
    }
}

fn place(file: &str, position: Position) -> String {
    match (position.line(), position.position()) {
        (Some(line), Some(column)) => format!("{file}:{line}:{column}"),
        (Some(line), None) => format!("{file}:{line}"),
        _ => file.to_string(),
    }
}

/// The message without Rhai's own ` (line L, position C)` suffix, since the place is shown apart.
fn leaf_message(error: &EvalAltResult) -> String {
    match error {
        EvalAltResult::ErrorParsing(kind, _) => format!("syntax error: {kind}"),
        EvalAltResult::ErrorRuntime(value, _) => match value.clone().into_immutable_string() {
            Ok(text) => text.to_string(),
            Err(_) => value.to_string(),
        },
        EvalAltResult::ErrorTerminated(value, _) => value.to_string(),
        other => {
            let text = other.to_string();
            let suffix = format!(" ({})", other.position());
            text.strip_suffix(&suffix).unwrap_or(&text).to_string()
        }
    }
}

fn hint(error: &EvalAltResult) -> Option<String> {
    let text = match error {
        EvalAltResult::ErrorTooManyOperations(_) => {
            "the script ran past its operation limit; raise it with `--max-operations` if the work is real"
        }
        EvalAltResult::ErrorStackOverflow(_) => {
            "the script recursed past its call-depth limit; look for unbounded recursion"
        }
        EvalAltResult::ErrorModuleNotFound(..) => {
            "imports resolve against the project's `scripts/` folder, e.g. `import \"lib/cortex/judge\" as judge;`"
        }
        EvalAltResult::ErrorFunctionNotFound(signature, _) if signature.contains("()") => {
            "a `()` argument usually comes from a map field that does not exist or a function that returned nothing"
        }
        EvalAltResult::ErrorVariableNotFound(..) => {
            "inside a function, global variables are out of sight; pass values as parameters, or use `run::args()` and `run::scenario()`"
        }
        _ => return None,
    };
    Some(text.to_string())
}
