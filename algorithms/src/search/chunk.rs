//! Chunkers: the Cortex benchmark's fixed character windows (cortex-benchmark-original.md §2,
//! Phase 3) and OpenClaw's line-aware chunker with its overlap carry (openclaw-memory.md §2.2).
//!
//! Lengths are JavaScript lengths (UTF-16 code units), and for OpenClaw from 2026.3.31 CJK
//! characters weigh 4. A cut that JavaScript would make inside a surrogate pair is moved back to
//! the start of that character (see `text.rs`); everything else follows the references exactly.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::text::{Utf16Cursor, js_trim, utf16_len};

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ChunkError {
    #[error("chunk window `size` must be at least 1")]
    ZeroSize,
    #[error("chunk `overlap` ({overlap}) must be smaller than `size` ({size}); hint: the window would never advance")]
    OverlapNotSmallerThanSize { size: usize, overlap: usize },
}

/// The Cortex benchmark's windows: 1,600 characters, 320 overlap (stride 1,280), each window
/// trimmed and kept only if longer than 20 characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CharWindowOptions {
    pub size: usize,
    pub overlap: usize,
    /// A window is kept only if it has more than this many characters (after trimming).
    pub min_chars: usize,
    /// Apply JavaScript's `trim()` to each window.
    pub trim: bool,
}

impl Default for CharWindowOptions {
    fn default() -> Self {
        Self { size: 1600, overlap: 320, min_chars: 20, trim: true }
    }
}

/// One kept window. `index` counts kept windows from 0 (the benchmark's id is
/// `<sessionId>:<index>`); `start`/`end` are the window's UTF-16 offsets before trimming.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CharChunk {
    pub index: usize,
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Windows at offsets 0, stride, 2·stride, … up to and including the first window that reaches
/// the end of the text; no window starts after that.
///
/// The reference only gives "window 1,600, overlap 320, stride 1,280". Stopping at the end is
/// what its V1 numbers require: 8 transcripts of 1,009–1,887 characters gave 9 chunks, while
/// also starting a window at every stride below the length would give one extra chunk for each
/// transcript longer than 1,280 characters.
pub fn char_windows(text: &str, options: &CharWindowOptions) -> Result<Vec<CharChunk>, ChunkError> {
    if options.size == 0 {
        return Err(ChunkError::ZeroSize);
    }
    if options.overlap >= options.size {
        return Err(ChunkError::OverlapNotSmallerThanSize { size: options.size, overlap: options.overlap });
    }
    let stride = options.size - options.overlap;
    let total = utf16_len(text);
    let mut starts = Utf16Cursor::new(text);
    let mut ends = Utf16Cursor::new(text);
    let mut chunks = Vec::new();
    let mut start = 0;
    while start < total {
        let end = start.saturating_add(options.size).min(total);
        let (start_byte, start_unit) = starts.seek(start);
        let (end_byte, end_unit) = ends.seek(end);
        let window = text.get(start_byte..end_byte).unwrap_or_default();
        let kept = if options.trim { js_trim(window) } else { window };
        if utf16_len(kept) > options.min_chars {
            chunks.push(CharChunk { index: chunks.len(), start: start_unit, end: end_unit, text: kept.to_owned() });
        }
        if end >= total {
            break;
        }
        start += stride;
    }
    Ok(chunks)
}

/// How OpenClaw measures a segment against its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CharWeighting {
    /// UTF-16 length, before 2026.3.31.
    Utf16,
    /// From 2026.3.31 (`estimateStringChars`): each CJK character counts 4, and a segment heavier
    /// than the window is re-split into pieces of `tokens` code units.
    #[default]
    Cjk,
}

/// OpenClaw's `chunking.tokens` / `chunking.overlap` (§6: 400 / 80), and the weighting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LineChunkOptions {
    pub tokens: usize,
    /// Clamped to `[0, tokens − 1]` (§6).
    pub overlap: usize,
    pub weighting: CharWeighting,
}

impl Default for LineChunkOptions {
    fn default() -> Self {
        Self { tokens: 400, overlap: 80, weighting: CharWeighting::default() }
    }
}

/// One chunk: 1-based line numbers of its first and last segment, and its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineChunk {
    pub start_line: usize,
    pub end_line: usize,
    pub text: String,
}

struct Entry<'a> {
    text: &'a str,
    line: usize,
    size: usize,
}

/// OpenClaw's `chunkMarkdown` (§2.2). Lines are split on `\n` only (a `\r` stays in its line);
/// a line longer than the window is cut into pieces that keep its line number; a segment costs
/// its length + 1. When the next segment would overflow the window, the chunk is emitted and
/// whole entries are carried back from its end until they reach the overlap; at least one entry
/// is always carried, however long, so a chunk can exceed the window (TV1c). Chunks whose text
/// is empty after `trim()` are dropped.
pub fn line_chunks(content: &str, options: &LineChunkOptions) -> Vec<LineChunk> {
    let max_chars = options.tokens.saturating_mul(4).max(32);
    let overlap_chars = options.overlap.min(options.tokens.saturating_sub(1)).saturating_mul(4);
    let fine_step = options.tokens.max(1);
    let mut chunks = Vec::new();
    let mut current: Vec<Entry<'_>> = Vec::new();
    let mut current_chars = 0usize;
    for (index, line) in content.split('\n').enumerate() {
        for segment in segments(line, max_chars, fine_step, options.weighting) {
            let size = estimate_chars(segment, options.weighting) + 1;
            if current_chars + size > max_chars && !current.is_empty() {
                emit(&current, &mut chunks);
                current_chars = carry_overlap(&mut current, overlap_chars);
            }
            current.push(Entry { text: segment, line: index + 1, size });
            current_chars += size;
        }
    }
    emit(&current, &mut chunks);
    chunks
}

