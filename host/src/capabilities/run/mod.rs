//! The `run` capability: what a script knows about its own run (id, output folder, arguments,
//! scenario). Data only; it has no side effects.

mod args;
pub mod flags;
pub mod rhai;
mod shard;

#[cfg(test)]
mod benchmark_tests;

use std::path::PathBuf;

use serde_json::Value;

pub use args::parse_script_args;
pub use shard::{Shard, ShardError, Sharding, Units, UnitsRecord};

/// What `run::flags` ends a script with after printing the help it was asked for: `host run`
/// then exits successfully without a run.
pub const HELP_SHOWN: &str = "help shown";

/// The identity and inputs of one run.
#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: String,
    /// The script as the user knows it (`scripts/verify_set.rhai`), for hints.
    pub script: String,
    pub experiment: String,
    pub dir: PathBuf,
    /// `--key value` and `--flag` arguments as a JSON object (see [`parse_script_args`]).
    pub args: Value,
    /// The script arguments exactly as given.
    pub argv: Vec<String>,
    /// The scenario TOML as a JSON object, if one was given or found.
    pub scenario: Option<Value>,
    /// The project's git commit and whether the tree had changes, as the manifest records them.
    pub git: Option<crate::run_record::GitState>,
    /// Which units of work `run::shard` gives: all, a shard's block, or all for a report.
    pub sharding: Sharding,
    /// The calls of `run::shard` so far.
    pub units: Units,
}

/// `run::` for scripts; at the end of a run, the units `run::shard` handed out, for the manifest.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "run",
    rhai: |capabilities| rhai::module(capabilities.run.clone()),
    types: |_| {},
    guest: None,
    finish: |capabilities, manifest| manifest.units = capabilities.run.units.records(),
    scratch: None,
};
