//! What a guest is linked against: WASI preview 1 (Rust's standard library needs a few of its
//! functions even in a guest that never touches a file), `host:abi`, and one `host:<cap>` module
//! per granted capability. A module importing anything else is refused before it runs.

use std::time::Instant;

use wasmtime::{Caller, Engine, Linker, Module};

use super::GuestError;
use super::abi;
use super::manifest::{Grants, grantable};
use super::sandbox::GuestState;

const WASI_MODULE: &str = "wasi_snapshot_preview1";
/// Longest operation name a guest may send.
const MAX_OP_BYTES: usize = 256;

/// Refuses a module whose imports are not all provided and granted, naming the first offender.
pub fn check_imports(name: &str, module: &Module, grants: &Grants) -> Result<(), GuestError> {
    for import in module.imports() {
        let (module_name, field) = (import.module(), import.name());
        if module_name == WASI_MODULE {
            continue;
        }
        if module_name == ::abi::PANIC_MODULE && field == ::abi::PANIC_IMPORT {
            continue;
        }
        let capability = module_name.strip_prefix(::abi::IMPORT_MODULE_PREFIX);
        match capability {
            Some(capability) if grantable(capability) && field == ::abi::CALL_IMPORT => {
                if !grants.capabilities.contains(capability) {
                    return Err(GuestError::NotGranted {
                        name: name.into(),
                        module: module_name.into(),
                        capability: capability.into(),
                    });
                }
            }
            _ => {
                return Err(GuestError::UnknownImport {
                    name: name.into(),
                    module: module_name.into(),
                    field: field.into(),
                });
            }
        }
    }
    Ok(())
}

/// A linker with WASI, `host:abi` and the capabilities in `grants`.
pub fn linker(engine: &Engine, grants: &Grants) -> wasmtime::Result<Linker<GuestState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |state: &mut GuestState| &mut state.wasi)?;
    linker.func_wrap(
        ::abi::PANIC_MODULE,
        ::abi::PANIC_IMPORT,
        |mut caller: Caller<'_, GuestState>, ptr: i32, len: i32| {
            // A panic message longer than this is cut; it is only for the error text.
            let bytes = abi::read_from_caller(&mut caller, ptr, len.min(4096), 4096)?;
            caller.data_mut().panic = Some(String::from_utf8_lossy(&bytes).into_owned());
            Ok(())
        },
    )?;
    for capability in &grants.capabilities {
        let module = format!("{}{capability}", ::abi::IMPORT_MODULE_PREFIX);
        let capability = capability.clone();
        linker.func_wrap(
            &module,
            ::abi::CALL_IMPORT,
            move |mut caller: Caller<'_, GuestState>, op_ptr: i32, op_len: i32, in_ptr: i32, in_len: i32| {
                host_call(&mut caller, &capability, (op_ptr, op_len), (in_ptr, in_len))
            },
        )?;
    }
    Ok(linker)
}

/// One call of `host:<capability>`: runs the capability on the async runtime, bounded by what is
/// left of the guest's deadline, and hands the reply to the guest.
fn host_call(
    caller: &mut Caller<'_, GuestState>,
    capability: &str,
    op: (i32, i32),
    input: (i32, i32),
) -> wasmtime::Result<i64> {
    let limit = caller.data().output_limit;
    let op = abi::read_from_caller(caller, op.0, op.1, MAX_OP_BYTES)?;
    let op = String::from_utf8_lossy(&op).into_owned();
    let input = abi::read_from_caller(caller, input.0, input.1, limit)?;
    let state = caller.data();
    let (imports, runtime, guest) = (state.imports.clone(), state.runtime.clone(), state.guest.clone());
    let remaining = state.deadline.saturating_duration_since(Instant::now());
    let call = imports.call(capability, &guest, &op, &input);
    let Ok(reply) = runtime.block_on(async { tokio::time::timeout(remaining, call).await }) else {
        caller.data_mut().stopped_in = Some(format!("host:{capability} {op}"));
        return Err(wasmtime::Error::new(DeadlineInHostCall));
    };
    let bytes = serde_json::to_vec(&reply)?;
    abi::write_to_caller(caller, &bytes)
}

/// The guest's deadline passed while the host was working for it.
#[derive(Debug, thiserror::Error)]
#[error("deadline reached during a host call")]
pub struct DeadlineInHostCall;
