//! The `embed` capability: text to vectors, locally (all-MiniLM-L6-v2 on the CPU, with ONNX
//! Runtime, or candle in builds with the `candle` feature) or through an OpenAI-compatible `/embeddings` endpoint.
//!
//! One async trait, [`Embedder`]; the on-disk cache ([`CachedEmbedder`]) wraps any backend, so
//! a rerun never recomputes a vector. [`EmbedRouter`] picks the backend a request names.

pub mod backend;
mod cache;
#[cfg(feature = "candle")]
mod candle;
pub mod config;
pub mod local;
pub mod model;
mod onnx;
mod remote;
pub mod rhai;
pub mod wasm;
mod weights;
mod wheel;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

pub use backend::{Backend, BackendRecord};
pub use cache::CachedEmbedder;
pub use local::{DEFAULT_BATCH, DIMENSION, LocalModel, MAX_TOKENS};
pub use onnx::runtime as onnxruntime;
pub use remote::{OpenAiEmbedder, RemoteConfig};

use crate::capabilities::http::SharedClient;

/// Why texts could not be embedded.
#[derive(Debug, Clone, thiserror::Error)]
pub enum EmbedError {
    #[error("{0}")]
    Model(String),
    #[error("cannot load the embedding model from `{path}`: {message}")]
    Load { path: String, message: String },
    #[error("cannot tokenize: {message}")]
    Tokenize { message: String },
    #[error("embedding computation failed: {message}")]
    Compute { message: String },
    #[error("remote embeddings failed: {0}")]
    Remote(#[source] crate::capabilities::llm::ErrorKind),
    #[error("the embeddings endpoint returned {got} vectors for {sent} texts")]
    Count { sent: usize, got: usize },
}

/// A batch of texts to embed, and with what.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct EmbedRequest {
    pub texts: Vec<String>,
    /// `local` (the default: all-MiniLM-L6-v2 on this machine), `remote` (`OC_EMBED_MODEL`), or
    /// `openai:<model>` for the OpenAI-compatible endpoint.
    #[serde(default)]
    pub model: Option<String>,
    /// Texts per forward pass of the local model ([`DEFAULT_BATCH`] when absent), or per
    /// request to an endpoint (at most its limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<usize>,
}

/// Vectors in the order of the texts, L2-normalised by the local model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Embeddings {
    pub model: String,
    pub dimension: usize,
    pub vectors: Vec<Vec<f32>>,
    /// How many came from the on-disk cache.
    pub cached: usize,
}

/// Texts to vectors. Object safe; backends and the cache implement it alike.
#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    /// The id vectors are reported under.
    fn model_id(&self) -> String;
    /// What the on-disk cache keys vectors by besides the text: the model, and for a remote
    /// model also the endpoint, since another server may serve other vectors under the same name.
    fn cache_scope(&self) -> String {
        self.model_id()
    }
    /// Embeds `texts`, `batch` at a time where the backend batches (its default when `None`).
    async fn embed(&self, texts: Vec<String>, batch: Option<usize>) -> Result<Embeddings, EmbedError>;
}

/// The local model, loaded on first use (finding or fetching the weights takes time that runs
/// without embeddings should not pay).
pub struct LocalEmbedder {
    model_dir: Option<PathBuf>,
    backend: Backend,
    cache_root: PathBuf,
    loaded: OnceLock<Result<(Arc<LocalModel>, model::Located), EmbedError>>,
    notify: Arc<dyn Fn(&str) + Send + Sync>,
}

/// Which weights produced a run's vectors, for the manifest.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ModelRecord {
    pub id: String,
    pub source: String,
    pub path: String,
    pub weights_sha256: String,
    /// What computed the local model's vectors; absent for a remote model or when every vector
    /// came from the cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<BackendRecord>,
}

impl LocalEmbedder {
    pub fn new(
        model_dir: Option<PathBuf>,
        backend: Backend,
        cache_root: PathBuf,
        notify: Arc<dyn Fn(&str) + Send + Sync>,
    ) -> Self {
        LocalEmbedder { model_dir, backend, cache_root, loaded: OnceLock::new(), notify }
    }

    /// The loaded model, loading it if needed.
    pub fn model(&self) -> Result<Arc<LocalModel>, EmbedError> {
        self.loaded
            .get_or_init(|| {
                let located = model::locate(self.model_dir.as_deref(), &self.cache_root, &*self.notify)
                    .map_err(|error| EmbedError::Model(error.to_string()))?;
                let model = LocalModel::load(&located, self.backend, &self.cache_root, &*self.notify)?;
                Ok((Arc::new(model), located))
            })
            .clone()
            .map(|(model, _)| model)
    }

    /// Starts loading the model on another thread, so that whatever the caller does next
    /// overlaps the load; a later [`Self::model`] waits for it.
    pub fn preload(self: &Arc<Self>) {
        let this = self.clone();
        std::thread::spawn(move || {
            let _ = this.model();
        });
    }

    /// The model's provenance, if it was loaded in this run.
    pub fn record(&self) -> Option<ModelRecord> {
        let (model, located) = self.loaded.get()?.as_ref().ok()?;
        Some(ModelRecord {
            id: model::MODEL_ID.to_string(),
            source: located.source.to_string(),
            path: located.path.display().to_string(),
            weights_sha256: model.weights_sha256.clone(),
            backend: Some(model.backend.clone()),
        })
    }
}

#[async_trait::async_trait]
impl Embedder for LocalEmbedder {
    fn model_id(&self) -> String {
        model::MODEL_ID.to_string()
    }

