//! Specification of when a guest built from source is built again: only when a file its module
//! is built from changed.

use std::time::{Duration, SystemTime};

use super::*;

/// A guest crate in a workspace, its module built at `built` from `src/lib.rs`, with a dep-info
/// file listing it.
fn guest(built: SystemTime) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let workspace = tempfile::tempdir().unwrap();
    let dir = workspace.path().join("guests/java");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]\nname = \"java\"\n").unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    std::fs::write(workspace.path().join("Cargo.lock"), "").unwrap();
    let wasm = workspace.path().join("target/guests/wasm32-wasip1/release/java.wasm");
    std::fs::create_dir_all(wasm.parent().unwrap()).unwrap();
    std::fs::write(&wasm, b"\0asm").unwrap();
    std::fs::write(wasm.with_extension("d"), format!("{}: {}\n", wasm.display(), dir.join("src/lib.rs").display()))
        .unwrap();
    for path in [dir.join("Cargo.toml"), dir.join("src/lib.rs"), workspace.path().join("Cargo.lock")] {
        set_time(&path, built - Duration::from_secs(60));
    }
    for folder in [dir.clone(), dir.join("src"), dir.join("tests")] {
        std::fs::File::open(folder).unwrap().set_modified(built - Duration::from_secs(60)).unwrap();
    }
    set_time(&wasm, built);
    (workspace, dir, wasm)
}

fn set_time(path: &Path, time: SystemTime) {
    std::fs::File::options().append(true).open(path).unwrap().set_modified(time).unwrap();
}

#[test]
fn a_module_newer_than_every_input_is_not_built_again() {
    let (workspace, dir, wasm) = guest(SystemTime::now());
    assert!(!stale(&wasm, &dir, workspace.path()));
}

#[test]
fn a_newer_test_or_readme_does_not_make_the_module_stale() {
    let built = SystemTime::now() - Duration::from_secs(600);
    let (workspace, dir, wasm) = guest(built);
    std::fs::write(dir.join("tests/fuzz.rs"), "#[test] fn f() {}").unwrap();
    std::fs::write(dir.join("README.md"), "notes").unwrap();
    assert!(!stale(&wasm, &dir, workspace.path()), "neither goes into the module");
}

#[test]
fn a_newer_source_manifest_or_lock_file_does() {
    let built = SystemTime::now() - Duration::from_secs(600);
    for changed in ["guests/java/src/lib.rs", "guests/java/Cargo.toml", "Cargo.lock"] {
        let (workspace, dir, wasm) = guest(built);
        set_time(&workspace.path().join(changed), SystemTime::now());
        assert!(stale(&wasm, &dir, workspace.path()), "{changed}");
    }
}

#[test]
fn a_missing_module_or_a_listed_input_that_is_gone_does() {
    let (workspace, dir, wasm) = guest(SystemTime::now());
    std::fs::remove_file(dir.join("src/lib.rs")).unwrap();
    assert!(stale(&wasm, &dir, workspace.path()), "an input that is gone");
    std::fs::remove_file(&wasm).unwrap();
    assert!(stale(&wasm, &dir, workspace.path()), "no module");
}

#[test]
fn without_dep_info_any_newer_file_of_the_crate_does() {
    let built = SystemTime::now() - Duration::from_secs(600);
    let (workspace, dir, wasm) = guest(built);
    std::fs::remove_file(wasm.with_extension("d")).unwrap();
    assert!(!stale(&wasm, &dir, workspace.path()));
    std::fs::write(dir.join("tests/fuzz.rs"), "").unwrap();
    assert!(stale(&wasm, &dir, workspace.path()), "the safe side: it cannot tell what goes in");
}

#[test]
fn dep_info_lists_its_inputs_with_escaped_spaces() {
    let text = "/w/t/a.wasm: /w/src/lib.rs /w/my\\ guest/src/x.rs\n\n/w/src/lib.rs:\n";
    assert_eq!(dep_info(text), Some(vec![PathBuf::from("/w/src/lib.rs"), PathBuf::from("/w/my guest/src/x.rs")]));
    assert_eq!(dep_info("/w/t/a.wasm:\n"), None);
    assert_eq!(dep_info(""), None);
}

#[test]
fn a_build_that_changed_the_workspaces_lock_file_says_so_and_one_that_did_not_is_silent() {
    let lock = Path::new("/work/project/Cargo.lock");
    let note = lock_note("lang-kotlin", lock, Some(b"old"), Some(b"old\nnew")).expect("a note");
    assert!(note.contains("building guest `lang-kotlin` changed `/work/project/Cargo.lock`"), "{note}");
    assert!(note.contains("commit it with the guest"), "{note}");
    assert_eq!(lock_note("lang-kotlin", lock, Some(b"same"), Some(b"same")), None);
    assert_eq!(lock_note("lang-kotlin", lock, None, Some(b"created by its own first build")), None);
}
