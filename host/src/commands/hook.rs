//! `host hook`: a script as a Claude Code hook, and `host hook install`, which writes the
//! settings that run the memory hook.
//!
//! A hook runs on every prompt and every edit, inside someone else's session, so it fails open:
//! whatever goes wrong (garbage on stdin, a script error, a panic, a timeout), it prints nothing
//! on stdout and exits 0, and says what happened in its log, `events.jsonl`. The script is an
//! ordinary `host run` script: it gets the event as a file (`--event`), the agent session's
//! state (`--state`, from the session's second event on) and the event's working directory
//! (`--cwd`), and answers by writing
//! `hook.json` (`#{ context, record, state }`) into its run directory, a temporary folder
//! removed afterwards. Unless `--no-server`, the events after the first are answered by the
//! warm hook server (`hook_server.rs`) through the same [`answer_event`].

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};

use crate::capabilities::embed::LocalEmbedder;
use crate::cli::{HookArgs, HookInstallArgs, HookInstallCommand, LlmArgs, RunArgs};
use crate::wasm::GUEST_PATH_VARIABLE;

use super::Outcome;

/// The most stdin a hook reads: a Write event carries the whole file.
const MAX_EVENT_BYTES: u64 = 16 * 1024 * 1024;

pub fn hook(args: &HookArgs, verbose: bool) -> anyhow::Result<Outcome> {
    if let Some(HookInstallCommand::Install(install_args)) = &args.install {
        return install(install_args);
    }
    let Some(script) = &args.script else {
        anyhow::bail!("give the hook script: `host hook <SCRIPT> [-- ARGS]`, or `host hook install --memories DIR`");
    };
    // The server and the key it answers under name the script wherever it was started from.
    let script = &fs_err::canonicalize(script).unwrap_or_else(|_| script.clone());
    if args.serve {
        return super::hook_server::serve(script, args, verbose);
    }
    let started = Instant::now();
    // Every hook script embeds its query, so a process that answers by itself starts loading the
    // model now, beside reading the event, compiling the script and opening the store: it is the
    // longest step. One that asks the warm server leaves the cores to the server.
    let embedder = args.no_server.then(|| preloaded_embedder(args));
    let mut stdin = Vec::new();
    let read = std::io::stdin().take(MAX_EVENT_BYTES).read_to_end(&mut stdin);
    let event: Value = match read.ok().and_then(|_| serde_json::from_slice(&stdin).ok()) {
        Some(value @ Value::Object(_)) => value,
        _ => {
            let dir = hook_dir(None);
            log_line(
                &dir,
                &json!({ "outcome": "ignored", "error": "stdin is not a JSON object", "bytes": stdin.len() }),
            );
            return Ok(Outcome::Success);
        }
    };
    let dir = hook_dir(event["cwd"].as_str());
    let output = if let Some(embedder) = embedder {
        answer_event(script, args, verbose, &event, &dir, started, Answerer::Process(embedder))
    } else {
        let key = super::hook_server::key(script, args);
        // The server keeps to the timeout itself; the margin lets its answer arrive.
        match super::hook_server::ask(&key, &event, &dir, timeout(args) + Duration::from_secs(2)) {
            Some(output) => output,
            None => {
                super::hook_server::start(&key, script, args);
                let embedder = preloaded_embedder(args);
                answer_event(script, args, verbose, &event, &dir, started, Answerer::Process(embedder))
            }
        }
    };
    if let Some(output) = output {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{output}");
        let _ = stdout.flush();
    }
    Ok(Outcome::Success)
}

/// How long an event may take: `--timeout`, within sane bounds.
pub(super) fn timeout(args: &HookArgs) -> Duration {
    Duration::from_secs_f64(args.timeout.clamp(0.1, 600.0))
}

/// The local model a hook answers with, its load started on another thread.
pub(super) fn preloaded_embedder(args: &HookArgs) -> Arc<LocalEmbedder> {
    let embedder = Arc::new(LocalEmbedder::new(
        args.local_model.model_dir.clone(),
        args.local_model.embed_backend.into(),
        crate::project::cache_root(),
        Arc::new(|_: &str| {}),
    ));
    embedder.preload();
    embedder
}

/// Who answers an event, with the embedder it answers with.
pub(super) enum Answerer {
    /// This process, for this one event.
    Process(Arc<LocalEmbedder>),
    /// The warm server, its model loaded once for every event.
    Server(Arc<LocalEmbedder>),
}

