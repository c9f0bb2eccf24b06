//! The only code that reads or writes guest memory. Every pointer and length a guest supplies is
//! checked against its memory and a size limit before use: accesses go through wasmtime's
//! bounded `Memory::read`/`write` or a checked `get` on the memory's slice, so a lying guest gets
//! an error, never the host's memory.

use wasmtime::{AsContextMut, Caller, Extern, Instance, Memory, Store, TypedFunc};

use super::input::Input;

/// A guest's ABI exports, looked up once per instance.
#[derive(Clone)]
pub struct Exports {
    pub memory: Memory,
    pub alloc: TypedFunc<i32, i32>,
    pub free: TypedFunc<(i32, i32), ()>,
}

impl Exports {
    pub fn find<T>(store: &mut Store<T>, instance: &Instance) -> Result<Exports, String> {
        let memory = instance.get_memory(&mut *store, "memory").ok_or("no exported `memory`")?;
        let alloc = instance
            .get_typed_func::<i32, i32>(&mut *store, abi::ALLOC_EXPORT)
            .map_err(|_| format!("no export `{}` of type (i32) -> i32", abi::ALLOC_EXPORT))?;
        let free = instance
            .get_typed_func::<(i32, i32), ()>(&mut *store, abi::FREE_EXPORT)
            .map_err(|_| format!("no export `{}` of type (i32, i32)", abi::FREE_EXPORT))?;
        Ok(Exports { memory, alloc, free })
    }
}

/// Copies `input` into memory the guest allocates, JSON then raw text; answers the arguments
/// of the call: `(ptr, json_len, raw_len)`.
pub fn write_input<T>(
    store: &mut Store<T>,
    exports: &Exports,
    input: &Input<'_>,
) -> Result<(i32, i32, i32), wasmtime::Error> {
    let too_big = || violation("input over 2 GiB");
    let total = i32::try_from(input.len()).map_err(|_| too_big())?;
    let json_len = i32::try_from(input.json.len()).map_err(|_| too_big())?;
    let raw_len = match input.raw {
        Some(raw) => i32::try_from(raw.len()).map_err(|_| too_big())?,
        None => abi::NO_RAW,
    };
    let ptr = exports.alloc.call(&mut *store, total)?;
    if ptr == 0 {
        return Err(violation(format!("the guest could not allocate {total} bytes for the input")));
    }
    // The whole region is checked before anything is written, so an allocator that answers a
    // region too short gets nothing half-written.
    let start = ptr as u32 as usize;
    let region = span(start, input.len())
        .and_then(|span| exports.memory.data_mut(&mut *store).get_mut(span))
        .ok_or_else(|| bad_region("input", ptr, total))?;
    let (json, raw) = region.split_at_mut(input.json.len());
    json.copy_from_slice(&input.json);
    raw.copy_from_slice(input.raw.unwrap_or("").as_bytes());
    Ok((ptr, json_len, raw_len))
}

/// Decodes a reply the guest returned packed as `ptr << 32 | len` with `decode`, straight from
/// guest memory (no copy), then frees it in the guest. A reply over `limit` bytes is freed
/// undecoded: `Err(its length)`.
pub fn take_reply<T, R>(
    store: &mut Store<T>,
    exports: &Exports,
    packed: i64,
    limit: usize,
    decode: impl FnOnce(&[u8]) -> R,
) -> Result<Result<R, usize>, wasmtime::Error> {
    let (ptr, len) = abi::unpack(packed as u64);
    let result = if len as usize > limit {
        Err(len as usize)
    } else {
        let bytes = span(ptr as usize, len as usize)
            .and_then(|span| exports.memory.data(&*store).get(span))
            .ok_or_else(|| bad_region("reply", ptr as i32, len as i32))?;
        Ok(decode(bytes))
    };
    exports.free.call(&mut *store, (ptr as i32, len as i32))?;
    Ok(result)
}

/// Bytes a guest passed to a host import.
pub fn read_from_caller<T>(caller: &mut Caller<'_, T>, ptr: i32, len: i32, limit: usize) -> wasmtime::Result<Vec<u8>> {
    let len = len as u32 as usize;
    if len > limit {
        return Err(violation(format!("a host-call argument of {len} bytes is over the {limit}-byte limit")));
    }
    let memory = caller_memory(caller)?;
    let mut bytes = vec![0; len];
    memory
        .read(&*caller, ptr as u32 as usize, &mut bytes)
        .map_err(|_| bad_region("host-call argument", ptr, len as i32))?;
    Ok(bytes)
}

/// Hands `bytes` to the guest in memory from its own allocator; answers the packed location.
pub fn write_to_caller<T>(caller: &mut Caller<'_, T>, bytes: &[u8]) -> wasmtime::Result<i64> {
    let memory = caller_memory(caller)?;
    let alloc = match caller.get_export(abi::ALLOC_EXPORT) {
        Some(Extern::Func(func)) => func.typed::<i32, i32>(&*caller)?,
        _ => return Err(violation(format!("no export `{}`", abi::ALLOC_EXPORT))),
    };
    let len = i32::try_from(bytes.len()).map_err(|_| violation("host reply over 2 GiB"))?;
    let ptr = alloc.call(caller.as_context_mut(), len)?;
    if ptr == 0 {
        return Err(violation(format!("the guest could not allocate {} bytes for a host reply", bytes.len())));
    }
    memory.write(&mut *caller, ptr as u32 as usize, bytes).map_err(|_| bad_region("host reply", ptr, len))?;
    Ok(abi::pack(ptr as u32, len as u32) as i64)
}

fn caller_memory<T>(caller: &mut Caller<'_, T>) -> wasmtime::Result<Memory> {
    match caller.get_export("memory") {
        Some(Extern::Memory(memory)) => Ok(memory),
        _ => Err(violation("the guest exports no `memory`")),
    }
}

/// `len` bytes from `start`, unless the end does not fit in a `usize`.
fn span(start: usize, len: usize) -> Option<std::ops::Range<usize>> {
    Some(start..start.checked_add(len)?)
}

fn bad_region(what: &str, ptr: i32, len: i32) -> wasmtime::Error {
    violation(format!("the {what} at {:#x}+{} lies outside the guest's memory", ptr as u32, len as u32))
}

/// A guest broke the calling convention (a bad pointer, an oversized argument, a missing
/// export): a trap, reported with this text.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Violation(pub String);

fn violation(message: impl Into<String>) -> wasmtime::Error {
    wasmtime::Error::new(Violation(message.into()))
}
