//! Specification of `chunk.rs`: openclaw-memory.md §7 TV1 (a–e), the benchmark's window facts
//! from cortex-benchmark-original.md §1.3 and §2–3, and the edge cases.

use super::*;

fn ten(letter: char) -> String {
    letter.to_string().repeat(10)
}

fn spans(chunks: &[LineChunk]) -> Vec<(usize, usize)> {
    chunks.iter().map(|chunk| (chunk.start_line, chunk.end_line)).collect()
}

fn tv1_options(overlap: usize) -> LineChunkOptions {
    LineChunkOptions { tokens: 10, overlap, weighting: CharWeighting::Cjk }
}

// TV1: six 10-character lines, tokens 10 / overlap 2 (maxChars 40, overlapChars 8):
// (1–3) a\nb\nc, (3–5) c\nd\ne, (5–6) e\nf.
#[test]
fn tv1_six_lines_carry_one_line_of_overlap() {
    let content = ['a', 'b', 'c', 'd', 'e', 'f'].map(ten).join("\n");
    let chunks = line_chunks(&content, &tv1_options(2));
    assert_eq!(spans(&chunks), [(1, 3), (3, 5), (5, 6)]);
    assert_eq!(chunks[0].text, [ten('a'), ten('b'), ten('c')].join("\n"));
    assert_eq!(chunks[1].text, [ten('c'), ten('d'), ten('e')].join("\n"));
    assert_eq!(chunks[2].text, [ten('e'), ten('f')].join("\n"));
}

// TV1: "With overlap=0: (1–3) and (4–6)."
#[test]
fn tv1_without_overlap_chunks_do_not_share_lines() {
    let content = ['a', 'b', 'c', 'd', 'e', 'f'].map(ten).join("\n");
    assert_eq!(spans(&line_chunks(&content, &tv1_options(0))), [(1, 3), (4, 6)]);
}

// TV1c: line 1 = 90×x, line 2 = `short`; segments 40/40/10; the carried 40-character segment
// makes the second chunk 81 characters, more than the window.
#[test]
fn tv1c_long_line_segments_keep_their_line_number_and_overflow_the_window() {
    let content = format!("{}\nshort", "x".repeat(90));
    let chunks = line_chunks(&content, &tv1_options(2));
    let x = |count: usize| "x".repeat(count);
    assert_eq!(spans(&chunks), [(1, 1), (1, 1), (1, 1), (1, 2)]);
    assert_eq!(chunks[0].text, x(40));
    assert_eq!(chunks[1].text, format!("{}\n{}", x(40), x(40)));
    assert_eq!(chunks[1].text.len(), 81);
    assert_eq!(chunks[2].text, format!("{}\n{}", x(40), x(10)));
    assert_eq!(chunks[3].text, format!("{}\nshort", x(10)));
}

// TV1d: `# Title\n\nHello world` at defaults is a single chunk (1–3).
#[test]
fn tv1d_short_document_is_one_chunk_with_its_blank_line() {
    let chunks = line_chunks("# Title\n\nHello world", &LineChunkOptions::default());
    assert_eq!(spans(&chunks), [(1, 3)]);
    assert_eq!(chunks[0].text, "# Title\n\nHello world");
}

// TV1e: `abc\n` is a single chunk (1–2) with text `abc\n`.
#[test]
fn tv1e_trailing_newline_adds_an_empty_last_line() {
    let chunks = line_chunks("abc\n", &LineChunkOptions::default());
    assert_eq!(chunks, [LineChunk { start_line: 1, end_line: 2, text: "abc\n".into() }]);
}

#[test]
fn carriage_returns_stay_in_their_line() {
    let chunks = line_chunks("a\r\nb", &LineChunkOptions::default());
    assert_eq!(chunks[0].text, "a\r\nb");
    assert_eq!(spans(&chunks), [(1, 2)]);
}

// §2.2: "drop chunks whose text.trim() is empty".
#[test]
fn blank_chunks_are_dropped() {
    assert!(line_chunks("", &LineChunkOptions::default()).is_empty());
    assert!(line_chunks("\n\n   \n\t", &LineChunkOptions::default()).is_empty());
    let content = format!("{}\n{}\nend", " ".repeat(39), " ".repeat(39));
    assert_eq!(spans(&line_chunks(&content, &tv1_options(0))), [(3, 3)]);
}

