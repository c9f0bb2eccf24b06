//! A loopback server for the synchronous end-to-end tests: host's own loopback [`Server`] (the
//! machinery scripts' `loopback::` servers run on, its faults and modes included) serving a
//! test's play on a runtime of its own, which stops with the last handle.

use std::sync::Arc;

use host::capabilities::loopback::{Faults, Mode, ModeSpec, Play, RequestRecord, Server};
use serde_json::Value;
use tokio::runtime::Runtime;

#[derive(Clone)]
pub struct Served {
    server: Arc<Server>,
    runtime: Arc<Runtime>,
}

impl Served {
    /// Serves `play` on 127.0.0.1 (a free port), listening when this returns.
    pub fn start(play: Arc<dyn Play>) -> Self {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
        let server = runtime.block_on(Server::start(play, Faults::default())).expect("the server starts");
        Self { server, runtime: Arc::new(runtime) }
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

    /// Switches the server's mode, as a script's `set_mode` does (`{"kind": "latency", …}`).
    pub fn set_mode(&self, mode: Value) {
        let spec: ModeSpec = serde_json::from_value(mode).expect("a mode");
        let mode = Mode::new(&spec).expect("a valid mode");
        self.runtime.block_on(self.server.set_mode(mode)).expect("the mode is set");
    }
}
