//! The thread that makes a run's rows readable while the run lives: it flushes the tables whose
//! oldest buffered row is [`FLUSH_INTERVAL`](super::FLUSH_INTERVAL) old, so a table that stops
//! receiving rows (a script waiting on a model) is on disk too. It must not outlive the run.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use super::RunResults;

/// How often the thread looks; a row is readable at most this long after it is due.
const TICK: Duration = Duration::from_secs(1);

/// Flushes due tables every [`TICK`] until dropped.
#[derive(Debug)]
pub struct Flusher {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Flusher {
    pub fn start(results: &Arc<RunResults>) -> Self {
        let results: Weak<RunResults> = Arc::downgrade(results);
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("flush".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                    let Some(results) = results.upgrade() else { return };
                    results.flush(false);
                }
            })
            .ok();
        Self { stop: Some(stop), thread }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
