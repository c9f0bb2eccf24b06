//! The `host` library: the CLI commands, the Rhai script runtime, the run directory and the
//! capabilities (files, results, logging, progress, ...) that scripts and guests call.
//!
//! `main.rs` only parses arguments and maps the outcome to an exit code; everything else is here
//! so that tests and benchmarks can drive it in-process.

pub mod atomic;
pub mod capabilities;
pub mod cli;
pub mod commands;
pub mod console;
pub mod hash_cache;
pub mod project;
pub mod run_record;
pub mod script;
pub mod wasm;
