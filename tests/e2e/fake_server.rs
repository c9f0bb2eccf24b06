//! A loopback server for the synchronous end-to-end tests: host's own loopback [`Server`] (the
//! machinery scripts' `loopback::` servers run on, its faults and modes included) serving a
//! test's play on a runtime of its own, which stops with the last handle.

use std::sync::Arc;

use host::capabilities::loopback::{Faults, Play, RequestRecord, Server};
use tokio::runtime::Runtime;

#[derive(Clone)]
pub struct Served {
    server: Arc<Server>,
    /// The runtime the server's tasks run on, for as long as a handle lives.
    _runtime: Arc<Runtime>,
}

impl Served {
    /// Serves `play` on 127.0.0.1 (a free port), listening when this returns.
    pub fn start(play: Arc<dyn Play>) -> Self {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
        let server = runtime.block_on(Server::start(play, Faults::default())).expect("the server starts");
        Self { server, _runtime: Arc::new(runtime) }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.server.requests()
    }

    pub fn most_in_flight(&self) -> usize {
        self.server.most_in_flight()
    }
}
