//! Every file in `fixtures/imports/go/` gives exactly the imports in the `.json` beside it
//! (see `guest_sdk::testing::check_corpus`).

use std::path::Path;

#[test]
fn every_corpus_file_gives_its_expected_imports() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/imports/go");
    match guest_sdk::testing::check_corpus(&folder, lang_go::extract_imports) {
        Ok(files) => assert!(files >= 8, "only {files} corpus files in {}", folder.display()),
        Err(report) => panic!("{report}"),
    }
}
