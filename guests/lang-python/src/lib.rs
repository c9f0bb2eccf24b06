//! Guest module: the imports of a Python source file, as `extract_imports(path, content)`.
//! The scanner is in `scan.rs`; this file is the guest's export and its language tag.

mod scan;

use guest_sdk::Failure;
use guest_sdk::imports::{Imports, Source};

guest_sdk::export!(extract_imports);

/// The imports of `source`, in source order, each once (see `abi::imports` for the format).
pub fn extract_imports(source: Source<'_>) -> Result<Imports, Failure> {
    Ok(Imports { language: scan::language(&source.path).to_string(), imports: scan::imports(&source.content) })
}
