//! File-system helpers for workspaces: copying a folder with exclusions, snapshotting files
//! (relative path to size and SHA-256), diffing two snapshots, and confining a script's path to
//! a workspace. They never follow a symlink out of the folder they work on, and never decide
//! policy (which folders may be copied is the `fs` read sandbox's call).

use std::collections::BTreeMap;
use std::io;
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use super::{Diff, WorkspaceError};

/// A folder git keeps its history in: never copied, listed or diffed (a workspace is a copy of
/// files, not of their history; `git: true` gives it a fresh one).
const GIT_FOLDER: &str = ".git";

/// What a file looked like when snapshotted; a symlink is hashed by its target, not followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    pub size: u64,
    pub sha256: String,
}

/// Files by path relative to the root, `/`-separated.
pub type Snapshot = BTreeMap<String, FileState>;

/// Patterns leaving paths out of a copy and a snapshot.
#[derive(Debug, Clone, Default)]
pub struct Exclusions {
    /// Each pattern's parts: one part matches any part of a path (`node_modules`, `*.log`);
    /// several match a path from the root and everything under it (`app/EVAL.ts`).
    patterns: Vec<Vec<String>>,
}

impl Exclusions {
    /// Parses `patterns`; `Err` is the first pattern that is empty, absolute or uses `..`.
    pub fn new(patterns: &[String]) -> Result<Self, String> {
        let mut parsed = Vec::new();
        for pattern in patterns {
            let trimmed = pattern.trim_start_matches("./").trim_end_matches('/');
            let parts: Vec<String> = trimmed.split('/').map(str::to_string).collect();
            let plain = parts.iter().all(|part| !part.is_empty() && part != "." && part != "..");
            if trimmed.is_empty() || pattern.starts_with('/') || !plain {
                return Err(pattern.clone());
            }
            parsed.push(parts);
        }
        Ok(Exclusions { patterns: parsed })
    }

    /// Whether the path `relative` (to the root copied or snapshotted) is left out.
    pub fn excludes(&self, relative: &Path) -> bool {
        let parts: Vec<String> =
            relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
        if parts.iter().any(|part| part == GIT_FOLDER) {
            return true;
        }
        self.patterns.iter().any(|pattern| match pattern.as_slice() {
            [name] => parts.iter().any(|part| matches(name, part)),
            path => path.len() <= parts.len() && path.iter().zip(&parts).all(|(pattern, part)| matches(pattern, part)),
        })
    }
}

/// Whether `name` matches `pattern`, where `*` is any run of characters and `?` any one.
/// Iterative with one backtracking point, so no pattern can make it slow.
pub fn matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&wanted) if wanted == '?' || Some(&wanted) == name.get(n) => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_p, star_n)) => {
                    p = star_p + 1;
                    n = star_n + 1;
                    star = Some((star_p, star_n + 1));
                }
                None => return false,
            },
        }
    }
    pattern.iter().skip(p).all(|&c| c == '*')
}

/// Copies `source` into the empty folder `destination`: files with their permissions (so the
/// executable bit), symlinks as symlinks, nothing excluded (an excluded folder is not entered)
/// and never `destination` itself when it lies inside `source`. Both paths are canonical.
pub fn copy(source: &Path, destination: &Path, exclusions: &Exclusions) -> io::Result<()> {
    let walker = WalkDir::new(source).min_depth(1).follow_links(false).sort_by_file_name();
    let walker = walker.into_iter().filter_entry(|entry| {
        entry.path() != destination && !entry.path().strip_prefix(source).is_ok_and(|path| exclusions.excludes(path))
    });
    for entry in walker {
        let entry = entry?;
        let relative = entry.path().strip_prefix(source).map_err(io::Error::other)?;
        let target = destination.join(relative);
        let file_type = entry.file_type();
        if file_type.is_symlink() {
            fs_err::os::unix::fs::symlink(fs_err::read_link(entry.path())?, &target)?;
        } else if file_type.is_dir() {
            fs_err::create_dir(&target)?;
        } else if file_type.is_file() {
            fs_err::copy(entry.path(), &target)?;
        }
        // Sockets, pipes and devices are not work to copy.
    }
    Ok(())
}

/// Every file (and symlink) below `start`, which is `root` or inside it, with its path relative
/// to `root`, sorted; never inside `.git` nor excluded.
pub fn files(root: &Path, start: &Path, exclusions: &Exclusions) -> io::Result<Vec<(String, walkdir::DirEntry)>> {
    let walker = WalkDir::new(start).follow_links(false).sort_by_file_name().into_iter();
    let mut found = Vec::new();
    for entry in
        walker.filter_entry(|entry| !entry.path().strip_prefix(root).is_ok_and(|path| exclusions.excludes(path)))
    {
        let entry = entry?;
        if entry.file_type().is_dir() {
            continue;
        }
        let relative = entry.path().strip_prefix(root).map_err(io::Error::other)?;
        found.push((slashed(relative), entry));
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(found)
}

/// The size and hash of every file below `root`.
pub fn snapshot(root: &Path, exclusions: &Exclusions) -> io::Result<Snapshot> {
    let mut snapshot = Snapshot::new();
    for (relative, entry) in files(root, root, exclusions)? {
        let mut hasher = Sha256::new();
        let size = if entry.file_type().is_symlink() {
            let target = fs_err::read_link(entry.path())?;
            let bytes = target.as_os_str().as_encoded_bytes();
            hasher.update(bytes);
            bytes.len() as u64
        } else {
            io::copy(&mut fs_err::File::open(entry.path())?, &mut hasher)?
        };
        snapshot.insert(relative, FileState { size, sha256: hex::encode(hasher.finalize()) });
    }
    Ok(snapshot)
}

/// What differs from `before` to `after`, each list sorted.
pub fn diff(before: &Snapshot, after: &Snapshot) -> Diff {
    let mut diff = Diff::default();
    for (path, state) in after {
        match before.get(path) {
            None => diff.added.push(path.clone()),
            Some(old) if old != state => diff.modified.push(path.clone()),
            Some(_) => {}
        }
    }
    diff.removed = before.keys().filter(|path| !after.contains_key(*path)).cloned().collect();
    diff
}

/// What an operation needs `relative` to name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A file to read or write: not the root, and a final symlink is followed (so must stay in).
    File,
    /// An entry to remove: not the root, and a final symlink is the entry itself.
    Entry,
    /// Anything to look at, the root (`""`, `.`) included; a final symlink is followed.
    Any,
}

