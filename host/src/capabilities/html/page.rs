//! A [`Page`] as one HTML document: the Markdown rendered as CommonMark with tables, each chart as
//! a figure at the end of the section it belongs to, the charts' specifications as JSON, and the
//! libraries and the script that draws them inline.

use std::ops::Range;

use minijinja::{Environment, context};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd, html};
use serde::Serialize;

use super::{HtmlError, Library, Page};

const TEMPLATE: &str = include_str!("page.html");
const STYLE: &str = include_str!("page.css");
/// Draws every chart and records on `<body>` how many were drawn and how many failed.
const DRAW: &str = include_str!("draw.js");

/// A Markdown heading and the bytes of its section (the heading up to the next heading of the
/// same or a higher level).
#[derive(Debug)]
struct Heading {
    level: usize,
    text: String,
    section: Range<usize>,
}

/// A run of the document: some Markdown rendered, then the charts that end there.
#[derive(Serialize)]
struct Part {
    html: String,
    charts: Vec<Figure>,
}

#[derive(Serialize)]
struct Figure {
    id: String,
    title: String,
    caption: String,
}

#[derive(Serialize)]
struct Inlined<'a> {
    name: &'a str,
    version: &'a str,
    script: &'a str,
    license: String,
}

pub fn render(page: &Page, libraries: &[Library], missing: Option<&str>, generator: &str) -> Result<String, HtmlError> {
    let markdown = page.markdown.as_str();
    let headings = headings(markdown);
    let introduction_end = headings.iter().find(|h| h.level >= 2).map_or(markdown.len(), |h| h.section.start);
    let mut placed = Vec::with_capacity(page.charts.len());
    let mut specs = Vec::with_capacity(page.charts.len());
    for (index, chart) in page.charts.iter().enumerate() {
        if !chart.spec.is_object() {
            return Err(HtmlError::NotASpec { chart: chart.title.clone() });
        }
        let at = match &chart.after {
            None => introduction_end,
            Some(wanted) => headings.iter().find(|h| h.text == *wanted).map(|h| h.section.end).ok_or_else(|| {
                HtmlError::NoSuchHeading {
                    chart: chart.title.clone(),
                    heading: wanted.clone(),
                    known: headings.iter().map(|h| format!("`{}`", h.text)).collect::<Vec<_>>().join(", "),
                }
            })?,
        };
        let id = format!("chart-{}", index + 1);
        specs.push(serde_json::json!({ "id": id, "spec": chart.spec }));
        placed.push((at, Figure { id, title: chart.title.clone(), caption: chart.caption.clone() }));
    }
    placed.sort_by_key(|(at, _)| *at);

    let mut parts = Vec::new();
    let mut from = 0;
    let mut placed = placed.into_iter().peekable();
    while from < markdown.len() || placed.peek().is_some() {
        let to = placed.peek().map_or(markdown.len(), |(at, _)| *at);
        let mut charts = Vec::new();
        while let Some((_, figure)) = placed.next_if(|(at, _)| *at == to) {
            charts.push(figure);
        }
        parts.push(Part { html: markdown_html(&markdown[from..to]), charts });
        from = to;
    }

    let title =
        page.title.clone().or_else(|| headings.first().map(|h| h.text.clone())).unwrap_or_else(|| "Report".into());
    let inlined: Vec<Inlined> = libraries
        .iter()
        .map(|l| Inlined {
            name: &l.name,
            version: &l.version,
            script: &l.script,
            license: l.license.replace("*/", "* /"),
        })
        .collect();
    let mut environment = Environment::new();
    environment.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    environment.add_template("page.html", TEMPLATE)?;
    let html = environment.get_template("page.html")?.render(context! {
        title, generator, parts, missing, style => STYLE, draw => DRAW,
        libraries => inlined, chart_count => specs.len(), specs => script_json(&serde_json::Value::Array(specs)),
    })?;
    Ok(html)
}

/// Markdown as HTML: CommonMark with tables and strikethrough.
fn markdown_html(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, Parser::new_ext(markdown, options()));
    out
}

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH
}

/// Every heading of `markdown`, with its plain text and the bytes of its section.
fn headings(markdown: &str) -> Vec<Heading> {
    let mut found: Vec<Heading> = Vec::new();
    let mut open: Option<Heading> = None;
    for (event, range) in Parser::new_ext(markdown, options()).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                open =
                    Some(Heading { level: level as usize, text: String::new(), section: range.start..markdown.len() })
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some(heading) = open.as_mut() {
                    heading.text.push_str(&text);
                }
            }
            Event::End(TagEnd::Heading(_)) => found.extend(open.take()),
            _ => {}
        }
    }
    for i in 0..found.len() {
        let level = found[i].level;
        if let Some(next) = found[i + 1..].iter().find(|h| h.level <= level) {
            found[i].section.end = next.section.start;
        }
    }
    found
}

/// `value` as JSON that can sit inside `<script>`: every `<` (which JSON has only inside strings)
/// written `\u003c`, so no `</script>` or `<!--` in the data can end or bend the element.
fn script_json(value: &serde_json::Value) -> String {
    value.to_string().replace('<', "\\u003c")
}

#[cfg(test)]
pub(super) fn headings_for_tests(markdown: &str) -> Vec<(usize, String, Range<usize>)> {
    headings(markdown).into_iter().map(|h| (h.level, h.text, h.section)).collect()
}
