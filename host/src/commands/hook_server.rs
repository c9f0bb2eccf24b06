//! The warm hook server: a `host hook` process that stays up between events with the embedding
//! model loaded, so that an event costs a connection instead of a process start, a model load
//! and a first forward pass.
//!
//! The first `host hook` call finds no server, starts one in the background (its own process
//! group, no terminal, output to nowhere) and answers its event itself; later calls with the same
//! binary, script, arguments and environment hand their event to it over a Unix socket in host's
//! cache folder and print what it answers. The server runs the script for each event exactly as
//! `host hook` would (a fresh run, the script read from disk), logs the event itself, and exits
//! after `--server-idle` seconds without one. Anything that goes wrong on the client's side of
//! the socket means answering in-process, or, once the event was handed over, printing nothing:
//! a hook fails open.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::capabilities::embed::LocalEmbedder;
use crate::cli::HookArgs;

use super::Outcome;
use super::hook::{Answerer, answer_event, preloaded_embedder};

/// The most bytes a request or an answer may have (a Write event carries the whole file).
const MAX_MESSAGE_BYTES: u64 = 32 * 1024 * 1024;

/// The environment variables that change how a hook answers (the model's and the providers'
/// settings, host's own, where programs and caches are); a server answers with the environment
/// it was started with, so these are part of its key. Others (a terminal's, the agent's
/// per-session ones) are not, or every session would start a server of its own.
fn shapes_the_answer(name: &str) -> bool {
    const PREFIXES: [&str; 7] = ["HOST_", "LLM_", "JUDGE_", "ANTHROPIC_", "OPENAI_", "OC_", "HF_"];
    PREFIXES.iter().any(|prefix| name.starts_with(prefix)) || matches!(name, "PATH" | "HOME" | "XDG_CACHE_HOME")
}

/// Which server answers for this binary, script, arguments and environment: a server started
/// under other keys or another build would answer differently.
pub fn key(script: &Path, args: &HookArgs) -> String {
    let mut hasher = Sha256::new();
    let mut part = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    let exe = std::env::current_exe().unwrap_or_default();
    let built = std::fs::metadata(&exe).and_then(|m| m.modified()).ok();
    part(exe.display().to_string().as_bytes());
    part(format!("{:?}", built.and_then(|time| time.duration_since(UNIX_EPOCH).ok())).as_bytes());
    part(script.display().to_string().as_bytes());
    for arg in &args.script_args {
        part(arg.as_bytes());
    }
    part(format!("{:?} {:?} {}", args.local_model.model_dir, args.local_model.embed_backend, args.timeout).as_bytes());
    let mut environment: Vec<(String, String)> = std::env::vars().filter(|(name, _)| shapes_the_answer(name)).collect();
    environment.sort();
    for (name, value) in environment {
        part(name.as_bytes());
        part(value.as_bytes());
    }
    hex::encode(hasher.finalize())[..20].to_string()
}

/// The longest socket path Linux binds (`sun_path` holds 108 bytes with the final NUL).
const MAX_SOCKET_PATH: usize = 107;

/// The server's socket: in host's cache folder, which only its user can enter; `None` when that
/// path is too long to bind (then every event is answered in-process).
fn socket_path(key: &str) -> Option<PathBuf> {
    let path = crate::project::cache_root().join("hook").join(format!("{key}.sock"));
    (path.as_os_str().len() <= MAX_SOCKET_PATH).then_some(path)
}

/// Hands `event` to the server for `key`. `None` when no server took it (answer in-process);
/// otherwise what to print, `None` inside when the server failed or ran out of time.
pub fn ask(key: &str, event: &Value, dir: &Path, timeout: Duration) -> Option<Option<String>> {
    let mut stream = UnixStream::connect(socket_path(key)?).ok()?;
    let request = json!({ "event": event, "dir": dir });
    let sent = stream
        .set_write_timeout(Some(timeout))
        .and_then(|()| stream.write_all(request.to_string().as_bytes()))
        .and_then(|()| stream.shutdown(std::net::Shutdown::Write));
    if sent.is_err() {
        return None;
    }
    let mut reply = Vec::new();
    let answered = stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.take(MAX_MESSAGE_BYTES).read_to_end(&mut reply).map(|_| ()));
    let reply: Option<Value> = answered.ok().and_then(|()| serde_json::from_slice(&reply).ok());
    Some(reply.and_then(|reply| reply["output"].as_str().map(str::to_owned)))
}

