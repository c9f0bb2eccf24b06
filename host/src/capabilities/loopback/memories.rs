//! What the Cortex play remembers: the script's seeded facts and the sentences of the
//! conversations capture's jobs stored, ranked for a query by word overlap. Deterministic on
//! purpose (no embeddings, no clock): the same requests give the same memories and the same
//! rankings. Knows nothing of HTTP or of jobs.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use algorithms::text;

/// Shorter words ("a", "is", "to") say little about what a text is about.
const MIN_WORD_CHARS: usize = 3;

/// One memory, as `memories()` returns it and `/v1/retrieve` ranks it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Memory {
    /// `seed-<i>` for the script's i-th fact (from 0), `cap-<n>` for the n-th captured one (from 1).
    pub node_id: String,
    pub content: String,
    /// `seed` or `capture`.
    pub source: &'static str,
    /// The session a captured memory came from; `None` for seeds and sessionless captures.
    pub session_id: Option<String>,
    /// The `reference_date` its conversation was ingested with; `None` for seeds and captures
    /// ingested without one.
    pub reference_date: Option<String>,
}

/// Every memory, in the order stored (seeds first).
pub struct Memories {
    memories: Vec<Memory>,
    captured: usize,
}

impl Memories {
    pub fn seeded(facts: Vec<String>) -> Self {
        let memories = facts
            .into_iter()
            .enumerate()
            .map(|(index, content)| Memory {
                node_id: format!("seed-{index}"),
                content,
                source: "seed",
                session_id: None,
                reference_date: None,
            })
            .collect();
        Self { memories, captured: 0 }
    }

    pub fn all(&self) -> &[Memory] {
        &self.memories
    }

    /// Stores each of `sentences` as a captured memory of `session_id`, dated `reference_date`.
    pub fn store(&mut self, sentences: &[String], session_id: Option<&str>, reference_date: Option<&str>) {
        for sentence in sentences {
            self.captured += 1;
            self.memories.push(Memory {
                node_id: format!("cap-{}", self.captured),
                content: sentence.clone(),
                source: "capture",
                session_id: session_id.map(str::to_string),
                reference_date: reference_date.map(str::to_string),
            });
        }
    }

    /// How many distinct sessions the captured memories came from.
    pub fn sessions(&self) -> usize {
        self.memories.iter().filter_map(|memory| memory.session_id.as_deref()).collect::<BTreeSet<_>>().len()
    }

    /// At most `top` memories sharing a word with `query`, best first, each with its score: the
    /// share of the query's words it holds. Equal scores keep the order the memories were stored
    /// in (`seed-0`, `seed-1`, …, then `cap-1`, …).
    pub fn ranked(&self, query: &str, top: usize) -> Vec<(f64, &Memory)> {
        let asked = words(query);
        let mut scored: Vec<(f64, &Memory)> = self
            .memories
            .iter()
            .filter_map(|memory| {
                let shared = words(&memory.content).intersection(&asked).count();
                (shared > 0).then(|| (shared as f64 / asked.len() as f64, memory))
            })
            .collect();
        // Stable: ties stay in the order stored.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.truncate(top);
        scored
    }
}

/// The sentences worth remembering of a conversation's user and assistant messages (`content`
/// a string or a list of text parts), in order: each message cut by
/// [`text::captured_sentences`], the rule the Cortex V2 benchmark's captures were made with.
pub fn conversation_sentences(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|message| message["role"] == "user" || message["role"] == "assistant")
        .flat_map(|message| text::captured_sentences(&message_text(&message["content"])))
        .collect()
}

/// A message's text: its `content` string, or its text parts joined by newlines.
fn message_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// The distinct lowercase words of `text` of at least [`MIN_WORD_CHARS`] characters.
fn words(text: &str) -> BTreeSet<String> {
    text::words(text).into_iter().filter(|word| word.chars().count() >= MIN_WORD_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_conversation_is_cut_into_the_sentences_of_its_user_and_assistant_messages() {
        let messages = [
            json!({"role": "system", "content": "Never remember this system prompt sentence."}),
            json!({"role": "user", "content": "The deploy key rotates monthly. Ok! Is the cache warm?\nv1.2 ships Friday at noon\nshort"}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "- Noted: the key rotates."}]}),
        ];
        assert_eq!(
            conversation_sentences(&messages),
            [
                "The deploy key rotates monthly.",
                "Is the cache warm?",
                "v1.2 ships Friday at noon",
                "- Noted: the key rotates."
            ]
        );
    }
}
