//! The `loopback` capability: servers on 127.0.0.1 that play a remote API's side for an
//! experiment, scripted by it and logging every request, so that real programs (Claude Code) run
//! offline against a scripted model.
//!
//! What every play shares is in files of its own: `server` (binding, the request handler, the
//! [`Play`] trait, stopping), `record` (the request log), `faults` (scripted faults),
//! `shutdown` (the signal handlers and connections select on) and `replies` (the scripted agent
//! turns of a chat play). A play is one file (`anthropic`). Servers run on the run's async
//! runtime and all stop when the run ends; this module knows nothing of Rhai.

mod anthropic;
mod faults;
mod record;
mod replies;
pub mod rhai;
mod server;
mod shutdown;

#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex, PoisonError};

pub use anthropic::AnthropicScript;
pub use faults::FaultSpec;
pub use record::RequestRecord;
pub use replies::{Reply, ToolCall};
pub use server::Server;

/// Why a loopback server could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoopbackError {
    #[error("cannot listen on 127.0.0.1")]
    Bind(#[source] std::io::Error),
    #[error("invalid script for `loopback::{play}`: `{field}`: {message}")]
    Script { play: &'static str, field: String, message: String },
}

/// Starts servers that play remote APIs.
#[async_trait::async_trait]
pub trait Loopback: Send + Sync {
    /// A server playing the Anthropic Messages API as `script` says, listening when this returns.
    async fn anthropic(&self, script: AnthropicScript) -> Result<Arc<Server>, LoopbackError>;
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
}

impl Drop for LocalLoopback {
    fn drop(&mut self) {
        for server in self.servers.get_mut().unwrap_or_else(PoisonError::into_inner).iter() {
            server.signal_stop();
        }
    }
}
