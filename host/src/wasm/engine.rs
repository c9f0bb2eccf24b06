//! The wasmtime engines and compiled modules, shared by every guest of the process.
//!
//! Two engines, because fuel metering is compiled into the code: `plain` for guests without a
//! fuel limit (full speed) and `fueled` for those with one. Both interrupt on epochs; one
//! thread per engine advances the epoch every [`TICK`], which bounds how late a deadline fires.
//! Compiled code is cached on disk by wasmtime (keyed by the module's bytes, the engine's
//! settings and wasmtime's version), so a second run does not recompile, and in memory by
//! content hash, so a second load in the same process costs nothing.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use sha2::{Digest, Sha256};
use wasmtime::{Cache, CacheConfig, Config, Engine, Inlining, Module, OptLevel, ProfilingStrategy};

/// Set, guests' compiled functions are named in `/tmp/perf-<pid>.map`, so that `perf record`
/// profiles show where a guest spends its time.
pub const PERF_MAP_VARIABLE: &str = "HOST_WASM_PERFMAP";

/// How often the epoch advances: the resolution of deadlines.
pub const TICK: Duration = Duration::from_millis(5);

/// The guests' call stack, separate from the host's; deep recursion traps here.
const MAX_WASM_STACK: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metering {
    Plain,
    Fueled,
}

pub struct Engines {
    cache_dir: Option<PathBuf>,
    plain: OnceLock<Engine>,
    fueled: OnceLock<Engine>,
    modules: Mutex<HashMap<([u8; 32], Metering), Module>>,
}

impl std::fmt::Debug for Engines {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Engines").field("cache_dir", &self.cache_dir).finish_non_exhaustive()
    }
}

impl Engines {
    /// Engines that cache compiled code under `cache_dir` (none: compile every time).
    pub fn new(cache_dir: Option<PathBuf>) -> Arc<Engines> {
        Arc::new(Engines { cache_dir, plain: OnceLock::new(), fueled: OnceLock::new(), modules: Mutex::default() })
    }

    pub fn engine(&self, metering: Metering) -> wasmtime::Result<Engine> {
        let slot = match metering {
            Metering::Plain => &self.plain,
            Metering::Fueled => &self.fueled,
        };
        if let Some(engine) = slot.get() {
            return Ok(engine.clone());
        }
        let engine = self.build(metering)?;
        let engine = slot.get_or_init(|| {
            start_ticker(&engine);
            engine
        });
        Ok(engine.clone())
    }

    fn build(&self, metering: Metering) -> wasmtime::Result<Engine> {
        let mut config = Config::new();
        // Deadlines need the epoch checks Cranelift puts at every loop head and function entry;
        // on the scanners of the language guests they cost about a quarter of the run time
        // (BENCHMARKS.md), the price of stopping any guest, first-party or not, at its deadline.
        config.epoch_interruption(true);
        config.consume_fuel(metering == Metering::Fueled);
        config.max_wasm_stack(MAX_WASM_STACK);
        // `Speed` is the default, stated for the reader. Inlining is not: inlining the small
        // functions LLVM left out of line saves calls, and their epoch checks, per token (5 to
        // 10% on the language guests).
        config.cranelift_opt_level(OptLevel::Speed);
        config.compiler_inlining(Inlining::Yes);
        // Memory is left at the 64-bit defaults on purpose: a 4 GiB reservation plus guard pages
        // lets Cranelift drop the bounds check of every load and store of a 32-bit memory, and
        // such a memory never moves, so its base stays in a register.
        if std::env::var_os(PERF_MAP_VARIABLE).is_some() {
            config.profiler(ProfilingStrategy::PerfMap);
        }
        if let Some(dir) = &self.cache_dir {
            let mut cache = CacheConfig::new();
            cache.with_directory(dir);
            config.cache(Some(Cache::new(cache)?));
        }
        Engine::new(&config)
    }

    /// The compiled module for `bytes`, compiling (or loading from the disk cache) only once.
    pub fn module(&self, bytes: &[u8], metering: Metering) -> wasmtime::Result<Module> {
        let key = (Sha256::digest(bytes).into(), metering);
        if let Some(module) = self.lock().get(&key) {
            return Ok(module.clone());
        }
        let module = Module::new(&self.engine(metering)?, bytes)?;
        self.lock().insert(key, module.clone());
        Ok(module)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<([u8; 32], Metering), Module>> {
        // A poisoned map still holds valid compiled modules.
        self.modules.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Advances `engine`'s epoch forever; the thread holds only a weak reference, so it ends when
/// the engine is dropped.
fn start_ticker(engine: &Engine) {
    let weak = engine.weak();
    let spawned = std::thread::Builder::new().name("wasm-epoch".into()).spawn(move || {
        while let Some(engine) = weak.upgrade() {
            engine.increment_epoch();
            drop(engine);
            std::thread::sleep(TICK);
        }
    });
    // Without the ticker deadlines would never fire; the store also checks the wall clock at
    // every host call, and there is nothing better to do than carry on.
    drop(spawned);
}

/// Epoch ticks that cover `duration`, rounded up, plus one for the tick in progress.
pub fn ticks(duration: Duration) -> u64 {
    let tick = TICK.as_nanos().max(1);
    (duration.as_nanos().div_ceil(tick) as u64).saturating_add(1)
}
