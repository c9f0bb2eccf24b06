//! The only code that reads or writes guest memory. Every pointer and length a guest supplies is
//! checked against its memory and a size limit before use; wasmtime's `Memory::read`/`write`
//! bound every access, so a lying guest gets an error, never the host's memory.

use wasmtime::{AsContextMut, Caller, Extern, Instance, Memory, Store, TypedFunc};

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

/// Copies `bytes` into memory the guest allocates; answers `(ptr, len)`.
pub fn write_input<T>(store: &mut Store<T>, exports: &Exports, bytes: &[u8]) -> Result<(i32, i32), wasmtime::Error> {
    let len = i32::try_from(bytes.len()).map_err(|_| violation("input over 2 GiB"))?;
    let ptr = exports.alloc.call(&mut *store, len)?;
    if ptr == 0 {
        return Err(violation(format!("the guest could not allocate {} bytes for the input", bytes.len())));
    }
    exports.memory.write(&mut *store, ptr as u32 as usize, bytes).map_err(|_| bad_region("input", ptr, len))?;
    Ok((ptr, len))
}

/// Reads a reply the guest returned packed as `ptr << 32 | len`, then frees it in the guest.
/// A reply over `limit` bytes is freed unread.
pub fn take_reply<T>(
    store: &mut Store<T>,
    exports: &Exports,
    packed: i64,
    limit: usize,
) -> Result<Result<Vec<u8>, usize>, wasmtime::Error> {
    let (ptr, len) = abi::unpack(packed as u64);
    let result = if len as usize > limit {
        Err(len as usize)
    } else {
        let mut bytes = vec![0; len as usize];
        exports
            .memory
            .read(&*store, ptr as usize, &mut bytes)
            .map_err(|_| bad_region("reply", ptr as i32, len as i32))?;
        Ok(bytes)
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
