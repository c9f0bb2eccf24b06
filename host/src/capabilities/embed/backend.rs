//! Which backend runs the local model's transformer. ONNX Runtime is the one every build has, as
//! fast as what users would otherwise run. candle (pure Rust) is a second backend in builds with
//! the `candle` feature, for machines where ONNX Runtime's library cannot be loaded. Both give the
//! same vectors to cosine 0.99999 or better (`tests/e2e/embed.rs`), so the embedding cache serves
//! vectors from either alike; each run's manifest records the backend that computed its new
//! vectors.

use std::path::Path;

use serde::Serialize;

use super::EmbedError;
use super::local::{Transformer, Weights};

/// The choice a person makes (`--embed-backend`, `HOST_EMBED_BACKEND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// ONNX Runtime; where it cannot be loaded, candle with a warning (builds with the `candle`
    /// feature) or an error.
    #[default]
    Auto,
    /// ONNX Runtime or an error.
    Onnxruntime,
    /// candle, never ONNX Runtime (builds with the `candle` feature).
    Candle,
}

impl Backend {
    /// The name `--embed-backend` takes.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Onnxruntime => "onnxruntime",
            Backend::Candle => "candle",
        }
    }
}

/// The backend that ran, for the run manifest.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BackendRecord {
    /// `onnxruntime` or `candle`.
    pub name: String,
    pub version: String,
    /// ONNX Runtime's library: its path, sha256 and where it came from.
    pub library: Option<String>,
    pub library_sha256: Option<String>,
    pub library_source: Option<String>,
    /// Threads the transformer runs on.
    pub threads: usize,
    /// The prepared model ONNX Runtime loaded instead of building the graph from the weights.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prepared_model: Option<String>,
    /// Why `auto` fell back to candle.
    pub fallback_reason: Option<String>,
}

type Started = (Box<dyn Transformer>, BackendRecord);
type ReadWeights<'w> = dyn Fn() -> Result<Weights<'w>, EmbedError> + 'w;

/// Starts the transformer `choice` names on the weights `weights` reads (ONNX Runtime reads them
/// only when it has no prepared model at `prepared`).
pub fn start<'w>(
    choice: Backend,
    weights: &ReadWeights<'w>,
    prepared: &Path,
    cache_root: &Path,
    notify: &(dyn Fn(&str) + Sync),
) -> Result<Started, EmbedError> {
    let onnx = || {
        super::onnx::start(weights, prepared, cache_root, notify)
            .map(|(transformer, record)| (Box::new(transformer) as Box<dyn Transformer>, record))
    };
    match choice {
        Backend::Candle => candle(weights, None),
        Backend::Onnxruntime => onnx().map_err(unavailable),
        Backend::Auto => onnx().or_else(|reason| {
            if !cfg!(feature = "candle") {
                return Err(unavailable(reason));
            }
            notify(&format!("warning: embedding with candle, about 3x slower: ONNX Runtime is unavailable ({reason})"));
            candle(weights, Some(reason))
        }),
    }
}

/// ONNX Runtime could not be loaded, with what a person can do about it.
fn unavailable(reason: String) -> EmbedError {
    let hint = if cfg!(feature = "candle") {
        "`--embed-backend candle` (or HOST_EMBED_BACKEND=candle) runs without it"
    } else {
        "point HOST_ONNXRUNTIME_LIB at a working libonnxruntime, or build host with `--features candle` for a pure-Rust backend"
    };
    EmbedError::Model(format!("ONNX Runtime is unavailable: {reason}; hint: {hint}"))
}

#[cfg(feature = "candle")]
fn candle<'w>(weights: &ReadWeights<'w>, fallback_reason: Option<String>) -> Result<Started, EmbedError> {
    let record = BackendRecord {
        name: "candle".into(),
        version: "0.11.1".into(),
        library: None,
        library_sha256: None,
        library_source: None,
        threads: std::thread::available_parallelism().map_or(1, usize::from),
        prepared_model: None,
        fallback_reason,
    };
    Ok((Box::new(super::candle::CandleTransformer::new(&weights()?)?), record))
}

#[cfg(not(feature = "candle"))]
fn candle(_: &ReadWeights<'_>, _: Option<String>) -> Result<Started, EmbedError> {
    Err(EmbedError::Model(
        "this build of host has no candle backend; hint: build it with `cargo build --features candle`, or use `--embed-backend onnxruntime`".into(),
    ))
}
