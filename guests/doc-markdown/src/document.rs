//! The walk over a document's lines, in one pass: it keeps what spans lines (the open code
//! fence, the blockquote being read, the open router tags, the heading path) and cuts the
//! document into sections. What one line is, on its own, is `lines.rs`'s business.

use guest_sdk::markdown::{CodeBlock, Parsed, Router, Section};

use crate::lines::{self, Fence, RouterTag};
use crate::{callout, frontmatter};

/// The parse of a whole file. Never fails: whatever is not recognised is content.
pub fn parse(content: &str) -> Parsed {
    let text = content.strip_prefix('\u{feff}').unwrap_or(content);
    let all = lines::split(text);
    let frontmatter = frontmatter::parse(&all);
    let body_start = frontmatter.as_ref().map_or(0, |frontmatter| frontmatter.lines);
    let fields = frontmatter.map(|frontmatter| frontmatter.fields).unwrap_or_default();
    let field = |key: &str| fields.get(key).filter(|value| !value.is_empty()).cloned();
    let (title, description) = (field("title"), field("description"));

    let mut walk = Walk::new(title.as_deref());
    for (index, line) in all.iter().enumerate().skip(body_start) {
        walk.line(index + 1, line);
    }
    let sections = walk.finish(title.as_deref());
    Parsed { title, description, frontmatter: fields, sections }
}

/// The state carried from one line to the next.
struct Walk<'a> {
    sections: Vec<Section>,
    /// The section being read; its `content` is filled from `content` when it ends.
    current: Section,
    content: Vec<&'a str>,
    fence: Option<(Fence, Vec<&'a str>)>,
    /// The lines of the blockquote being read, `>` removed.
    quote: Vec<&'a str>,
    /// Router tags opened and not yet closed, innermost last.
    routers: Vec<Router>,
    /// The headings above the current one and itself, by level.
    path: Vec<(u8, String)>,
    has_h1: bool,
}

impl<'a> Walk<'a> {
    fn new(title: Option<&str>) -> Walk<'a> {
        Walk {
            sections: Vec::new(),
            current: Walk::preamble(title),
            content: Vec::new(),
            fence: None,
            quote: Vec::new(),
            routers: Vec::new(),
            path: Vec::new(),
            has_h1: false,
        }
    }

    /// The text before the first heading, under the frontmatter's title when there is one.
    fn preamble(title: Option<&str>) -> Section {
        Section {
            level: 0,
            title: title.unwrap_or_default().to_string(),
            headings: title.map(str::to_string).into_iter().collect(),
            line: 0,
            content: String::new(),
            code_blocks: Vec::new(),
            callouts: Vec::new(),
            router: Router::Both,
        }
    }

    /// Line `number` (1-based) of the file.
    fn line(&mut self, number: usize, line: &'a str) {
        if let Some((fence, code)) = self.fence.as_mut() {
            self.content.push(line);
            if fence.is_closed_by(line) {
                self.close_fence();
            } else {
                code.push(fence.code_line(line));
            }
            return;
        }
        if let Some(quoted) = lines::blockquote(line) {
            self.quote.push(quoted);
            self.content.push(line);
            return;
        }
        self.end_quote();
        if let Some(fence) = lines::fence_opening(line) {
            self.fence = Some((fence, Vec::new()));
            self.content.push(line);
        } else if let Some((level, title)) = lines::heading(line) {
            self.start_section(number, level, title);
        } else if let Some(tag) = lines::router_tag(line) {
            self.route(tag);
        } else if !lines::is_mdx_comment(line) {
            self.push_text(line);
        }
    }

    /// A line of text; a blank line after a blank line adds nothing (markdown reads them as
    /// one), which also keeps removed tag lines from leaving gaps.
    fn push_text(&mut self, line: &'a str) {
        let blank = |line: &str| line.trim().is_empty();
        if !(blank(line) && self.content.last().is_some_and(|last| blank(last))) {
            self.content.push(line);
        }
    }

    fn close_fence(&mut self) {
        if let Some((fence, code)) = self.fence.take() {
            self.current.code_blocks.push(CodeBlock { language: fence.language, code: code.join("\n") });
        }
    }

    fn end_quote(&mut self) {
        if !self.quote.is_empty() {
            self.current.callouts.extend(callout::from_blockquote(&self.quote));
            self.quote.clear();
        }
    }

    fn route(&mut self, tag: RouterTag) {
        match tag {
            RouterTag::Open(router) => self.routers.push(router),
            // A closing tag closes its own opening and anything left open inside it; one that
            // closes nothing is ignored.
            RouterTag::Close(router) => {
                if let Some(at) = self.routers.iter().rposition(|open| *open == router) {
                    self.routers.truncate(at);
                }
            }
        }
    }

    fn start_section(&mut self, number: usize, level: u8, title: String) {
        self.has_h1 |= level == 1;
        while self.path.last().is_some_and(|(above, _)| *above >= level) {
            self.path.pop();
        }
        self.path.push((level, title.clone()));
        let next = Section {
            level,
            title,
            headings: self.path.iter().map(|(_, title)| title.clone()).collect(),
            line: number,
            content: String::new(),
            code_blocks: Vec::new(),
            callouts: Vec::new(),
            router: self.routers.last().copied().unwrap_or(Router::Both),
        };
        let done = std::mem::replace(&mut self.current, next);
        self.file(done);
    }

    /// Files a section that has ended, with the content read since its heading; a blank
    /// preamble is left out.
    fn file(&mut self, mut section: Section) {
        section.content = self.content.join("\n").trim().to_string();
        self.content.clear();
        if section.level > 0 || !section.content.is_empty() {
            self.sections.push(section);
        }
    }

    /// The sections, once the last line is read. An unclosed fence runs to the end. Without a
    /// `#` heading in the document, the frontmatter's title heads every heading path.
    fn finish(mut self, title: Option<&str>) -> Vec<Section> {
        self.close_fence();
        self.end_quote();
        let last = std::mem::replace(&mut self.current, Walk::preamble(None));
        self.file(last);
        if let Some(title) = title.filter(|_| !self.has_h1) {
            for section in self.sections.iter_mut().filter(|section| section.level > 0) {
                section.headings.insert(0, title.to_string());
            }
        }
        self.sections
    }
}

#[cfg(test)]
#[path = "document_tests.rs"]
mod tests;
