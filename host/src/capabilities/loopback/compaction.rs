//! OpenClaw's two memory-management requests to its model, as an extractive offline model
//! answers them for `loopback::openai`: Pi's compaction summary (the conversation's user
//! sentences under the headings OpenClaw's quality guard requires) and the pre-compaction memory
//! flush (one `write` of the session's user sentences to the dated memory file, then `NO_REPLY`).
//! Both are lossy by a character budget, so what they keep is measurable. Recognised by the
//! markers OpenClaw 2026.5.4 sends, read from its installed source (see
//! `scripts/lib/cortex_v2/COMPACTION.md` §2–§4); answered from the request alone. Knows nothing
//! of HTTP or of how an answer is put on the wire.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use algorithms::text;

use super::replies::{Reply, ToolCall, message_text, without_tagged_blocks};

/// The characters of a summary's `## Decisions` body when a script gives no `summary_chars`:
/// about 300 tokens, the size of a real model's checkpoint summary of a short session, so that
/// a session planting more facts than that loses its later ones as a real summary would.
pub const SUMMARY_CHARS: usize = 1_200;

/// The characters of a flush's note when a script gives no `flush_chars`: a short list of
/// durable facts (the flush prompt asks for "durable memories only"), larger than a summary's
/// body because a note holds facts verbatim and no structure.
pub const FLUSH_CHARS: usize = 2_000;

/// The start of Pi's summarisation system prompt, `SUMMARIZATION_SYSTEM_PROMPT`
/// (pi-coding-agent 0.73.0, `dist/core/compaction/utils.js:150`).
const SUMMARY_SYSTEM: &str = "You are a context summarization assistant.";

/// How the one user message of a summarisation request starts and where its conversation ends
/// (`dist/core/compaction/compaction.js:444, 596`).
const CONVERSATION_OPEN: &str = "<conversation>\n";
const CONVERSATION_CLOSE: &str = "\n</conversation>";

/// A previous summary a later chunk updates (`compaction.js:446`), and the one OpenClaw's
/// safeguard prepends as a user message to be re-distilled
/// (`openclaw/dist/compaction-successor-transcript-CQKOnfuL.js:3185`).
const PREVIOUS_SUMMARY: (&str, &str) = ("<previous-summary>\n", "\n</previous-summary>");
const PREVIOUS_COMPACTION_SUMMARY: &str = "<previous-compaction-summary>";

/// The headings OpenClaw's quality guard requires, in order, each on a line of its own; a
/// summary without them is asked for again (`REQUIRED_SUMMARY_SECTIONS`,
/// `compaction-successor-transcript-CQKOnfuL.js:3026`).
const HEADINGS: [&str; 5] =
    ["## Decisions", "## Open TODOs", "## Constraints/Rules", "## Pending user asks", "## Exact identifiers"];

/// The flush prompt's first sentence (`openclaw/dist/extensions/memory-core/index.js:23`) and
/// the flush system prompt's (`index.js:31`, "… flush turn."). In 2026.5.4 the prompt reaches
/// the model appended to the system prompt as a runtime event, the last user message being
/// [`RUNTIME_EVENT_PROMPT`] (`runtime-context-prompt-LXY1tK2Q.js:39-48`,
/// `selection-BfCSa_QL.js:8024-8037`); a request whose last user message is the prompt is a
/// flush too.
const FLUSH_MARKER: &str = "Pre-compaction memory flush";

/// The user message OpenClaw sends when the prompt went to the system prompt
/// (`runtime-context-prompt-LXY1tK2Q.js:4`).
const RUNTIME_EVENT_PROMPT: &str = "Continue the OpenClaw runtime event.";

/// The tool the flush writes its note with (`{path, content}`, Pi's `dist/core/tools/write.js:11`).
const WRITE_TOOL: &str = "write";

/// What the flush answers once its note is written, or when it has nothing to store.
pub const NO_REPLY: &str = "NO_REPLY";

/// User messages that are not the user's words: OpenClaw's runtime events and context
/// (`internal-runtime-context-CeNG346V.js:7-8`), Pi's compaction and branch summaries
/// (`dist/core/messages.js:7, 12`), the flush prompt and the runtime event's user message.
const NOT_THE_USERS: [&str; 5] = [
    FLUSH_MARKER,
    RUNTIME_EVENT_PROMPT,
    "OpenClaw runtime ",
    "The conversation history before this point was compacted",
    "The following is a summary of a branch",
];

