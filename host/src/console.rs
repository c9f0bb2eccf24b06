//! Human-facing output on stderr: log lines and progress bars, kept out of each other's way.
//!
//! Data never goes here (it goes to files in the run directory). When stderr is not a terminal,
//! or `CI` is set, bars are replaced by plain progress lines so logs stay readable. Every line
//! shown is also appended to the run's `run.log`, so nothing a run said is lost with the terminal.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How progress is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Animated bars, for a person at a terminal.
    Bars,
    /// One line per 10% step, for logs and CI.
    Plain,
}

impl Style {
    /// Bars only when stderr is a terminal and `CI` is unset.
    pub fn detect() -> Self {
        let in_ci = std::env::var_os("CI").is_some_and(|value| !value.is_empty());
        if std::io::stderr().is_terminal() && !in_ci { Style::Bars } else { Style::Plain }
    }
}

/// The run's stderr, shared by every capability that talks to a person.
pub struct Console {
    style: Style,
    verbose: bool,
    multi: MultiProgress,
    started: Instant,
    log_file: Mutex<Option<File>>,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Console").field("style", &self.style).finish_non_exhaustive()
    }
}

impl Console {
    pub fn new(style: Style, verbose: bool) -> Self {
        let target = match style {
            Style::Bars => ProgressDrawTarget::stderr(),
            Style::Plain => ProgressDrawTarget::hidden(),
        };
        Console {
            style,
            verbose,
            multi: MultiProgress::with_draw_target(target),
            started: Instant::now(),
            log_file: Mutex::new(None),
        }
    }

    pub fn style(&self) -> Style {
        self.style
    }

    pub fn verbose(&self) -> bool {
        self.verbose
    }

    /// From now on, every line is also appended to `path`.
    pub fn attach_log_file(&self, path: &Path) -> std::io::Result<()> {
        let file = fs_err::OpenOptions::new().create(true).append(true).open(path)?.into_parts().0;
        if let Ok(mut slot) = self.log_file.lock() {
            *slot = Some(file);
        }
        Ok(())
    }

    /// Prints one line to stderr (above any bars) and to the run log.
    pub fn line(&self, text: &str) {
        match self.style {
            Style::Bars if !self.multi.is_hidden() => {
                let _ = self.multi.println(text);
            }
            _ => eprintln!("{text}"),
        }
        self.record(text);
    }

    /// Appends a line to the run log only.
    pub fn record(&self, text: &str) {
        if let Ok(mut slot) = self.log_file.lock()
            && let Some(file) = slot.as_mut()
        {
            let seconds = self.started.elapsed().as_secs_f64();
            let _ = writeln!(file, "[{seconds:9.3}s] {text}");
        }
    }

    /// A bar attached to this console; hidden in plain style (the caller prints plain lines).
    pub fn bar(&self, label: &str, total: Option<u64>) -> ProgressBar {
        let bar = match total {
            Some(total) => ProgressBar::new(total).with_style(bar_style()),
            None => ProgressBar::new_spinner().with_style(spinner_style()),
        };
        let bar = bar.with_prefix(label.to_string());
        if self.style == Style::Bars {
            let bar = self.multi.add(bar);
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        } else {
            bar.set_draw_target(ProgressDrawTarget::hidden());
            bar
        }
    }
}

fn bar_style() -> ProgressStyle {
    ProgressStyle::with_template("{prefix:>20} [{bar:30}] {pos}/{len} {percent:>3}% {elapsed_precise} eta {eta} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

fn spinner_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {prefix} {pos} {elapsed_precise} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}
