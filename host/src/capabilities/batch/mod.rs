//! Batches of async calls for `llm::chat_many` and `proc::run_many`: at most `concurrency` in
//! flight, the next one starting as soon as any call finishes (not when the oldest does, so one
//! slow call never holds the window), results in input order. An LLM batch runs in a
//! [`Window`] (`window`): a call waiting on a retry gives its slot to the next call.

mod window;

pub use window::{Slot, Wait, Window};

use std::future::Future;
use std::sync::Arc;

use futures::StreamExt;

use crate::capabilities::progress::{Progress, Task};

/// `call` on every item, at most `concurrency` (at least 1) at a time; the outputs in the items'
/// order.
pub async fn in_input_order<T, F, O>(items: Vec<T>, concurrency: usize, call: impl Fn(T) -> F) -> Vec<O>
where
    F: Future<Output = O>,
{
    let mut outputs: Vec<Option<O>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    let mut finished = futures::stream::iter(items.into_iter().enumerate())
        .map(|(index, item)| {
            let call = call(item);
            async move { (index, call.await) }
        })
        .buffer_unordered(concurrency.max(1));
    while let Some((index, output)) = finished.next().await {
        outputs[index] = Some(output);
    }
    outputs.into_iter().flatten().collect()
}

/// Calls of an LLM batch started per slot of its window: those beyond the slots wait for one,
/// or on a retry. It bounds how many calls pass `--max-cost`'s check before any of them spent.
const STARTED_PER_SLOT: usize = 4;

/// [`with_progress`] for LLM calls, in a [`Window`] of `concurrency` requests out at once that
/// gives a call's slot back while it waits on a retry; the bar notes how many calls wait on one.
pub fn in_a_window<T, F, O>(
    runtime: &tokio::runtime::Handle,
    progress: &dyn Progress,
    label: &str,
    items: Vec<T>,
    concurrency: usize,
    call: impl Fn(T) -> F,
) -> Vec<O>
where
    F: Future<Output = O>,
{
    let task = progress.start(label, Some(items.len() as u64));
    let noted = task.clone();
    let note = move |waiting: usize| {
        noted.note(&if waiting == 0 { String::new() } else { format!("{waiting} waiting on a retry") });
    };
    let window = Window::new(concurrency, Some(Box::new(note)));
    let started = concurrency.max(1).saturating_mul(STARTED_PER_SLOT);
    counted(runtime, task, items, started, |item| window.scope(call(item)))
}

/// [`in_input_order`] with a progress bar labelled `label` that advances as each call ends,
/// waited for on `runtime` (the scripts' thread blocks; the calls run on the runtime).
pub fn with_progress<T, F, O>(
    runtime: &tokio::runtime::Handle,
    progress: &dyn Progress,
    label: &str,
    items: Vec<T>,
    concurrency: usize,
    call: impl Fn(T) -> F,
) -> Vec<O>
where
    F: Future<Output = O>,
{
    counted(runtime, progress.start(label, Some(items.len() as u64)), items, concurrency, call)
}

/// [`in_input_order`] on `runtime`, `task` advancing as each call ends and finished with them.
fn counted<T, F, O>(
    runtime: &tokio::runtime::Handle,
    task: Arc<dyn Task>,
    items: Vec<T>,
    concurrency: usize,
    call: impl Fn(T) -> F,
) -> Vec<O>
where
    F: Future<Output = O>,
{
    let outputs = runtime.block_on(in_input_order(items, concurrency, |item| {
        let (call, task) = (call(item), task.clone());
        async move {
            let output = call.await;
            task.advance(1);
            output
        }
    }));
    task.finish();
    outputs
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::Notify;

    use super::*;

    #[tokio::test]
    async fn a_slow_first_call_does_not_hold_back_the_rest_and_outputs_keep_input_order() {
        // The first call can only finish once every other call has: with a window that waited
        // for its oldest call, the batch would never end. (The timeout only stops a broken
        // implementation from hanging the suite.)
        let others_done = Arc::new(AtomicUsize::new(0));
        let released = Arc::new(Notify::new());
        let items: Vec<usize> = (0..10).collect();
        let batch = in_input_order(items, 2, |item| {
            let (others_done, released) = (others_done.clone(), released.clone());
            async move {
                if item == 0 {
                    released.notified().await;
                } else if others_done.fetch_add(1, Ordering::SeqCst) + 1 == 9 {
                    released.notify_one();
                }
                item * 10
            }
        });
        let outputs = tokio::time::timeout(std::time::Duration::from_secs(30), batch).await.expect("the batch ends");
        assert_eq!(outputs, (0..10).map(|item| item * 10).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn no_more_than_concurrency_calls_run_at_once() {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let outputs = in_input_order((0..20).collect(), 3, |item: i32| {
            let (running, most) = (running.clone(), most.clone());
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::task::yield_now().await;
                running.fetch_sub(1, Ordering::SeqCst);
                item
            }
        })
        .await;
        assert_eq!(outputs.len(), 20);
        assert!(most.load(Ordering::SeqCst) <= 3);
        assert_eq!(in_input_order(Vec::<i32>::new(), 0, |item| async move { item }).await, Vec::<i32>::new());
    }
}
