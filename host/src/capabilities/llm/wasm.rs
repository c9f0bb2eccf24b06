//! The guest import module `host:llm`: operation `chat` takes an [`abi::Chat`] and answers an
//! [`abi::ChatReply`], through the whole policy stack (budget, cache, limits, retries, the
//! `llm_calls` table). The call's role is `guest:<name>`, so the table tells guests' calls apart
//! from the script's.

use abi::{Chat, ChatReply, Failure, FailureKind};
use serde_json::Value;

use super::{ChatRequest, Llm, Message};

pub async fn call(llm: &dyn Llm, guest: &str, op: &str, input: &[u8]) -> Result<Value, Failure> {
    if op != "chat" {
        return Err(Failure::new(
            FailureKind::Unsupported,
            format!("`host:llm` has no operation `{op}`; it has `chat`"),
        ));
    }
    let chat: Chat = super::super::decode(input)?;
    let request = ChatRequest {
        model: Some(chat.model),
        messages: chat
            .messages
            .into_iter()
            .map(|message| Message { role: message.role, content: message.content })
            .collect(),
        temperature: chat.temperature,
        max_tokens: chat.max_tokens,
        role: Some(format!("guest:{guest}")),
        ..ChatRequest::default()
    };
    let response = llm.chat(request).await.map_err(|error| Failure::failed(super::super::error_chain(&error)))?;
    super::super::encode(&ChatReply { text: response.text })
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::capabilities::llm::{ChatResponse, LlmError};

    /// Answers "noted" to everything and keeps the requests it was sent.
    #[derive(Default)]
    struct Recording(Mutex<Vec<ChatRequest>>);

    #[async_trait::async_trait]
    impl Llm for Recording {
        async fn chat(&self, request: ChatRequest) -> Result<ChatResponse, LlmError> {
            self.0.lock().expect("lock").push(request);
            Ok(ChatResponse { text: "noted".into(), ..ChatResponse::default() })
        }
    }

    fn bytes(value: Value) -> Vec<u8> {
        serde_json::to_vec(&value).expect("json")
    }

    #[tokio::test]
    async fn a_guests_chat_is_the_abis_and_is_recorded_under_the_guests_name() {
        let llm = Recording::default();
        let chat =
            json!({"model": "openai:gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5});
        let reply = call(&llm, "judge", "chat", &bytes(chat)).await.expect("answered");
        assert_eq!(reply, json!({"text": "noted"}), "the reply is an abi::ChatReply, nothing more");
        let sent = llm.0.lock().expect("lock").remove(0);
        assert_eq!(sent.model.as_deref(), Some("openai:gpt-4o-mini"));
        assert_eq!(sent.role.as_deref(), Some("guest:judge"));
        assert_eq!((sent.messages[0].content.as_str(), sent.max_tokens), ("hi", Some(5)));
    }

    #[tokio::test]
    async fn a_field_the_abi_does_not_define_is_refused_by_name() {
        let llm = Recording::default();
        let chat = json!({"model": "m", "messages": [], "role": "judge"});
        let failure = call(&llm, "judge", "chat", &bytes(chat)).await.expect_err("refused");
        assert!(failure.message.contains("role"), "{failure:?}");
        assert!(llm.0.lock().expect("lock").is_empty(), "nothing was sent");
    }
}
