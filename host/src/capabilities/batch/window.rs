//! The window of an LLM batch: how many of its calls may have a request out at once. A call
//! holds a slot only while one of its requests is out; waiting on a retry it gives the slot
//! back, so that a `Retry-After` or a backoff never holds up the calls behind it. (A fixed
//! window does: measured in BENCHMARKS.md, so the window does not also narrow on 429s; the
//! provider's `--llm-rpm` and `--llm-tpm` are the throttle.)
//!
//! A batch puts its window around each call with [`Window::scope`]; the retry loop, deep in the
//! LLM stack, finds it with [`Window::current`]. A call outside a batch has no window.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

tokio::task_local! {
    static CURRENT: Arc<Window>;
}

/// What a window is told about its calls' waits, to show them (a progress bar's note).
pub type WaitingNote = Box<dyn Fn(usize) + Send + Sync>;

pub struct Window {
    slots: Arc<Semaphore>,
    waiting: AtomicUsize,
    on_waiting: Option<WaitingNote>,
}

/// A slot of the window, held while one request is out; dropping it frees the slot.
pub struct Slot {
    _permit: Option<OwnedSemaphorePermit>,
}

/// A call's wait on a retry, counted while it lasts.
pub struct Wait {
    window: Arc<Window>,
}

impl Window {
    /// A window of `size` (at least 1) requests out at once; `on_waiting` hears how many calls
    /// wait on a retry whenever that changes.
    pub fn new(size: usize, on_waiting: Option<WaitingNote>) -> Arc<Self> {
        Arc::new(Window { slots: Arc::new(Semaphore::new(size.max(1))), waiting: AtomicUsize::new(0), on_waiting })
    }

    /// `call`, with this window as the one [`Window::current`] finds while it runs.
    pub async fn scope<F: Future>(self: &Arc<Self>, call: F) -> F::Output {
        CURRENT.scope(self.clone(), call).await
    }

    /// The window of the batch the running call belongs to, if any.
    pub fn current() -> Option<Arc<Window>> {
        CURRENT.try_with(Arc::clone).ok()
    }

    /// Waits for a free slot; slots are handed out in the order they were asked for.
    pub async fn slot(&self) -> Slot {
        // The semaphore is never closed, so acquiring cannot fail; if that invariant broke,
        // the request would go ahead without a slot rather than not at all.
        Slot { _permit: self.slots.clone().acquire_owned().await.ok() }
    }

    /// Counts a call as waiting on a retry until the returned guard is dropped.
    pub fn wait(self: &Arc<Self>) -> Wait {
        self.tell(self.waiting.fetch_add(1, Ordering::SeqCst) + 1);
        Wait { window: self.clone() }
    }

    fn tell(&self, waiting: usize) {
        if let Some(note) = &self.on_waiting {
            note(waiting);
        }
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        let waiting = self.window.waiting.fetch_sub(1, Ordering::SeqCst).saturating_sub(1);
        self.window.tell(waiting);
    }
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
