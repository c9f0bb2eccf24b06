//! The one registry of capabilities: everything scripts (and, through the same traits, guest
//! modules) may call.
//!
//! Each capability is a folder: `mod.rs` holds its trait and boundary types and knows nothing
//! of Rhai or wasmtime; `rhai.rs` is a thin adapter that fills the static Rhai module `<name>::`;
//! `wasm.rs`, where guests may use the capability, answers the guest import module
//! `host:<name>` ([`GuestImports`]). Policy (sandboxing, hashing, limits) lives behind the trait,
//! so both adapters inherit it. The folder's `mod.rs` declares what the host needs from it (a
//! [`registry::Capability`]), and [`registry::ALL`] lists them all.

pub mod embed;
pub mod fs;
pub mod guest;
pub mod html;
pub mod http;
pub mod json;
pub mod llm;
pub mod log;
pub mod loopback;
pub mod packages;
pub mod proc;
pub mod progress;
pub mod qa;
pub mod registry;
pub mod results;
pub mod run;
pub mod search;
pub mod stats;
pub mod text;
pub mod time;
pub mod workspace;

pub mod batch;
pub mod decode;
mod docs;

use std::sync::Arc;

/// The capabilities of one run.
#[derive(Clone)]
pub struct Capabilities {
    pub files: Arc<dyn fs::Files>,
    pub results: Arc<dyn results::Results>,
    pub log: Arc<dyn log::Log>,
    pub progress: Arc<dyn progress::Progress>,
    pub llm: Arc<dyn llm::Llm>,
    pub http: Arc<dyn http::Http>,
    pub embed: Arc<embed::EmbedRouter>,
    pub search: Arc<dyn search::Search>,
    /// Programs: the policy that allows them, and the metered processes that run them.
    pub proc: Arc<proc::Proc>,
    /// Every process group the run started that may still be alive, for Ctrl-C.
    pub process_groups: Arc<proc::Groups>,
    /// Throwaway directories, removed when the run ends unless kept.
    pub workspaces: Arc<workspace::Workspaces>,
    /// Pinned packages from a registry, cached after the first fetch.
    pub packages: Arc<dyn packages::Packages>,
    /// Reports as self-contained HTML pages with charts.
    pub reports: Arc<dyn html::HtmlReports>,
    /// Servers on 127.0.0.1 playing remote APIs, stopped when the run ends.
    pub loopback: Arc<dyn loopback::Loopback>,
    pub run: Arc<run::RunInfo>,
    /// Guest modules: found, built, loaded and sandboxed by [`crate::wasm`].
    pub guests: Arc<crate::wasm::Registry>,
    /// Where async capabilities (`llm`, `http`) run; scripts block on it from their own thread.
    pub runtime: tokio::runtime::Handle,
    /// Set by Ctrl-C: capabilities that wait (`time::sleep`, `proc`) stop waiting.
    pub interrupt: crate::script::Interrupt,
}

impl std::fmt::Debug for Capabilities {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Capabilities").field("run", &self.run).finish_non_exhaustive()
    }
}

impl Capabilities {
    /// Each capability's Rhai namespace, in the order the API reference lists them.
    pub fn rhai_modules(&self) -> Vec<(&'static str, ::rhai::Module)> {
        registry::ALL.iter().map(|capability| (capability.name, (capability.rhai)(self))).collect()
    }

    /// Registers every namespace, and the types its functions return, with `engine`.
    pub fn register_rhai(&self, engine: &mut ::rhai::Engine) {
        for (name, module) in self.rhai_modules() {
            engine.register_static_module(name, module.into());
        }
        for capability in &registry::ALL {
            (capability.types)(engine);
        }
    }

    /// The end of a run, however the script ended: each capability stops what it started and
    /// adds its record to `manifest`.
    pub fn finish(&self, manifest: &mut crate::run_record::Manifest) {
        for capability in &registry::ALL {
            (capability.finish)(self, manifest);
        }
    }
}

/// A capability's failure as a catchable script error at the calling position, with its causes
/// spelled out.
pub fn script_error(
    context: &::rhai::NativeCallContext,
    error: &(dyn std::error::Error + 'static),
) -> Box<::rhai::EvalAltResult> {
    Box::new(::rhai::EvalAltResult::ErrorRuntime(error_chain(error).into(), context.call_position()))
}

/// A script's value (a request or options map, a list) as the boundary type `T`: a value that is
/// not plain data, an unknown key or a wrong type is a catchable error at the calling position,
/// `invalid <what>: …`, naming the key. `minimal` is the smallest valid value (`{}` when every
/// field has a default), on which each key is tried alone to find the one at fault. Every
/// capability reads what scripts give it through this function or [`script_options`].
pub fn script_value<T: serde::de::DeserializeOwned>(
    context: &::rhai::NativeCallContext,
    what: &str,
    value: &::rhai::Dynamic,
    minimal: &serde_json::Value,
) -> Result<T, Box<::rhai::EvalAltResult>> {
    let fail = |message: String| -> Box<::rhai::EvalAltResult> {
        Box::new(::rhai::EvalAltResult::ErrorRuntime(
            format!("invalid {what}: {message}").into(),
            context.call_position(),
        ))
    };
    let value: serde_json::Value = ::rhai::serde::from_dynamic(value)
        .map_err(|error| fail(format!("not plain data: {}", error.unwrap_inner())))?;
    decode::decode(value, minimal).map_err(|error| fail(error.to_string()))
}

/// [`script_value`] for the options map of `function`, whose every option has a default.
pub fn script_options<T: serde::de::DeserializeOwned>(
    context: &::rhai::NativeCallContext,
    function: &str,
    options: ::rhai::Map,
) -> Result<T, Box<::rhai::EvalAltResult>> {
    script_value(context, &format!("options for `{function}`"), &options.into(), &serde_json::json!({}))
}

/// The options of the batch functions (`llm::chat_many`, `proc::run_many`): how many at once, and
/// the progress bar's label. Each function has its own defaults.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchOptions {
    #[serde(default)]
    pub concurrency: Option<usize>,
    #[serde(default)]
    pub label: Option<String>,
}

/// An error and its causes, joined by `: `.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}

/// The capabilities guests may be granted, each answering the import module `host:<name>` with
/// one operation-dispatching function (see `abi`). Which of them a guest may call is decided by
/// its grants when it is linked, not here.
#[derive(Clone)]
pub struct GuestImports {
    pub log: Arc<dyn log::Log>,
    pub embed: Arc<embed::EmbedRouter>,
    pub llm: Arc<dyn llm::Llm>,
}

impl std::fmt::Debug for GuestImports {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("GuestImports").finish_non_exhaustive()
    }
}

impl GuestImports {
    /// Runs `op` of `capability` for `guest` on JSON `input`.
    pub async fn call(&self, capability: &str, guest: &str, op: &str, input: &[u8]) -> abi::Reply<serde_json::Value> {
        let result = match registry::find(capability).and_then(|found| found.guest) {
            Some(answer) => answer(self, guest, op, input).await,
            None => Err(abi::Failure::new(abi::FailureKind::Unsupported, format!("no capability `{capability}`"))),
        };
        result.into()
    }
}

/// A guest's JSON input as a boundary type; a mismatch is the guest's invalid input.
fn decode<T: serde::de::DeserializeOwned>(input: &[u8]) -> Result<T, abi::Failure> {
    serde_json::from_slice(input).map_err(|error| abi::Failure::invalid_input(error.to_string()))
}

fn encode<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, abi::Failure> {
    serde_json::to_value(value).map_err(|error| abi::Failure::failed(error.to_string()))
}
