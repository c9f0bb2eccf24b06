//! What every end-to-end test needs: a throwaway project, the real `host` binary run in it,
//! stable text for snapshots, and DuckDB (through its Python package) to read results.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

/// The repository root (where `scripts/`, `fixtures/` and `tests/` are).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the host crate sits in the repository root").to_path_buf()
}

/// A temporary project: a folder with `scripts/`, into which tests write files.
pub struct TempProject {
    pub dir: tempfile::TempDir,
}

impl TempProject {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        std::fs::create_dir_all(dir.path().join("scripts/lib")).expect("scripts folder");
        TempProject { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, relative: &str, content: &str) -> &Self {
        let path = self.dir.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent folder")).expect("parent folder");
        std::fs::write(path, content).expect("write a project file");
        self
    }

    /// Copies the shipped script modules `scripts/lib/<name>.rhai` into the project.
    pub fn with_libraries(&self, names: &[&str]) -> &Self {
        for name in names {
            let path = format!("scripts/lib/{name}.rhai");
            self.write(&path, &std::fs::read_to_string(repo_root().join(&path)).expect("a shipped module"));
        }
        self
    }

    /// Copies the files of the shipped folder `path` (not its subfolders) into the project.
    pub fn with_folder(&self, path: &str) -> &Self {
        for entry in std::fs::read_dir(repo_root().join(path)).expect("a shipped folder").flatten() {
            if entry.path().is_file() {
                let name = format!("{path}/{}", entry.file_name().to_string_lossy());
                self.write(&name, &std::fs::read_to_string(entry.path()).expect("a shipped file"));
            }
        }
        self
    }

    /// Runs `host` with `args` in the project folder.
    pub fn host(&self, args: &[&str]) -> Run {
        host_in(self.dir.path(), args)
    }

    /// Runs `host` with `args` and environment changes (`None` removes a variable).
    pub fn host_with_env(&self, args: &[&str], env: &[(&str, Option<&str>)]) -> Run {
        host_in_with(self.dir.path(), args, env)
    }

    pub fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(relative)).expect("read a project file")
    }
}

/// Runs the real binary with plain output, as CI sees it.
pub fn host_in(cwd: &Path, args: &[&str]) -> Run {
    host_in_with(cwd, args, &[])
}

/// Caches the binary writes during the suite (LLM answers, embeddings) go to a temporary folder,
/// so tests neither read nor fill the user's `~/.cache/host`. Registry packages are the
/// exception: pinned and immutable, they are read from host's own cache, where `tests/run`
/// fetched them before the suite (the Claude Code CLI alone is 175 MB; ONNX Runtime's library,
/// under `runtimes`, 29 MB; mem0's Python environment, under `pip`).
fn test_cache() -> &'static Path {
    static CACHE: OnceLock<tempfile::TempDir> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let cache = tempfile::tempdir().expect("temporary cache folder");
            for shared in ["npm", "npm-install", "pip", "runtimes"] {
                let real = host::project::cache_root().join(shared);
                std::fs::create_dir_all(&real).expect("host's package cache");
                std::os::unix::fs::symlink(&real, cache.path().join(shared)).expect("link the package cache");
            }
            cache
        })
        .path()
}

/// The local embedding model, found once the way `host` finds it (`tests/run` fetches it
/// before the suite starts), and handed to every run so that none looks in a cache of its own.
pub fn model_dir() -> &'static Path {
    static MODEL: OnceLock<PathBuf> = OnceLock::new();
    MODEL.get_or_init(|| {
        let notify = |line: &str| eprintln!("{line}");
        host::capabilities::embed::model::locate(None, &host::project::cache_root(), &notify)
            .expect("the embedding model (run `tests/run`, which fetches it)")
            .path
    })
}

/// ONNX Runtime's library, found once the way `host` finds it (`tests/run` fetches it), and
/// handed to every run, so that a test with a cache folder of its own fetches nothing.
pub fn onnxruntime_library() -> &'static Path {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        let notify = |line: &str| eprintln!("{line}");
        host::capabilities::embed::onnxruntime::locate(&host::project::cache_root(), &notify)
            .expect("ONNX Runtime's library (run `tests/run`, which fetches it)")
            .path
    })
}