// §6: overlap is clamped to [0, tokens − 1]; an overlap ≥ tokens cannot keep the whole chunk.
#[test]
fn overlap_is_clamped_below_tokens() {
    let content = ['a', 'b', 'c', 'd'].map(ten).join("\n");
    let clamped =
        line_chunks(&content, &LineChunkOptions { tokens: 10, overlap: 500, weighting: CharWeighting::Utf16 });
    assert_eq!(spans(&clamped), [(1, 3), (1, 4)], "overlap 9 → 36 characters: carry a, b, c");
}

// §2.2 note: from 2026.3.31 CJK characters weigh 4 and a too-heavy segment is re-split into
// pieces of `tokens` code units. 20 ideographs weigh 80 > 40: two pieces of 10.
#[test]
fn cjk_weighting_resplits_heavy_lines() {
    let content = "東".repeat(20);
    let weighted = line_chunks(&content, &tv1_options(2));
    assert_eq!(weighted.iter().map(|chunk| chunk.text.chars().count()).collect::<Vec<_>>(), [10, 21]);
    assert_eq!(spans(&weighted), [(1, 1), (1, 1)]);
    let plain = line_chunks(&content, &LineChunkOptions { weighting: CharWeighting::Utf16, ..tv1_options(2) });
    assert_eq!(plain.len(), 1, "20 UTF-16 units fit the 40-unit window");
}

#[test]
fn estimate_chars_weights_cjk_and_counts_extension_b_once() {
    assert_eq!(estimate_chars("東京", CharWeighting::Cjk), 8);
    assert_eq!(estimate_chars("東京", CharWeighting::Utf16), 2);
    assert_eq!(estimate_chars("\u{20000}", CharWeighting::Cjk), 4);
    assert_eq!(estimate_chars("😀", CharWeighting::Cjk), 2);
    assert_eq!(estimate_chars("a😀東", CharWeighting::Cjk), 7);
    assert_eq!(estimate_chars("한국어", CharWeighting::Cjk), 12);
}

#[test]
fn long_lines_never_split_a_surrogate_pair() {
    // 39 ASCII units, then an emoji straddling the 40-unit cut.
    let line = format!("{}😀{}", "a".repeat(39), "b".repeat(10));
    let chunks = line_chunks(&line, &tv1_options(0));
    assert_eq!(chunks[0].text, "a".repeat(39));
    assert_eq!(chunks[1].text, format!("😀{}", "b".repeat(10)));
}

#[test]
fn megabyte_document_is_chunked_with_overlap() {
    let content = "lorem ipsum dolor sit amet, consectetur adipiscing\n".repeat(20_000);
    assert!(content.len() > 1_000_000);
    let chunks = line_chunks(&content, &LineChunkOptions::default());
    assert!(chunks.len() > 600);
    for pair in chunks.windows(2) {
        // Each line costs 51; seven lines (357) are the fewest that reach the 320 overlap.
        assert_eq!(pair[1].start_line, pair[0].end_line - 6);
    }
}

#[test]
fn chunk_id_input_joins_the_parts_in_openclaw_order() {
    let chunk = LineChunk { start_line: 3, end_line: 5, text: "x".into() };
    assert_eq!(chunk_id_input("memory", "memory/a.md", &chunk, "abc123", "m"), "memory:memory/a.md:3:5:abc123:m");
}

// cortex-benchmark-original.md §1.3: every note is shorter than 1,600 characters, so chunking
// yields exactly one chunk per note (45 notes → 45 chunks).
#[test]
fn benchmark_note_shorter_than_the_window_is_one_chunk() {
    let notes: Vec<String> = (0..45).map(|index| format!("- fact {index}: {}", "y".repeat(480 + index * 16))).collect();
    let chunks: usize = notes.iter().map(|note| char_windows(note, &CharWindowOptions::default()).unwrap().len()).sum();
    assert_eq!(chunks, 45);
}

