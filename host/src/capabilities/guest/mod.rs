//! The `guest` capability: scripts load WebAssembly guest modules and call their functions. The
//! runtime itself (finding, building, sandboxing, calling) is [`crate::wasm`]; this folder only
//! adapts it to Rhai.

pub mod rhai;

/// `guest::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "guest",
    rhai: |capabilities| rhai::module(capabilities.guests.clone()),
    types: rhai::register_types,
    guest: None,
    finish: |capabilities, manifest| manifest.guests = capabilities.guests.records(),
    scratch: None,
};
