//! The guest import module `host:llm`: operation `chat` takes a [`ChatRequest`] and answers its
//! [`super::ChatResponse`], through the whole policy stack (budget, cache, limits, retries, the
//! `llm_calls` table). The call's role defaults to `guest:<name>`, so the table tells guests'
//! calls apart from the script's.

use abi::{Failure, FailureKind};
use serde_json::Value;

use super::{ChatRequest, Llm};

pub async fn call(llm: &dyn Llm, guest: &str, op: &str, input: &[u8]) -> Result<Value, Failure> {
    if op != "chat" {
        return Err(Failure::new(
            FailureKind::Unsupported,
            format!("`host:llm` has no operation `{op}`; it has `chat`"),
        ));
    }
    let mut request: ChatRequest = super::super::decode(input)?;
    request.role.get_or_insert_with(|| format!("guest:{guest}"));
    let response = llm.chat(request).await.map_err(|error| Failure::failed(super::super::error_chain(&error)))?;
    super::super::encode(&response)
}
