//! The local embedding model, whichever backend runs its transformer: sentence-transformers'
//! semantics for all-MiniLM-L6-v2 (WordPiece, truncation at 256 tokens, mean pooling over the
//! attention mask, L2 normalisation) around a [`Transformer`] that only maps token ids to the last
//! layer's hidden states.
//!
//! Texts are sorted by token count and batched, and each batch is padded only to its longest
//! member, so short texts do not pay for long ones; results come back in input order.

use std::path::Path;

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::EmbedError;
use super::backend::{Backend, BackendRecord};
use super::config::BertConfig;
use super::model::Located;
use super::weights::{self, Array};

/// sentence-transformers' `max_seq_length` for this model (the packaged tokenizer.json says
/// 128, which would cut long texts short).
pub const MAX_TOKENS: usize = 256;
pub const DIMENSION: usize = 384;
/// Texts per forward pass when the caller names none; see BENCHMARKS.md for the measurement.
pub const DEFAULT_BATCH: usize = 16;
/// At most this many tokens, padding included, per forward pass, whatever the batch: long texts
/// go a few at a time, which measured 6% faster than sixteen at once (BENCHMARKS.md).
pub const MAX_BATCH_TOKENS: usize = 1024;

/// One batch of token ids, right-padded with 0 to its longest member.
#[derive(Debug, Clone, PartialEq)]
pub struct Padded {
    /// Row-major `members × longest`.
    pub ids: Vec<u32>,
    /// 1 for a real token, 0 for padding; same layout as `ids`.
    pub mask: Vec<u32>,
    pub members: usize,
    pub longest: usize,
}

impl Padded {
    pub fn new(members: &[&[u32]]) -> Self {
        let longest = members.iter().map(|ids| ids.len()).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(members.len() * longest);
        let mut mask = Vec::with_capacity(members.len() * longest);
        for member in members {
            ids.extend_from_slice(member);
            ids.extend(std::iter::repeat_n(0u32, longest - member.len()));
            mask.extend(std::iter::repeat_n(1u32, member.len()));
            mask.extend(std::iter::repeat_n(0u32, longest - member.len()));
        }
        Padded { ids, mask, members: members.len(), longest }
    }
}

/// The transformer of a backend.
pub trait Transformer: Send + Sync {
    /// The last layer's hidden states for `batch`: row-major `members × longest × DIMENSION`,
    /// padded positions included (pooling ignores them).
    fn hidden_states(&self, batch: &Padded) -> Result<Vec<f32>, EmbedError>;
}

/// The model, loaded: its tokenizer and the transformer of the backend that runs it.
pub struct LocalModel {
    tokenizer: Tokenizer,
    transformer: Box<dyn Transformer>,
    /// sha256 of `model.safetensors`, for the run manifest.
    pub weights_sha256: String,
    /// Which backend runs the transformer, for the run manifest.
    pub backend: BackendRecord,
}

pub(super) fn load_error(path: &Path, error: impl std::fmt::Display) -> EmbedError {
    EmbedError::Load { path: path.display().to_string(), message: error.to_string() }
}

impl LocalModel {
    /// Loads the model in `located` onto the backend `backend` names. `cache_root` holds the
    /// remembered weight hashes and ONNX Runtime's library; `notify` gets a line for the person
    /// when something is fetched or a backend falls back. The tokenizer (about 35 ms to parse)
    /// loads on a second thread while the transformer starts.
    pub fn load(
        located: &Located,
        backend: Backend,
        cache_root: &Path,
        notify: &(dyn Fn(&str) + Sync),
    ) -> Result<Self, EmbedError> {
        let folder = &located.path;
        let config_text = std::fs::read_to_string(folder.join("config.json")).map_err(|e| load_error(folder, e))?;
        let config: BertConfig = serde_json::from_str(&config_text).map_err(|e| load_error(folder, e))?;
        let weights = folder.join("model.safetensors");
        // Remembered by size and modification time, so this reads the weights only once.
        let weights_sha256 =
            crate::hash_cache::sha256_of(&weights, &cache_root.join("hashes")).map_err(|e| load_error(&weights, e))?;
        let prepared = super::onnx::prepared_path(cache_root, &weights_sha256);
        let read_weights = || {
            let arrays = weights::read(&weights).map_err(|message| load_error(&weights, message))?;
            Ok(Weights { config: config.clone(), arrays, path: &weights })
        };
        let (tokenizer, started) = std::thread::scope(|scope| {
            let tokenizer = scope.spawn(|| tokenizer(folder));
            let started = super::backend::start(backend, &read_weights, &prepared, cache_root, notify);
            (tokenizer.join().unwrap_or_else(|_| Err(load_error(folder, "the tokenizer's loader panicked"))), started)
        });
        let (tokenizer, (transformer, backend)) = (tokenizer?, started?);
        Ok(LocalModel { tokenizer, transformer, weights_sha256, backend })
    }