/// What a chat request is, as the request log's `kind` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// It offers tools: the scripted agent's turn.
    Agent,
    /// It offers none: the side reply.
    Side,
    /// Pi's summarisation request (no tools).
    Compaction,
    /// OpenClaw's pre-compaction memory flush (it offers `write`).
    Flush,
}

impl Kind {
    /// What an OpenAI chat request is, by its body.
    pub fn of(body: &Value) -> Self {
        let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
        if tools.is_empty() {
            return if is_compaction(body) { Self::Compaction } else { Self::Side };
        }
        let offers_write = tools.iter().any(|tool| tool["function"]["name"] == WRITE_TOOL);
        if offers_write && is_flush(body) { Self::Flush } else { Self::Agent }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Side => "side",
            Self::Compaction => "compaction",
            Self::Flush => "flush",
        }
    }
}

fn is_compaction(body: &Value) -> bool {
    system_texts(body).iter().any(|text| text.trim_start().starts_with(SUMMARY_SYSTEM))
        || last_user_text(body).is_some_and(|text| text.starts_with(CONVERSATION_OPEN))
}

fn is_flush(body: &Value) -> bool {
    system_texts(body).iter().any(|text| text.contains(FLUSH_MARKER))
        || last_user_text(body).is_some_and(|text| without_envelope(&text).starts_with(FLUSH_MARKER))
}

/// The summary of a summarisation request: under `## Decisions`, the facts of the
/// conversation's user messages (a previous summary's decisions first), in order, each once, as
/// many as fit in `budget` characters (each line `- <sentence>` and its line feed); under
/// `## Pending user asks`, the latest user message; under `## Exact identifiers`, the opaque
/// identifiers of the conversation's last messages. The last two are what OpenClaw's quality
/// guard checks for, outside the budget, so that the summary is not asked for again.
pub fn summary(body: &Value, budget: usize) -> String {
    let request = last_user_text(body).unwrap_or_default();
    let conversation = between(&request, CONVERSATION_OPEN, CONVERSATION_CLOSE).unwrap_or_default();
    let segments = segments(conversation);
    let mut facts = Vec::new();
    if let Some(previous) = between(&request, PREVIOUS_SUMMARY.0, PREVIOUS_SUMMARY.1) {
        facts.extend(decisions(previous));
    }
    let users: Vec<&str> = segments.iter().filter(|(role, _)| *role == Role::User).map(|(_, text)| *text).collect();
    for text in &users {
        if text.starts_with(PREVIOUS_COMPACTION_SUMMARY) {
            facts.extend(decisions(text));
        } else {
            facts.extend(user_facts(text));
        }
    }
    let latest = users.iter().rev().find(|text| !text.starts_with(PREVIOUS_COMPACTION_SUMMARY));
    let asks: Vec<String> = latest.map(|text| cut(&squash(text), LATEST_ASK_CHARS)).into_iter().collect();
    let sections = [
        within(distinct(facts), budget),
        Vec::new(),
        Vec::new(),
        asks,
        identifiers(&last_messages(&segments, IDENTIFIER_MESSAGES)),
    ];
    let mut out = Vec::new();
    for (heading, lines) in HEADINGS.iter().zip(sections) {
        out.push(heading.to_string());
        if lines.is_empty() {
            out.push("None.".to_string());
        }
        out.extend(lines.into_iter().map(|line| format!("- {line}")));
        out.push(String::new());
    }
    out.join("\n").trim_end().to_string()
}

/// The answer to a flush request: once the conversation holds a tool result after its last user
/// message (the note was written), or when there is nothing to store or no file named,
/// `NO_REPLY`; else one `write` of the facts of the session's user messages, in order, each
/// once, as many as fit in `budget` characters (each line `- <sentence>` and its line feed), to
/// the dated file the prompt names.
pub fn flush(body: &Value, budget: usize) -> Reply {
    let no_reply = || Reply::text(NO_REPLY);
    if written(body) {
        return no_reply();
    }
    let Some(path) = flush_path(body) else { return no_reply() };
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let facts: Vec<String> = messages
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message_text(&message["content"]))
        .flat_map(|text| user_facts(&text))
        .collect();
    let kept = within(distinct(facts), budget);
    if kept.is_empty() {
        return no_reply();
    }
    let content: String = kept.iter().map(|fact| format!("- {fact}\n")).collect();
    let mut input = Map::new();
    input.insert("path".into(), json!(path));
    input.insert("content".into(), json!(content));
    Reply { text: None, tools: vec![ToolCall { name: WRITE_TOOL.to_string(), input }] }
}

/// Whether a tool result follows the conversation's last user message: the flush's write ran.
fn written(body: &Value) -> bool {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let after = messages.iter().rposition(|message| message["role"] == "user").map_or(0, |index| index + 1);
    messages[after..].iter().any(|message| message["role"] == "tool")
}

