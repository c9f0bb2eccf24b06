//! Faults: what a loopback server does to a request instead of answering it plainly, one
//! vocabulary for every play and every way a fault is chosen. A script numbers them (`faults:
//! [#{ request: 3, kind: "cut" }]`, checked here into [`Faults`]); a play may pick one for a
//! request by its content ([`super::Play::fault`]: a test's fake queues them by prompt or by
//! endpoint). Carrying a fault out is the server's; the error body of a `status` fault and the
//! pieces a `cut` answer is sent in are the play's. What a fault never is: another answer (a reply
//! with other text, an empty one), which is the play's to give.

use std::collections::HashMap;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use futures::StreamExt;
use serde::Deserialize;

use crate::capabilities::decode::seconds;

/// A fault as a script writes it: `#{ request: 3, kind: "status", status: 529 }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum FaultSpec {
    /// Hold the request open, never answering, until the client leaves or the server stops.
    Stall { request: u64 },
    /// Answer with this HTTP status and the API's error body; `retry_after` sets the header of
    /// that name (a 429 says 1 second when it is left out), `code` is the error code the body
    /// names (OpenAI's `insufficient_quota`).
    Status {
        request: u64,
        status: u16,
        #[serde(default)]
        retry_after: Option<u64>,
        #[serde(default)]
        code: Option<String>,
    },
    /// Send the first piece of the answer (a stream's `message_start`), then break the connection.
    Cut { request: u64 },
    /// Read the request, then reset the connection without an answer, as the `reset` mode does:
    /// the client sees the connection lost before any response.
    Reset { request: u64 },
    /// Wait this long, then answer as usual.
    Delay {
        request: u64,
        #[serde(deserialize_with = "seconds")]
        seconds: f64,
    },
    /// Answer with the first half of the answer's body, sent as if whole: a 200 whose JSON ends
    /// in the middle.
    Malformed { request: u64 },
}

impl FaultSpec {
    fn request(&self) -> u64 {
        match self {
            Self::Stall { request }
            | Self::Status { request, .. }
            | Self::Cut { request }
            | Self::Reset { request }
            | Self::Delay { request, .. }
            | Self::Malformed { request } => *request,
        }
    }
}

/// A checked fault.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// Never answers: see [`FaultSpec::Stall`].
    Stall,
    /// The play's error body with `status`: see [`FaultSpec::Status`].
    Status { status: StatusCode, retry_after: Option<u64>, code: Option<String> },
    /// The answer's first piece, then a broken connection: see [`FaultSpec::Cut`].
    Cut,
    /// No answer, a reset connection: see [`FaultSpec::Reset`].
    Reset,
    /// The answer after a wait: see [`FaultSpec::Delay`].
    Delay(Duration),
    /// The answer's body cut in the middle: see [`FaultSpec::Malformed`].
    Malformed,
}

impl Fault {
    /// A `status` fault with the play's error body, no code, and the header a 429 gets.
    pub fn status(status: StatusCode) -> Self {
        Self::Status { status, retry_after: None, code: None }
    }

    /// This fault with a `retry-after` header of `seconds`, if it is a `status` fault.
    pub fn retry_after(self, seconds: u64) -> Self {
        match self {
            Self::Status { status, code, .. } => Self::Status { status, retry_after: Some(seconds), code },
            other => other,
        }
    }

    /// This fault with the error code `code` in its body, if it is a `status` fault.
    pub fn code(self, code: &str) -> Self {
        match self {
            Self::Status { status, retry_after, .. } => Self::Status { status, retry_after, code: Some(code.into()) },
            other => other,
        }
    }

    /// Its `kind`, as scripts wrote it and read it in the log.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stall => "stall",
            Self::Status { .. } => "status",
            Self::Cut => "cut",
            Self::Reset => "reset",
            Self::Delay(_) => "delay",
            Self::Malformed => "malformed",
        }
    }
}

/// A server's faults by the number of the request they apply to.
#[derive(Debug, Clone, Default)]
pub struct Faults(HashMap<u64, Fault>);

/// A fault that cannot be applied: its index in `faults` and why.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultProblem {
    pub index: usize,
    pub message: String,
}

impl Faults {
    pub fn new(specs: &[FaultSpec]) -> Result<Self, FaultProblem> {
        let mut faults = HashMap::new();
        for (index, spec) in specs.iter().enumerate() {
            let problem = |message: String| FaultProblem { index, message };
            let fault = check(spec).map_err(problem)?;
            if spec.request() == 0 {
                return Err(problem("`request` counts from 1".into()));
            }
            if faults.insert(spec.request(), fault).is_some() {
                return Err(problem(format!("request {} already has a fault", spec.request())));
            }
        }
        Ok(Self(faults))
    }

    /// The fault for the `number`th request the play numbers, if any.
    pub fn get(&self, number: u64) -> Option<Fault> {
        self.0.get(&number).cloned()
    }
}

fn check(spec: &FaultSpec) -> Result<Fault, String> {
    Ok(match spec {
        FaultSpec::Stall { .. } => Fault::Stall,
        FaultSpec::Cut { .. } => Fault::Cut,
        FaultSpec::Reset { .. } => Fault::Reset,
        FaultSpec::Malformed { .. } => Fault::Malformed,
        FaultSpec::Status { status, retry_after, code, .. } => {
            if code.as_deref().is_some_and(str::is_empty) {
                return Err("`code` is empty: leave it out for the API's usual error code".into());
            }
            Fault::Status { status: error_status(*status)?, retry_after: *retry_after, code: code.clone() }
        }
        FaultSpec::Delay { seconds, .. } => Fault::Delay(wait(*seconds)?),
    })
}

/// A script's `status`, checked: an HTTP error status. Shared with the modes.
pub fn error_status(status: u16) -> Result<StatusCode, String> {
    match StatusCode::from_u16(status) {
        Ok(code) if code.is_client_error() || code.is_server_error() => Ok(code),
        _ => Err(format!("`status` must be an HTTP error status (400 to 599), got {status}")),
    }
}

/// A script's `seconds`, checked: a wait. Shared with the modes.
pub fn wait(seconds: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(seconds)
        .map_err(|_| format!("`seconds` must be a number of seconds, at least 0, got {seconds}"))
}

/// A body that sends `first` and then breaks the connection, as a network cut would: the client
/// gets the piece, then an error instead of the rest.
pub fn cut_body(first: Bytes) -> Body {
    let first = futures::stream::once(async move { Ok::<_, std::io::Error>(first) });
    let cut = futures::stream::once(async {
        // Pending once, so that hyper flushes the first piece before the error drops the connection.
        tokio::task::yield_now().await;
        Err(std::io::Error::other("loopback fault: connection cut"))
    });
    Body::from_stream(first.chain(cut))
}

/// The first half of a whole body: what a `malformed` fault sends, complete as far as HTTP goes.
pub fn malformed_body(whole: Bytes) -> Body {
    Body::from(whole.slice(..whole.len() / 2))
}
