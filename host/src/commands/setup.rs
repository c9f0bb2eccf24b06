//! Building the capabilities a command gives its script: the real ones for `run`, and scratch
//! ones (writing to a throwaway folder, no LLM spending) for `check` and `api`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use crate::capabilities::embed::{EmbedRouter, LocalEmbedder, RemoteConfig};
use crate::capabilities::fs::{ReadPolicy, SandboxFiles};
use crate::capabilities::html::VegaReports;
use crate::capabilities::http::{MeteredHttp, ReqwestHttp, SharedClient};
use crate::capabilities::llm::carried::Seeds;
use crate::capabilities::llm::{self, CacheMode, LlmConfig, LlmSettings, Pricing, RateLimits, RetryPolicy};
use crate::capabilities::log::{ConsoleLog, Log};
use crate::capabilities::loopback::LocalLoopback;
use crate::capabilities::packages::{CachedPackages, GitCache, NpmCache, PipCache, RecordedPackages};
use crate::capabilities::proc::{Groups, LocalProcesses, MeteredProcesses, Proc, ProcPolicy, Reaper, ScenarioProc};
use crate::capabilities::progress::ConsoleProgress;
use crate::capabilities::results::RunResults;
use crate::capabilities::run::RunInfo;
use crate::capabilities::search::LocalSearch;
use crate::capabilities::workspace::{ProcGit, WorkspaceSettings, Workspaces};
use crate::capabilities::{Capabilities, GuestImports};
use crate::cli::LlmArgs;
use crate::console::{Console, Style};
use crate::wasm::Registry;

/// The parts shared by every set of capabilities of one command.
pub struct Ingredients<'a> {
    pub console: &'a Arc<Console>,
    pub files: Arc<SandboxFiles>,
    pub llm: &'a LlmSettings,
    /// `--model-dir` and `--embed-backend`: where the local embedding model is, and what runs it.
    pub local_model: crate::cli::LocalModelArgs,
    pub runtime: tokio::runtime::Handle,
    /// Where `guests/` is looked for.
    pub project_root: PathBuf,
    /// The scenario file as the user knows it, for hints that name it.
    pub scenario_path: Option<String>,
    /// Set by Ctrl-C: ends the programs the script is waiting on.
    pub interrupt: crate::script::Interrupt,
    /// `--keep-workspaces`.
    pub keep_workspaces: bool,
    /// A local embedding model already loaded (the warm hook server's), instead of a new one.
    pub local_embedder: Option<Arc<LocalEmbedder>>,
    /// Start a [`Reaper`] (this executable, as `host __reap`) with the first program, so that
    /// programs do not outlive a killed host: only where this executable is `host`, never in tests.
    pub reaper: bool,
}

/// The capabilities of a run, on the real console, file system and network.
pub fn capabilities(parts: &Ingredients<'_>, results: Arc<RunResults>, run: RunInfo) -> anyhow::Result<Capabilities> {
    let log: Arc<dyn Log> = Arc::new(ConsoleLog::new(parts.console.clone()));
    let client = SharedClient::default();
    let llm = llm::stack(LlmConfig::from_env(), parts.llm, results.clone(), log.clone(), client.clone());
    let http = Arc::new(MeteredHttp::new(Arc::new(ReqwestHttp::new(client.clone())), results.clone(), log.clone()));
    let notify = {
        let console = parts.console.clone();
        Arc::new(move |line: &str| console.line(line))
    };
    let cache = crate::project::cache_root();
    let local = match &parts.local_embedder {
        Some(loaded) => loaded.clone(),
        None => Arc::new(LocalEmbedder::new(
            parts.local_model.model_dir.clone(),
            parts.local_model.embed_backend.into(),
            cache.clone(),
            notify,
        )),
    };
    let embed =
        Arc::new(EmbedRouter::new(local, RemoteConfig::from_env(), cache.join("embeddings"), log.clone(), client));
    let imports = Arc::new(GuestImports { log: log.clone(), embed: embed.clone(), llm: llm.clone() });
    let notify = {
        let console = parts.console.clone();
        Box::new(move |line: &str| console.line(line))
    };
    let guests = Registry::new(&parts.project_root, imports, parts.runtime.clone(), run.scenario.as_ref(), notify)
        .map_err(|problem| anyhow::anyhow!("invalid scenario: {problem}"))?;
    let process_groups =
        Arc::new(if parts.reaper { Groups::with_reaper(Reaper::new(log.clone())) } else { Groups::new() });
    let local = Arc::new(LocalProcesses::new(process_groups.clone(), parts.interrupt.clone()));
    let scenario_proc = ScenarioProc::from_scenario(run.scenario.as_ref())
        .map_err(|problem| anyhow::anyhow!("invalid scenario: {problem}"))?;
    let policy =
        ProcPolicy::new(scenario_proc, parts.scenario_path.as_deref(), parts.files.clone(), std::env::vars().collect());
    let processes = Arc::new(MeteredProcesses::new(local, results.clone(), log.clone()));
    let proc = Arc::new(Proc { policy, processes });
    let settings = WorkspaceSettings { run_id: run.id.clone(), run_dir: run.dir.clone(), keep: parts.keep_workspaces };
    let git = Arc::new(ProcGit::new(proc.clone(), parts.runtime.clone()));
    let workspaces = Arc::new(Workspaces::new(settings, parts.files.clone(), git));
    let notify = |console: Arc<Console>| Box::new(move |line: &str| console.line(line));
    let cache = crate::project::cache_root();
    let registries = Arc::new(CachedPackages {
        npm: NpmCache::new(&cache, &["npm"], notify(parts.console.clone())),
        git: GitCache::new(&cache, &["git"], notify(parts.console.clone())),
        pip: PipCache::new(&cache, &["python3"], notify(parts.console.clone())),
    });
    let readable = parts.files.clone();
    let allow_read = Box::new(move |dir: &Path| crate::capabilities::fs::Files::allow_root(readable.as_ref(), dir));
    let packages = Arc::new(RecordedPackages::new(registries, results.clone(), allow_read));
    let reports = Arc::new(VegaReports::new(packages.clone(), format!("host {}", env!("CARGO_PKG_VERSION"))));
    Ok(Capabilities {
        proc,
        packages,
        reports,
        loopback: Arc::new(LocalLoopback::new()),
        workspaces,
        process_groups,
        guests: Arc::new(guests),
        search: Arc::new(LocalSearch::new(embed.clone(), parts.runtime.clone())),
        embed,
        files: parts.files.clone(),
        results,
        log,
        progress: Arc::new(ConsoleProgress::new(parts.console.clone())),
        llm,
        http,
        run: Arc::new(run),
        runtime: parts.runtime.clone(),
        interrupt: parts.interrupt.clone(),
    })
}

