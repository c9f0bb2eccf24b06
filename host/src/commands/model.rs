//! `host model`: where the local embedding model is and what runs it, fetching what is missing
//! (the weights, and ONNX Runtime's library unless `--embed-backend candle` in a build with it), and preparing
//! ONNX Runtime's graph for later processes.

use std::sync::Arc;

use crate::capabilities::embed::{LocalEmbedder, model};
use crate::cli::ModelArgs;

use super::Outcome;

pub fn model(args: &ModelArgs) -> anyhow::Result<Outcome> {
    let local = LocalEmbedder::new(
        args.local_model.model_dir.clone(),
        args.local_model.embed_backend.into(),
        crate::project::cache_root(),
        Arc::new(|line: &str| eprintln!("{line}")),
    );
    local.model()?;
    let Some(record) = local.record() else { anyhow::bail!("the model loaded but left no record") };
    eprintln!("{} ({}) from {}", model::MODEL_ID, record.source, record.path);
    if let Some(backend) = &record.backend {
        let library = backend.library.as_deref().map(|path| format!(", library {path}")).unwrap_or_default();
        eprintln!("runs on {} {} with {} threads{library}", backend.name, backend.version, backend.threads);
        if let Some(prepared) = &backend.prepared_model {
            eprintln!("its graph loaded from the prepared model {prepared}");
        }
    }
    println!("{}", record.path);
    Ok(Outcome::Success)
}
