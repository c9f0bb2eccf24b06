//! The only file of the SDK with `unsafe` code: guest memory handed to and taken back from the
//! host, and the raw host imports. Everything else in the SDK is safe Rust over these functions.
//!
//! Ownership across the boundary: memory from [`alloc`] belongs to whoever writes into it until
//! it is passed on; a function's input is taken (and freed) by [`call`]; a reply is leaked by
//! its producer and freed by its consumer with the length it was given.
#![allow(unsafe_code)]

use std::alloc::Layout;

use abi::{Failure, Reply};
use serde::{Deserialize, Serialize};

use crate::input::Input;

/// `guest_alloc`: `len` bytes for the host to write into; 0 when memory is exhausted.
pub fn alloc(len: u32) -> u32 {
    let Ok(layout) = Layout::array::<u8>(len as usize) else { return 0 };
    if layout.size() == 0 {
        // A dangling, never dereferenced address: nothing to allocate or free.
        return 1;
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc(layout) };
    ptr as usize as u32
}

/// `guest_free`: gives back `len` bytes at `ptr` from [`alloc`] or a leaked reply.
pub fn free(ptr: u32, len: u32) {
    if len == 0 || ptr == 0 {
        return;
    }
    drop(take(ptr, len));
}

/// Takes ownership of `len` bytes at `ptr`, allocated with the layout of a `[u8; len]`.
fn take(ptr: u32, len: u32) -> Vec<u8> {
    if len == 0 || ptr == 0 {
        return Vec::new();
    }
    // SAFETY: the host only passes back regions it got from `alloc` (or replies leaked by
    // `leak`) with their exact length (for an input, [`take_input`] adds the raw text's length
    // back to the JSON's: the host allocated both parts as one region), so pointer, length and
    // capacity describe one allocation of the global allocator with `u8` alignment, and nothing
    // else owns it.
    unsafe { Vec::from_raw_parts(ptr as usize as *mut u8, len as usize, len as usize) }
}

/// Leaks `bytes` for the other side, returning its packed location.
fn leak(bytes: Vec<u8>) -> u64 {
    let bytes = bytes.into_boxed_slice();
    let len = bytes.len() as u32;
    let ptr = Box::into_raw(bytes) as *mut u8 as usize as u32;
    abi::pack(ptr, len)
}

/// Takes ownership of a function's input: `json_len` bytes of JSON at `ptr`, then `raw_len`
/// bytes of raw `content`, or none when `raw_len` is negative (`abi::NO_RAW`).
pub fn take_input(ptr: u32, json_len: u32, raw_len: i32) -> Input {
    let raw = u32::try_from(raw_len).ok();
    match json_len.checked_add(raw.unwrap_or(0)) {
        Some(total) => Input::new(take(ptr, total), json_len as usize, raw.is_some()),
        // No host allocates more than the 4 GiB of a 32-bit memory; leave such a region alone
        // rather than free it with the wrong length, and let the empty input fail to decode.
        None => Input::new(Vec::new(), 0, false),
    }
}

/// Runs an exported function on its input: decodes it, encodes the reply and leaks it for the
/// host. The input's bytes outlive the call, so the input type may borrow from them.
pub fn call<'a, I, O, E, F>(input: &'a Input, function: F) -> u64
where
    I: Deserialize<'a>,
    O: Serialize,
    E: Into<Failure>,
    F: FnOnce(I) -> Result<O, E>,
{
    install_panic_hook();
    let reply: Reply<O> = match input.decode::<I>() {
        Ok(input) => function(input).map_err(Into::into).into(),
        Err(failure) => Reply::Error(failure),
    };
    let bytes = serde_json::to_vec(&reply).unwrap_or_else(|error| {
        let failure: Reply<()> = Reply::Error(Failure::failed(format!("output did not encode: {error}")));
        serde_json::to_vec(&failure).unwrap_or_default()
    });
    leak(bytes)
}

fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let message = info.to_string();
            report_panic(&message);
        }))
    });
}

#[cfg(target_family = "wasm")]
mod raw {
    #[link(wasm_import_module = "host:abi")]
    unsafe extern "C" {
        pub fn panic(ptr: u32, len: u32);
    }

    #[link(wasm_import_module = "host:log")]
    unsafe extern "C" {
        #[link_name = "call"]
        pub fn log(op_ptr: u32, op_len: u32, in_ptr: u32, in_len: u32) -> u64;
    }

    #[link(wasm_import_module = "host:embed")]
    unsafe extern "C" {
        #[link_name = "call"]
        pub fn embed(op_ptr: u32, op_len: u32, in_ptr: u32, in_len: u32) -> u64;
    }

    #[link(wasm_import_module = "host:llm")]
    unsafe extern "C" {
        #[link_name = "call"]
        pub fn llm(op_ptr: u32, op_len: u32, in_ptr: u32, in_len: u32) -> u64;
    }
}

#[cfg(target_family = "wasm")]
fn report_panic(message: &str) {
    // SAFETY: the host reads `len` bytes at `ptr` and keeps no reference to them.
    unsafe { raw::panic(message.as_ptr() as usize as u32, message.len() as u32) }
}

#[cfg(not(target_family = "wasm"))]
fn report_panic(message: &str) {
    eprintln!("{message}");
}

/// A host capability's import. Each wrapper names its own constant, so a guest imports only
/// the capabilities it calls (and needs only those granted).
#[derive(Clone, Copy)]
pub struct Import {
    #[cfg(not(target_family = "wasm"))]
    name: &'static str,
    #[cfg(target_family = "wasm")]
    raw: unsafe extern "C" fn(u32, u32, u32, u32) -> u64,
}

#[cfg(target_family = "wasm")]
pub const LOG: Import = Import { raw: raw::log };
#[cfg(target_family = "wasm")]
pub const EMBED: Import = Import { raw: raw::embed };
#[cfg(target_family = "wasm")]
pub const LLM: Import = Import { raw: raw::llm };

#[cfg(not(target_family = "wasm"))]
pub const LOG: Import = Import { name: "log" };
#[cfg(not(target_family = "wasm"))]
pub const EMBED: Import = Import { name: "embed" };
#[cfg(not(target_family = "wasm"))]
pub const LLM: Import = Import { name: "llm" };

/// Calls `op` of a host capability, returning the reply's bytes.
#[cfg(target_family = "wasm")]
pub fn call_host(import: Import, op: &str, input: &[u8]) -> Result<Vec<u8>, Failure> {
    let address = |bytes: &[u8]| (bytes.as_ptr() as usize as u32, bytes.len() as u32);
    let ((op_ptr, op_len), (in_ptr, in_len)) = (address(op.as_bytes()), address(input));
    // SAFETY: the host reads the two regions during the call only, and answers a region it
    // allocated through `guest_alloc` and handed over to us.
    let (ptr, len) = abi::unpack(unsafe { (import.raw)(op_ptr, op_len, in_ptr, in_len) });
    Ok(take(ptr, len))
}

/// Off wasm there is no host: logging goes to stderr and every other capability is unsupported,
/// so a guest's logic can be tested and benchmarked natively.
#[cfg(not(target_family = "wasm"))]
pub fn call_host(import: Import, op: &str, input: &[u8]) -> Result<Vec<u8>, Failure> {
    if import.name == "log" {
        eprintln!("{}", String::from_utf8_lossy(input));
        return Ok(br#"{"ok":null}"#.to_vec());
    }
    Err(Failure::new(
        abi::FailureKind::Unsupported,
        format!("`{}` `{op}` needs the host: capabilities are only available inside a guest", import.name),
    ))
}