/// The async runtime for network capabilities: two workers, as the machine has two cores.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("host-io")
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// LLM settings from the command line.
pub fn llm_settings(args: &LlmArgs) -> anyhow::Result<LlmSettings> {
    let pricing = match &args.llm_pricing {
        Some(path) => {
            let text = fs_err::read_to_string(path)?;
            Pricing::parse(&text).with_context(|| format!("invalid pricing table `{}`", path.display()))?
        }
        None => Pricing::built_in(),
    };
    if let Some(cost) = args.max_cost
        && !(cost.is_finite() && cost >= 0.0)
    {
        anyhow::bail!("`--max-cost` must be a non-negative number of dollars, got {cost}");
    }
    Ok(LlmSettings {
        cache_dir: args.llm_cache_dir.clone().unwrap_or_else(|| crate::project::cache_root().join("llm")),
        cache_mode: if args.offline { CacheMode::Offline } else { args.llm_cache.into() },
        limits: RateLimits {
            concurrency: args.llm_concurrency.max(1),
            requests_per_minute: args.llm_rpm,
            tokens_per_minute: args.llm_tpm,
        },
        retry: RetryPolicy { max_retries: args.llm_retries, ..RetryPolicy::default() },
        max_cost: args.max_cost,
        pricing,
        seeds: Arc::new(Seeds::load(&args.llm_seed)?),
    })
}

/// Capabilities that write nowhere that lasts; keep it alive while they are used.
pub struct Scratch {
    _dir: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
    pub files: Arc<SandboxFiles>,
    pub capabilities: Capabilities,
}

/// Capabilities for commands that compile or describe scripts without a run (`check`, `api`):
/// reads are confined to `root`, writes land in a scratch folder removed on drop, the LLM
/// budget is zero, HTTP requests are not sent and programs are not started, so module code run while resolving imports
/// can neither spend anything nor change a remote service.
pub fn scratch_capabilities(root: &Path, verbose: bool) -> anyhow::Result<Scratch> {
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    // A worker thread of its own, so that guests' host calls (which block on it from the
    // calling thread) get their timers and I/O driven.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let console = Arc::new(Console::new(Style::Plain, verbose));
    let files = Arc::new(SandboxFiles::new(ReadPolicy::new(root)?));
    let llm = LlmSettings {
        cache_dir: dir.path().join("llm"),
        cache_mode: CacheMode::Off,
        limits: RateLimits::default(),
        retry: RetryPolicy::default(),
        max_cost: Some(0.0),
        pricing: Pricing::default(),
        seeds: Default::default(),
    };
    let parts = Ingredients {
        console: &console,
        files: files.clone(),
        llm: &llm,
        local_model: Default::default(),
        runtime: runtime.handle().clone(),
        project_root: root.to_path_buf(),
        scenario_path: None,
        interrupt: Default::default(),
        keep_workspaces: false,
        local_embedder: None,
        reaper: false,
    };
    let results = Arc::new(RunResults::new(dir.path(), "scratch")?);
    let info = RunInfo {
        id: "scratch".into(),
        script: String::new(),
        experiment: "scratch".into(),
        dir: dir.path().to_path_buf(),
        args: serde_json::json!({}),
        argv: Vec::new(),
        scenario: None,
        git: None,
        sharding: Default::default(),
        units: Default::default(),
    };
    let mut capabilities = capabilities(&parts, results, info)?;
    crate::capabilities::registry::to_scratch(&mut capabilities);
    Ok(Scratch { _dir: dir, _runtime: runtime, files, capabilities })
}
