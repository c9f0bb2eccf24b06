//! Guest modules: WebAssembly (WASI preview 1 core modules) run in a sandbox, called with JSON in
//! (bulk text raw beside it) and JSON out, reaching the host only through the capabilities their
//! manifest grants.
//!
//! - `manifest`: `guest.toml`, the grants and limits a guest runs under;
//! - `registry`: where guests are found (`guests/*/guest.toml`, `HOST_GUEST_PATH`), by name or
//!   by file extension, built from source when needed (`source`);
//! - `engine`: the wasmtime engines, the epoch ticker and the compiled-module caches;
//! - `sandbox`: one guest instance's store: WASI context, memory limiter, deadline, fuel;
//! - `linker`: the imports a guest is given: WASI, `host:abi`, and its granted `host:<cap>`;
//! - `guest`: a loaded guest and its calls, with instance reuse and trap classification;
//! - `input`: a call's input as it crosses, `content` split off as raw text;
//! - `abi`: the only code that touches guest memory.
//!
//! Guests run on the calling thread, which must not be an async runtime worker: host imports
//! block on the runtime that runs the async capabilities.

mod abi;
mod engine;
mod guest;
mod input;
mod linker;
mod manifest;
mod registry;
mod sandbox;
mod source;

use std::path::PathBuf;

pub use engine::Engines;
pub use guest::{CallStats, Guest};
pub use input::Input;
pub use manifest::{Grants, Limits, Manifest, ManifestError, validate_grants};
pub use registry::{Entry, GUEST_PATH_VARIABLE, GuestRecord, Registry};

/// Why a guest could not be loaded or a call did not produce a value.
#[derive(Debug, thiserror::Error)]
pub enum GuestError {
    #[error("no guest `{name}`; looked in {}; hint: `host guest list` shows the guests there", searched_list(.searched))]
    NotFound { name: String, searched: Vec<PathBuf> },
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("cannot build guest `{name}` from `{}`:\n{output}", dir.display())]
    Build { name: String, dir: PathBuf, output: String },
    #[error(
        "cannot run cargo to build guest `{name}`; hint: install Rust (rustup) or give the guest a prebuilt `wasm` in its guest.toml"
    )]
    Cargo { name: String, source: std::io::Error },
    #[error("cannot read the module of guest `{name}` at `{}`", path.display())]
    ReadModule { name: String, path: PathBuf, source: std::io::Error },
    #[error("guest `{name}` is not a valid WebAssembly module: {detail}")]
    Compile { name: String, detail: String },
    #[error("guest `{name}` is not a host guest: {detail}; hint: build it with guest-sdk's `export!` macro")]
    NotAGuest { name: String, detail: String },
    #[error(
        "guest `{name}` speaks ABI version {guest}, this host speaks {host}; hint: rebuild the guest against this host's guest-sdk"
    )]
    AbiMismatch { name: String, guest: u32, host: u32 },
    #[error(
        "guest `{name}` imports `{module}`, which is not granted to it; hint: add \"{capability}\" to `capabilities` under [grants] in its guest.toml"
    )]
    NotGranted { name: String, module: String, capability: String },
    #[error("guest `{name}` imports `{module}::{field}`, which this host does not provide")]
    UnknownImport { name: String, module: String, field: String },
    #[error("cannot set up the sandbox of guest `{name}`: {detail}")]
    Sandbox { name: String, detail: String },
    #[error("guest `{name}` has no function `{function}`; it has {}", list(.available))]
    NoSuchFunction { name: String, function: String, available: Vec<String> },
    #[error("guest `{name}`: `{function}` was stopped at its deadline of {deadline_ms} ms{}", waiting_in(.host_call))]
    Deadline { name: String, function: String, deadline_ms: u64, host_call: Option<String> },
    #[error("guest `{name}`: `{function}` ran out of fuel ({fuel} units); hint: raise `fuel` under [limits]")]
    OutOfFuel { name: String, function: String, fuel: u64 },
    #[error(
        "guest `{name}`: `{function}` hit the memory limit of {memory_mib} MiB; hint: raise `memory_mib` under [limits]"
    )]
    MemoryLimit { name: String, function: String, memory_mib: u32 },
    #[error("guest `{name}`: `{function}` exhausted its call stack (runaway recursion?)")]
    StackOverflow { name: String, function: String },
    #[error("guest `{name}`: `{function}` panicked: {message}")]
    Panic { name: String, function: String, message: String },
    #[error("guest `{name}`: `{function}` trapped: {detail}")]
    Trap { name: String, function: String, detail: String },
    #[error(
        "guest `{name}`: `{function}` {what} {bytes} bytes, over the {limit_mib} MiB limit; hint: raise `output_mib` under [limits]"
    )]
    TooLarge { name: String, function: String, what: &'static str, bytes: usize, limit_mib: u32 },
    #[error("guest `{name}`: the input of `{function}` does not encode as JSON: {detail}")]
    BadInput { name: String, function: String, detail: String },
    #[error("guest `{name}`: `{function}` answered something that is not a reply: {detail}")]
    BadReply { name: String, function: String, detail: String },
    #[error("guest `{name}`: `{function}` failed: {failure}")]
    Failed { name: String, function: String, failure: ::abi::Failure },
}

impl GuestError {
    /// True when the sandbox stopped the guest (as opposed to a failure it reported).
    pub fn is_violation(&self) -> bool {
        matches!(
            self,
            GuestError::Deadline { .. }
                | GuestError::OutOfFuel { .. }
                | GuestError::MemoryLimit { .. }
                | GuestError::StackOverflow { .. }
                | GuestError::Panic { .. }
                | GuestError::Trap { .. }
        )
    }
}

fn searched_list(dirs: &[PathBuf]) -> String {
    if dirs.is_empty() {
        return "nowhere (no guests/ folder)".into();
    }
    dirs.iter().map(|dir| format!("`{}`", dir.display())).collect::<Vec<_>>().join(", ")
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        return "none".into();
    }
    names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", ")
}

fn waiting_in(host_call: &Option<String>) -> String {
    host_call.as_ref().map(|call| format!(" while waiting in the host call `{call}`")).unwrap_or_default()
}