/// The file the flush prompt names, `memory/<YYYY-MM-DD>.md` with the date OpenClaw stamped in
/// the user's time zone (the only path its `write` accepts during a flush), from the system
/// prompt or the last user message; failing a dated one, the first `memory/….md` named.
fn flush_path(body: &Value) -> Option<String> {
    let mut texts = system_texts(body);
    texts.extend(last_user_text(body));
    let named: Vec<&str> = texts.iter().flat_map(|text| memory_paths(text)).collect();
    let dated = named.iter().find(|path| is_dated(path)).or_else(|| named.first());
    dated.map(|path| path.to_string())
}

/// Each `memory/<name>.md` in `text`.
fn memory_paths(text: &str) -> Vec<&str> {
    text.match_indices("memory/")
        .filter(|(index, _)| *index == 0 || !text[..*index].ends_with(|c: char| c.is_alphanumeric() || c == '/'))
        .filter_map(|(index, _)| {
            let rest = &text[index..];
            let token = rest.split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ')' | ',')).next()?;
            let path = token.trim_end_matches(['.', ';', ':']);
            (path.ends_with(".md") && path.len() > "memory/.md".len()).then_some(path)
        })
        .collect()
}

fn is_dated(path: &str) -> bool {
    let Some(date) = path.strip_prefix("memory/").and_then(|rest| rest.strip_suffix(".md")) else {
        return false;
    };
    let shape = date.chars().enumerate().all(|(i, c)| if i == 4 || i == 7 { c == '-' } else { c.is_ascii_digit() });
    date.len() == 10 && shape
}

/// The texts of the system (or developer) messages.
fn system_texts(body: &Value) -> Vec<String> {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    messages
        .iter()
        .filter(|message| message["role"] == "system" || message["role"] == "developer")
        .map(|message| message_text(&message["content"]))
        .collect()
}

fn last_user_text(body: &Value) -> Option<String> {
    let messages = body["messages"].as_array()?;
    messages.iter().rev().find(|message| message["role"] == "user").map(|message| message_text(&message["content"]))
}

/// `text` without the `[Sun 2026-05-10 12:34 UTC] ` stamp OpenClaw puts before a message sent
/// with `chat.send` (`openclaw/dist/agent-timestamp-zb7gYESq.js:33-45`).
fn without_envelope(text: &str) -> &str {
    let trimmed = text.trim_start();
    let Some(rest) = trimmed.strip_prefix('[') else { return trimmed };
    let is_stamp =
        |stamp: &str| stamp.len() <= 64 && !stamp.contains('\n') && stamp.contains(|c: char| c.is_ascii_digit());
    match rest.split_once("] ") {
        Some((stamp, after)) if is_stamp(stamp) => after,
        _ => trimmed,
    }
}

/// The facts of a user message: its sentences but the questions, its text taken without the
/// stamp and the tagged blocks a plugin put around it (recalled memories), cut as the Cortex
/// play captures a message; none for a message that is not the user's words.
fn user_facts(text: &str) -> Vec<String> {
    let text = without_envelope(text);
    if NOT_THE_USERS.iter().any(|prefix| text.starts_with(prefix)) {
        return Vec::new();
    }
    let sentences = text::captured_sentences(&without_tagged_blocks(text));
    sentences.into_iter().filter(|sentence| !sentence.ends_with('?')).collect()
}

/// The `- ` lines of a summary's `## Decisions` section.
fn decisions(summary: &str) -> Vec<String> {
    summary
        .lines()
        .map(str::trim)
        .skip_while(|line| *line != HEADINGS[0])
        .skip(1)
        .take_while(|line| !line.starts_with("## "))
        .filter_map(|line| line.strip_prefix("- "))
        .map(str::to_string)
        .collect()
}

/// `facts` in order, each once.
fn distinct(facts: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    facts.into_iter().filter(|fact| seen.insert(fact.clone())).collect()
}

/// The leading `facts` whose lines (`- <fact>` and a line feed) fit in `budget` characters.
fn within(facts: Vec<String>, budget: usize) -> Vec<String> {
    let mut used = 0;
    facts
        .into_iter()
        .take_while(|fact| {
            used += fact.chars().count() + 3;
            used <= budget
        })
        .collect()
}

/// The most characters of the latest user message a summary repeats: OpenClaw's quality guard
/// looks for its first 12 keywords, and keeps a preserved turn to as many
/// (`MAX_RECENT_TURN_TEXT_CHARS`, `compaction-successor-transcript-CQKOnfuL.js:3177`).
const LATEST_ASK_CHARS: usize = 600;

