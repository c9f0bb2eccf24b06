//! Which backend runs the local model's transformer. ONNX Runtime is the default, as fast as
//! what users would otherwise run; candle (pure Rust, built in) is the fallback where ONNX
//! Runtime's library cannot be had. Both give the same vectors to cosine 0.99999 or better
//! (`tests/e2e/embed.rs`), so the embedding cache serves vectors from either alike; each run's
//! manifest records the backend that computed its new vectors.

use std::path::Path;

use serde::Serialize;

use super::EmbedError;
use super::candle::CandleTransformer;
use super::local::{Transformer, Weights};

/// The choice a person makes (`--embed-backend`, `HOST_EMBED_BACKEND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Backend {
    /// ONNX Runtime, or candle with a warning when ONNX Runtime cannot be had.
    #[default]
    Auto,
    /// ONNX Runtime or an error.
    Onnxruntime,
    /// candle, never ONNX Runtime.
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

/// Starts the transformer `choice` names on the weights `weights` reads (ONNX Runtime reads them
/// only when it has no prepared model at `prepared`).
pub fn start<'w>(
    choice: Backend,
    weights: &dyn Fn() -> Result<Weights<'w>, EmbedError>,
    prepared: &Path,
    cache_root: &Path,
    notify: &(dyn Fn(&str) + Sync),
) -> Result<(Box<dyn Transformer>, BackendRecord), EmbedError> {
    let onnx = || {
        super::onnx::start(weights, prepared, cache_root, notify)
            .map(|(transformer, record)| (Box::new(transformer) as Box<dyn Transformer>, record))
    };
    match choice {
        Backend::Candle => candle(&weights()?, None),
        Backend::Onnxruntime => onnx().map_err(|message| {
            EmbedError::Model(format!(
                "ONNX Runtime is unavailable: {message}; hint: `--embed-backend candle` (or HOST_EMBED_BACKEND=candle) runs without it"
            ))
        }),
        Backend::Auto => onnx().or_else(|reason| {
            notify(&format!(
                "warning: embedding with candle, about 3x slower: ONNX Runtime is unavailable ({reason})"
            ));
            candle(&weights()?, Some(reason))
        }),
    }
}

fn candle(
    weights: &Weights,
    fallback_reason: Option<String>,
) -> Result<(Box<dyn Transformer>, BackendRecord), EmbedError> {
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
    Ok((Box::new(CandleTransformer::new(weights)?), record))
}