    /// The token ids the model sees for each text: `[CLS] … [SEP]`, at most [`MAX_TOKENS`].
    pub fn token_ids(&self, texts: &[String]) -> Result<Vec<Vec<u32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|error| EmbedError::Tokenize { message: error.to_string() })?;
        Ok(encodings.iter().map(|encoding| encoding.get_ids().to_vec()).collect())
    }

    /// Embeds `texts` with `batch` texts per forward pass, returning one normalised vector per
    /// text, in order.
    pub fn embed(&self, texts: &[String], batch: usize) -> Result<Vec<Vec<f32>>, EmbedError> {
        let ids = self.token_ids(texts)?;
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&index| (ids[index].len(), index));
        let mut vectors = vec![Vec::new(); ids.len()];
        for batch in batches(&order, &ids, batch) {
            let members: Vec<&[u32]> = batch.iter().map(|&index| ids[index].as_slice()).collect();
            let padded = Padded::new(&members);
            let hidden = self.transformer.hidden_states(&padded)?;
            for (&index, vector) in batch.iter().zip(mean_pooled(&hidden, &padded)?) {
                vectors[index] = vector;
            }
        }
        Ok(vectors)
    }
}

/// `order` (indices of `ids`, shortest first) cut into forward passes: each at most `batch`
/// texts and, beyond its first text, at most [`MAX_BATCH_TOKENS`] once padded to its longest.
fn batches<'a>(order: &'a [usize], ids: &[Vec<u32>], batch: usize) -> Vec<&'a [usize]> {
    let mut batches = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        // Sorted by length, so the newest member is the longest.
        while end < order.len()
            && end - start < batch.max(1)
            && (end - start + 1) * ids[order[end]].len() <= MAX_BATCH_TOKENS
        {
            end += 1;
        }
        batches.push(&order[start..end]);
        start = end;
    }
    batches
}

/// What a backend builds its transformer from.
pub struct Weights<'a> {
    pub config: BertConfig,
    /// `None` when the file holds dtypes [`weights::read`] does not read (candle's own loader
    /// reads them; the ONNX Runtime graph refuses them).
    pub arrays: Option<std::collections::HashMap<String, Array>>,
    pub path: &'a Path,
}

/// Mean of each member's unpadded hidden states, L2-normalised (a zero vector stays zero).
fn mean_pooled(hidden: &[f32], batch: &Padded) -> Result<Vec<Vec<f32>>, EmbedError> {
    let expected = batch.members * batch.longest * DIMENSION;
    if hidden.len() != expected {
        return Err(EmbedError::Compute {
            message: format!("the transformer returned {} values for a batch needing {expected}", hidden.len()),
        });
    }
    let rows = hidden.chunks_exact(DIMENSION);
    let mut pooled = vec![vec![0f32; DIMENSION]; batch.members];
    for ((row, &mask), position) in rows.zip(&batch.mask).zip(0..) {
        if mask != 0 {
            let sum = &mut pooled[position / batch.longest];
            sum.iter_mut().zip(row).for_each(|(sum, value)| *sum += value);
        }
    }
    for (vector, mask) in pooled.iter_mut().zip(batch.mask.chunks_exact(batch.longest)) {
        let count = mask.iter().filter(|&&bit| bit != 0).count().max(1) as f32;
        vector.iter_mut().for_each(|value| *value /= count);
        let norm = vector.iter().map(|value| value * value).sum::<f32>().sqrt().max(1e-12);
        vector.iter_mut().for_each(|value| *value /= norm);
    }
    Ok(pooled)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_right_padded_to_its_longest_member_with_a_mask() {
        let batch = Padded::new(&[&[101, 7, 102], &[101, 102]]);
        assert_eq!((batch.members, batch.longest), (2, 3));
        assert_eq!(batch.ids, [101, 7, 102, 101, 102, 0]);
        assert_eq!(batch.mask, [1, 1, 1, 1, 1, 0]);
    }

    #[test]
    fn batches_hold_at_most_batch_texts_and_the_token_budget_once_padded() {
        let lengths = [10, 10, 10, 300, 300, 300, 300, 2000];
        let ids: Vec<Vec<u32>> = lengths.iter().map(|&length| vec![1; length]).collect();
        let order: Vec<usize> = (0..ids.len()).collect();
        let cut = batches(&order, &ids, 2);
        assert_eq!(cut, [&[0, 1][..], &[2, 3], &[4, 5], &[6], &[7]]);
        let cut = batches(&order, &ids, 16);
        // A 300-token text after three short ones would pad all four to 1,200; 300-token texts go
        // three at a time (900 ≤ 1024 < 1200); a text over the
        // budget still goes, alone.
        assert_eq!(cut, [&[0, 1, 2][..], &[3, 4, 5], &[6], &[7]]);
    }

    #[test]
    fn pooling_averages_real_tokens_only_and_normalises() {
        let batch = Padded::new(&[&[1, 2], &[3]]);
        let mut hidden = vec![0f32; 2 * 2 * DIMENSION];
        hidden[0] = 3.0; // member 0, token 0
        hidden[DIMENSION + 1] = 4.0; // member 0, token 1
        hidden[2 * DIMENSION + 2] = -2.0; // member 1, token 0
        hidden[3 * DIMENSION + 3] = 100.0; // member 1, padding: ignored
        let pooled = mean_pooled(&hidden, &batch).unwrap();
        assert_eq!(&pooled[0][..2], [0.6, 0.8]);
        assert_eq!(&pooled[1][..4], [0.0, 0.0, -1.0, 0.0]);
    }

    #[test]
    fn hidden_states_of_the_wrong_size_are_an_error_not_a_panic() {
        let batch = Padded::new(&[&[1, 2]]);
        let error = mean_pooled(&[0.0; 5], &batch).unwrap_err();
        assert!(error.to_string().contains("returned 5 values for a batch needing 768"), "{error}");
    }
}