/// `text`'s first `most` characters.
fn cut(text: &str, most: usize) -> String {
    text.chars().take(most).collect()
}

fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// Who wrote a part of a serialised conversation (`serializeConversation`, `utils.js:93-145`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    User,
    Thinking,
    Assistant,
    ToolCalls,
    ToolResult,
}

const SEGMENT_MARKERS: [(&str, Role); 5] = [
    ("[User]: ", Role::User),
    ("[Assistant thinking]: ", Role::Thinking),
    ("[Assistant]: ", Role::Assistant),
    ("[Assistant tool calls]: ", Role::ToolCalls),
    ("[Tool result]: ", Role::ToolResult),
];

/// The parts of a serialised conversation, each with its role: parts are joined by a blank line
/// and start with their marker, and a part's own text may hold blank lines.
fn segments(conversation: &str) -> Vec<(Role, &str)> {
    let mut starts: Vec<(usize, Role, usize)> = Vec::new();
    let mut offset = 0;
    let mut after_blank = true;
    for line in conversation.split_inclusive('\n') {
        if after_blank && let Some((marker, role)) = SEGMENT_MARKERS.iter().find(|(marker, _)| line.starts_with(marker))
        {
            starts.push((offset, *role, offset + marker.len()));
        }
        after_blank = line.trim().is_empty();
        offset += line.len();
    }
    starts
        .iter()
        .enumerate()
        .map(|(i, (_, role, text_start))| {
            let end = starts.get(i + 1).map_or(conversation.len(), |next| next.0);
            (*role, conversation[*text_start..end].trim_end())
        })
        .collect()
}

/// How many of the conversation's last messages OpenClaw takes the identifiers a summary must
/// keep from (`compaction-successor-transcript-CQKOnfuL.js:3717`).
const IDENTIFIER_MESSAGES: usize = 10;

/// The text of the last `count` messages: an assistant message's thinking, text and tool calls
/// are consecutive parts, in that order.
fn last_messages(segments: &[(Role, &str)], count: usize) -> String {
    let rank = |role: Role| match role {
        Role::Thinking => Some(0),
        Role::Assistant => Some(1),
        Role::ToolCalls => Some(2),
        Role::User | Role::ToolResult => None,
    };
    let mut messages: Vec<String> = Vec::new();
    let mut previous: Option<Role> = None;
    for (role, text) in segments {
        let continues = matches!((previous.and_then(rank), rank(*role)), (Some(before), Some(now)) if now > before);
        match messages.last_mut() {
            Some(last) if continues => {
                last.push('\n');
                last.push_str(text);
            }
            _ => messages.push(text.to_string()),
        }
        previous = Some(*role);
    }
    messages[messages.len().saturating_sub(count)..].join("\n")
}

/// The opaque identifiers of `text` OpenClaw's quality guard looks for in a summary
/// (`extractOpaqueIdentifiers`, `compaction-successor-transcript-CQKOnfuL.js:3120`: hex runs of 8
/// or more, URLs, paths, `host:port`, numbers of 6 digits or more): each whitespace-separated
/// word holding one, trimmed of quotes and punctuation as OpenClaw trims them, each once. A
/// word holds the identifier OpenClaw extracts from it, so the summary includes that.
fn identifiers(text: &str) -> Vec<String> {
    let words = text.split_whitespace().map(|word| {
        word.trim_start_matches(['(', '"', '\'', '`', '[', '{', '<'])
            .trim_end_matches([')', ']', '"', '\'', '`', ',', ';', ':', '.', '!', '?', '<', '>'])
    });
    distinct(words.filter(|word| word.len() >= 4 && is_identifier(word)).map(str::to_string).collect())
}

fn is_identifier(word: &str) -> bool {
    let run = |wanted: fn(&char) -> bool| {
        word.chars()
            .fold((0, 0), |(longest, now), c| if wanted(&c) { (longest.max(now + 1), now + 1) } else { (longest, 0) })
            .0
    };
    let host_port = word.rsplit_once(':').is_some_and(|(host, port)| {
        host.contains('.') && !port.is_empty() && port.len() <= 5 && port.chars().all(|c| c.is_ascii_digit())
    });
    run(char::is_ascii_hexdigit) >= 8
        || run(char::is_ascii_digit) >= 6
        || word.contains("http://")
        || word.contains("https://")
        || word.contains(":\\")
        || (word.matches('/').count() >= 2 && word.chars().any(char::is_alphanumeric))
        || host_port
}
