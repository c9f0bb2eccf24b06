//! A file's sha256, remembered by path, size and modification time, so that a big file the host
//! reads on every start (the embedding weights: 90 MB, about 60 ms to hash) is hashed once.
//!
//! A file of another size or modification time is hashed again. As with git's index, a change
//! that keeps both is not noticed; the weights live in host's cache and are replaced whole.

use std::path::Path;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Stamp {
    path: String,
    bytes: u64,
    modified_ns: u128,
    sha256: String,
}

/// The sha256 of the file at `path`, from a stamp in `stamps` when the file has not changed
/// since; a stamp that cannot be read or written only costs the hashing.
pub fn sha256_of(path: &Path, stamps: &Path) -> std::io::Result<String> {
    let canonical = std::fs::canonicalize(path)?;
    let metadata = std::fs::metadata(&canonical)?;
    let modified_ns = metadata.modified()?.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_nanos());
    let shown = canonical.display().to_string();
    let stamp_file = stamps.join(format!("{}.json", &hex::encode(Sha256::digest(shown.as_bytes()))[..32]));
    if let Some(stamp) = std::fs::read(&stamp_file).ok().and_then(|bytes| serde_json::from_slice::<Stamp>(&bytes).ok())
        && stamp.path == shown
        && stamp.bytes == metadata.len()
        && stamp.modified_ns == modified_ns
    {
        return Ok(stamp.sha256);
    }
    let mut hasher = Sha256::new();
    std::io::copy(&mut std::fs::File::open(&canonical)?, &mut hasher)?;
    let sha256 = hex::encode(hasher.finalize());
    let stamp = Stamp { path: shown, bytes: metadata.len(), modified_ns, sha256: sha256.clone() };
    if std::fs::create_dir_all(stamps).is_ok()
        && let Ok(bytes) = serde_json::to_vec(&stamp)
    {
        let _ = crate::atomic::write(&stamp_file, &bytes);
    }
    Ok(sha256)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sha(bytes: &[u8]) -> String {
        hex::encode(Sha256::digest(bytes))
    }

    #[test]
    fn a_file_is_hashed_once_and_its_stamp_answers_after() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("weights.bin");
        std::fs::write(&file, b"first").unwrap();
        let stamps = dir.path().join("stamps");
        assert_eq!(sha256_of(&file, &stamps).unwrap(), sha(b"first"));
        // A stamp is what answers now: doctor it, and the doctored hash comes back.
        let stamp = std::fs::read_dir(&stamps).unwrap().next().unwrap().unwrap().path();
        let text = std::fs::read_to_string(&stamp).unwrap().replace(&sha(b"first"), "remembered");
        std::fs::write(&stamp, text).unwrap();
        assert_eq!(sha256_of(&file, &stamps).unwrap(), "remembered");
    }

    #[test]
    fn a_file_of_another_size_is_hashed_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("weights.bin");
        let stamps = dir.path().join("stamps");
        std::fs::write(&file, b"first").unwrap();
        sha256_of(&file, &stamps).unwrap();
        std::fs::write(&file, b"second, longer").unwrap();
        assert_eq!(sha256_of(&file, &stamps).unwrap(), sha(b"second, longer"));
    }

    #[test]
    fn an_unwritable_stamp_folder_still_gives_the_hash() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("weights.bin");
        std::fs::write(&file, b"data").unwrap();
        // A file where the folder should be.
        let stamps = dir.path().join("stamps");
        std::fs::write(&stamps, b"").unwrap();
        assert_eq!(sha256_of(&file, &stamps).unwrap(), sha(b"data"));
    }
}
