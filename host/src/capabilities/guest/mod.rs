//! The `guest` capability: scripts load WebAssembly guest modules and call their functions. The
//! runtime itself (finding, building, sandboxing, calling) is [`crate::wasm`]; this folder only
//! adapts it to Rhai.

pub mod rhai;
