//! Guests built from source: a guest folder holding a Cargo crate is compiled for
//! `wasm32-wasip1` on first use, and again whenever a file the module is built from is newer
//! than the last build: the sources cargo's dep-info lists for it, and the manifests and lock
//! file. A fresh clone therefore needs no separate build step, an edited guest is never run
//! stale, and a file that does not go into the module (a test, a README) never starts a build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use super::GuestError;

pub const TARGET: &str = "wasm32-wasip1";

/// Where guests are built: `target/guests` of the Cargo workspace holding the guest (the
/// nearest folder above it with a `Cargo.lock`), apart from the host's own `target/` so that a
/// build started from inside `cargo test` or `cargo run` never waits on its lock.
pub fn workspace_of(dir: &Path) -> PathBuf {
    dir.ancestors().find(|ancestor| ancestor.join("Cargo.lock").is_file()).unwrap_or(dir).to_path_buf()
}

/// The module built from the crate in `dir`, building it first if it is missing or stale.
pub fn ensure_built(name: &str, dir: &Path, notify: &dyn Fn(&str)) -> Result<PathBuf, GuestError> {
    let package = package_name(dir).ok_or_else(|| GuestError::Build {
        name: name.into(),
        dir: dir.to_path_buf(),
        output: "no `[package] name` in its Cargo.toml".into(),
    })?;
    let workspace = workspace_of(dir);
    let target = workspace.join("target").join("guests");
    let wasm = target.join(TARGET).join("release").join(format!("{}.wasm", package.replace('-', "_")));
    if !stale(&wasm, dir, &workspace) {
        return Ok(wasm);
    }
    notify(&format!("building guest `{name}` for {TARGET} from `{}` (once per change)", dir.display()));
    // A build that changes nothing leaves the module's time as it was: the time it is set to
    // afterwards is this build's start, so a file edited during the build still counts as new.
    let started = SystemTime::now();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let lock = workspace.join("Cargo.lock");
    let lock_before = std::fs::read(&lock).ok();
    let output = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--target", TARGET, "--target-dir"])
        .arg(&target)
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .output()
        .map_err(|source| GuestError::Cargo { name: name.into(), source })?;
    if let Some(note) = lock_note(name, &lock, lock_before.as_deref(), std::fs::read(&lock).ok().as_deref()) {
        notify(&note);
    }
    if !output.status.success() || !wasm.is_file() {
        let text = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        let mut output = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
        if output.contains("wasm32-wasip1") && output.contains("target may not be installed") {
            output.push_str("\nhint: `rustup target add wasm32-wasip1`");
        }
        return Err(GuestError::Build { name: name.into(), dir: dir.to_path_buf(), output });
    }
    // Not recording the time only costs the next call a build that finds nothing to do.
    let _ = std::fs::File::options().append(true).open(&wasm).and_then(|file| file.set_modified(started));
    Ok(wasm)
}

/// A line for the person when building guest `name` changed the workspace's lock file `lock`:
/// the first build of a new workspace member adds it there, a change easy to miss in a tracked
/// file. A lock file the build created is the guest's own new workspace, and says nothing.
fn lock_note(name: &str, lock: &Path, before: Option<&[u8]>, after: Option<&[u8]>) -> Option<String> {
    match (before, after) {
        (Some(before), Some(after)) if before != after => Some(format!(
            "note: building guest `{name}` changed `{}` (a new workspace member is added to it); commit it with the guest",
            lock.display()
        )),
        _ => None,
    }
}

/// Whether the module `wasm`, built from the crate in `dir` of `workspace`, must be built
/// (again): it is missing, or one of its inputs is newer or gone. Its inputs are the files
/// cargo's dep-info (`<module>.d`) lists, with the manifests and the lock file; without
/// dep-info, every file of the crate and of the workspace's guest-sdk and abi.
fn stale(wasm: &Path, dir: &Path, workspace: &Path) -> bool {
    let Some(built) = modified(wasm) else { return true };
    let manifests =
        [dir.join("Cargo.toml"), dir.join("Cargo.lock"), workspace.join("Cargo.lock"), dir.join("build.rs")];
    let manifests_newer = manifests.iter().filter_map(|path| modified(path)).any(|time| time > built);
    let sources_newer = match std::fs::read_to_string(wasm.with_extension("d")).ok().and_then(|text| dep_info(&text)) {
        Some(inputs) => inputs.iter().any(|input| modified(input).is_none_or(|time| time > built)),
        None => [dir.to_path_buf(), workspace.join("guest-sdk"), workspace.join("abi")]
            .iter()
            .filter_map(|source| newest_in(source))
            .any(|time| time > built),
    };
    manifests_newer || sources_newer
}

/// The inputs a cargo dep-info file lists for its first target (`target: input input …`, a
/// space inside a path escaped as `\ `); `None` when it lists none.
fn dep_info(text: &str) -> Option<Vec<PathBuf>> {
    let line = text.lines().find(|line| !line.trim().is_empty())?;
    let (_, inputs) = line.split_once(": ")?;
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = inputs.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' => {
                if !current.is_empty() {
                    paths.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    (!paths.is_empty()).then_some(paths)
}

fn package_name(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    let manifest: toml::Table = toml::from_str(&text).ok()?;
    manifest.get("package")?.get("name")?.as_str().map(str::to_string)
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|metadata| metadata.modified()).ok()
}

/// The latest modification time of any file under `dir`, skipping build output.
fn newest_in(dir: &Path) -> Option<SystemTime> {
    let mut newest = modified(dir);
    let mut pending = vec![dir.to_path_buf()];
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if entry.file_name() != "target" && entry.file_name() != ".git" {
                    pending.push(path);
                }
            } else {
                newest = newest.max(modified(&path));
            }
        }
    }
    newest
}

#[cfg(test)]
#[path = "source_tests.rs"]
mod tests;
