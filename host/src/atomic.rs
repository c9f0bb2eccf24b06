//! Atomic file writes: the content goes to a temporary file in the destination's directory,
//! is synced, then renamed over the destination, so a crash never leaves a half-written file.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically, creating parent directories as needed.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    fs_err::create_dir_all(parent)?;
    let mut temporary = tempfile::Builder::new().prefix(".").suffix(".partial").tempfile_in(parent)?;
    temporary.write_all(bytes)?;
    temporary.as_file().sync_all()?;
    temporary.persist(path).map_err(|error| {
        std::io::Error::new(error.error.kind(), format!("cannot rename into `{}`: {}", path.display(), error.error))
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_replaces_the_whole_file_and_leaves_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/out.json");
        write(&path, b"first version, longer").unwrap();
        write(&path, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        let names: Vec<_> =
            std::fs::read_dir(dir.path().join("nested")).unwrap().map(|entry| entry.unwrap().file_name()).collect();
        assert_eq!(names, vec!["out.json"]);
    }
}
