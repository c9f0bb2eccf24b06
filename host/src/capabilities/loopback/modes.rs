//! Modes: how a loopback server treats requests until the script switches it again, for
//! scenarios such as "the API is down for ten turns, then back". Unlike a fault, which is
//! scripted for the Nth request ahead of time, a mode holds for every request (on the paths it
//! names) while it lasts. Carrying a mode out is the server's; this file only checks them.

use std::collections::BTreeSet;
use std::time::Duration;

use axum::http::StatusCode;
use serde::Deserialize;

use super::faults::{error_status, wait};
use crate::capabilities::decode::seconds;

/// A mode as a script writes it: `#{ kind: "status", status: 503, paths: ["/v1/retrieve"] }`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ModeSpec {
    /// Answer every request as the play does.
    Ok {},
    /// Wait this long, then answer as usual.
    Latency {
        #[serde(deserialize_with = "seconds")]
        seconds: f64,
        #[serde(default)]
        paths: Option<Vec<String>>,
    },
    /// Answer with this HTTP status and the play's error body.
    Status {
        status: u16,
        #[serde(default)]
        paths: Option<Vec<String>>,
    },
    /// Read the request, then reset the connection without an answer.
    Reset {
        #[serde(default)]
        paths: Option<Vec<String>>,
    },
    /// Never answer, until the client leaves or the server stops.
    Hang {
        #[serde(default)]
        paths: Option<Vec<String>>,
    },
    /// Stop listening: connections are refused.
    Refuse {
        // Only to refuse it with a reason: a refused connection never names a path.
        #[serde(default)]
        paths: Option<Vec<String>>,
    },
}

impl Default for ModeSpec {
    fn default() -> Self {
        Self::Ok {}
    }
}

/// What a request gets under a mode.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Treatment {
    Ok,
    Latency(Duration),
    Status(StatusCode),
    Reset,
    Hang,
    Refuse,
}

impl Treatment {
    /// Its `kind`, as scripts wrote it and read it in the log.
    pub fn kind(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Latency(_) => "latency",
            Self::Status(_) => "status",
            Self::Reset => "reset",
            Self::Hang => "hang",
            Self::Refuse => "refuse",
        }
    }
}

/// A checked mode.
#[derive(Debug, Clone, PartialEq)]
pub struct Mode {
    treatment: Treatment,
    /// The paths it applies to; `None` for every path.
    paths: Option<BTreeSet<String>>,
}

impl Default for Mode {
    fn default() -> Self {
        Self { treatment: Treatment::Ok, paths: None }
    }
}

impl Mode {
    /// Checks `spec`; the message names the field at fault.
    pub fn new(spec: &ModeSpec) -> Result<Self, String> {
        let (treatment, paths) = match spec {
            ModeSpec::Ok {} => (Treatment::Ok, &None),
            ModeSpec::Latency { seconds, paths } => (Treatment::Latency(wait(*seconds)?), paths),
            ModeSpec::Status { status, paths } => (Treatment::Status(error_status(*status)?), paths),
            ModeSpec::Reset { paths } => (Treatment::Reset, paths),
            ModeSpec::Hang { paths } => (Treatment::Hang, paths),
            ModeSpec::Refuse { paths: Some(_) } => {
                return Err("`paths` cannot limit `refuse`: a refused connection never names a path".into());
            }
            ModeSpec::Refuse { paths: None } => (Treatment::Refuse, &None),
        };
        Ok(Self { treatment, paths: paths.as_deref().map(checked_paths).transpose()? })
    }

    /// Whether the server stops listening under it.
    pub fn refuses(&self) -> bool {
        self.treatment == Treatment::Refuse
    }

    /// What a request for `path` (without its query) gets: [`Treatment::Ok`] when the mode's
    /// `paths` leave it out.
    pub fn treatment(&self, path: &str) -> Treatment {
        match &self.paths {
            Some(paths) if !paths.contains(path) => Treatment::Ok,
            _ => self.treatment,
        }
    }
}

fn checked_paths(paths: &[String]) -> Result<BTreeSet<String>, String> {
    if paths.is_empty() {
        return Err("`paths` is empty: leave it out to apply the mode to every path".into());
    }
    match paths.iter().find(|path| !path.starts_with('/')) {
        Some(path) => Err(format!("`paths`: `{path}` is not a path; write it as requested, `/v1/retrieve`")),
        None => Ok(paths.iter().cloned().collect()),
    }
}