// cortex-benchmark-original.md §2 Phase 3: window 1,600, stride 1,280. A 1,952-character text
// gives [0, 1600) and [1280, 1952); a 1,500-character one gives one window, no tail.
#[test]
fn benchmark_windows_stop_at_the_window_that_reaches_the_end() {
    let text: String = (0..1952).map(|index| char::from(b'a' + (index % 26) as u8)).collect();
    let chunks = char_windows(&text, &CharWindowOptions::default()).unwrap();
    assert_eq!(
        chunks.iter().map(|chunk| (chunk.index, chunk.start, chunk.end)).collect::<Vec<_>>(),
        [(0, 0, 1600), (1, 1280, 1952)]
    );
    assert_eq!(chunks[1].text, text[1280..]);
    assert_eq!(char_windows(&text[..1500], &CharWindowOptions::default()).unwrap().len(), 1);
}

// cortex-benchmark-original.md §2 Phase 3: each slice trim()ed and kept only if > 20 chars.
#[test]
fn benchmark_windows_are_trimmed_and_need_more_than_20_characters() {
    let options = CharWindowOptions::default();
    assert!(char_windows(&format!("  {}  ", "z".repeat(20)), &options).unwrap().is_empty());
    let kept = char_windows(&format!("\n {} \n", "z".repeat(21)), &options).unwrap();
    assert_eq!(kept[0].text, "z".repeat(21));
    let untrimmed = CharWindowOptions { trim: false, ..options };
    assert_eq!(char_windows("  ab  ", &CharWindowOptions { min_chars: 0, ..untrimmed }).unwrap()[0].text, "  ab  ");
}

#[test]
fn benchmark_window_ids_count_kept_windows_only() {
    // The window at 1280 is only spaces; the one at 2560 is kept as index 1.
    let text = format!("{}{}{}", "a".repeat(1280), " ".repeat(1600), "b".repeat(400));
    let options = CharWindowOptions::default();
    let chunks = char_windows(&text, &options).unwrap();
    assert_eq!(chunks.iter().map(|chunk| (chunk.index, chunk.start)).collect::<Vec<_>>(), [(0, 0), (1, 2560)]);
    let blank = format!("{}{}", "a".repeat(1600), " ".repeat(1600));
    let chunks = char_windows(&blank, &options).unwrap();
    assert_eq!(chunks.iter().map(|chunk| (chunk.index, chunk.start)).collect::<Vec<_>>(), [(0, 0), (1, 1280)]);
}

#[test]
fn benchmark_windows_reject_a_non_advancing_stride() {
    let zero = CharWindowOptions { size: 0, ..CharWindowOptions::default() };
    assert_eq!(char_windows("text", &zero), Err(ChunkError::ZeroSize));
    let stuck = CharWindowOptions { size: 10, overlap: 10, ..CharWindowOptions::default() };
    assert_eq!(char_windows("text", &stuck), Err(ChunkError::OverlapNotSmallerThanSize { size: 10, overlap: 10 }));
    assert!(char_windows("", &CharWindowOptions::default()).unwrap().is_empty());
}

#[test]
fn benchmark_windows_over_a_megabyte() {
    let text = "0123456789".repeat(100_000);
    let chunks = char_windows(&text, &CharWindowOptions::default()).unwrap();
    // Windows start at 0, 1280, …; the last one starts at the first multiple of 1280 whose
    // window reaches 1,000,000: ⌈(1,000,000 − 1,600)/1,280⌉ = 780, so 781 windows.
    assert_eq!(chunks.len(), 781);
    assert_eq!(chunks.last().map(|chunk| (chunk.start, chunk.end)), Some((998_400, 1_000_000)));
}

#[test]
fn benchmark_windows_on_non_ascii_text_count_utf16_units() {
    let text = format!("{}😀{}", "é".repeat(1599), "ü".repeat(1400));
    let chunks = char_windows(&text, &CharWindowOptions::default()).unwrap();
    assert_eq!(chunks[0].text, "é".repeat(1599), "the emoji straddles unit 1600 and moves to the next window");
    let bounds: Vec<(usize, usize)> = chunks.iter().map(|chunk| (chunk.start, chunk.end)).collect();
    assert_eq!(bounds, [(0, 1599), (1280, 2880), (2560, 3001)]);
    assert!(chunks[1].text.contains('😀'));
}
