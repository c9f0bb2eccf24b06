//! The guest calling convention, through the host library: a source's `content` crosses as raw
//! text and answers exactly what it answers as JSON, and a guest that breaks the convention
//! (a reply outside its memory, a reply that is not UTF-8, an allocator that lies, an old ABI)
//! gets a clear error, never a panic or a read outside its memory.

use std::path::{Path, PathBuf};

use host::commands::{Scratch, scratch_capabilities};
use host::wasm::{GuestError, Input};
use serde_json::{Value, json};

use crate::support::repo_root;

/// Capabilities for the project at `root`, whose `guests/` the registry serves.
fn project(root: &Path) -> Scratch {
    scratch_capabilities(root, false).expect("capabilities")
}

/// The project whose guests are the test guests of `tests/guests`.
fn test_guests() -> Scratch {
    project(&repo_root().join("tests"))
}

fn fixtures() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for language in ["typescript", "python", "go", "rust"] {
        let folder = repo_root().join("fixtures/imports").join(language);
        for entry in std::fs::read_dir(&folder).expect("fixture folder") {
            let path = entry.expect("fixture entry").path();
            if !matches!(path.extension().and_then(|extension| extension.to_str()), Some("json" | "md")) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn raw_content_gives_the_same_imports_as_json_content_for_every_fixture() {
    let scratch = project(&repo_root());
    let guests = &scratch.capabilities.guests;
    let files = fixtures();
    assert!(files.len() >= 32, "at least 8 fixtures per language");
    for file in files {
        let name = file.file_name().expect("file name").to_string_lossy().into_owned();
        let content = std::fs::read_to_string(&file).expect("fixture");
        let input = json!({ "path": name, "content": content });
        let guest = guests.for_path(&name).expect("routing").expect("a strategy for every fixture");
        let raw = guest.call("extract_imports", &input).expect("raw call");
        let as_json = guest.call_input("extract_imports", &Input::json(&input).expect("JSON")).expect("JSON call");
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(file.with_file_name(format!("{name}.json"))).expect("expected"),
        )
        .expect("expected JSON");
        assert_eq!(raw, as_json, "{name}: raw and JSON content disagree");
        assert_eq!(raw, expected, "{name}");
    }
}

#[test]
fn a_guest_sees_the_same_input_whether_content_crosses_raw_or_as_json() {
    let scratch = test_guests();
    let hostile = scratch.capabilities.guests.load("hostile").expect("hostile guest");
    let input =
        json!({ "path": "a \"quoted\" path", "content": "tab\there\nquote \" backslash \\ é 🦀 \u{0}", "n": 1 });
    assert_eq!(hostile.call("echo", &input).expect("raw"), input);
    assert_eq!(hostile.call_input("echo", &Input::json(&input).expect("JSON")).expect("JSON"), input);
    let fields = json!({ "n": 2 });
    let apart = Input::with_content(fields.as_object().expect("object"), "text").expect("input");
    assert_eq!(hostile.call_input("echo", &apart).expect("apart"), json!({ "n": 2, "content": "text" }));
}

/// What a trap says; any other error in full, which then fails the comparison.
fn trap_detail(error: GuestError) -> String {
    match error {
        GuestError::Trap { detail, .. } => detail,
        other => format!("not a trap: {other}"),
    }
}

#[test]
fn a_reply_outside_the_guests_memory_is_refused_and_the_guest_keeps_serving() {
    let scratch = test_guests();
    let hostile = scratch.capabilities.guests.load("hostile").expect("hostile guest");
    let input = json!({ "path": "a.ts", "content": "import 'x'" });

    let outside = trap_detail(hostile.call("reply_outside", &input).expect_err("refused"));
    assert_eq!(outside, "the reply at 0xffffff00+200 lies outside the guest's memory");
    let past_end = trap_detail(hostile.call("reply_past_end", &input).expect_err("refused"));
    assert!(
        past_end.starts_with("the reply at 0x") && past_end.ends_with("+64 lies outside the guest's memory"),
        "{past_end}"
    );

    assert_eq!(hostile.call("echo", &input).expect("still serving"), input);
}

#[test]
fn a_reply_that_is_not_utf8_is_a_bad_reply_not_a_panic() {
    let scratch = test_guests();
    let hostile = scratch.capabilities.guests.load("hostile").expect("hostile guest");
    let error = hostile.call("reply_not_utf8", &json!({ "content": "x" })).expect_err("refused");
    assert!(matches!(error, GuestError::BadReply { .. }), "{error}");
    let message = error.to_string();
    assert!(message.starts_with("guest `hostile`: `reply_not_utf8` answered something that is not a reply"));
    assert!(message.contains("invalid unicode code point"), "{message}");
}

#[test]
fn an_allocator_that_answers_too_short_a_region_gets_nothing_written_past_its_memory() {
    let scratch = test_guests();
    let guest = scratch.capabilities.guests.load("bad-alloc").expect("bad-alloc guest");
    let error = guest.call("take", &json!({ "path": "a.go", "content": "x".repeat(100) })).expect_err("refused");
    // `{"path":"a.go"}` is 15 bytes, the content 100: the region asked for runs 99 bytes past the end.
    assert_eq!(trap_detail(error), "the input at 0xfff0+115 lies outside the guest's memory");
}

#[test]
fn a_guest_built_against_abi_version_1_is_told_to_rebuild() {
    let scratch = test_guests();
    let error = scratch.capabilities.guests.load("abi-v1").expect_err("refused");
    assert!(matches!(error, GuestError::AbiMismatch { guest: 1, host: 2, .. }), "{error}");
    assert_eq!(
        error.to_string(),
        "guest `abi-v1` speaks ABI version 1, this host speaks 2; hint: rebuild the guest against this host's guest-sdk"
    );
}

#[test]
fn a_callable_of_the_wrong_type_is_refused_at_load_naming_the_export() {
    let scratch = test_guests();
    let error = scratch.capabilities.guests.load("two-params").expect_err("refused");
    assert_eq!(
        error.to_string(),
        "guest `two-params` is not a host guest: export `guest:hello` is not a function of type (i32, i32, i32) -> i64; \
         hint: build it with guest-sdk's `export!` macro"
    );
}
