//! What the Cortex play remembers: the script's seeded facts and the sentences capture stored,
//! ranked for a query by word overlap. Deterministic on purpose (no embeddings, no clock): the
//! same requests give the same memories and the same rankings. Knows nothing of HTTP.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use algorithms::text;

/// Shorter sentences (a greeting, "ok.") are not worth remembering.
const MIN_SENTENCE_CHARS: usize = 12;

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
}

/// Every memory, in the order stored (seeds first), and the jobs capture made.
pub struct Memories {
    memories: Vec<Memory>,
    captured: usize,
    jobs: usize,
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
            })
            .collect();
        Self { memories, captured: 0, jobs: 0 }
    }

    pub fn all(&self) -> &[Memory] {
        &self.memories
    }

    /// Stores the sentences of a conversation's user and assistant messages (`content` a string
    /// or a list of text parts) as one job, done at once; returns the job's id.
    pub fn capture(&mut self, messages: &[Value], session_id: Option<&str>) -> String {
        let spoken = messages.iter().filter(|message| message["role"] == "user" || message["role"] == "assistant");
        for message in spoken {
            let text = message_text(&message["content"]);
            for sentence in sentences(&text) {
                self.captured += 1;
                self.memories.push(Memory {
                    node_id: format!("cap-{}", self.captured),
                    content: sentence.to_string(),
                    source: "capture",
                    session_id: session_id.map(str::to_string),
                });
            }
        }
        self.jobs += 1;
        format!("job-{}", self.jobs)
    }

    /// Whether `id` names a job capture made.
    pub fn has_job(&self, id: &str) -> bool {
        id.strip_prefix("job-")
            .and_then(|number| number.parse::<usize>().ok())
            .is_some_and(|n| n >= 1 && n <= self.jobs)
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

/// A message's text: its `content` string, or its text parts joined by newlines.
fn message_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// The sentences of `text`: cut at newlines and after a `.`, `!` or `?` followed by a space,
/// trimmed, those under [`MIN_SENTENCE_CHARS`] left out.
fn sentences(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let mut characters = line.char_indices().peekable();
        while let Some((index, character)) = characters.next() {
            let ends = matches!(character, '.' | '!' | '?') && characters.peek().is_some_and(|(_, next)| *next == ' ');
            if ends {
                found.push(&line[start..=index]);
                start = index + 1;
            }
        }
        found.push(&line[start..]);
    }
    found.into_iter().map(str::trim).filter(|sentence| sentence.chars().count() >= MIN_SENTENCE_CHARS).collect()
}

/// The distinct lowercase words of `text` of at least [`MIN_WORD_CHARS`] characters.
fn words(text: &str) -> BTreeSet<String> {
    text::words(text).into_iter().filter(|word| word.chars().count() >= MIN_WORD_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_cut_after_end_marks_followed_by_a_space_and_at_newlines() {
        let text = "The deploy key rotates monthly. Ok! Is the cache warm?\nv1.2 ships Friday at noon\nshort";
        assert_eq!(
            sentences(text),
            ["The deploy key rotates monthly.", "Is the cache warm?", "v1.2 ships Friday at noon"]
        );
    }
}
