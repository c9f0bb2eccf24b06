//! The on-disk embedding cache: one file per (model, text), so a rerun never recomputes.
//!
//! A file holds a magic tag, the dimension, the vector (little-endian f32) and the sha256 of
//! those bytes. A file that fails the check is reported (once per run), recomputed and
//! rewritten. Writes are atomic.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sha2::{Digest, Sha256};

use super::{EmbedError, Embedder, Embeddings};
use crate::capabilities::log::{Level, Log};

const MAGIC: &[u8; 4] = b"HEV1";

pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    dir: PathBuf,
    log: Arc<dyn Log>,
    reported: AtomicBool,
}

impl CachedEmbedder {
    pub fn new(inner: Arc<dyn Embedder>, root: &Path, log: Arc<dyn Log>) -> Self {
        let slug: String = inner
            .model_id()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' })
            .collect();
        CachedEmbedder { dir: root.join(slug), inner, log, reported: AtomicBool::new(false) }
    }

    fn path(&self, text: &str) -> PathBuf {
        let mut hasher = Sha256::new();
        hasher.update(self.inner.cache_scope().as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        let key = hex::encode(hasher.finalize());
        self.dir.join(&key[..2]).join(format!("{key}.vec"))
    }

    fn read(&self, path: &Path) -> Option<Vec<f32>> {
        let bytes = std::fs::read(path).ok()?;
        match decode(&bytes) {
            Some(vector) => Some(vector),
            None => {
                if !self.reported.swap(true, Ordering::Relaxed) {
                    self.log.write(
                        Level::Warn,
                        &format!("corrupt embedding cache entry `{}`: recomputing", path.display()),
                    );
                }
                None
            }
        }
    }
}

fn encode(vector: &[f32]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(8 + vector.len() * 4 + 32);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(vector.len() as u32).to_le_bytes());
    for value in vector {
        bytes.extend_from_slice(&value.to_le_bytes());
    }
    let digest = Sha256::digest(&bytes);
    bytes.extend_from_slice(&digest);
    bytes
}

fn decode(bytes: &[u8]) -> Option<Vec<f32>> {
    let (body, digest) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if Sha256::digest(body).as_slice() != digest || body.get(..4)? != MAGIC {
        return None;
    }
    let dimension = u32::from_le_bytes(body.get(4..8)?.try_into().ok()?) as usize;
    let data = body.get(8..)?;
    if data.len() != dimension * 4 {
        return None;
    }
    Some(data.chunks_exact(4).filter_map(|chunk| chunk.try_into().ok()).map(f32::from_le_bytes).collect())
}

#[async_trait::async_trait]
impl Embedder for CachedEmbedder {
    fn model_id(&self) -> String {
        self.inner.model_id()
    }

    async fn embed(&self, texts: Vec<String>, batch: Option<usize>) -> Result<Embeddings, EmbedError> {
        let paths: Vec<PathBuf> = texts.iter().map(|text| self.path(text)).collect();
        let mut vectors: Vec<Option<Vec<f32>>> = paths.iter().map(|path| self.read(path)).collect();
        let missing: Vec<usize> = (0..texts.len()).filter(|&index| vectors[index].is_none()).collect();
        let cached = texts.len() - missing.len();
        let mut dimension = vectors.iter().flatten().map(Vec::len).next().unwrap_or(0);
        if !missing.is_empty() {
            let computed = self.inner.embed(missing.iter().map(|&index| texts[index].clone()).collect(), batch).await?;
            dimension = computed.dimension;
            for (&index, vector) in missing.iter().zip(computed.vectors) {
                if let Err(error) = crate::atomic::write(&paths[index], &encode(&vector)) {
                    self.log.write(
                        Level::Warn,
                        &format!("cannot cache an embedding in `{}`: {error}", paths[index].display()),
                    );
                }
                vectors[index] = Some(vector);
            }
        }
        let vectors: Vec<Vec<f32>> = vectors.into_iter().map(Option::unwrap_or_default).collect();
        Ok(Embeddings { model: self.inner.model_id(), dimension, vectors, cached })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_survives_the_round_trip_and_any_flipped_byte_is_detected() {
        let vector = vec![0.25f32, -1.5, 3.0];
        let bytes = encode(&vector);
        assert_eq!(decode(&bytes), Some(vector));
        for index in 0..bytes.len() {
            let mut corrupt = bytes.clone();
            corrupt[index] ^= 0x40;
            assert_eq!(decode(&corrupt), None, "byte {index}");
        }
        assert_eq!(decode(&bytes[..10]), None);
        assert_eq!(decode(b""), None);
    }
}
