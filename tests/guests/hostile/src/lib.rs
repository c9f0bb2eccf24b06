//! A guest that misbehaves on purpose, one function per way; the host must stop or refuse each
//! with a clear error and keep serving the next call. `echo` is the well-behaved control.
#![allow(clippy::panic, reason = "panicking is this guest's job")]

use guest_sdk::{Chat, ChatMessage, Failure};
use serde_json::{Value, json};

guest_sdk::export!(echo, spin, bomb, recurse, trap, huge, block, escape, count);

// Also `reply_outside`, `reply_past_end` and `reply_not_utf8`, below: replies that break the ABI.

/// Answers its input, after logging it.
pub fn echo(input: Value) -> Result<Value, Failure> {
    guest_sdk::log::info(format!("echo {input}"));
    Ok(input)
}

/// Never returns.
pub fn spin(_: Value) -> Result<Value, Failure> {
    let mut counter: u64 = 0;
    loop {
        counter = std::hint::black_box(counter.wrapping_add(1));
    }
}

/// Allocates until something stops it.
pub fn bomb(_: Value) -> Result<Value, Failure> {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![1u8; 1 << 20]);
        std::hint::black_box(&hoard);
    }
}

fn descend(depth: u64, trail: &mut [u64; 64]) -> u64 {
    if depth == u64::MAX {
        return 0;
    }
    trail[(depth % 64) as usize] = depth;
    std::hint::black_box(descend(depth + 1, trail)) + trail[0]
}

/// Recurses without end.
pub fn recurse(_: Value) -> Result<Value, Failure> {
    let mut trail = [0u64; 64];
    Ok(json!(descend(0, &mut trail)))
}

/// Panics, which traps.
pub fn trap(_: Value) -> Result<Value, Failure> {
    panic!("the hostile guest panics on purpose")
}

/// Returns a string of `{"mib": n}` mebibytes.
pub fn huge(input: Value) -> Result<Value, Failure> {
    let mib = input.get("mib").and_then(Value::as_u64).unwrap_or(24) as usize;
    Ok(Value::String("x".repeat(mib << 20)))
}

/// Asks the host's LLM, which the test points at a server that never answers.
pub fn block(_: Value) -> Result<Value, Failure> {
    let request = Chat {
        model: "openai:slow".into(),
        messages: vec![ChatMessage { role: "user".into(), content: "wait".into() }],
        temperature: None,
        max_tokens: None,
    };
    guest_sdk::llm::chat(&request).map(Value::String)
}

/// Tries to read a file, list the root, read the environment and the clock; answers what it got.
pub fn escape(input: Value) -> Result<Value, Failure> {
    let path = input.get("path").and_then(Value::as_str).unwrap_or("/etc/passwd");
    let file = std::fs::read_to_string(path).map_err(|error| error.to_string());
    let listing = std::fs::read_dir("/").map(|entries| entries.count()).map_err(|error| error.to_string());
    let environment: Vec<String> = std::env::vars().map(|(name, _)| name).collect();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    Ok(json!({
        "file": file.is_ok(),
        "file_error": file.err(),
        "listing": listing.is_ok(),
        "environment": environment,
        "clock_seconds": now,
    }))
}

/// Counts calls on this instance: shows whether the host reused it.
pub fn count(_: Value) -> Result<Value, Failure> {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    Ok(json!(CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1))
}

/// Replies that break the calling convention, exported by hand (the SDK's `export!` only ever
/// writes well-formed replies). Each takes its input, raw `content` included, and frees it.
#[cfg(target_family = "wasm")]
#[expect(unsafe_code, reason = "exporting a raw ABI function is `#[unsafe(export_name)]`")]
mod bad_replies {
    /// Leaks `bytes` in a heap allocation, as a real reply is, so `guest_free` can give it back.
    fn leak(bytes: &[u8]) -> u32 {
        Vec::leak(bytes.to_vec()).as_ptr() as usize as u32
    }

    /// `ptr << 32 | len`, as functions return a reply.
    fn pack(ptr: u32, len: u32) -> u64 {
        (u64::from(ptr) << 32) | u64::from(len)
    }

    fn drop_input(ptr: u32, json_len: u32, raw_len: i32) {
        drop(guest_sdk::__private::take_input(ptr, json_len, raw_len));
    }

    /// A reply that starts outside linear memory.
    #[unsafe(export_name = "guest:reply_outside")]
    extern "C" fn reply_outside(ptr: u32, json_len: u32, raw_len: i32) -> u64 {
        drop_input(ptr, json_len, raw_len);
        pack(0xffff_ff00, 200)
    }

    /// A reply that starts inside memory and runs past its end.
    #[unsafe(export_name = "guest:reply_past_end")]
    extern "C" fn reply_past_end(ptr: u32, json_len: u32, raw_len: i32) -> u64 {
        drop_input(ptr, json_len, raw_len);
        let end = core::arch::wasm32::memory_size::<0>() * 65_536;
        pack((end - 8) as u32, 64)
    }

    /// A reply whose bytes are not UTF-8.
    #[unsafe(export_name = "guest:reply_not_utf8")]
    extern "C" fn reply_not_utf8(ptr: u32, json_len: u32, raw_len: i32) -> u64 {
        drop_input(ptr, json_len, raw_len);
        let reply = b"{\"ok\":\"\xff\xfe\"}";
        pack(leak(reply), reply.len() as u32)
    }
}
