//! The `run` capability: what a script knows about its own run (id, output folder, arguments,
//! scenario). Data only; it has no side effects.

mod args;
pub mod rhai;

use std::path::PathBuf;

use serde_json::Value;

pub use args::parse_script_args;

/// The identity and inputs of one run.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: String,
    pub experiment: String,
    pub dir: PathBuf,
    /// `--key value` and `--flag` arguments as a JSON object (see [`parse_script_args`]).
    pub args: Value,
    /// The script arguments exactly as given.
    pub argv: Vec<String>,
    /// The scenario TOML as a JSON object, if one was given or found.
    pub scenario: Option<Value>,
}
