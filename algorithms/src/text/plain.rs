//! Markdown prose as plain text, for a sentence a memory quotes: links keep their text, images
//! and HTML tags go, emphasis markers go, list and quote markers at a line's start go. Code spans
//! keep their backticks; fenced code blocks are dropped (a memory quotes code as its example).

/// `markdown` as plain text, one output line per non-blank input line outside code fences.
pub fn plain(markdown: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut fence: Option<&str> = None;
    for line in markdown.lines() {
        let trimmed = line.trim();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if let Some(open) = ["```", "~~~"].into_iter().find(|open| trimmed.starts_with(open)) {
            fence = Some(open);
            continue;
        }
        let text = inline(strip_markers(trimmed));
        let text = text.trim();
        if !text.is_empty() {
            out.push(text.to_owned());
        }
    }
    out.join("\n")
}

/// A line without its leading block markers: `>`, `-`, `*`, `+`, `1.`, `#`, repeatedly.
fn strip_markers(mut line: &str) -> &str {
    loop {
        let before = line;
        if let Some(rest) = line.strip_prefix('>').or_else(|| line.strip_prefix('#')) {
            line = rest.trim_start();
        } else if let Some(rest) = ["- ", "* ", "+ "].into_iter().find_map(|marker| line.strip_prefix(marker)) {
            line = rest.trim_start();
        } else {
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            if digits > 0 && line[digits..].starts_with(". ") {
                line = line[digits + 2..].trim_start();
            }
        }
        if line == before {
            return line;
        }
    }
}

/// Inline markdown made plain, code spans untouched.
fn inline(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            // A code span stays as written, backticks included.
            let end = chars[i + 1..].iter().position(|&d| d == '`').map(|p| i + 1 + p);
            let stop = end.unwrap_or(chars.len() - 1);
            out.extend(&chars[i..=stop]);
            i = stop + 1;
        } else if c == '!' && chars.get(i + 1) == Some(&'[') {
            // An image: dropped.
            i = link_end(&chars, i + 1).map_or(i + 1, |(_, end)| end);
        } else if c == '[' {
            match link_end(&chars, i) {
                Some((label_end, end)) => {
                    out.push_str(&inline(&chars[i + 1..label_end].iter().collect::<String>()));
                    i = end;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else if c == '<' && chars.get(i + 1).is_some_and(|d| d.is_ascii_alphabetic() || *d == '/') {
            // An HTML or JSX tag: dropped.
            i = chars[i..].iter().position(|&d| d == '>').map_or(i + 1, |p| i + p + 1);
        } else if (c == '*' || c == '_') && chars.get(i + 1) == Some(&c) {
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// For `[label](target)` starting at `open`: the index of `]` and the index after `)`.
fn link_end(chars: &[char], open: usize) -> Option<(usize, usize)> {
    let label_end = open + chars[open..].iter().position(|&c| c == ']')?;
    if chars.get(label_end + 1) != Some(&'(') {
        return None;
    }
    let close = label_end + 1 + chars[label_end + 1..].iter().position(|&c| c == ')')?;
    Some((label_end, close + 1))
}

#[cfg(test)]
#[path = "plain_tests.rs"]
mod tests;