/// Starts a server for this hook (under `key`) in the background; a failure to start only costs
/// its warmth.
pub fn start(key: &str, script: &Path, args: &HookArgs) {
    let Ok(exe) = std::env::current_exe() else { return };
    if socket_path(key).is_none() {
        return;
    }
    let mut command = std::process::Command::new(exe);
    command
        .arg("hook")
        .arg("--serve")
        .arg("--timeout")
        .arg(args.timeout.to_string())
        .arg("--server-idle")
        .arg(args.server_idle.to_string());
    if let Some(dir) = &args.local_model.model_dir {
        command.arg("--model-dir").arg(dir);
    }
    command
        .arg("--embed-backend")
        .arg(crate::capabilities::embed::Backend::from(args.local_model.embed_backend).name());
    command
        .arg(script)
        .arg("--")
        .args(&args.script_args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Its own process group, so that whatever ends the agent's hook process leaves it be.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let _ = command.spawn();
}

/// What the server knows between events.
struct Server {
    script: PathBuf,
    args: HookArgs,
    verbose: bool,
    embedder: Arc<LocalEmbedder>,
    /// When the last event was answered, and whether one is being answered now.
    activity: Mutex<(Instant, bool)>,
}

/// `host hook --serve`: answers events on the socket until `--server-idle` passes without one.
pub fn serve(script: &Path, args: &HookArgs, verbose: bool) -> anyhow::Result<Outcome> {
    let Some(path) = socket_path(&key(script, args)) else {
        anyhow::bail!("the hook server's socket path would be too long; hint: set HOST_CACHE_DIR to a shorter folder");
    };
    if let Some(folder) = path.parent() {
        fs_err::create_dir_all(folder)?;
        std::fs::set_permissions(folder, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    }
    // A live server already answers here (two first calls raced): leave it be.
    if UnixStream::connect(&path).is_ok() {
        return Ok(Outcome::Success);
    }
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)?;
    let embedder = preloaded_embedder(args);
    let server = Arc::new(Server {
        script: script.to_path_buf(),
        args: HookArgs {
            install: None,
            script: args.script.clone(),
            timeout: args.timeout,
            local_model: args.local_model.clone(),
            no_server: true,
            server_idle: args.server_idle,
            serve: false,
            script_args: args.script_args.clone(),
        },
        verbose,
        embedder,
        activity: Mutex::new((Instant::now(), false)),
    });
    watch_idleness(server.clone(), path, Duration::from_secs_f64(args.server_idle.clamp(1.0, 86_400.0)));
    for stream in listener.incoming().flatten() {
        if let Ok(mut activity) = server.activity.lock() {
            activity.1 = true;
        }
        answer(&server, stream);
        if let Ok(mut activity) = server.activity.lock() {
            *activity = (Instant::now(), false);
        }
    }
    Ok(Outcome::Success)
}

/// Ends the server (and removes its socket) once it has been idle for `idle`.
fn watch_idleness(server: Arc<Server>, path: PathBuf, idle: Duration) {
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(250));
            let Ok(activity) = server.activity.lock() else { continue };
            if !activity.1 && activity.0.elapsed() >= idle {
                let _ = std::fs::remove_file(&path);
                std::process::exit(0);
            }
        }
    });
}

/// One connection: the request, the event answered as `host hook` would, the reply.
fn answer(server: &Server, mut stream: UnixStream) {
    let started = Instant::now();
    // A client that connects and then sends nothing must not hold the server (and its idle exit).
    let limit = Some(super::hook::timeout(&server.args));
    if stream.set_read_timeout(limit).and_then(|()| stream.set_write_timeout(limit)).is_err() {
        return;
    }
    let mut request = Vec::new();
    if (&mut stream).take(MAX_MESSAGE_BYTES).read_to_end(&mut request).is_err() {
        return;
    }
    let Ok(request) = serde_json::from_slice::<Value>(&request) else { return };
    let (Some(dir), Value::Object(_)) = (request["dir"].as_str(), &request["event"]) else { return };
    let output = answer_event(
        &server.script,
        &server.args,
        server.verbose,
        &request["event"],
        Path::new(dir),
        started,
        Answerer::Server(server.embedder.clone()),
    );
    let _ = stream.write_all(json!({ "output": output }).to_string().as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(timeout: f64) -> (Server, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let args = HookArgs {
            install: None,
            script: None,
            timeout,
            local_model: Default::default(),
            no_server: true,
            server_idle: 60.0,
            serve: false,
            script_args: Vec::new(),
        };
        let embedder =
            Arc::new(LocalEmbedder::new(None, Default::default(), dir.path().to_path_buf(), Arc::new(|_: &str| {})));
        let server = Server {
            script: dir.path().join("hook.rhai"),
            args,
            verbose: false,
            embedder,
            activity: Mutex::new((Instant::now(), false)),
        };
        (server, dir)
    }

    #[test]
    fn a_client_that_connects_and_sends_nothing_does_not_hold_the_server() {
        let (server, _dir) = server(0.2);
        let (mut client, served) = UnixStream::pair().unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            answer(&server, served);
            let _ = done.send(());
        });
        assert!(finished.recv_timeout(Duration::from_secs(30)).is_ok(), "the server gave up on the silent client");
        let mut reply = Vec::new();
        client.read_to_end(&mut reply).unwrap();
        assert!(reply.is_empty(), "nothing is answered to a request never sent");
    }

    #[test]
    fn a_request_that_is_not_an_event_gets_no_answer() {
        let (server, _dir) = server(5.0);
        let (mut client, served) = UnixStream::pair().unwrap();
        client.write_all(br#"{"event": "not an object", "dir": "/tmp"}"#).unwrap();
        client.shutdown(std::net::Shutdown::Write).unwrap();
        answer(&server, served);
        let mut reply = Vec::new();
        client.read_to_end(&mut reply).unwrap();
        assert!(reply.is_empty());
    }
}
