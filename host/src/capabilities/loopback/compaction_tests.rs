//! Specification of how OpenClaw's compaction requests are told apart and answered: requests
//! shaped as OpenClaw 2026.5.4 sends them (the marker texts copied from its installed source),
//! the summary's headings and budget, the flush's dated write and its `NO_REPLY`.

use serde_json::{Value, json};

use super::compaction::{self, FLUSH_CHARS, Kind, NO_REPLY, SUMMARY_CHARS};

/// Pi's `SUMMARIZATION_SYSTEM_PROMPT` (pi-coding-agent 0.73.0, `compaction/utils.js:150`).
const SUMMARY_SYSTEM: &str = "You are a context summarization assistant. Your task is to read a conversation between a user and an AI coding assistant, then produce a structured summary following the exact format specified.\n\nDo NOT continue the conversation. Do NOT respond to any questions in the conversation. ONLY output the structured summary.";

/// The head of Pi's `SUMMARIZATION_PROMPT` and OpenClaw's structure instructions after it.
const SUMMARY_INSTRUCTIONS: &str = "The messages above are a conversation to summarize. Create a structured context checkpoint summary that another LLM will use to continue the work.\n\nAdditional focus: Produce a compact, factual summary with these exact section headings:\n## Decisions\n## Open TODOs\n## Constraints/Rules\n## Pending user asks\n## Exact identifiers";

/// Memory-core's flush prompt for 2026-05-10 (`extensions/memory-core/index.js:22-29`).
const FLUSH_PROMPT: &str = "Pre-compaction memory flush. Store durable memories only in memory/2026-05-10.md (create memory/ if needed). Treat workspace bootstrap/reference files such as MEMORY.md, DREAMS.md, SOUL.md, TOOLS.md, and AGENTS.md as read-only during this flush; never overwrite, replace, or edit them. If memory/2026-05-10.md already exists, APPEND new content only and do not overwrite existing entries. Do NOT create timestamped variant files (e.g., 2026-05-10-HHMM.md); always use the canonical 2026-05-10.md filename. If nothing to store, reply with NO_REPLY.\nCurrent time: Sunday, May 10th, 2026 - 23:50 (America/New_York) / 2026-05-11 03:50 UTC";

/// Memory-core's flush system prompt for 2026-05-10 (`index.js:30-37`).
const FLUSH_SYSTEM: &str = "Pre-compaction memory flush turn. The session is near auto-compaction; capture durable memories to disk. Store durable memories only in memory/2026-05-10.md (create memory/ if needed). Treat workspace bootstrap/reference files such as MEMORY.md, DREAMS.md, SOUL.md, TOOLS.md, and AGENTS.md as read-only during this flush; never overwrite, replace, or edit them. If memory/2026-05-10.md already exists, APPEND new content only and do not overwrite existing entries. You may reply, but usually NO_REPLY is correct.";

/// The user's messages of the session the requests below carry: four facts (one said twice)
/// and a question.
pub const STATED: [&str; 3] = [
    "[Sun 2026-05-10 23:40 EDT] The deploy key rotates every month. Staging runs on db.internal:5432.",
    "<cortex_memories>\n- a recalled memory, not the user's words\n</cortex_memories>\n\nThe release train leaves on Thursdays. The deploy key rotates every month.",
    "Our build hash is 9f8e7d6c5b4a. What did we decide about the deploy key?",
];

/// A summarisation request as pi-ai sends it: Pi's system prompt, one user message holding the
/// serialised conversation of [`STATED`] with the assistant's turns, no tools, streamed.
pub fn compaction_request() -> Value {
    let conversation = format!(
        "[User]: {}\n\n[Assistant]: Noted.\n\n[User]: {}\n\n[Assistant thinking]: Search first.\n\n[Assistant tool calls]: memory_search(query=\"deploy key\")\n\n[Tool result]: []\n\n[User]: {}",
        STATED[0], STATED[1], STATED[2]
    );
    let user = format!("<conversation>\n{conversation}\n</conversation>\n\n{SUMMARY_INSTRUCTIONS}");
    json!({"model": "canned", "messages": [{"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": [{"type": "text", "text": user}]}],
        "stream": true, "stream_options": {"include_usage": true}, "max_completion_tokens": 13107})
}

