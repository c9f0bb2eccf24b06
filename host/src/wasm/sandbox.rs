//! One guest instance's store: what it may see (WASI context built from its grants), how much
//! memory it may take, and per call its deadline and fuel.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{ResourceLimiter, Store};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{Deterministic, FsPerms, HostMonotonicClock, HostWallClock, WasiCtxBuilder};

use super::engine::{self, Metering};
use super::manifest::{Grants, Limits};
use crate::capabilities::GuestImports;

/// The data of a guest's store.
pub struct GuestState {
    pub wasi: WasiP1Ctx,
    pub limiter: MemoryLimiter,
    /// The guest's name, for host-call logs and roles.
    pub guest: Arc<str>,
    pub imports: Arc<GuestImports>,
    pub runtime: tokio::runtime::Handle,
    /// When the current call must end, host calls included.
    pub deadline: Instant,
    /// The host call that was cut off by the deadline.
    pub stopped_in: Option<String>,
    /// What the guest reported through `host:abi` `panic` before trapping.
    pub panic: Option<String>,
    pub output_limit: usize,
}

/// Caps linear memory; remembers being hit, so a trap that follows can be explained.
pub struct MemoryLimiter {
    max_bytes: usize,
    pub hit: bool,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        // Function tables of real guests hold a few thousand entries.
        Ok(desired <= 1 << 20)
    }

    fn instances(&self) -> usize {
        1
    }

    fn memories(&self) -> usize {
        1
    }
}

/// Everything a new store needs.
pub struct Setup<'a> {
    pub guest: &'a Arc<str>,
    pub grants: &'a Grants,
    pub limits: &'a Limits,
    pub project_root: &'a Path,
    pub imports: &'a Arc<GuestImports>,
    pub runtime: &'a tokio::runtime::Handle,
}

pub fn store(engine: &wasmtime::Engine, setup: &Setup<'_>) -> Result<Store<GuestState>, String> {
    let state = GuestState {
        wasi: wasi(setup)?,
        limiter: MemoryLimiter { max_bytes: setup.limits.memory_bytes(), hit: false },
        guest: setup.guest.clone(),
        imports: setup.imports.clone(),
        runtime: setup.runtime.clone(),
        deadline: Instant::now(),
        stopped_in: None,
        panic: None,
        output_limit: setup.limits.output_bytes(),
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limiter);
    Ok(store)
}

/// Arms `store` for one call: a fresh deadline, fuel, and no leftovers from the last call.
pub fn arm(store: &mut Store<GuestState>, limits: &Limits, metering: Metering) -> Result<(), wasmtime::Error> {
    let deadline = Duration::from_millis(limits.deadline_ms);
    let state = store.data_mut();
    state.deadline = Instant::now() + deadline;
    state.stopped_in = None;
    state.panic = None;
    state.limiter.hit = false;
    store.set_epoch_deadline(engine::ticks(deadline));
    if metering == Metering::Fueled {
        store.set_fuel(limits.fuel.unwrap_or(u64::MAX))?;
    }
    Ok(())
}

/// The WASI view of the machine: nothing but what `grants` allows. No arguments, no stdio.
fn wasi(setup: &Setup<'_>) -> Result<WasiP1Ctx, String> {
    let grants = setup.grants;
    let mut builder = WasiCtxBuilder::new();
    for name in &grants.env {
        if let Ok(value) = std::env::var(name) {
            builder.env(name, value);
        }
    }
    for dir in &grants.dirs {
        let host = setup.project_root.join(dir);
        let inside = format!("/{}", dir.display());
        builder
            .preopened_dir(&host, &inside, FsPerms::ReadOnly)
            .map_err(|error| format!("cannot grant directory `{}`: {error}", host.display()))?;
    }
    if !grants.clock {
        builder.wall_clock(FixedClock).monotonic_clock(FixedClock);
    }
    if !grants.random {
        builder
            .secure_random(Deterministic::new(FIXED_RANDOM.to_vec()))
            .insecure_random(Deterministic::new(FIXED_RANDOM.to_vec()))
            .insecure_random_seed(0);
    }
    Ok(builder.build_p1())
}

/// What an ungranted random source yields, cycled: arbitrary, but the same on every run.
const FIXED_RANDOM: [u8; 16] =
    [0x9e, 0x37, 0x79, 0xb9, 0x7f, 0x4a, 0x7c, 0x15, 0xf3, 0x9c, 0xc0, 0x60, 0x5c, 0xed, 0xc8, 0x34];

/// A clock stopped at the Unix epoch, for guests not granted `clock`.
struct FixedClock;

impl HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for FixedClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }

    fn now(&self) -> u64 {
        0
    }
}
