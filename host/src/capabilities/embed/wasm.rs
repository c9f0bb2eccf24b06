//! The guest import module `host:embed`: operation `texts` takes an [`abi::EmbedTexts`] and
//! answers an [`abi::EmbedVectors`], through the same router, model and on-disk cache as scripts.

use abi::{EmbedTexts, EmbedVectors, Failure, FailureKind};
use serde_json::Value;

use super::{EmbedRequest, EmbedRouter};

pub async fn call(router: &EmbedRouter, op: &str, input: &[u8]) -> Result<Value, Failure> {
    if op != "texts" {
        return Err(Failure::new(
            FailureKind::Unsupported,
            format!("`host:embed` has no operation `{op}`; it has `texts`"),
        ));
    }
    let EmbedTexts { texts } = super::super::decode(input)?;
    let request = EmbedRequest { texts, model: None, batch: None };
    let embeddings = router.embed(request).await.map_err(|error| Failure::failed(super::super::error_chain(&error)))?;
    super::super::encode(&EmbedVectors { vectors: embeddings.vectors })
}