/// Answers one event (in this process, or in the warm server): runs the script, logs the event,
/// and returns the line to print, if any.
pub(super) fn answer_event(
    script: &Path,
    args: &HookArgs,
    verbose: bool,
    event: &Value,
    dir: &Path,
    started: Instant,
    answerer: Answerer,
) -> Option<String> {
    let mut fields = serde_json::Map::new();
    fields.insert("event".into(), event["hook_event_name"].clone());
    fields.insert("tool".into(), event["tool_name"].clone());
    fields.insert("file".into(), event["tool_input"]["file_path"].clone());
    fields.insert("session".into(), event["session_id"].clone());
    let (answered_by, embedder) = match answerer {
        Answerer::Process(embedder) => ("process", embedder),
        Answerer::Server(embedder) => ("server", embedder),
    };
    fields.insert("answered_by".into(), json!(answered_by));
    let answer = answer_within(script, args, verbose, event, dir, timeout(args), embedder.clone());
    if answered_by == "process" {
        // The process must not end while the model is still loading on the preload's thread
        // (ONNX Runtime's teardown at exit crashes mid-load): an answer that needed no model (its
        // query's vector cached) waits for the load here.
        let _ = embedder.model();
    }
    fields.insert("latency_ms".into(), json!(started.elapsed().as_secs_f64() * 1000.0));
    let mut output = None;
    match answer {
        Ok(answer) => {
            let context = answer["context"].as_str().unwrap_or_default();
            fields.insert("outcome".into(), json!("ok"));
            fields.insert("injected_chars".into(), json!(context.chars().count()));
            if let Some(record) = answer["record"].as_object() {
                for (key, value) in record {
                    fields.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
            if !context.is_empty() {
                let line = json!({
                    "hookSpecificOutput": { "hookEventName": event["hook_event_name"], "additionalContext": context }
                });
                output = Some(line.to_string());
            }
        }
        Err(error) => {
            fields.insert("outcome".into(), json!("failed"));
            fields.insert("error".into(), json!(format!("{error:#}")));
        }
    }
    log_line(dir, &Value::Object(fields));
    output
}

/// Runs the script on another thread and waits at most `timeout` for its answer.
fn answer_within(
    script: &Path,
    args: &HookArgs,
    verbose: bool,
    event: &Value,
    dir: &Path,
    timeout: Duration,
    embedder: Arc<LocalEmbedder>,
) -> anyhow::Result<Value> {
    fs_err::create_dir_all(dir.join("sessions"))?;
    let work =
        tempfile::Builder::new().prefix(".event-").tempdir_in(dir).context("cannot create the event's folder")?;
    let event_file = work.path().join("event.json");
    fs_err::write(&event_file, serde_json::to_vec(event)?)?;
    let state_file =
        dir.join("sessions").join(format!("{}.json", safe_name(event["session_id"].as_str().unwrap_or("none"))));
    let cwd = event["cwd"].as_str().map(PathBuf::from).filter(|cwd| cwd.is_dir()).unwrap_or_else(|| PathBuf::from("."));
    let out = work.path().join("run");
    let mut script_args = args.script_args.clone();
    script_args.extend(["--event".to_owned(), event_file.display().to_string()]);
    // The session's state, once an earlier event left one.
    if state_file.is_file() {
        script_args.extend(["--state".to_owned(), state_file.display().to_string()]);
    }
    script_args.extend(["--cwd".to_owned(), cwd.display().to_string()]);
    let run_args = RunArgs {
        script: script.to_path_buf(),
        scenario: None,
        out: Some(out.clone()),
        run_id: Some("hook".to_owned()),
        max_operations: crate::script::Limits::default().max_operations,
        local_model: args.local_model.clone(),
        keep_workspaces: false,
        shard: None,
        llm: LlmArgs {
            offline: false,
            llm_cache: crate::cli::LlmCache::ReadWrite,
            llm_cache_dir: None,
            llm_seed: Vec::new(),
            max_cost: None,
            llm_concurrency: 8,
            // A hook waits on the reranker inside someone's session: one retry, then it falls back.
            llm_retries: 1,
            llm_rpm: None,
            llm_tpm: None,
            llm_pricing: None,
        },
        script_args,
    };
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        // The shared embedder is immutable once loaded, so a panicking run leaves it usable.
        let run = std::panic::AssertUnwindSafe(|| super::run::run_with(&run_args, verbose, Some(embedder)));
        let outcome = std::panic::catch_unwind(run);
        let _ = send.send(outcome);
    });
    let outcome = match receive.recv_timeout(timeout) {
        Ok(Ok(outcome)) => outcome?,
        Ok(Err(_)) => anyhow::bail!("the hook panicked"),
        Err(_) => anyhow::bail!("no answer within {:.1} s", timeout.as_secs_f64()),
    };
    if outcome != Outcome::Success {
        anyhow::bail!("the script failed (exit code {}); see its run.log", outcome.exit_code());
    }
    let answer: Value = match fs_err::read(out.join("hook.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes).context("hook.json is not JSON")?,
        Err(_) => return Ok(json!({})),
    };
    if let Some(state) = answer.get("state").filter(|state| state.is_object()) {
        crate::atomic::write(&state_file, serde_json::to_string(state)?.as_bytes())
            .with_context(|| format!("cannot save the session state `{}`", state_file.display()))?;
    }
    Ok(answer)
}

/// Where the hook keeps its log and session states: `$HOST_HOOK_DIR`, else
/// `<cwd>/.claude/host-hook`.
fn hook_dir(cwd: Option<&str>) -> PathBuf {
    if let Some(dir) = std::env::var_os("HOST_HOOK_DIR") {
        return PathBuf::from(dir);
    }
    let base = cwd.map(PathBuf::from).filter(|cwd| cwd.is_dir()).unwrap_or_else(|| PathBuf::from("."));
    base.join(".claude").join("host-hook")
}

/// Appends one line to `events.jsonl`, with the time; a log that cannot be written is skipped.
fn log_line(dir: &Path, line: &Value) {
    let mut line = line.clone();
    if let Some(fields) = line.as_object_mut() {
        fields.insert("time".into(), json!(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)));
    }
    let _ = fs_err::create_dir_all(dir);
    if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("events.jsonl")) {
        let _ = writeln!(file, "{line}");
    }
}

