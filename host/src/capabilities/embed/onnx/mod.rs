//! The transformer on ONNX Runtime (what fastembed and most embedding packages run), loaded at
//! run time from its own library ([`runtime`]) with the graph built from the weights ([`graph`]).

mod graph;
pub mod runtime;

use std::path::Path;
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
}

/// An ONNX Runtime error as the message the backend's caller reports.
fn text(error: impl std::fmt::Display) -> String {
    error.to_string()
}

/// ONNX Runtime with the model's graph, on as many threads as the machine has cores.
pub fn start(
    weights: &Weights,
    cache_root: &Path,
    notify: &(dyn Fn(&str) + Sync),
) -> Result<(OnnxTransformer, BackendRecord), String> {
    let library = runtime::locate(cache_root, notify)?;
    let environment = runtime::environment(&library.path)?;
    let arrays = weights.arrays.as_ref().ok_or("the weights hold tensor types the graph builder does not read")?;
    let model = graph::encoder(&weights.config, arrays)?;
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let builder = SessionBuilder::new(environment)
        .map_err(text)?
        .with_intra_threads(threads)
        .map_err(text)?
        .with_inter_threads(1)
        .map_err(text)?
        .with_optimization_level(GraphOptimizationLevel::All)
        .map_err(text)?
        .with_log_level(ort::logging::LogLevel::Error)
        .map_err(text)?;
    let session = model.into_session(&builder).map_err(|error| format!("cannot build the session: {error}"))?;
    let library_sha256 = crate::hash_cache::sha256_of(&library.path, &cache_root.join("hashes")).map_err(text)?;
    let record = BackendRecord {
        name: "onnxruntime".into(),
        version: runtime::VERSION.into(),
        library: Some(library.path.display().to_string()),
        library_sha256: Some(library_sha256),
        library_source: Some(library.source.into()),
        threads,
        fallback_reason: None,
    };
    Ok((OnnxTransformer { session: Mutex::new(session) }, record))
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