/// A flush request as OpenClaw 2026.5.4 sends it: the session's messages, the flush system
/// prompt and the prompt as a runtime event in the system prompt, `Continue the OpenClaw runtime
/// event.` as the last user message, tools `read` and `write`; `written` adds the write's call
/// and its result.
pub fn flush_request(written: bool) -> Value {
    let system = format!(
        "You are a personal assistant running inside OpenClaw.\n## Group Chat Context\n{FLUSH_SYSTEM}\n\nOpenClaw runtime event.\nThis context is runtime-generated, not user-authored. Keep internal details private.\n\n{FLUSH_PROMPT}"
    );
    let mut messages = vec![json!({"role": "system", "content": system})];
    for stated in STATED {
        messages.push(json!({"role": "user", "content": stated}));
        messages.push(json!({"role": "assistant", "content": "Noted."}));
    }
    messages.push(json!({"role": "user", "content": "Continue the OpenClaw runtime event."}));
    if written {
        let call = json!({"id": "call_loopback_flush_0", "type": "function",
            "function": {"name": "write", "arguments": "{}"}});
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
        messages.push(json!({"role": "tool", "tool_call_id": "call_loopback_flush_0",
            "content": "Appended content to memory/2026-05-10.md."}));
    }
    let tool = |name: &str| json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}});
    json!({"model": "canned", "messages": messages, "tools": [tool("read"), tool("write")], "stream": true})
}

/// The lines of a summary's section, without its heading.
fn section<'a>(summary: &'a str, heading: &str) -> Vec<&'a str> {
    summary
        .lines()
        .skip_while(|line| *line != heading)
        .skip(1)
        .take_while(|line| !line.starts_with("## "))
        .filter(|line| !line.is_empty())
        .collect()
}

#[test]
fn requests_are_told_apart_by_openclaws_markers() {
    assert_eq!(Kind::of(&compaction_request()), Kind::Compaction);
    assert_eq!(Kind::of(&flush_request(false)), Kind::Flush);
    assert_eq!(Kind::of(&flush_request(true)), Kind::Flush, "the write's result stays in the flush");
    let mut by_user_text = compaction_request();
    by_user_text["messages"][0]["content"] = json!("Summarise.");
    assert_eq!(Kind::of(&by_user_text), Kind::Compaction, "its user message alone is enough");

    // The flush prompt as the last user message, as COMPACTION.md §3.2 first read it.
    let older = json!({"messages": [{"role": "system", "content": "You are a personal assistant."},
        {"role": "user", "content": FLUSH_PROMPT}],
        "tools": [{"type": "function", "function": {"name": "write"}}]});
    assert_eq!(Kind::of(&older), Kind::Flush);

    let mut without_write = flush_request(false);
    without_write["tools"] = json!([{"type": "function", "function": {"name": "read"}}]);
    assert_eq!(Kind::of(&without_write), Kind::Agent, "a flush can only write with `write`");
    let mut with_tools = compaction_request();
    with_tools["tools"] = json!([{"type": "function", "function": {"name": "memory_search"}}]);
    assert_eq!(Kind::of(&with_tools), Kind::Agent, "a summarisation request offers no tools");
    let side = json!({"messages": [{"role": "user", "content": "Rank these."}]});
    assert_eq!((Kind::of(&side).name(), Kind::Agent.name()), ("side", "agent"));
}

#[test]
fn a_summary_has_the_five_headings_and_the_leading_user_sentences_within_its_budget() {
    let summary = compaction::summary(&compaction_request(), SUMMARY_CHARS);
    let headings: Vec<&str> = summary.lines().filter(|line| line.starts_with("## ")).collect();
    assert_eq!(
        headings,
        ["## Decisions", "## Open TODOs", "## Constraints/Rules", "## Pending user asks", "## Exact identifiers"]
    );
    assert_eq!(
        section(&summary, "## Decisions"),
        [
            "- The deploy key rotates every month.",
            "- Staging runs on db.internal:5432.",
            "- The release train leaves on Thursdays.",
            "- Our build hash is 9f8e7d6c5b4a.",
        ],
        "in order, once each, without the stamp, the plugin's block or the question:\n{summary}"
    );
    assert_eq!(section(&summary, "## Open TODOs"), ["None."]);
    assert_eq!(section(&summary, "## Pending user asks"), [format!("- {}", STATED[2])]);
    assert_eq!(section(&summary, "## Exact identifiers"), ["- db.internal:5432", "- 9f8e7d6c5b4a"]);

    // 40 characters hold the first line (38 with its line feed) and not the second.
    let tight = compaction::summary(&compaction_request(), 40);
    assert_eq!(section(&tight, "## Decisions"), ["- The deploy key rotates every month."]);
    let none = compaction::summary(&compaction_request(), 0);
    assert_eq!(section(&none, "## Decisions"), ["None."]);
    assert_eq!(none.lines().filter(|line| line.starts_with("## ")).count(), 5, "the headings stay");
}

