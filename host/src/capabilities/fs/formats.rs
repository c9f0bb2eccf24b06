//! Parsing the text formats scripts read, with errors that name file, line and column.
//!
//! Everything becomes a `serde_json::Value`, the one boundary type that Rhai and guests share.

use serde::Serialize;
use serde_json::Value;

use super::FilesError;

/// JSON, with a syntax error located in the file.
pub fn parse_json(path: &str, text: &str) -> Result<Value, FilesError> {
    serde_json::from_str(text).map_err(|error| json_error(path, &error, 0))
}

/// JSON Lines: one value per non-blank line. An error names the line of the file.
pub fn parse_jsonl(path: &str, text: &str) -> Result<Vec<Value>, FilesError> {
    let mut values = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str(line).map_err(|error| json_error(path, &error, index))?;
        values.push(value);
    }
    Ok(values)
}

fn json_error(path: &str, error: &serde_json::Error, lines_before: usize) -> FilesError {
    FilesError::Syntax {
        format: "JSON",
        path: path.to_string(),
        line: lines_before + error.line(),
        column: error.column(),
        message: crate::capabilities::json::message(error),
    }
}

/// TOML, as a JSON object; dates and times become RFC 3339 strings.
pub fn parse_toml(path: &str, text: &str) -> Result<Value, FilesError> {
    let table: toml::Table = text.parse().map_err(|error: toml::de::Error| {
        let (line, column) = error.span().map_or((0, 0), |span| line_and_column(text, span.start));
        FilesError::Syntax {
            format: "TOML",
            path: path.to_string(),
            line,
            column,
            message: error.message().trim_end().to_string(),
        }
    })?;
    Ok(toml_to_json(toml::Value::Table(table)))
}

fn toml_to_json(value: toml::Value) -> Value {
    match value {
        toml::Value::String(text) => Value::String(text),
        toml::Value::Integer(number) => Value::from(number),
        toml::Value::Float(number) => Value::from(number),
        toml::Value::Boolean(flag) => Value::Bool(flag),
        toml::Value::Datetime(moment) => Value::String(moment.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(table) => {
            Value::Object(table.into_iter().map(|(key, value)| (key, toml_to_json(value))).collect())
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |tail| tail.chars().count()) + 1;
    (line, column)
}

/// A Markdown file split at its ATX headings (`#` to `######`), outside fenced code blocks.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MarkdownDocument {
    /// The text of the first level-1 heading, if any.
    pub title: Option<String>,
    pub sections: Vec<MarkdownSection>,
    pub text: String,
}

/// One heading and the text under it, up to the next heading of any level. Text before the
/// first heading is a section with level 0 and an empty heading.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MarkdownSection {
    pub heading: String,
    pub level: u8,
    /// 1-based line of the heading (of the first line, for the level-0 section).
    pub line: usize,
    pub body: String,
}

pub fn parse_markdown(text: &str) -> MarkdownDocument {
    let mut sections = Vec::new();
    let mut current = MarkdownSection { heading: String::new(), level: 0, line: 1, body: String::new() };
    let mut fence: Option<&str> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|marker| trimmed.starts_with(marker));
        match (fence, marker) {
            (None, Some(marker)) => fence = Some(marker),
            (Some(open), Some(marker)) if open == marker => fence = None,
            _ => {}
        }
        let heading = if fence.is_none() && marker.is_none() { atx_heading(line) } else { None };
        if let Some((level, heading)) = heading {
            let finished = std::mem::replace(
                &mut current,
                MarkdownSection { heading, level, line: index + 1, body: String::new() },
            );
            if finished.level > 0 || !finished.body.trim().is_empty() {
                sections.push(finished);
            }
        } else {
            current.body.push_str(line);
            current.body.push('\n');
        }
    }
    if current.level > 0 || !current.body.trim().is_empty() {
        sections.push(current);
    }
    for section in &mut sections {
        section.body = section.body.trim().to_string();
    }
    let title = sections.iter().find(|section| section.level == 1).map(|section| section.heading.clone());
    MarkdownDocument { title, sections, text: text.to_string() }
}

/// `## Title ##` → (2, "Title"); at most three leading spaces, and a space after the hashes.
fn atx_heading(line: &str) -> Option<(u8, String)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = line.trim_start_matches(' ');
    let level = rest.len() - rest.trim_start_matches('#').len();
    let after = &rest[level..];
    if !(1..=6).contains(&level) || !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    let heading = after.trim().trim_end_matches('#').trim_end();
    Some((level as u8, heading.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_syntax_error_names_file_line_and_column() {
        let error = parse_json("data/bad.json", "{\n  \"a\": 1,\n  \"b\" 2\n}").unwrap_err();
        assert_eq!(error.to_string(), "invalid JSON in `data/bad.json` at line 3, column 7: expected `:`");
    }

    #[test]
    fn a_jsonl_error_names_the_line_of_the_file() {
        let error = parse_jsonl("rows.jsonl", "{\"a\":1}\n\n{\"a\":}\n").unwrap_err();
        assert_eq!(error.to_string(), "invalid JSON in `rows.jsonl` at line 3, column 6: expected value");
    }

    #[test]
    fn jsonl_skips_blank_lines() {
        assert_eq!(parse_jsonl("x", "1\n\n2\n").unwrap(), vec![Value::from(1), Value::from(2)]);
    }

    #[test]
    fn toml_becomes_json_and_errors_are_located() {
        let value = parse_toml("s.toml", "name = \"x\"\n[judge]\npasses = 3\nwhen = 2026-01-02\n").unwrap();
        assert_eq!(value["judge"]["passes"], Value::from(3));
        assert_eq!(value["judge"]["when"], Value::from("2026-01-02"));
        let error = parse_toml("s.toml", "a = 1\nb = \n").unwrap_err();
        assert!(error.to_string().starts_with("invalid TOML in `s.toml` at line 2, column "), "{error}");
    }

    #[test]
    fn markdown_splits_at_headings_but_not_inside_code_fences() {
        let document = parse_markdown("intro\n# Title\ntext\n```\n# not a heading\n```\n## Part ##\nmore\n#nospace\n");
        let headings: Vec<_> = document.sections.iter().map(|s| (s.level, s.heading.as_str(), s.line)).collect();
        assert_eq!(headings, vec![(0, "", 1), (1, "Title", 2), (2, "Part", 7)]);
        assert_eq!(document.title.as_deref(), Some("Title"));
        assert_eq!(document.sections[1].body, "text\n```\n# not a heading\n```");
        assert_eq!(document.sections[2].body, "more\n#nospace");
    }
}
