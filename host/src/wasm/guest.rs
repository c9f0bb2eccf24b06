//! A loaded guest: its compiled module, the linker its grants allow, and (for stateless guests)
//! one live instance reused across calls. A call that traps discards its instance, so the next
//! call starts clean; the guest itself stays usable.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use wasmtime::{InstancePre, Module, Store, Trap};

use super::GuestError;
use super::abi::{self, Exports};
use super::engine::{Engines, Metering};
use super::input::Input;
use super::linker::{self, DeadlineInHostCall};
use super::manifest::{Grants, Manifest};
use super::sandbox::{self, GuestState, Setup};
use crate::capabilities::GuestImports;

pub struct Guest {
    pub manifest: Manifest,
    /// The manifest's grants plus the scenario's.
    pub grants: Grants,
    /// Where the module came from, and its content hash.
    pub module_path: PathBuf,
    pub sha256: String,
    /// The callable functions, from the module's exports.
    pub functions: Vec<String>,
    name: Arc<str>,
    metering: Metering,
    pre: InstancePre<GuestState>,
    project_root: PathBuf,
    imports: Arc<GuestImports>,
    runtime: tokio::runtime::Handle,
    live: Mutex<Option<Live>>,
    stats: Mutex<CallStats>,
}

impl std::fmt::Debug for Guest {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Guest").field("name", &self.name).finish_non_exhaustive()
    }
}

/// How a guest's calls went, for the run's records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallStats {
    pub calls: u64,
    pub instances: u64,
    pub violations: u64,
}

struct Live {
    store: Store<GuestState>,
    exports: Exports,
    instance: wasmtime::Instance,
}

/// What [`Guest::load`] needs besides the manifest.
pub struct Context {
    pub engines: Arc<Engines>,
    pub imports: Arc<GuestImports>,
    pub runtime: tokio::runtime::Handle,
    pub project_root: PathBuf,
}