/// The path `relative` names inside the canonical folder `root`, refused when it is absolute,
/// climbs out with `..`, or passes through a symlink leading out (checked on what exists now:
/// the deepest existing folder on the way, and the final symlink where it is followed).
pub fn confine(root: &Path, relative: &str, workspace: &str, access: Access) -> Result<PathBuf, WorkspaceError> {
    let leaves = || WorkspaceError::Leaves { path: relative.to_string(), workspace: workspace.to_string() };
    let links_out = || WorkspaceError::LinksOut { path: relative.to_string(), workspace: workspace.to_string() };
    let mut parts = Vec::new();
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop().ok_or_else(leaves)?;
            }
            Component::RootDir | Component::Prefix(_) => return Err(leaves()),
        }
    }
    if parts.is_empty() {
        return match access {
            Access::Any => Ok(root.to_path_buf()),
            Access::File | Access::Entry => {
                Err(WorkspaceError::NoFile { path: relative.to_string(), workspace: workspace.to_string() })
            }
        };
    }
    let target: PathBuf = parts.iter().fold(root.to_path_buf(), |path, part| path.join(part));
    // Lexically inside; now what the folders on the way resolve to.
    let mut existing = target.parent().unwrap_or(root);
    while existing != root && std::fs::symlink_metadata(existing).is_err() {
        existing = existing.parent().unwrap_or(root);
    }
    let resolved = std::fs::canonicalize(existing).map_err(|_| links_out())?;
    if !resolved.starts_with(root) {
        return Err(links_out());
    }
    let final_link = std::fs::symlink_metadata(&target).is_ok_and(|meta| meta.file_type().is_symlink());
    if final_link && access != Access::Entry {
        // A dangling link is refused too: writing through it would create its target, anywhere.
        let resolved = std::fs::canonicalize(&target).map_err(|_| links_out())?;
        if !resolved.starts_with(root) {
            return Err(links_out());
        }
    }
    Ok(target)
}

fn slashed(relative: &Path) -> String {
    relative.components().map(|part| part.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_whole_names_only() {
        assert!(matches("*.log", "build.log"));
        assert!(matches("EVAL.?s", "EVAL.ts"));
        assert!(matches("a*b*c", "aXXbYYbc"));
        assert!(matches("*", ""));
        assert!(!matches("*.log", "build.log.gz"));
        assert!(!matches("EVAL.ts", "EVAL.tsx"));
        assert!(!matches("?", ""));
        assert!(!matches(&"*a".repeat(20), &"a".repeat(19)), "no exponential blow-up, and no match");
    }

    #[test]
    fn a_name_pattern_excludes_any_part_and_a_path_pattern_its_subtree() {
        let patterns = ["node_modules", "*.log", "app/EVAL.ts", "./gen/"].map(str::to_string);
        let exclusions = Exclusions::new(&patterns).expect("valid");
        for excluded in ["node_modules", "a/node_modules/x.js", "logs/x.log", "app/EVAL.ts", "gen/a/b", ".git/HEAD"] {
            assert!(exclusions.excludes(Path::new(excluded)), "{excluded}");
        }
        for kept in ["app/page.ts", "lib/app/EVAL.ts", "log", "generated/x"] {
            assert!(!exclusions.excludes(Path::new(kept)), "{kept}");
        }
    }

    #[test]
    fn patterns_that_are_empty_absolute_or_climb_are_refused() {
        for bad in ["", "/", "/etc", "../x", "a/../b", "a//b"] {
            assert_eq!(Exclusions::new(&[bad.to_string()]).expect_err("invalid"), bad);
        }
    }

    #[test]
    fn a_diff_sorts_added_modified_and_removed_paths() {
        let state = |text: &str| FileState { size: text.len() as u64, sha256: text.to_string() };
        let before: Snapshot = [("a", "1"), ("b", "2"), ("d", "4")].map(|(k, v)| (k.to_string(), state(v))).into();
        let after: Snapshot = [("c", "3"), ("b", "22"), ("a", "1")].map(|(k, v)| (k.to_string(), state(v))).into();
        let diff = diff(&before, &after);
        assert_eq!((diff.added, diff.modified, diff.removed), (vec!["c".into()], vec!["b".into()], vec!["d".into()]));
    }

    #[test]
    fn confinement_resolves_dots_inside_and_refuses_the_root_for_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().canonicalize().expect("canonical");
        let inside = confine(&root, "a/./b/../c.txt", "ws", Access::File).expect("inside");
        assert_eq!(inside, root.join("a/c.txt"));
        assert_eq!(confine(&root, ".", "ws", Access::Any).expect("root"), root);
        let error = confine(&root, "a/..", "ws", Access::Entry).expect_err("the root is no file");
        assert_eq!(
            error.to_string(),
            "path `a/..` names no file in workspace `ws`; hint: give a path like `src/main.rs`"
        );
    }
}