/// The real binary in `cwd` with `args`, as every test runs it (plain output, the suite's caches,
/// the model and ONNX Runtime found once), and `env` on top: `Some` sets a variable, `None`
/// removes it.
pub fn host_command(cwd: &Path, args: &[&str], env: &[(&str, Option<&str>)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_host"));
    command
        .args(args)
        .current_dir(cwd)
        .env("CI", "1")
        .env("NO_COLOR", "1")
        .env("HOST_CACHE_DIR", test_cache())
        .env("HOST_MODEL_DIR", model_dir())
        .env("HOST_ONNXRUNTIME_LIB", onnxruntime_library())
        // `host hook` answers in its own process unless a test asks for the warm server.
        .env("HOST_HOOK_NO_SERVER", "1")
        .env_remove("RUST_BACKTRACE");
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    command
}

/// [`host_in`] with environment changes: `Some` sets a variable, `None` removes it.
pub fn host_in_with(cwd: &Path, args: &[&str], env: &[(&str, Option<&str>)]) -> Run {
    Run::from(host_command(cwd, args, env).output().expect("run the host binary"))
}

/// `host` in `cwd` with `stdin` written to its standard input (a hook event), and `env` as in
/// [`host_in_with`].
pub fn host_with_stdin(cwd: &Path, args: &[&str], env: &[(&str, Option<&str>)], stdin: &str) -> Run {
    use std::io::Write;
    let mut command = host_command(cwd, args, env);
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("start the host binary");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.as_bytes()).expect("write stdin");
    }
    Run::from(child.wait_with_output().expect("wait for the host binary"))
}

/// A finished `host` process.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(output: Output) -> Self {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Panics with the process output unless it exited with `code`.
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr);
        self
    }
}

/// Replaces what changes from run to run (ids, times, temp paths, hashes) with fixed words.
pub fn stable(text: &str, project: &Path) -> String {
    let mut text =
        text.replace(env!("CARGO_BIN_EXE_host"), "[HOST]").replace(&project.display().to_string(), "[PROJECT]");
    if let Ok(canonical) = project.canonicalize() {
        text = text.replace(&canonical.display().to_string(), "[PROJECT]");
    }
    let patterns = [
        (r"\b\d{8}-\d{6}-[0-9a-f]{6}\b", "[RUN_ID]"),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", "[TIME]"),
        (r"in \d+\.\d+s", "in [SECONDS]s"),
        (r#""duration_seconds": \d+(\.\d+)?"#, r#""duration_seconds": [SECONDS]"#),
        (r"\b[0-9a-f]{64}\b", "[SHA256]"),
        (r"\b[0-9a-f]{40}\b", "[COMMIT]"),
        (r#""pid": \d+"#, r#""pid": [PID]"#),
        (r#""start_ticks": \d+"#, r#""start_ticks": [TICKS]"#),
        (r#""boot_id": "[^"]*""#, r#""boot_id": "[BOOT_ID]""#),
        (r#""host_name": "[^"]*""#, r#""host_name": "[HOST_NAME]""#),
    ];
    for (pattern, replacement) in patterns {
        text = regex_lite::Regex::new(pattern).expect("a valid pattern").replace_all(&text, replacement).into_owned();
    }
    text
}

/// A Markdown table's text with the padding that lines its columns up taken out (runs of spaces
/// become one, runs of dashes three), so a test can look for a row by its cells.
pub fn unpadded(text: &str) -> String {
    let padding = regex_lite::Regex::new(r" {2,}|-{4,}").expect("a valid pattern");
    padding
        .replace_all(text, |found: &regex_lite::Captures<'_>| if found[0].starts_with(' ') { " " } else { "---" })
        .into_owned()
}

/// The Python that has DuckDB: `HOST_TEST_PYTHON` (set by `tests/run`), else `python3`.
fn python() -> String {
    std::env::var("HOST_TEST_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Runs `sql` in DuckDB and returns `{"columns": [[name, type]...], "rows": [[...]...]}`.
pub fn duckdb(sql: &str) -> Value {
    let script = repo_root().join("tests/duckdb_query.py");
    let output = Command::new(python()).arg(script).arg(sql).output().expect("run python for DuckDB");
    assert!(
        output.status.success(),
        "DuckDB query failed (run the suite with `tests/run`, which installs the duckdb package)\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("DuckDB helper prints JSON")
}

/// The path of run table `name` (`<run>/<name>.parquet`), for DuckDB queries.
pub fn table(run: &Path, name: &str) -> String {
    run.join(format!("{name}.parquet")).display().to_string()
}

/// Runs `script` offline (no model or Cortex keys) into `out/run` with the script's `extra`
/// arguments, expecting success; returns the run directory.
pub fn offline_run(script: &str, out: &Path, extra: &[&str]) -> PathBuf {
    let run = out.join("run");
    let run_text = run.display().to_string();
    let mut args = vec!["run", script, "--out", &run_text, "--"];
    args.extend_from_slice(extra);
    host_in_with(&repo_root(), &args, &[("LLM_API_KEY", None), ("ANTHROPIC_API_KEY", None), ("CORTEX_BASE_URL", None)])
        .expect_code(0);
    run
}
