//! Bounded capture of a child's output: the first and the last half of the limit are kept, the
//! middle is counted and dropped, so a flood of output never grows memory without bound while
//! the start (what ran) and the end (why it failed) stay readable.

use std::collections::VecDeque;

/// One stream's output, within `limit` bytes.
#[derive(Debug)]
pub struct Capture {
    head: Vec<u8>,
    head_limit: usize,
    tail: VecDeque<u8>,
    tail_limit: usize,
    total: u64,
}

impl Capture {
    pub fn new(limit: usize) -> Self {
        let head_limit = limit / 2;
        Capture { head: Vec::new(), head_limit, tail: VecDeque::new(), tail_limit: limit - head_limit, total: 0 }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_limit.saturating_sub(self.head.len());
        if room > 0 {
            let taken = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..taken]);
            bytes = &bytes[taken..];
        }
        if bytes.len() >= self.tail_limit {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_limit..]);
            return;
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(self.tail_limit);
        self.tail.drain(..excess);
    }

    /// Every byte written, kept or not.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether bytes were dropped.
    pub fn truncated(&self) -> bool {
        self.total > (self.head.len() + self.tail.len()) as u64
    }

    /// The kept output as text (invalid UTF-8 replaced), with a marker where bytes were dropped.
    pub fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        let kept = (self.head.len() + self.tail.len()) as u64;
        if self.total > kept {
            text.push_str(&format!("\n[host: {} bytes of output omitted here]\n", self.total - kept));
        }
        let (front, back) = self.tail.as_slices();
        if back.is_empty() {
            text.push_str(&String::from_utf8_lossy(front));
        } else {
            text.push_str(&String::from_utf8_lossy(&[front, back].concat()));
        }
        text
    }
}

/// Looks for a text in a stream that arrives in chunks, across chunk boundaries.
#[derive(Debug)]
pub struct Watch {
    needle: Vec<u8>,
    window: Vec<u8>,
    seen: bool,
}

impl Watch {
    pub fn new(needle: &str) -> Self {
        Watch { needle: needle.as_bytes().to_vec(), window: Vec::new(), seen: needle.is_empty() }
    }

    /// Feeds a chunk; true once the text has appeared.
    pub fn feed(&mut self, chunk: &[u8]) -> bool {
        if self.seen {
            return true;
        }
        self.window.extend_from_slice(chunk);
        if self.window.windows(self.needle.len()).any(|part| part == self.needle.as_slice()) {
            self.seen = true;
            self.window = Vec::new();
            return true;
        }
        // Keep only what could start a match that the next chunk completes.
        let keep = self.needle.len().saturating_sub(1).min(self.window.len());
        self.window.drain(..self.window.len() - keep);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_within_the_limit_is_kept_whole() {
        let mut capture = Capture::new(16);
        capture.push(b"hello ");
        capture.push(b"world");
        assert_eq!((capture.text().as_str(), capture.total(), capture.truncated()), ("hello world", 11, false));
    }

    #[test]
    fn a_flood_keeps_the_start_and_the_end_with_a_marker_between() {
        let mut capture = Capture::new(8);
        capture.push(b"abcd");
        for _ in 0..10_000 {
            capture.push(b"xxxxxxxx");
        }
        capture.push(b"wxyz");
        assert!(capture.truncated());
        assert_eq!(capture.total(), 80_008);
        assert_eq!(capture.text(), "abcd\n[host: 80000 bytes of output omitted here]\nwxyz");
    }

    #[test]
    fn one_chunk_larger_than_the_limit_is_cut_on_both_sides() {
        let mut capture = Capture::new(4);
        capture.push(b"0123456789");
        assert_eq!(capture.text(), "01\n[host: 6 bytes of output omitted here]\n89");
    }

    #[test]
    fn a_watched_text_split_across_chunks_is_found() {
        let mut watch = Watch::new("listening on");
        assert!(!watch.feed(b"starting\nlisten"));
        assert!(!watch.feed(b"i"));
        assert!(watch.feed(b"ng on 127.0.0.1:4000\n"));
        assert!(watch.feed(b"anything after"));
        assert!(!Watch::new("ready").feed(b"not yet"));
    }
}
