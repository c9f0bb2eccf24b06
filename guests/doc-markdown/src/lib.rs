//! Guest module: a documentation file (the Next.js docs' markdown) split into its frontmatter and
//! its sections, each with its code blocks, callouts and router, as `parse_markdown(document)`.
//! See `abi::markdown` for the format. It reads markdown the way those docs write it, not all of
//! CommonMark: ATX headings only, no setext headings, lists or HTML blocks.
//!
//! `document.rs` walks the lines; `lines.rs` says what one line is; `frontmatter.rs` and
//! `callout.rs` read those two constructs.

mod callout;
mod document;
mod frontmatter;
mod lines;

use guest_sdk::Failure;
use guest_sdk::markdown::{Document, Parsed};

guest_sdk::export!(parse_markdown);

/// The frontmatter and sections of `document`. Never fails: whatever is not recognised is
/// content, so any text has a parse.
pub fn parse_markdown(document: Document<'_>) -> Result<Parsed, Failure> {
    Ok(document::parse(&document.content))
}