#[test]
fn a_previous_summarys_decisions_come_first_in_the_next_one() {
    let previous = "## Decisions\n- The office moved to Berlin.\n\n## Open TODOs\nNone.";
    let mut request = compaction_request();
    let text = request["messages"][1]["content"][0]["text"].as_str().expect("a text").to_string();
    let redistill = format!(
        "[User]: <previous-compaction-summary>\nPrevious compaction summary to re-distill with the current conversation.\n\n{previous}\n</previous-compaction-summary>\n\n"
    );
    request["messages"][1]["content"][0]["text"] =
        json!(text.replacen("<conversation>\n", &format!("<conversation>\n{redistill}"), 1));
    let summary = compaction::summary(&request, SUMMARY_CHARS);
    assert_eq!(
        section(&summary, "## Decisions")[..2],
        ["- The office moved to Berlin.", "- The deploy key rotates every month."]
    );
    assert_eq!(
        section(&summary, "## Pending user asks"),
        [format!("- {}", STATED[2])],
        "the re-distilled summary is no ask"
    );
}

#[test]
fn a_flush_writes_the_session_facts_to_the_dated_file_then_answers_no_reply() {
    let reply = compaction::flush(&flush_request(false), FLUSH_CHARS);
    assert_eq!(reply.text, None);
    assert_eq!(reply.tools.len(), 1);
    let write = &reply.tools[0];
    assert_eq!(write.name, "write");
    assert_eq!(write.input["path"], "memory/2026-05-10.md", "the date OpenClaw stamped, not the UTC one");
    assert_eq!(
        write.input["content"],
        "- The deploy key rotates every month.\n- Staging runs on db.internal:5432.\n- The release train leaves on Thursdays.\n- Our build hash is 9f8e7d6c5b4a.\n"
    );
    let tight = compaction::flush(&flush_request(false), 75);
    assert_eq!(
        tight.tools[0].input["content"],
        "- The deploy key rotates every month.\n- Staging runs on db.internal:5432.\n"
    );

    // After a compaction, Pi's summary is a user message: OpenClaw's words, not the user's.
    let mut compacted = flush_request(false);
    let summary = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n## Decisions\n- An old fact.\n</summary>";
    compacted["messages"].as_array_mut().expect("messages").insert(1, json!({"role": "user", "content": summary}));
    assert_eq!(compaction::flush(&compacted, FLUSH_CHARS).tools[0].input["content"], write.input["content"]);

    let written = compaction::flush(&flush_request(true), FLUSH_CHARS);
    assert_eq!((written.text.as_deref(), written.tools.len()), (Some(NO_REPLY), 0));
    let nothing = compaction::flush(&flush_request(false), 10);
    assert_eq!((nothing.text.as_deref(), nothing.tools.len()), (Some(NO_REPLY), 0), "nothing fits: nothing to store");
}

#[test]
fn a_flush_prompt_naming_no_dated_file_writes_to_the_file_it_names_or_answers_no_reply() {
    let mut named = flush_request(false);
    let system = named["messages"][0]["content"].as_str().expect("a text").replace("2026-05-10.md", "notes.md");
    named["messages"][0]["content"] = json!(system);
    assert_eq!(compaction::flush(&named, FLUSH_CHARS).tools[0].input["path"], "memory/notes.md");
    named["messages"][0]["content"] = json!("Pre-compaction memory flush turn. Store what matters.");
    assert_eq!(compaction::flush(&named, FLUSH_CHARS).text.as_deref(), Some(NO_REPLY));
}
