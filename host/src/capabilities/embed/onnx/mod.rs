//! The transformer on ONNX Runtime (what fastembed and most embedding packages run), loaded at
//! run time from its own library ([`runtime`]) with the graph built from the weights ([`graph`]).

mod graph;
pub mod runtime;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ort::session::Session;
use ort::session::builder::{GraphOptimizationLevel, SessionBuilder};
use ort::value::Tensor;

use super::EmbedError;
use super::backend::BackendRecord;
use super::local::{Padded, Transformer, Weights};

pub struct OnnxTransformer {
    /// A run needs the session mutably; the runtime's own threads do the parallel work.
    session: Mutex<Session>,
    /// The prepared model's bytes, which the session uses as its weights in place: declared
    /// after `session`, so they are freed after it.
    _prepared: Option<Box<[u8]>>,
}

/// An ONNX Runtime error as the message the backend's caller reports.
fn text(error: impl std::fmt::Display) -> String {
    error.to_string()
}

/// Bumped whenever [`graph::encoder`] builds a different graph, so that no prepared model of an
/// earlier graph is used.
const GRAPH_VERSION: u32 = 1;

/// Where the session's optimised graph for the weights with sha256 `weights_sha256` is kept, in
/// ONNX Runtime's own format: a later process loads it instead of reading the weights and
/// building the graph again (the longest part of a hook process's 0.4 s).
pub fn prepared_path(cache_root: &Path, weights_sha256: &str) -> PathBuf {
    let short = weights_sha256.get(..16).unwrap_or(weights_sha256);
    cache_root
        .join("models")
        .join("prepared")
        .join(format!("minilm-{short}-onnxruntime-{}-graph-{GRAPH_VERSION}.ort", runtime::VERSION))
}

/// The session options every session of the model runs with.
fn session_builder(environment: &ort::environment::Environment, threads: usize) -> Result<SessionBuilder, String> {
    SessionBuilder::new(environment)
        .map_err(text)?
        .with_intra_threads(threads)
        .map_err(text)?
        .with_inter_threads(1)
        .map_err(text)?
        .with_log_level(ort::logging::LogLevel::Error)
        .map_err(text)
}

/// ONNX Runtime with the model's graph, on as many threads as the machine has cores: from the
/// prepared model at `prepared` when there is one, else built from `weights` (read only then),
/// saving the prepared model for the next process.
pub fn start<'w>(
    weights: &dyn Fn() -> Result<Weights<'w>, EmbedError>,
    prepared: &Path,
    cache_root: &Path,
    notify: &(dyn Fn(&str) + Sync),
) -> Result<(OnnxTransformer, BackendRecord), String> {
    let library = runtime::locate(cache_root, notify)?;
    let environment = runtime::environment(&library.path)?;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let (session, bytes) = match from_prepared(environment, threads, prepared) {
        Some((session, bytes)) => (session, Some(bytes)),
        None => (from_weights(environment, threads, &weights().map_err(text)?, prepared)?, None),
    };
    let library_sha256 = crate::hash_cache::sha256_of(&library.path, &cache_root.join("hashes")).map_err(text)?;
    let record = BackendRecord {
        name: "onnxruntime".into(),
        version: runtime::VERSION.into(),
        library: Some(library.path.display().to_string()),
        library_sha256: Some(library_sha256),
        library_source: Some(library.source.into()),
        threads,
        prepared_model: bytes.is_some().then(|| prepared.display().to_string()),
        fallback_reason: None,
    };
    Ok((OnnxTransformer { session: Mutex::new(session), _prepared: bytes }, record))
}

/// The session of the prepared model at `path`, with the bytes it uses in place (they must
/// outlive it); `None` when there is none or it does not load (then the graph is built again and
/// the file replaced).
fn from_prepared(
    environment: &ort::environment::Environment,
    threads: usize,
    path: &Path,
) -> Option<(Session, Box<[u8]>)> {
    let bytes = std::fs::read(path).ok()?.into_boxed_slice();
    let session = session_builder(environment, threads)
        .ok()?
        .with_optimization_level(GraphOptimizationLevel::Disable)
        .ok()?
        .with_config_entry("session.use_ort_model_bytes_directly", "1")
        .ok()?
        .with_config_entry("session.use_ort_model_bytes_for_initializers", "1")
        .ok()?
        .commit_from_memory(&bytes)
        .ok()?;
    Some((session, bytes))
}

/// The session of the graph built from `weights`, optimised; ONNX Runtime writes the optimised
/// graph to `prepared` (through a temporary file, so a reader never sees half of one).
fn from_weights(
    environment: &ort::environment::Environment,
    threads: usize,
    weights: &Weights<'_>,
    prepared: &Path,
) -> Result<Session, String> {
    let arrays = weights.arrays.as_ref().ok_or("the weights hold tensor types the graph builder does not read")?;
    let model = graph::encoder(&weights.config, arrays)?;
    let folder = prepared.parent().unwrap_or(Path::new("."));
    let staged = std::fs::create_dir_all(folder)
        .ok()
        .and_then(|()| tempfile::Builder::new().suffix(".ort").tempfile_in(folder).ok());
    let mut builder =
        session_builder(environment, threads)?.with_optimization_level(GraphOptimizationLevel::All).map_err(text)?;
    if let Some(staged) = &staged {
        builder = builder
            .with_config_entry("session.save_model_format", "ORT")
            .map_err(text)?
            .with_optimized_model_path(staged.path())
            .map_err(text)?;
    }
    let session = model.into_session(&builder).map_err(|error| format!("cannot build the session: {error}"))?;
    if let Some(staged) = staged {
        // Not keeping it only costs the next process the build.
        let _ = staged.persist(prepared);
    }
    Ok(session)
}

fn compute(error: impl std::fmt::Display) -> EmbedError {
    EmbedError::Compute { message: error.to_string() }
}

impl Transformer for OnnxTransformer {
    fn hidden_states(&self, batch: &Padded) -> Result<Vec<f32>, EmbedError> {
        let shape = [batch.members, batch.longest];
        let as_i32 = |values: &[u32]| -> Vec<i32> {
            values.iter().map(|&value| i32::try_from(value).unwrap_or(i32::MAX)).collect()
        };
        let ids = Tensor::from_array((shape, as_i32(&batch.ids))).map_err(compute)?;
        let mask = Tensor::from_array((shape, as_i32(&batch.mask))).map_err(compute)?;
        let mut session = self.session.lock().map_err(|_| compute("a previous run panicked"))?;
        let outputs = session.run(ort::inputs![graph::INPUT_IDS => ids, graph::MASK => mask]).map_err(compute)?;
        let hidden = outputs
            .get(graph::OUTPUT)
            .ok_or_else(|| compute(format!("the graph has no `{}` output", graph::OUTPUT)))?;
        let (_, hidden) = hidden.try_extract_tensor::<f32>().map_err(compute)?;
        Ok(hidden.to_vec())
    }
}
