//! The `loopback` capability: servers on 127.0.0.1 that play a remote API's side for an
//! experiment, scripted by it and logging every request, so that real programs (Claude Code, the
//! OpenClaw gateway and its Cortex plugin) run offline against a scripted model and memory.
//!
//! What every play shares is in files of its own: `server` (the request handler, the [`Play`]
//! trait, modes and faults carried out, stopping), `door` (the listening socket, closed and
//! opened again on the same port), `record` (the request log), `faults` (the one fault
//! vocabulary: numbered by a script, or picked by a play for a request), `modes` (faults a script
//! switches at run time), `shutdown` (the signals handlers and connections select on), `wire`
//! (JSON bodies, token counts, stream deltas) and `replies` (the scripted agent of a chat play).
//! A play is one file: `anthropic`, `openai` (with `compaction`: OpenClaw's compaction summary
//! and memory flush, answered as an extractive model would), `cortex` (with `memories` and
//! `jobs`), `models` (host's own models served to a memory system, with `extractor`). Servers run
//! on the run's async runtime and all stop when the run ends; this module knows nothing of Rhai.
//!
//! The end-to-end tests' fakes are plays on the same [`Server`]: a test's own [`Play`] (an echoing
//! model) or one of these configured from Rust (the Cortex), with faults it queues by prompt or
//! by endpoint through [`Play::fault`].

mod anthropic;
mod compaction;
mod cortex;
mod door;
mod extractor;
mod faults;
mod jobs;
mod memories;
mod models;
mod modes;
mod openai;
mod record;
mod replies;
pub mod rhai;
mod server;
mod shutdown;
mod wire;

/// `loopback::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "loopback",
    rhai: |capabilities| {
        let embedders = rhai::run_embedders(capabilities.embed.clone());
        rhai::module(capabilities.loopback.clone(), capabilities.runtime.clone(), embedders, capabilities.llm.clone())
    },
    types: rhai::register_types,
    guest: None,
    finish: |_, _| {},
    scratch: None,
};

#[cfg(test)]
mod compaction_tests;
#[cfg(test)]
mod cortex_tests;
#[cfg(test)]
mod faults_tests;
#[cfg(test)]
mod models_tests;
#[cfg(test)]
mod openai_tests;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, PoisonError};

pub use anthropic::AnthropicScript;
pub use cortex::{CortexPlay, CortexScript};
pub use faults::{Fault, FaultSpec, Faults};
pub use memories::Memory;
pub use models::{ModelsPlay, ModelsScript};
pub use modes::{Mode, ModeSpec};
pub use openai::{OpenAiScript, embedding, embeddings};
pub use record::RequestRecord;
pub use replies::{Reply, ToolCall};
pub use server::{Answer, Incoming, Play, Server};

/// Why a loopback server could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoopbackError {
    #[error("cannot listen on 127.0.0.1")]
    Bind(#[source] std::io::Error),
    #[error("cannot listen on 127.0.0.1:{port} again")]
    Reopen {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid mode for `set_mode`: {0}")]
    Mode(String),
    #[error("invalid script for `loopback::{play}`: `{field}`: {message}")]
    Script { play: &'static str, field: String, message: String },
}

/// Starts servers that play remote APIs.
#[async_trait::async_trait]
pub trait Loopback: Send + Sync {
    /// A server playing the Anthropic Messages API as `script` says, listening when this returns.
    async fn anthropic(&self, script: AnthropicScript) -> Result<Arc<Server>, LoopbackError>;
    /// A server playing the OpenAI Chat Completions API as `script` says, listening when this
    /// returns.
    async fn openai(&self, script: OpenAiScript) -> Result<Arc<Server>, LoopbackError>;
    /// A server playing the Cortex memory API as `script` says, in the script's mode when this
    /// returns; the play is returned too, to read the memories it holds.
    async fn cortex(&self, script: CortexScript) -> Result<(Arc<Server>, Arc<CortexPlay>), LoopbackError>;
    /// A server answering OpenAI's chat and embeddings API with host's own models: `embedder`
    /// for embeddings, the chat `script` names for completions (the extractor, or a model through
    /// `llm`); listening when this returns.
    async fn models(
        &self,
        script: ModelsScript,
        embedder: Arc<dyn crate::capabilities::embed::Embedder>,
        llm: Arc<dyn crate::capabilities::llm::Llm>,
    ) -> Result<Arc<Server>, LoopbackError>;
}

/// Servers on this process's loopback interface, on the runtime the caller runs on. Every server
/// it started is stopped when it is dropped (the end of the run), even where the runtime lives
/// on (the warm hook server).
#[derive(Default)]
pub struct LocalLoopback {
    servers: Mutex<Vec<Arc<Server>>>,
}

impl LocalLoopback {
    pub fn new() -> Self {
        Self::default()
    }

    fn keep(&self, server: Arc<Server>) -> Arc<Server> {
        self.servers.lock().unwrap_or_else(PoisonError::into_inner).push(server.clone());
        server
    }
}

#[async_trait::async_trait]
impl Loopback for LocalLoopback {
    async fn anthropic(&self, script: AnthropicScript) -> Result<Arc<Server>, LoopbackError> {
        let (play, faults) = anthropic::AnthropicPlay::new(script)?;
        let server = Server::start(Arc::new(play), faults).await?;
        Ok(self.keep(server))
    }

    async fn openai(&self, script: OpenAiScript) -> Result<Arc<Server>, LoopbackError> {
        let (play, faults) = openai::OpenAiPlay::new(script)?;
        let server = Server::start(Arc::new(play), faults).await?;
        Ok(self.keep(server))
    }

    async fn cortex(&self, script: CortexScript) -> Result<(Arc<Server>, Arc<CortexPlay>), LoopbackError> {
        let (play, mode) = CortexPlay::new(script)?;
        let play = Arc::new(play);
        let server = self.keep(Server::start(play.clone(), faults::Faults::default()).await?);
        server.set_mode(mode).await?;
        Ok((server, play))
    }

    async fn models(
        &self,
        script: ModelsScript,
        embedder: Arc<dyn crate::capabilities::embed::Embedder>,
        llm: Arc<dyn crate::capabilities::llm::Llm>,
    ) -> Result<Arc<Server>, LoopbackError> {
        let (play, faults) = ModelsPlay::new(script, embedder, llm)?;
        let server = Server::start(Arc::new(play), faults).await?;
        Ok(self.keep(server))
    }
}

impl Drop for LocalLoopback {
    fn drop(&mut self) {
        for server in self.servers.get_mut().unwrap_or_else(PoisonError::into_inner).iter() {
            server.signal_stop();
        }
    }
}
