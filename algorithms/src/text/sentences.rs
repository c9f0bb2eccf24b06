//! Cutting text into sentences: the built-in answerer's rule (`sentences`, from
//! `scripts/lib/cortex/text.rhai`), the local Cortex memory's (`pieces`, from `local.rhai`),
//! which keeps code blocks and backticked spans whole, and the looser rule a played Cortex
//! captures conversations with (`captured_sentences`).
//!
//! Lengths are counted in chars, as Rhai counts them.

/// The sentences of a text (`sentences` and `clean_sentence` of text.rhai). Each line is cut
/// after a `.`, `!` or `?` that is followed by a space and then an ASCII capital, a digit or a
/// backtick. Each cut is trimmed, loses leading bullet markers (`- `, `* `, `#`, repeatedly,
/// trimming again after each), and is kept only when at least 12 chars remain.
pub fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.split('\n') {
        let chars: Vec<char> = line.chars().collect();
        let mut current = String::new();
        for (i, &c) in chars.iter().enumerate() {
            current.push(c);
            let ends = matches!(c, '.' | '!' | '?') && chars.get(i + 1) == Some(&' ');
            if ends
                && let Some(&next) = chars.get(i + 2)
                && (next.is_ascii_uppercase() || next.is_ascii_digit() || next == '`')
            {
                out.extend(clean_sentence(&current));
                current.clear();
            }
        }
        out.extend(clean_sentence(&current));
    }
    out
}

/// A cut without its bullet markers, or `None` for a fragment under 12 chars.
fn clean_sentence(text: &str) -> Option<String> {
    let mut clean = text.trim();
    while clean.starts_with("- ") || clean.starts_with("* ") || clean.starts_with('#') {
        let mut rest = clean.chars();
        rest.next();
        clean = rest.as_str().trim();
    }
    (clean.chars().count() >= 12).then(|| clean.to_owned())
}

/// The pieces of one message, in order (`pieces` of local.rhai): the text is split at every
/// "```"; the odd parts are code blocks, each one piece, its first line dropped when it is a
/// single word (the language tag) and more lines follow, its lines joined with spaces and
/// squashed; the even parts are prose, cut by [`prose_sentences`]. Empty pieces are dropped.
pub fn pieces(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, block) in content.split("```").enumerate() {
        if i % 2 == 0 {
            out.extend(prose_sentences(block));
            continue;
        }
        let mut lines: Vec<&str> = block.split('\n').collect();
        let first = squash(lines.first().copied().unwrap_or_default());
        if !first.is_empty() && !first.contains(' ') && lines.len() > 1 {
            lines.remove(0);
        }
        // The original joins with `reduce(|sum, line| sum + " " + line, "")`: a leading space,
        // which squashing removes.
        let joined = lines.iter().fold(String::new(), |sum, &line| sum + " " + line);
        let code = squash(&joined);
        if !code.is_empty() {
            out.push(code);
        }
    }
    out
}

/// Prose cut into sentences, never inside a backticked span (`prose_sentences` of local.rhai):
/// outside backticks a cut falls after `. `, `? ` or `! ` (the space is dropped) and at every
/// line break; each sentence is squashed, and empty ones are dropped. The text is split at every
/// backtick and each odd part is put back between backticks, so an unmatched backtick gains a
/// closing one at the end of the text.
fn prose_sentences(prose: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut flush = |current: &mut String| {
        let sentence = squash(current);
        if !sentence.is_empty() {
            out.push(sentence);
        }
        current.clear();
    };
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 1 {
            current.push('`');
            current.push_str(span);
            current.push('`');
            continue;
        }
        let marked = span.replace(". ", ".\n").replace("? ", "?\n").replace("! ", "!\n");
        for (j, part) in marked.split('\n').enumerate() {
            if j > 0 {
                flush(&mut current);
            }
            current.push_str(part);
        }
    }
    flush(&mut current);
    out
}

/// The sentences a played Cortex (host's `loopback::cortex`, and the end-to-end tests' fake on
/// it) stores of a captured message: each line cut after every `.`, `!` or `?` followed by a
/// space, whatever comes next; each cut trimmed, bullet and heading marks kept, and kept only
/// when at least 12 chars remain. It differs from [`sentences`] (which cuts only before a
/// capital, a digit or a backtick, and strips bullets) because the Cortex V2 benchmark's captures,
/// and so its recorded reports, were made with it: `(e.g. one left open)` is two memories here.
pub fn captured_sentences(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let mut characters = line.char_indices().peekable();
        while let Some((index, character)) = characters.next() {
            let ends = matches!(character, '.' | '!' | '?') && characters.peek().is_some_and(|(_, next)| *next == ' ');
            if ends {
                found.push(&line[start..=index]);
                start = index + 1;
            }
        }
        found.push(&line[start..]);
    }
    found.into_iter().map(str::trim).filter(|sentence| sentence.chars().count() >= 12).map(str::to_owned).collect()
}

/// Whitespace squashed (`collapse` of local.rhai): line feeds and tabs become spaces, each run
/// of spaces becomes one, and the ends are trimmed (of any Unicode whitespace, as Rust's
/// `str::trim`). Other whitespace inside the text, such as `\r`, stays.
pub fn squash(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut after_space = false;
    for c in text.chars() {
        let c = if c == '\n' || c == '\t' { ' ' } else { c };
        if c == ' ' && after_space {
            continue;
        }
        after_space = c == ' ';
        out.push(c);
    }
    out.trim().to_owned()
}

#[cfg(test)]
#[path = "sentences_tests.rs"]
mod tests;
