//! The `progress` capability: progress bars for long loops.
//!
//! Bars at a terminal; in plain style (not a terminal, or `CI` set) a line per 10% step, at most
//! one every [`PLAIN_INTERVAL`], and a closing line, so logs show progress without flooding.

pub mod rhai;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The least time between two plain progress lines of one task.
pub const PLAIN_INTERVAL: Duration = Duration::from_secs(2);

use indicatif::ProgressBar;

use crate::console::{Console, Style};

/// Starts progress displays.
pub trait Progress: Send + Sync {
    /// A task of `total` steps, or of unknown length when `None`.
    fn start(&self, label: &str, total: Option<u64>) -> Arc<dyn Task>;
}

/// One running task.
pub trait Task: Send + Sync {
    fn advance(&self, steps: u64);
    /// A short note beside the count ("3 waiting on a retry"); `""` clears it.
    fn note(&self, note: &str);
    fn finish(&self);
}

/// [`Progress`] on the run's console.
#[derive(Debug)]
pub struct ConsoleProgress {
    console: Arc<Console>,
}

impl ConsoleProgress {
    pub fn new(console: Arc<Console>) -> Self {
        ConsoleProgress { console }
    }
}

impl Progress for ConsoleProgress {
    fn start(&self, label: &str, total: Option<u64>) -> Arc<dyn Task> {
        Arc::new(ConsoleTask {
            console: self.console.clone(),
            bar: self.console.bar(label, total),
            label: label.to_string(),
            total,
            done: AtomicU64::new(0),
            last_decile: AtomicU64::new(0),
            started: Instant::now(),
            last_line: Mutex::new(Instant::now()),
            note: Mutex::new(String::new()),
            finished: Mutex::new(false),
        })
    }
}

struct ConsoleTask {
    console: Arc<Console>,
    bar: ProgressBar,
    label: String,
    total: Option<u64>,
    done: AtomicU64,
    last_decile: AtomicU64,
    started: Instant,
    last_line: Mutex<Instant>,
    note: Mutex<String>,
    finished: Mutex<bool>,
}

impl Task for ConsoleTask {
    fn advance(&self, steps: u64) {
        let done = self.done.fetch_add(steps, Ordering::Relaxed).saturating_add(steps);
        self.bar.inc(steps);
        if self.console.style() != Style::Plain {
            return;
        }
        if let Some(total) = self.total.filter(|total| *total > 0) {
            let decile = done.min(total).saturating_mul(10) / total;
            if decile <= self.last_decile.load(Ordering::Relaxed) || done >= total {
                return;
            }
            let Ok(mut last_line) = self.last_line.lock() else { return };
            if last_line.elapsed() >= PLAIN_INTERVAL {
                *last_line = Instant::now();
                self.last_decile.store(decile, Ordering::Relaxed);
                let note = self.note.lock().map(|note| note.clone()).unwrap_or_default();
                let note = if note.is_empty() { note } else { format!(", {note}") };
                self.console.line(&format!("{}: {done}/{total} ({}%){note}", self.label, decile * 10));
            }
        }
    }

    fn note(&self, note: &str) {
        self.bar.set_message(note.to_string());
        if let Ok(mut kept) = self.note.lock() {
            *kept = note.to_string();
        }
    }

    fn finish(&self) {
        let Ok(mut finished) = self.finished.lock() else { return };
        if *finished {
            return;
        }
        *finished = true;
        self.bar.finish_and_clear();
        let done = self.done.load(Ordering::Relaxed);
        let seconds = self.started.elapsed().as_secs_f64();
        let count = match self.total {
            Some(total) => format!("{done}/{total}"),
            None => done.to_string(),
        };
        self.console.line(&format!("{}: {count} done in {seconds:.1}s", self.label));
    }
}

impl Drop for ConsoleTask {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// `progress::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "progress",
    rhai: |capabilities| rhai::module(capabilities.progress.clone()),
    types: rhai::register_types,
    guest: None,
    finish: |_, _| {},
    scratch: None,
};