impl Guest {
    /// Compiles (or fetches from cache) `bytes`, checks its imports against `grants`, and makes a
    /// first instance to check its ABI version.
    pub fn load(
        manifest: Manifest,
        grants: Grants,
        module_path: PathBuf,
        bytes: &[u8],
        context: &Context,
    ) -> Result<Guest, GuestError> {
        let name: Arc<str> = manifest.name.as_str().into();
        let metering = if manifest.limits.fuel.is_some() { Metering::Fueled } else { Metering::Plain };
        let compile =
            |error: wasmtime::Error| GuestError::Compile { name: name.to_string(), detail: format!("{error:#}") };
        let module: Module = context.engines.module(bytes, metering).map_err(compile)?;
        linker::check_imports(&name, &module, &grants)?;
        let sandbox =
            |error: wasmtime::Error| GuestError::Sandbox { name: name.to_string(), detail: format!("{error:#}") };
        let engine = context.engines.engine(metering).map_err(sandbox)?;
        let pre =
            linker::linker(&engine, &grants).and_then(|linker| linker.instantiate_pre(&module)).map_err(sandbox)?;
        let mut functions: Vec<String> = module
            .exports()
            .filter_map(|export| export.name().strip_prefix(::abi::FUNCTION_PREFIX).map(str::to_string))
            .collect();
        functions.sort();
        let miscalled = callable_with_wrong_type(&module);
        let guest = Guest {
            manifest,
            grants,
            module_path,
            sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(bytes)),
            functions,
            name,
            metering,
            pre,
            project_root: context.project_root.clone(),
            imports: context.imports.clone(),
            runtime: context.runtime.clone(),
            live: Mutex::new(None),
            stats: Mutex::default(),
        };
        // After the version check, which explains an old guest's exports better.
        let live = guest.instantiate()?;
        if let Some(detail) = miscalled {
            return Err(GuestError::NotAGuest { name: guest.name.to_string(), detail });
        }
        if guest.manifest.stateless {
            *guest.lock_live() = Some(live);
        }
        Ok(guest)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn stats(&self) -> CallStats {
        *self.stats.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Calls `function` with `input`; a guest's reported failure and every sandbox violation come
    /// back as [`GuestError`]s. Never panics, whatever the guest does. A top-level string
    /// `content` crosses as raw text ([`Input::split`]).
    pub fn call(&self, function: &str, input: &Value) -> Result<Value, GuestError> {
        let input = Input::split(input).map_err(|error| self.bad_input(function, &error))?;
        self.call_with(function, &input, false)
    }

    /// [`Guest::call`] on a fresh instance, whatever the manifest says: what a stateful guest
    /// pays on every call, and what the benchmark compares reuse against.
    pub fn call_fresh(&self, function: &str, input: &Value) -> Result<Value, GuestError> {
        let input = Input::split(input).map_err(|error| self.bad_input(function, &error))?;
        self.call_with(function, &input, true)
    }

    /// [`Guest::call`] with an input already encoded, for a caller that holds the text apart from
    /// the other fields ([`Input::with_content`]) or wants it sent as JSON ([`Input::json`]).
    pub fn call_input(&self, function: &str, input: &Input<'_>) -> Result<Value, GuestError> {
        self.call_with(function, input, false)
    }

    fn call_with(&self, function: &str, input: &Input<'_>, fresh: bool) -> Result<Value, GuestError> {
        if input.len() > self.manifest.limits.output_bytes() {
            return Err(self.too_large(function, "was given", input.len()));
        }
        let mut slot = self.lock_live();
        let reused = if fresh { None } else { slot.take() };
        let mut live = match reused {
            Some(live) => live,
            None => self.instantiate()?,
        };
        let result = self.call_on(&mut live, function, input);
        let violated = matches!(&result, Err(error) if error.is_violation());
        if self.manifest.stateless && !violated && !fresh {
            *slot = Some(live);
        }
        self.count(|stats| {
            stats.calls += 1;
            stats.violations += u64::from(violated);
        });
        result
    }

    fn call_on(&self, live: &mut Live, function: &str, input: &Input<'_>) -> Result<Value, GuestError> {
        let export = format!("{}{function}", ::abi::FUNCTION_PREFIX);
        let Ok(entry) = live.instance.get_typed_func::<(i32, i32, i32), i64>(&mut live.store, &export) else {
            return Err(GuestError::NoSuchFunction {
                name: self.name.to_string(),
                function: function.into(),
                available: self.functions.clone(),
            });
        };
        sandbox::arm(&mut live.store, &self.manifest.limits, self.metering)
            .map_err(|error| self.trap(&live.store, function, error))?;
        let packed = abi::write_input(&mut live.store, &live.exports, input)
            .and_then(|arguments| entry.call(&mut live.store, arguments))
            .map_err(|error| self.trap(&live.store, function, error))?;
        let limit = live.store.data().output_limit;
        let decode = |bytes: &[u8]| serde_json::from_slice::<::abi::Reply<Value>>(bytes);
        let reply = abi::take_reply(&mut live.store, &live.exports, packed, limit, decode)
            .map_err(|error| self.trap(&live.store, function, error))?
            .map_err(|bytes| self.too_large(function, "returned", bytes))?
            .map_err(|error| self.bad_reply(function, error.to_string()))?;
        match reply {
            ::abi::Reply::Ok(value) => Ok(value),
            ::abi::Reply::Error(failure) => {
                Err(GuestError::Failed { name: self.name.to_string(), function: function.into(), failure })
            }
        }
    }

    /// A fresh instance, its exports found and its ABI version checked.
    fn instantiate(&self) -> Result<Live, GuestError> {
        let setup = Setup {
            guest: &self.name,
            grants: &self.grants,
            limits: &self.manifest.limits,
            project_root: &self.project_root,
            imports: &self.imports,
            runtime: &self.runtime,
        };
        let mut store = sandbox::store(self.pre.module().engine(), &setup)
            .map_err(|detail| GuestError::Sandbox { name: self.name.to_string(), detail })?;
        let during = "instantiation";
        sandbox::arm(&mut store, &self.manifest.limits, self.metering)
            .map_err(|error| self.trap(&store, during, error))?;
        let instance = self.pre.instantiate(&mut store).map_err(|error| self.trap(&store, during, error))?;
        // Reactor modules (Rust cdylibs for wasip1) run their static constructors here.
        if let Ok(initialize) = instance.get_typed_func::<(), ()>(&mut store, "_initialize") {
            initialize.call(&mut store, ()).map_err(|error| self.trap(&store, during, error))?;
        }
        let not_a_guest = |detail: String| GuestError::NotAGuest { name: self.name.to_string(), detail };
        let version = instance
            .get_typed_func::<(), i32>(&mut store, ::abi::ABI_VERSION_EXPORT)
            .map_err(|_| not_a_guest(format!("no export `{}` of type () -> i32", ::abi::ABI_VERSION_EXPORT)))?
            .call(&mut store, ())
            .map_err(|error| self.trap(&store, during, error))? as u32;
        if version != ::abi::ABI_VERSION {
            return Err(GuestError::AbiMismatch {
                name: self.name.to_string(),
                guest: version,
                host: ::abi::ABI_VERSION,
            });
        }
        let exports = Exports::find(&mut store, &instance).map_err(|detail| not_a_guest(detail.to_string()))?;
        self.count(|stats| stats.instances += 1);
        Ok(Live { store, exports, instance })
    }

    /// Names what stopped a call, from the trap and what the store saw.
    fn trap(&self, store: &Store<GuestState>, function: &str, error: wasmtime::Error) -> GuestError {
        let (name, function) = (self.name.to_string(), function.to_string());
        let state = store.data();
        let limits = &self.manifest.limits;
        if state.limiter.hit {
            return GuestError::MemoryLimit { name, function, memory_mib: limits.memory_mib };
        }
        if error.downcast_ref::<DeadlineInHostCall>().is_some() {
            return GuestError::Deadline {
                name,
                function,
                deadline_ms: limits.deadline_ms,
                host_call: state.stopped_in.clone(),
            };
        }
        if let Some(message) = &state.panic {
            return GuestError::Panic { name, function, message: message.clone() };
        }
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => {
                GuestError::Deadline { name, function, deadline_ms: limits.deadline_ms, host_call: None }
            }
            Some(Trap::OutOfFuel) => GuestError::OutOfFuel { name, function, fuel: limits.fuel.unwrap_or(u64::MAX) },
            Some(Trap::StackOverflow) => GuestError::StackOverflow { name, function },
            Some(trap) => GuestError::Trap { name, function, detail: trap.to_string() },
            None => GuestError::Trap { name, function, detail: crate::capabilities::error_chain(error.as_ref()) },
        }
    }

