//! The `html` capability: a run's report as one self-contained HTML page, `report.html`: the
//! script's Markdown report with its charts drawn in place, and everything the page needs inside
//! it (styles, chart data, the charting library), so it opens from disk, from a CI artifact or an
//! e-mail, with no network.
//!
//! Charts are Vega-Lite specifications the script builds from the rows its Markdown reads; the
//! page draws them with Vega and Vega-Lite, pinned npm packages fetched once into host's cache
//! ([`libraries`]). When they cannot be had, the page is still written, with its numbers and a
//! notice in place of each chart.

pub mod libraries;
mod page;
pub mod rhai;

use std::sync::Arc;

use serde::Deserialize;

use crate::capabilities::packages::Packages;
pub use libraries::Library;

/// What a script asks to be written as HTML.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// The Markdown report, rendered as CommonMark with tables.
    pub markdown: String,
    /// The page's title [default: the Markdown's first heading].
    #[serde(default)]
    pub title: Option<String>,
    /// The charts, in order.
    #[serde(default)]
    pub charts: Vec<Chart>,
}

/// One chart: a Vega-Lite specification with its data inline, and where it goes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chart {
    pub title: String,
    /// A sentence under the chart: what it shows and which rows it reads.
    #[serde(default)]
    pub caption: String,
    /// The text of the Markdown heading whose section the chart ends [default: after the
    /// report's introduction, before its first `##` section].
    #[serde(default)]
    pub after: Option<String>,
    /// The Vega-Lite specification.
    pub spec: serde_json::Value,
}

/// A page as written.
#[derive(Debug, Clone)]
pub struct Html {
    pub text: String,
    pub charts: usize,
    /// The libraries inlined to draw the charts.
    pub libraries: Vec<Library>,
    /// Why the charts are not drawn, when the libraries could not be had.
    pub missing: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    #[error(
        "chart `{chart}` goes after the heading `{heading}`, which the report does not have; its headings: {known}"
    )]
    NoSuchHeading { chart: String, heading: String, known: String },
    #[error("chart `{chart}` has a specification that is not a Vega-Lite object (a map with `mark` or a composition)")]
    NotASpec { chart: String },
    #[error("cannot render the page")]
    Template(#[from] minijinja::Error),
}

/// Writes reports as HTML pages.
pub trait HtmlReports: Send + Sync {
    fn html(&self, page: &Page) -> Result<Html, HtmlError>;
}

/// Pages drawn with the pinned Vega and Vega-Lite from the package cache.
pub struct VegaReports {
    packages: Arc<dyn Packages>,
    generator: String,
}

impl VegaReports {
    /// `generator` names what wrote the page, in its footer and `<meta name="generator">`.
    pub fn new(packages: Arc<dyn Packages>, generator: impl Into<String>) -> Self {
        VegaReports { packages, generator: generator.into() }
    }
}

impl HtmlReports for VegaReports {
    fn html(&self, page: &Page) -> Result<Html, HtmlError> {
        let (libraries, missing) = match libraries::load(self.packages.as_ref()) {
            Ok(libraries) => (libraries, None),
            Err(error) => (Vec::new(), Some(crate::capabilities::error_chain(&error))),
        };
        let text = page::render(page, &libraries, missing.as_deref(), &self.generator)?;
        Ok(Html { text, charts: page.charts.len(), libraries, missing })
    }
}

/// `html::` for scripts.
pub const CAPABILITY: super::registry::Capability = super::registry::Capability::script("html", |capabilities| {
    rhai::module(capabilities.reports.clone(), capabilities.results.clone(), capabilities.log.clone())
})
.with_scratch(|capabilities| {
    let packages = Arc::new(crate::capabilities::packages::NoPackages);
    capabilities.reports = Arc::new(VegaReports::new(packages, "host check"));
});

#[cfg(test)]
mod tests;