/// Keeps the last whole entries whose sizes reach `overlap_chars` (at least one); returns their
/// total size. No overlap empties the chunk.
fn carry_overlap(current: &mut Vec<Entry<'_>>, overlap_chars: usize) -> usize {
    if overlap_chars == 0 {
        current.clear();
        return 0;
    }
    let mut kept_size = 0;
    let mut first_kept = current.len();
    for (index, entry) in current.iter().enumerate().rev() {
        kept_size += entry.size;
        first_kept = index;
        if kept_size >= overlap_chars {
            break;
        }
    }
    current.drain(..first_kept);
    kept_size
}

fn emit(entries: &[Entry<'_>], chunks: &mut Vec<LineChunk>) {
    let (Some(first), Some(last)) = (entries.first(), entries.last()) else { return };
    let text = entries.iter().map(|entry| entry.text).collect::<Vec<_>>().join("\n");
    if !js_trim(&text).is_empty() {
        chunks.push(LineChunk { start_line: first.line, end_line: last.line, text });
    }
}

/// A line's segments: pieces of `max_chars` UTF-16 units (an empty line is one empty segment),
/// each re-split into pieces of `fine_step` units when its CJK weight exceeds the window. The
/// fine cut never splits a surrogate pair (OpenClaw extends it by one unit).
fn segments(line: &str, max_chars: usize, fine_step: usize, weighting: CharWeighting) -> Vec<&str> {
    if line.is_empty() {
        return vec![""];
    }
    let total = utf16_len(line);
    let mut coarse = Vec::new();
    let mut cursor = Utf16Cursor::new(line);
    let mut start_byte = 0;
    let mut target = max_chars;
    while target < total {
        let (byte, _) = cursor.seek(target);
        coarse.push(line.get(start_byte..byte).unwrap_or_default());
        start_byte = byte;
        target += max_chars;
    }
    coarse.push(line.get(start_byte..).unwrap_or_default());
    if weighting == CharWeighting::Utf16 {
        return coarse;
    }
    let mut result = Vec::with_capacity(coarse.len());
    for piece in coarse {
        if estimate_chars(piece, weighting) > max_chars {
            result.extend(fine_pieces(piece, fine_step));
        } else {
            result.push(piece);
        }
    }
    result
}

fn fine_pieces(piece: &str, step: usize) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut units = 0;
    for (byte, character) in piece.char_indices() {
        if units >= step {
            pieces.push(piece.get(start..byte).unwrap_or_default());
            start = byte;
            units = 0;
        }
        units += character.len_utf16();
    }
    pieces.push(piece.get(start..).unwrap_or_default());
    pieces
}

/// A segment's size in OpenClaw's units: its UTF-16 length, or with [`CharWeighting::Cjk`]
/// `estimateStringChars` (2026.3.31): code points of CJK Extension B+ count once instead of
/// twice, then every CJK character adds 3.
pub fn estimate_chars(text: &str, weighting: CharWeighting) -> usize {
    let length = utf16_len(text);
    if weighting == CharWeighting::Utf16 {
        return length;
    }
    let cjk = text.chars().filter(|&character| is_estimate_cjk(character)).count();
    if cjk == 0 {
        return length;
    }
    // JavaScript matches high surrogates D840–D87E here, i.e. U+20000–U+2FBFF.
    let paired = text.chars().filter(|character| ('\u{20000}'..='\u{2FBFF}').contains(character)).count();
    length - paired + cjk * 3
}

/// `NON_LATIN_RE` of OpenClaw's `cjk-chars.ts`.
fn is_estimate_cjk(character: char) -> bool {
    matches!(
        character,
        '\u{2E80}'..='\u{9FFF}' | '\u{A000}'..='\u{A4FF}' | '\u{AC00}'..='\u{D7AF}' | '\u{F900}'..='\u{FAFF}' | '\u{20000}'..='\u{2FA1F}'
    )
}

/// The string OpenClaw hashes (sha256, hex) into a chunk id (§2.2):
/// `source:path:startLine:endLine:sha256(text):model`. Hashing is left to the caller so that this
/// module stays free of a hashing dependency.
pub fn chunk_id_input(source: &str, path: &str, chunk: &LineChunk, text_sha256_hex: &str, model: &str) -> String {
    format!("{source}:{path}:{}:{}:{text_sha256_hex}:{model}", chunk.start_line, chunk.end_line)
}

#[cfg(test)]
#[path = "chunk_tests.rs"]
mod tests;