/// A session id as a file name: ASCII letters, digits, `-` and `_`, others as `_`.
fn safe_name(id: &str) -> String {
    let name: String =
        id.chars().take(128).map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if name.is_empty() { "none".to_owned() } else { name }
}

/// `host hook install`: the settings block that runs the memory hook on prompts and on Edit and
/// Write, printed, or merged into the workspace's `.claude/settings.json`.
fn install(args: &HookInstallArgs) -> anyhow::Result<Outcome> {
    let host = std::env::current_exe().context("cannot find the host binary")?;
    let script = match &args.script {
        Some(script) => fs_err::canonicalize(script)?,
        // The project the binary was built in (target/<profile>/host), else the working directory's.
        None => host
            .ancestors()
            .chain(std::env::current_dir().iter().flat_map(|cwd| cwd.ancestors()).collect::<Vec<_>>())
            .map(|dir| dir.join("scripts/hook_memory.rhai"))
            .find(|candidate| candidate.is_file())
            .unwrap_or_else(|| PathBuf::from("scripts/hook_memory.rhai")),
    };
    if !script.is_file() {
        anyhow::bail!("hook script `{}` does not exist; hint: pass --script", script.display());
    }
    let memories = fs_err::canonicalize(&args.memories)
        .with_context(|| format!("the memory store `{}` does not exist", args.memories.display()))?;
    if !memories.join("memories.corpus").is_file() {
        anyhow::bail!(
            "`{}` is not a docs_to_memories run directory (it has no memories.corpus); hint: run `host run scripts/docs_to_memories.rhai -- extract` first",
            memories.display()
        );
    }
    let mut command = guest_path_for_hook()?
        .map(|folders| format!("{GUEST_PATH_VARIABLE}={} ", shell_word(&folders)))
        .unwrap_or_default();
    command.push_str(&format!(
        "{} hook {} -- --memories {}",
        shell_word(&host.display().to_string()),
        shell_word(&script.display().to_string()),
        shell_word(&memories.display().to_string())
    ));
    if args.no_rerank {
        command.push_str(" --no-rerank");
    }
    if let Some(model) = &args.rerank_model {
        command.push_str(&format!(" --rerank-model {}", shell_word(model)));
    }
    let entry = json!({ "type": "command", "command": command, "timeout": 30 });
    let block = json!({
        "hooks": {
            "UserPromptSubmit": [{ "hooks": [entry.clone()] }],
            "PreToolUse": [{ "matcher": "Edit|Write", "hooks": [entry] }],
        }
    });
    if !args.write {
        println!("{}", serde_json::to_string_pretty(&block)?);
        return Ok(Outcome::Success);
    }
    let workspace = match &args.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()?,
    };
    let path = workspace.join(".claude/settings.json");
    let mut settings: Value = match fs_err::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).with_context(|| format!("`{}` is not JSON", path.display()))?,
        Err(_) => json!({}),
    };
    let Some(fields) = settings.as_object_mut() else {
        anyhow::bail!("`{}` is not a JSON object", path.display());
    };
    fields.insert("hooks".into(), block["hooks"].clone());
    fs_err::create_dir_all(workspace.join(".claude"))?;
    crate::atomic::write(&path, serde_json::to_string_pretty(&settings)?.as_bytes())?;
    eprintln!("wrote the memory hook into {}", path.display());
    Ok(Outcome::Success)
}

/// The `HOST_GUEST_PATH` this process was given, each folder made absolute, for the hook's
/// command: Claude Code starts the hook in the agent's working directory, without the variables
/// of the shell that ran `hook install`, and the hook must find the same guests.
fn guest_path_for_hook() -> anyhow::Result<Option<String>> {
    let Some(value) = std::env::var_os(GUEST_PATH_VARIABLE) else {
        return Ok(None);
    };
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let folders: Vec<PathBuf> =
        std::env::split_paths(&value).filter(|dir| !dir.as_os_str().is_empty()).map(|dir| cwd.join(dir)).collect();
    if folders.is_empty() {
        return Ok(None);
    }
    let joined =
        std::env::join_paths(folders).with_context(|| format!("cannot join the folders of {GUEST_PATH_VARIABLE}"))?;
    Ok(Some(joined.to_string_lossy().into_owned()))
}

/// `word` quoted for `sh -c` when it needs it.
fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:@=".contains(c)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
