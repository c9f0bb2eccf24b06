//! [`SharedClient`]: the one HTTP client a run's capabilities share (`http::`, `llm::`, remote
//! `embed::`), built on first use.
//!
//! Building a client reads and parses the system's certificate store, about 25 ms; a run that
//! never reaches the network (most offline runs, and every memory-hook call) should not pay for
//! it, and a run that does pays once, not once per capability.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long to wait for a connection, unless the request's own timeout is shorter.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A cheap handle to the client; clones share it.
#[derive(Clone, Default)]
pub struct SharedClient(Arc<OnceLock<Result<reqwest::Client, String>>>);

impl std::fmt::Debug for SharedClient {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("SharedClient").field("built", &self.0.get().is_some()).finish()
    }
}

impl SharedClient {
    /// The client, building it on the first call; why it could not be built otherwise.
    pub fn get(&self) -> Result<reqwest::Client, String> {
        self.0
            .get_or_init(|| {
                reqwest::Client::builder().connect_timeout(CONNECT_TIMEOUT).build().map_err(|error| {
                    format!("cannot set up the HTTP client: {}", crate::capabilities::error_chain(&error))
                })
            })
            .clone()
    }

    /// Whether a request has needed the client yet.
    pub fn is_built(&self) -> bool {
        self.0.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_built_on_first_use_and_shared_by_clones() {
        let shared = SharedClient::default();
        let clone = shared.clone();
        assert!(!shared.is_built(), "building waits for a request");
        assert!(clone.get().is_ok());
        assert!(shared.is_built(), "a clone built it for both");
    }
}
