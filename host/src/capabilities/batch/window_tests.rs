//! Specification of `window.rs`: slots are held only while a request is out, never more than the
//! window's size, and the calls waiting on a retry are counted for the progress bar.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;

#[tokio::test]
async fn a_call_waiting_on_a_retry_gives_its_slot_to_the_next() {
    let window = Window::new(1, None);
    let first = window.slot().await;
    drop(first);
    let _waiting = window.wait();
    // The only slot is free although the first call has not ended.
    let second = tokio::time::timeout(Duration::from_secs(5), window.slot()).await;
    assert!(second.is_ok(), "the waiting call held its slot");
}

#[tokio::test]
async fn no_more_requests_are_out_than_the_limit() {
    let window = Window::new(3, None);
    let (out, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let calls = (0..20).map(|_| {
        let (window, out, most) = (window.clone(), out.clone(), most.clone());
        async move {
            let _slot = window.slot().await;
            most.fetch_max(out.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
            tokio::task::yield_now().await;
            out.fetch_sub(1, Ordering::SeqCst);
        }
    });
    futures::future::join_all(calls).await;
    assert_eq!(most.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn the_note_hears_how_many_calls_wait() {
    let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let note = {
        let heard = heard.clone();
        Box::new(move |waiting: usize| heard.lock().expect("heard").push(waiting))
    };
    let window = Window::new(4, Some(note));
    let a = window.wait();
    let b = window.wait();
    drop(a);
    drop(b);
    assert_eq!(*heard.lock().expect("heard"), vec![1, 2, 1, 0]);
}

#[tokio::test]
async fn only_calls_inside_a_scope_find_their_window() {
    assert!(Window::current().is_none());
    let window = Window::new(2, None);
    let found = window.scope(async { Window::current().is_some_and(|w| Arc::ptr_eq(&w, &window)) }).await;
    assert!(found);
}