    fn too_large(&self, function: &str, what: &'static str, bytes: usize) -> GuestError {
        GuestError::TooLarge {
            name: self.name.to_string(),
            function: function.into(),
            what,
            bytes,
            limit_mib: self.manifest.limits.output_mib,
        }
    }

    fn bad_input(&self, function: &str, error: &serde_json::Error) -> GuestError {
        GuestError::BadInput { name: self.name.to_string(), function: function.into(), detail: error.to_string() }
    }

    fn bad_reply(&self, function: &str, detail: String) -> GuestError {
        GuestError::BadReply { name: self.name.to_string(), function: function.into(), detail }
    }

    fn lock_live(&self) -> std::sync::MutexGuard<'_, Option<Live>> {
        // A poisoned slot is dropped rather than reused: the instance may be mid-call.
        self.live.lock().unwrap_or_else(|poisoned| {
            let mut guard = poisoned.into_inner();
            *guard = None;
            guard
        })
    }

    fn count(&self, update: impl FnOnce(&mut CallStats)) {
        update(&mut self.stats.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    }
}

/// What is wrong with the first callable export that is not `(i32, i32, i32) -> i64`, if any.
fn callable_with_wrong_type(module: &Module) -> Option<String> {
    use wasmtime::{ExternType, ValType};
    module.exports().find_map(|export| {
        export.name().strip_prefix(::abi::FUNCTION_PREFIX)?;
        let right = match export.ty() {
            ExternType::Func(func) => {
                let params: Vec<ValType> = func.params().collect();
                let results: Vec<ValType> = func.results().collect();
                params.len() == 3
                    && params.iter().all(|param| matches!(param, ValType::I32))
                    && matches!(results.as_slice(), [ValType::I64])
            }
            _ => false,
        };
        (!right).then(|| format!("export `{}` is not a function of type (i32, i32, i32) -> i64", export.name()))
    })
}
