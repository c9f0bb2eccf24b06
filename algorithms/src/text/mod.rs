//! Text work: what experiment scripts used to do character by character in
//! Rhai (sentences, words and stop words, quantities, fact matching, dates, number formatting,
//! Markdown tables, prompt templates, token counts), as pure functions.
//!
//! Each function but `render` (minijinja templates), `token_count` (OpenAI's encodings), the answer readers of `claims.rs` and the ground-truth readers of `truth.rs` (the
//! built-in judge's), `plain` (markdown as plain text, for docs-to-memories) and `porter_stem` (NLTK's Porter stemmer, for LoCoMo's scores) ports a named Rhai original of `scripts/lib/cortex/` rule for rule, edge cases
//! included, so that a script calling it computes what it computed before, to the character;
//! the originals are kept in `host/src/capabilities/text/parity_originals.rhai`, and the
//! `parity_tests.rs` beside them hold the ports to them. Nothing here reads files, the clock or the network.

mod claims;
mod dates;
mod facts;
mod format;
mod plain;
mod porter;
mod quantities;
mod sentences;
mod table;
mod template;
mod tokens;
mod truth;
mod words;

pub use claims::{clauses, numerals, specifics};
pub use dates::{add_days, day_number};
pub use facts::{contains_fact, count_facts, facts_in};
pub use format::{code, fixed, percent, signed};
pub use plain::plain;
pub use porter::porter_stem;
pub use quantities::{Quantity, Value, quantities, quantity, unit};
pub use sentences::{captured_sentences, pieces, sentences, squash};
pub use table::{Align, markdown_table};
pub use template::render;
pub use tokens::{ENCODINGS, token_count};
pub use truth::{stated, truth_facts};
pub use words::{STOP_WORDS, content_words, has_digit, is_stop_word, overlap, stem, terms, whole_number, words};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TextError {
    #[error("`{date}` is not a date of the form YYYY-MM-DD")]
    NotADate { date: String },
    #[error("`{date}` plus {days} days is outside the years 0000 to 9999")]
    DateOutOfRange { date: String, days: i64 },
    #[error("`places` must be between 0 and 9, got {places}")]
    Places { places: i64 },
    #[error("a table needs at least one column; hint: give the header its column names")]
    NoColumns,
    #[error("`rows[{index}]` has {cells} cells, the header has {columns}")]
    RowLength { index: usize, cells: usize, columns: usize },
    #[error(
        "invalid options for `text::table`: `align` has {letters} letters for {columns} columns; hint: one of l, r, c per column"
    )]
    AlignLength { letters: usize, columns: usize },
    #[error("invalid options for `text::table`: `align` letter `{letter}` (column {column}) is not l, r or c")]
    AlignLetter { letter: char, column: usize },
    #[error("template `{name}`{}: {message}", at_line(*line))]
    Template { name: String, line: Option<usize>, message: String },
    #[error("template `{name}`{}: unknown placeholder `{placeholder}`; the values are: {known}", at_line(*line))]
    Placeholder { name: String, line: Option<usize>, placeholder: String, known: String },
    #[error("template `{name}`: the values must be a map of names to values")]
    TemplateValues { name: String },
    #[error("unknown encoding `{encoding}`; the encodings are: {known}")]
    Encoding { encoding: String, known: String },
}

type Result<T> = std::result::Result<T, TextError>;

fn at_line(line: Option<usize>) -> String {
    line.map_or_else(String::new, |line| format!(", line {line}"))
}
