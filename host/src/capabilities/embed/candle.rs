//! all-MiniLM-L6-v2 on the CPU with candle, with sentence-transformers' semantics: WordPiece,
//! truncation at 256 tokens, mean pooling over the attention mask, L2 normalisation.
//!
//! Texts are sorted by token count and batched, and each batch is padded only to its longest
//! member, so short texts do not pay for long ones; results come back in input order.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::EmbedError;
use super::model::Located;

/// sentence-transformers' `max_seq_length` for this model (the packaged tokenizer.json says
/// 128, which would cut long texts short).
pub const MAX_TOKENS: usize = 256;
pub const DIMENSION: usize = 384;
/// Texts per forward pass: measured no slower than larger batches on 2 cores, and it keeps
/// padding waste small after sorting.
const BATCH: usize = 16;

pub struct CandleEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    /// sha256 of `model.safetensors`, for the run manifest.
    pub weights_sha256: String,
}

fn load_error(path: &Path, error: impl std::fmt::Display) -> EmbedError {
    EmbedError::Load { path: path.display().to_string(), message: error.to_string() }
}

fn compute(error: candle_core::Error) -> EmbedError {
    EmbedError::Compute { message: error.to_string() }
}

impl CandleEmbedder {
    /// Loads the model in `located`; `stamps` is where the weights' hash is remembered
    /// ([`crate::hash_cache`]). The tokenizer (about 35 ms to parse) loads on a second thread
    /// while the weights are read.
    pub fn load(located: &Located, stamps: &Path) -> Result<Self, EmbedError> {
        let folder = &located.path;
        let config_text = std::fs::read_to_string(folder.join("config.json")).map_err(|e| load_error(folder, e))?;
        let config: Config = serde_json::from_str(&config_text).map_err(|e| load_error(folder, e))?;
        let device = Device::Cpu;
        let weights = folder.join("model.safetensors");
        let (tokenizer, builder) = std::thread::scope(|scope| {
            let tokenizer = scope.spawn(|| tokenizer(folder));
            // Linear layers' weights (2-D, outside the embedding tables) in the layout their
            // products read best; see `weights::load`.
            let linear = |name: &str| name.ends_with(".weight") && !name.contains("embeddings");
            let builder = match super::weights::load(&weights, &device, &linear) {
                Ok(Some(tensors)) => Ok(VarBuilder::from_tensors(tensors, DType::F32, &device)),
                Ok(None) => std::fs::read(&weights).map_err(|e| load_error(folder, e)).and_then(|bytes| {
                    VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device).map_err(|e| load_error(folder, e))
                }),
                Err(message) => Err(load_error(&weights, message)),
            };
            (tokenizer.join().unwrap_or_else(|_| Err(load_error(folder, "the tokenizer's loader panicked"))), builder)
        });
        let (tokenizer, builder) = (tokenizer?, builder?);
        let model = BertModel::load(builder, &config).map_err(|e| load_error(folder, e))?;
        let weights_sha256 = crate::hash_cache::sha256_of(&weights, stamps).map_err(|e| load_error(&weights, e))?;
        Ok(CandleEmbedder { model, tokenizer, device, weights_sha256 })
    }

    /// The token ids the model sees for each text: `[CLS] … [SEP]`, at most [`MAX_TOKENS`].
    pub fn token_ids(&self, texts: &[String]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|error| EmbedError::Tokenize { message: error.to_string() })?;
        Ok(encodings.iter().map(|encoding| encoding.get_ids().to_vec()).collect())
    }

    /// Embeds `texts`, returning one normalised vector per text, in order.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_in_batches(texts, BATCH)
    }

    /// [`Self::embed`] with `batch` texts per forward pass (for benchmarks).
    pub fn embed_in_batches(&self, texts: &[String], batch: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids = self.token_ids(texts)?;
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&index| (ids[index].len(), index));
        let mut vectors = vec![Vec::new(); ids.len()];
        for batch in order.chunks(batch.max(1)) {
            let members: Vec<&[u32]> = batch.iter().map(|&index| ids[index].as_slice()).collect();
            for (&index, vector) in batch.iter().zip(self.forward(&members)?) {
                vectors[index] = vector;
            }
        }
        Ok(vectors)
    }

    /// One padded batch through the model, mean-pooled and normalised.
    fn forward(&self, members: &[&[u32]]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let longest = members.iter().map(|ids| ids.len()).max().unwrap_or(0).max(1);
        let mut input = Vec::with_capacity(members.len() * longest);
        let mut mask = Vec::with_capacity(members.len() * longest);
        for ids in members {
            input.extend_from_slice(ids);
            input.extend(std::iter::repeat_n(0u32, longest - ids.len()));
            mask.extend(std::iter::repeat_n(1u32, ids.len()));
            mask.extend(std::iter::repeat_n(0u32, longest - ids.len()));
        }
        let shape = (members.len(), longest);
        let input = Tensor::from_vec(input, shape, &self.device).map_err(compute)?;
        let mask = Tensor::from_vec(mask, shape, &self.device).map_err(compute)?;
        let token_types = input.zeros_like().map_err(compute)?;
        let hidden = self.model.forward(&input, &token_types, Some(&mask)).map_err(compute)?;
        let weights = mask.to_dtype(DType::F32).and_then(|mask| mask.unsqueeze(2)).map_err(compute)?;
        let summed = hidden.broadcast_mul(&weights).and_then(|masked| masked.sum(1)).map_err(compute)?;
        let counts = weights.sum(1).and_then(|counts| counts.clamp(1e-9, f64::MAX)).map_err(compute)?;
        let pooled = summed.broadcast_div(&counts).map_err(compute)?;
        let norms =
            pooled.sqr().and_then(|squares| squares.sum_keepdim(1)).and_then(|sums| sums.sqrt()).map_err(compute)?;
        let norms = norms.clamp(1e-12, f64::MAX).map_err(compute)?;
        let normalised = pooled.broadcast_div(&norms).map_err(compute)?;
        normalised.to_vec2::<f32>().map_err(compute)
    }
}

/// The model's tokenizer, truncating as sentence-transformers does and never padding.
fn tokenizer(folder: &Path) -> Result<Tokenizer, EmbedError> {
    let mut tokenizer = Tokenizer::from_file(folder.join("tokenizer.json")).map_err(|e| load_error(folder, e))?;
    let truncation = TruncationParams {
        max_length: MAX_TOKENS,
        strategy: TruncationStrategy::LongestFirst,
        stride: 0,
        direction: TruncationDirection::Right,
    };
    tokenizer.with_truncation(Some(truncation)).map_err(|e| load_error(folder, e))?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}
