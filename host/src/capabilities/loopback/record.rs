//! The request log of one loopback server: every request in arrival order, with what it was
//! answered. Credentials are never kept: only whether a key was sent.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use axum::http::HeaderMap;
use serde::Serialize;
use serde_json::Value;

/// The headers worth seeing in a request log: which protocol version and betas a client asks
/// for, and which client it is. Everything else (above all the key) is left out.
const RECORDED_HEADERS: [&str; 3] = ["anthropic-version", "anthropic-beta", "user-agent"];

/// The headers that carry a key, recorded only as `key_present`.
const KEY_HEADERS: [&str; 2] = ["x-api-key", "authorization"];

/// One request, as scripts read it from `requests()`.
#[derive(Debug, Clone, Serialize)]
pub struct RequestRecord {
    /// Arrival number among all requests to this server, from 1.
    pub seq: u64,
    /// When it arrived, in milliseconds since the server started.
    pub at_ms: f64,
    pub method: String,
    /// The path without its query string.
    pub path: String,
    /// The query string, `""` when there is none.
    pub query: String,
    /// Whether the body asked for a streamed answer (`stream: true`).
    pub stream: bool,
    /// Whether the body offered tools: a request of the agent rather than a side request.
    pub agent: bool,
    /// What a chat play took the request for (`agent`, `side`, `compaction`, `flush`); `None` for
    /// other paths and plays.
    pub kind: Option<&'static str>,
    /// The scripted turn answered; `None` for side requests, other paths and faults but `delay`.
    pub reply: Option<u64>,
    /// The scripted fault applied to it.
    pub fault: Option<&'static str>,
    /// The HTTP status answered; `None` when nothing was (a stall, a hang, a reset, a wait the
    /// stop cut short).
    pub status: Option<u16>,
    /// The kind of the server's mode applied to it: `ok` unless a mode covering its path was set.
    pub mode: &'static str,
    /// Milliseconds from its arrival until its answer was ready to send, or until its connection
    /// was reset; `None` while neither happened (a stall, a hang, a wait the stop cut short).
    pub duration_ms: Option<f64>,
    pub headers: BTreeMap<String, String>,
    pub key_present: bool,
    /// The body as JSON, or as text when it is not JSON.
    pub body: Value,
}

/// What the log needs of an arriving request.
pub struct Arrival<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub headers: &'a HeaderMap,
    pub body: Value,
    pub stream: bool,
    pub agent: bool,
    pub kind: Option<&'static str>,
    /// Whether scripted faults number this request.
    pub numbered: bool,
}

/// The numbers an arriving request was given.
#[derive(Debug, Clone, Copy)]
pub struct Numbers {
    pub seq: u64,
    /// Its number among the requests faults count, from 1.
    pub numbered: Option<u64>,
}

#[derive(Default)]
struct Entries {
    records: Vec<RequestRecord>,
    numbered: u64,
}

pub struct RequestLog {
    started: Instant,
    entries: Mutex<Entries>,
}

impl RequestLog {
    pub fn new() -> Self {
        Self { started: Instant::now(), entries: Mutex::new(Entries::default()) }
    }

    /// Logs a request as it arrives; its numbers are given under one lock, so that the log's
    /// order, `seq` and the faults' numbering agree.
    pub fn arrive(&self, arrival: Arrival<'_>) -> Numbers {
        let at_ms = self.now_ms();
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let seq = entries.records.len() as u64 + 1;
        let numbered = arrival.numbered.then(|| {
            entries.numbered += 1;
            entries.numbered
        });
        entries.records.push(RequestRecord {
            seq,
            at_ms,
            method: arrival.method.to_string(),
            path: arrival.path.to_string(),
            query: arrival.query.to_string(),
            stream: arrival.stream,
            agent: arrival.agent,
            kind: arrival.kind,
            reply: None,
            fault: None,
            status: None,
            mode: "ok",
            duration_ms: None,
            headers: recorded_headers(arrival.headers),
            key_present: KEY_HEADERS.iter().any(|name| arrival.headers.contains_key(*name)),
            body: arrival.body,
        });
        Numbers { seq, numbered }
    }

    /// Changes the record of request `seq`.
    pub fn update(&self, seq: u64, change: impl FnOnce(&mut RequestRecord)) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let index = usize::try_from(seq.saturating_sub(1)).unwrap_or(usize::MAX);
        if let Some(record) = entries.records.get_mut(index) {
            change(record);
        }
    }

    /// Changes the record of request `seq` as it ends (answered or reset), noting how long it took.
    pub fn end(&self, seq: u64, change: impl FnOnce(&mut RequestRecord)) {
        let now_ms = self.now_ms();
        self.update(seq, |record| {
            record.duration_ms = Some(now_ms - record.at_ms);
            change(record);
        });
    }

    fn now_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }

    /// The requests after the first `skip`, in arrival order: those whose `seq` is above it.
    pub fn records_after(&self, skip: u64) -> Vec<RequestRecord> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let from = usize::try_from(skip).unwrap_or(usize::MAX).min(entries.records.len());
        entries.records[from..].to_vec()
    }

    /// How many requests arrived so far.
    pub fn count(&self) -> u64 {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).records.len() as u64
    }
}

fn recorded_headers(headers: &HeaderMap) -> BTreeMap<String, String> {
    RECORDED_HEADERS
        .iter()
        .filter_map(|name| {
            let values: Vec<String> = headers
                .get_all(*name)
                .iter()
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
                .collect();
            // A header sent more than once reads as HTTP joins it.
            (!values.is_empty()).then(|| (name.to_string(), values.join(", ")))
        })
        .collect()
}
