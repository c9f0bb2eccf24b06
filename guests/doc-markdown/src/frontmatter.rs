//! The YAML-ish frontmatter the docs open with: a first line `---`, `key: value` lines and a
//! closing `---`. Not a YAML parser: only top-level scalars are read. Anything it cannot read
//! makes the block ordinary content, never an error.

use std::collections::BTreeMap;

/// A frontmatter block that was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frontmatter {
    pub fields: BTreeMap<String, String>,
    /// How many lines the block takes, both `---` lines included: the body starts there.
    pub lines: usize,
}

/// The frontmatter at the start of `lines`, or `None` when there is none, it is not closed, or a
/// top-level line is not `key: value`.
///
/// Indented lines and `- ` items belong to the nested value above them (`related:` with its
/// `links:`) and are skipped, so a nested `description` never stands in for the page's own.
/// Blank lines and `#` comments are skipped too; a repeated key keeps its last value.
pub fn parse(lines: &[&str]) -> Option<Frontmatter> {
    if !is_delimiter(lines.first()?) {
        return None;
    }
    let closing = lines.iter().skip(1).position(|line| is_delimiter(line))? + 1;
    let mut fields = BTreeMap::new();
    for line in &lines[1..closing] {
        let nested = line.starts_with([' ', '\t']) || line.starts_with("- ") || *line == "-";
        if nested || line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(':')?;
        let key = key.trim();
        if key.is_empty() {
            return None;
        }
        fields.insert(key.to_string(), unquote(value.trim()));
    }
    Some(Frontmatter { fields, lines: closing + 1 })
}

fn is_delimiter(line: &str) -> bool {
    line.trim_end() == "---"
}

/// A value without the quotes around it: `'a ''b'''` is `a 'b'`, `"a \"b\""` is `a "b"`.
fn unquote(value: &str) -> String {
    let quoted = |quote: char| value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote);
    if quoted('\'') {
        value[1..value.len() - 1].replace("''", "'")
    } else if quoted('"') {
        unescape_double_quoted(&value[1..value.len() - 1])
    } else {
        value.to_string()
    }
}

/// The escapes docs write in double quotes (`\"`, `\\`, `\n`, `\t`); others are kept as written.
fn unescape_double_quoted(inner: &str) -> String {
    let mut text = String::with_capacity(inner.len());
    let mut characters = inner.chars();
    while let Some(character) = characters.next() {
        if character != '\\' {
            text.push(character);
            continue;
        }
        match characters.next() {
            Some('"') => text.push('"'),
            Some('\\') => text.push('\\'),
            Some('n') => text.push('\n'),
            Some('t') => text.push('\t'),
            Some(other) => {
                text.push('\\');
                text.push(other);
            }
            None => text.push('\\'),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Option<Vec<(String, String)>> {
        let lines: Vec<&str> = text.lines().collect();
        parse(&lines).map(|frontmatter| frontmatter.fields.into_iter().collect())
    }

    fn pairs(pairs: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(pairs.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect())
    }

    #[test]
    fn key_value_lines_between_two_dashes_lines_are_read() {
        let text = "---\ntitle: updateTag\ndescription: API Reference.\n---\nBody";
        assert_eq!(fields(text), pairs(&[("description", "API Reference."), ("title", "updateTag")]));
        assert_eq!(parse(&text.lines().collect::<Vec<_>>()).unwrap().lines, 4);
    }

    #[test]
    fn single_and_double_quotes_are_removed() {
        let text = "---\ntitle: 'use cache: remote'\ndescription: \"Learn \\\"use cache\\\"\"\nnote: 'it''s'\n---";
        assert_eq!(
            fields(text),
            pairs(&[("description", "Learn \"use cache\""), ("note", "it's"), ("title", "use cache: remote")])
        );
    }

    #[test]
    fn unknown_keys_are_kept_and_nested_values_skipped() {
        let text = "---\ntitle: A\nrelated:\n  description: Nested, not the page's.\n  links:\n    - app/a\nversion: draft\n---";
        assert_eq!(fields(text), pairs(&[("related", ""), ("title", "A"), ("version", "draft")]));
    }

    #[test]
    fn blank_lines_and_comments_are_skipped() {
        assert_eq!(fields("---\n# a comment\n\ntitle: A\n---"), pairs(&[("title", "A")]));
    }

    #[test]
    fn an_unclosed_frontmatter_is_none() {
        assert_eq!(fields("---\ntitle: A\n\n# Heading"), None);
    }

    #[test]
    fn a_line_that_is_not_key_value_makes_the_frontmatter_none() {
        assert_eq!(fields("---\ntitle: A\njust some text\n---"), None);
        assert_eq!(fields("---\n: no key\n---"), None);
    }

    #[test]
    fn a_document_not_starting_with_dashes_has_no_frontmatter() {
        assert_eq!(fields("\n---\ntitle: A\n---"), None);
        assert_eq!(fields("# Title"), None);
        assert_eq!(fields(""), None);
    }

    #[test]
    fn an_empty_frontmatter_is_read_as_empty() {
        assert_eq!(fields("---\n---\nBody"), pairs(&[]));
    }

    #[test]
    fn an_unknown_escape_is_kept_as_written() {
        assert_eq!(unquote(r#""a\qb\""#), "a\\qb\\");
    }
}
