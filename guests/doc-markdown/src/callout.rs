//! Callouts: blockquotes that open with a label the docs use for asides, `> **Good to know**:`
//! (the colon inside or outside the bold) or a GitHub alert `> [!NOTE]`. Other blockquotes,
//! including bold labels outside the list below (`**Deprecated**`, a question), are not callouts.

use guest_sdk::markdown::Callout;

/// Bold labels, lowercased, and the kind each one is.
const LABELS: &[(&str, &str)] = &[
    ("good to know", "good-to-know"),
    ("note", "note"),
    ("warning", "warning"),
    ("tip", "tip"),
    ("tips", "tip"),
    ("important", "important"),
    ("caution", "caution"),
];

/// GitHub alert types, lowercased; each is its own kind.
const ALERTS: &[&str] = &["note", "tip", "important", "warning", "caution"];

/// The callout a blockquote is, from its lines with the `>` markers already removed.
pub fn from_blockquote(lines: &[&str]) -> Option<Callout> {
    let first = lines.iter().position(|line| !line.trim().is_empty())?;
    let (kind, rest) = labelled(lines[first].trim())?;
    let mut text = rest.trim().to_string();
    for line in &lines[first + 1..] {
        text.push('\n');
        text.push_str(line);
    }
    Some(Callout { kind: kind.to_string(), text: text.trim().to_string() })
}

/// The kind of callout a first line opens, and the text after its label.
fn labelled(line: &str) -> Option<(&'static str, &str)> {
    if let Some(after) = line.strip_prefix("[!") {
        let (alert, rest) = after.split_once(']')?;
        let alert = alert.to_lowercase();
        return ALERTS.iter().find(|known| **known == alert).map(|kind| (*kind, rest));
    }
    let (label, rest) = line.strip_prefix("**")?.split_once("**")?;
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    let label = label.trim().trim_end_matches(':').trim_end().to_lowercase();
    LABELS.iter().find(|(known, _)| *known == label).map(|(_, kind)| (*kind, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn callout(lines: &[&str]) -> Option<(String, String)> {
        from_blockquote(lines).map(|callout| (callout.kind, callout.text))
    }

    fn expected(kind: &str, text: &str) -> Option<(String, String)> {
        Some((kind.to_string(), text.to_string()))
    }

    #[test]
    fn a_good_to_know_with_the_colon_outside_or_inside_the_bold() {
        assert_eq!(callout(&["**Good to know**: It expires now."]), expected("good-to-know", "It expires now."));
        assert_eq!(callout(&["**Good to know:** It expires now."]), expected("good-to-know", "It expires now."));
    }

    #[test]
    fn each_known_label_has_its_kebab_case_kind() {
        assert_eq!(callout(&["**Note**: a"]), expected("note", "a"));
        assert_eq!(callout(&["**Warning:** a"]), expected("warning", "a"));
        assert_eq!(callout(&["**Tip** a"]), expected("tip", "a"));
        assert_eq!(callout(&["**Tips**: a"]), expected("tip", "a"));
        assert_eq!(callout(&["**Important**"]), expected("important", ""));
        assert_eq!(callout(&["**GOOD TO KNOW**: a"]), expected("good-to-know", "a"));
    }

    #[test]
    fn the_text_is_the_whole_blockquote_with_its_bullets() {
        let lines = ["**Good to know**", "", "- Static routes resolve `params` to `{}`.", "- Types are generated."];
        assert_eq!(
            callout(&lines),
            expected("good-to-know", "- Static routes resolve `params` to `{}`.\n- Types are generated.")
        );
    }

    #[test]
    fn a_github_alert_is_a_callout_of_its_type() {
        assert_eq!(
            callout(&["[!WARNING]", "Always verify authentication."]),
            expected("warning", "Always verify authentication.")
        );
        assert_eq!(callout(&["[!note]", "", "- a"]), expected("note", "- a"));
        assert_eq!(callout(&["[!UNKNOWN]", "a"]), None);
    }

    #[test]
    fn a_blockquote_without_a_known_label_is_not_a_callout() {
        assert_eq!(callout(&["A quotation."]), None);
        assert_eq!(callout(&["**Deprecated**: a"]), None);
        assert_eq!(callout(&["**What is hydration?**", "It is …"]), None);
        assert_eq!(callout(&["Some **Note**: later in the line"]), None);
        assert_eq!(callout(&["**Note unclosed"]), None);
        assert_eq!(callout(&["", ""]), None);
        assert_eq!(callout(&[]), None);
    }

    #[test]
    fn blank_lines_before_the_label_are_skipped() {
        assert_eq!(callout(&["", "**Note**: a", "b"]), expected("note", "a\nb"));
    }
}
