//! Evidence recall: how much of the support for a question's answer a memory system retrieved,
//! as the official `eval_question_answering` measures it.

/// The share of `evidence` ids (turn ids `D<session>:<turn>`, as in the data's `evidence`
/// field) that `retrieved` covers, each evidence id counted, repeats too.
///
/// The official rule picks the kind of retrieval from the first retrieved id alone:
/// - it starts with `S` (session-level retrieval, ids `S<session>`): an evidence id counts when
///   its session (the text between the first character and the first `:`, `D3:7` → `3`) equals
///   a retrieved id less its first character;
/// - otherwise (turn-level retrieval): an evidence id counts when it is among the retrieved ids,
///   compared exactly.
///
/// A question without evidence scores 1, as officially. Nothing retrieved scores 0 (the official
/// code cannot score that case: it fails reading the first retrieved id).
pub fn evidence_recall<E: AsRef<str>, R: AsRef<str>>(evidence: &[E], retrieved: &[R]) -> f64 {
    if evidence.is_empty() {
        return 1.0;
    }
    let Some(first) = retrieved.first() else {
        return 0.0;
    };
    let found = if first.as_ref().starts_with('S') {
        let sessions: Vec<&str> = retrieved.iter().map(|id| without_first_char(id.as_ref())).collect();
        evidence.iter().filter(|id| sessions.contains(&session_of(id.as_ref()))).count()
    } else {
        evidence.iter().filter(|id| retrieved.iter().any(|got| got.as_ref() == id.as_ref())).count()
    };
    found as f64 / evidence.len() as f64
}

/// The session of a turn id as the official code reads it: the part before the first `:`,
/// less its first character (`D12:3` → `12`).
fn session_of(turn: &str) -> &str {
    without_first_char(turn.split(':').next().unwrap_or(turn))
}

fn without_first_char(text: &str) -> &str {
    let mut letters = text.chars();
    letters.next();
    letters.as_str()
}

#[cfg(test)]
#[path = "evidence_tests.rs"]
mod tests;
