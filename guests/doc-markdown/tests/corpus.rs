//! Every `fixtures/markdown/*.md` file (the README aside) parses to exactly the `.md.json` beside
//! it. `guest_sdk::testing::check_corpus` is for import strategies (it reads `Imports` and skips
//! `.md` files), so this is its small equivalent for `Parsed`.

use std::path::{Path, PathBuf};

use guest_sdk::markdown::{Document, Parsed};

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/markdown")
}

/// The corpus inputs: every `.md` file but the README, sorted so that reports come in order.
fn corpus_files(folder: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        let is_input = path.extension().is_some_and(|extension| extension == "md")
            && path.file_name().is_some_and(|name| name != "README.md");
        if is_input {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// `Ok` when `file` parses to its expected output, which must also be pretty-printed with
/// two-space indentation (so hand edits stay reviewable); otherwise what is wrong.
fn check_file(file: &Path) -> Result<(), String> {
    let name = file.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let content = std::fs::read_to_string(file).map_err(|error| format!("{name}: {error}"))?;
    let expected_path = file.with_file_name(format!("{name}.json"));
    let text = std::fs::read_to_string(&expected_path).map_err(|error| format!("{name}.json: {error}"))?;
    let expected: Parsed =
        serde_json::from_str(&text).map_err(|error| format!("{name}.json does not decode: {error}"))?;
    if serde_json::to_string_pretty(&expected).ok().as_deref() != Some(text.trim_end()) {
        return Err(format!("{name}.json is not pretty-printed with two-space indentation"));
    }
    let actual = doc_markdown::parse_markdown(Document { path: name.as_str().into(), content: content.into() })
        .map_err(|failure| format!("{name}: parse_markdown failed: {failure}"))?;
    if actual != expected {
        let actual = serde_json::to_string_pretty(&actual).unwrap_or_else(|error| error.to_string());
        return Err(format!("{name}: the parse differs from {name}.json; it is:\n{actual}"));
    }
    Ok(())
}

#[test]
fn every_corpus_file_parses_to_its_expected_json() {
    let files = corpus_files(&folder()).unwrap();
    assert!(files.len() >= 6, "only {} corpus files in {}", files.len(), folder().display());
    let problems: Vec<String> = files.iter().filter_map(|file| check_file(file).err()).collect();
    assert!(
        problems.is_empty(),
        "{} of {} corpus files have problems:\n{}",
        problems.len(),
        files.len(),
        problems.join("\n")
    );
}