    async fn embed(&self, texts: Vec<String>, batch: Option<usize>) -> Result<Embeddings, EmbedError> {
        let model = self.model()?;
        let batch = batch.unwrap_or(DEFAULT_BATCH);
        let vectors = tokio::task::spawn_blocking(move || model.embed(&texts, batch))
            .await
            .map_err(|error| EmbedError::Compute { message: error.to_string() })??;
        Ok(Embeddings { model: model::MODEL_ID.to_string(), dimension: DIMENSION, vectors, cached: 0 })
    }
}

/// Sends each request to the backend its `model` names; both go through their own cache.
pub struct EmbedRouter {
    model: Arc<LocalEmbedder>,
    /// Model ids this run asked for, so the manifest names them even when every vector came
    /// from the cache.
    used: std::sync::Mutex<std::collections::BTreeSet<String>>,
    local: Arc<dyn Embedder>,
    remote: RemoteConfig,
    client: SharedClient,
    cache_dir: PathBuf,
    log: Arc<dyn crate::capabilities::log::Log>,
}

impl EmbedRouter {
    pub fn new(
        model: Arc<LocalEmbedder>,
        remote: RemoteConfig,
        cache_dir: PathBuf,
        log: Arc<dyn crate::capabilities::log::Log>,
        client: SharedClient,
    ) -> Self {
        let local: Arc<dyn Embedder> = Arc::new(CachedEmbedder::new(model.clone(), &cache_dir, log.clone()));
        EmbedRouter { model, used: Default::default(), local, remote, client, cache_dir, log }
    }

    /// Every embedding model this run used, for the manifest: the local one with its weights'
    /// sha256 when it was loaded (not when every vector came from the cache), remote ones by id.
    pub fn models_used(&self) -> Vec<ModelRecord> {
        let used = self.used.lock().map(|used| used.clone()).unwrap_or_default();
        used.into_iter()
            .map(|id| match self.model.record() {
                Some(record) if id == record.id => record,
                _ if id == model::MODEL_ID => ModelRecord {
                    id,
                    source: "embedding cache (the model was not loaded in this run)".into(),
                    path: String::new(),
                    weights_sha256: String::new(),
                    backend: None,
                },
                _ => ModelRecord {
                    id,
                    source: "remote".into(),
                    path: self.remote.base_url.clone(),
                    weights_sha256: String::new(),
                    backend: None,
                },
            })
            .collect()
    }

    /// Starts loading the local model in the background ([`LocalEmbedder::preload`]).
    pub fn preload_local(&self) {
        self.model.preload();
    }

    fn note(&self, id: String) {
        if let Ok(mut used) = self.used.lock() {
            used.insert(id);
        }
    }

    /// The remote model a choice names (`remote`, `openai:<model>` or a bare model name), or
    /// `None` for the local model (no choice, `local`, or the local model's id).
    fn remote_model(&self, choice: Option<&str>) -> Option<String> {
        match choice.map(str::trim) {
            None | Some("" | "local") => None,
            Some(model) if model == model::MODEL_ID || model == "all-MiniLM-L6-v2" => None,
            Some("remote") => Some(self.remote.model.clone()),
            Some(model) => Some(model.strip_prefix("openai:").unwrap_or(model).to_string()),
        }
    }

    /// The id of the model a choice resolves to, as the manifest names it: the local model's id,
    /// or `openai:<model>` (so `remote` becomes `openai:` + `OC_EMBED_MODEL`).
    pub fn model_id(&self, choice: Option<&str>) -> String {
        match self.remote_model(choice) {
            Some(remote) => format!("openai:{remote}"),
            None => model::MODEL_ID.to_string(),
        }
    }

    pub async fn embed(&self, request: EmbedRequest) -> Result<Embeddings, EmbedError> {
        let Some(remote_model) = self.remote_model(request.model.as_deref()) else {
            self.note(model::MODEL_ID.to_string());
            return self.local.embed(request.texts, request.batch).await;
        };
        self.note(format!("openai:{remote_model}"));
        let backend = OpenAiEmbedder::new(self.client.clone(), self.remote.clone(), remote_model);
        let cached = CachedEmbedder::new(Arc::new(backend), &self.cache_dir, self.log.clone());
        cached.embed(request.texts, request.batch).await
    }
}

/// One model of the router as an [`Embedder`]: what a program host serves embeddings to gets
/// the vectors `embed::` would give (cached, and named in the manifest).
pub struct RoutedEmbedder {
    pub router: Arc<EmbedRouter>,
    /// The choice, as `EmbedRequest::model` takes it (`None`: the local model).
    pub model: Option<String>,
}

#[async_trait::async_trait]
impl Embedder for RoutedEmbedder {
    fn model_id(&self) -> String {
        self.router.model_id(self.model.as_deref())
    }

    async fn embed(&self, texts: Vec<String>, batch: Option<usize>) -> Result<Embeddings, EmbedError> {
        self.router.embed(EmbedRequest { texts, model: self.model.clone(), batch }).await
    }
}

/// `embed::` for scripts, and `host:embed` for guests.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability {
    name: "embed",
    rhai: |capabilities| rhai::module(capabilities.embed.clone(), capabilities.runtime.clone()),
    types: |_| {},
    guest: Some(|imports, _, op, input| Box::pin(wasm::call(&imports.embed, op, input))),
    finish: |capabilities, manifest| manifest.models = capabilities.embed.models_used(),
    scratch: None,
};
