use std::sync::Arc;

use serde_json::json;

use super::libraries::{PINNED, inline_script};
use super::page::headings_for_tests;
use super::*;
use crate::capabilities::packages::{Installed, NoPackages, Package, PackagesError, PythonEnv};

/// A package cache holding fake builds of the pinned libraries.
struct FakeCache(tempfile::TempDir);

impl FakeCache {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for (spec, build) in PINNED {
            let package = dir.path().join(spec);
            std::fs::create_dir_all(package.join("build")).unwrap();
            std::fs::write(package.join(build), format!("var lib = \"{spec}\";\n//# sourceMappingURL=x.map")).unwrap();
            std::fs::write(package.join("LICENSE"), format!("Licence of {spec}")).unwrap();
        }
        FakeCache(dir)
    }
}

impl Packages for FakeCache {
    fn npm(&self, spec: &str) -> Result<Package, PackagesError> {
        let (name, version) = crate::capabilities::packages::pinned(spec)?;
        let dir = self.0.path().join(spec);
        Ok(Package { name, version, archive: dir.join("a.tgz"), dir, sha256: "ab".repeat(32), fetched: false })
    }

    fn npm_install(&self, _spec: &str) -> Result<Installed, PackagesError> {
        Err(PackagesError::Unavailable)
    }

    fn pip_install(&self, _spec: &str) -> Result<PythonEnv, PackagesError> {
        Err(PackagesError::Unavailable)
    }

    fn git(
        &self,
        _source: &crate::capabilities::packages::GitSource,
    ) -> Result<crate::capabilities::packages::GitCheckout, PackagesError> {
        Err(PackagesError::Unavailable)
    }
}

const REPORT: &str = "# Benchmark\n\nIntro.\n\n## Scores\n\n| a | b |\n|---|--:|\n| x | 1 |\n\n### Detail\n\nMore.\n\n## Latency\n\nFast.\n";

fn chart(title: &str, after: Option<&str>) -> Chart {
    Chart {
        title: title.into(),
        caption: format!("caption of {title}"),
        after: after.map(Into::into),
        spec: json!({ "mark": "bar", "data": { "values": [{ "x": 1 }] } }),
    }
}

fn page(charts: Vec<Chart>) -> Page {
    Page { markdown: REPORT.into(), title: None, charts }
}

fn render(page: &Page) -> Html {
    VegaReports::new(Arc::new(FakeCache::new()), "host test").html(page).unwrap()
}

fn position(html: &str, needle: &str) -> usize {
    html.find(needle).unwrap_or_else(|| panic!("`{needle}` is not in the page"))
}

#[test]
fn a_heading_s_section_runs_to_the_next_heading_of_its_level_or_higher() {
    let headings = headings_for_tests(REPORT);
    let scores = REPORT.find("## Scores").unwrap();
    let detail = REPORT.find("### Detail").unwrap();
    let latency = REPORT.find("## Latency").unwrap();
    assert_eq!(
        headings,
        vec![
            (1, "Benchmark".to_string(), 0..REPORT.len()),
            (2, "Scores".to_string(), scores..latency),
            (3, "Detail".to_string(), detail..latency),
            (2, "Latency".to_string(), latency..REPORT.len()),
        ]
    );
}

#[test]
fn a_chart_ends_the_section_it_names_and_one_naming_none_follows_the_introduction() {
    let html = render(&page(vec![chart("Scores chart", Some("Scores")), chart("Overview", None)])).text;
    let overview = position(&html, "id=\"chart-2\"");
    let scores = position(&html, "id=\"chart-1\"");
    assert!(position(&html, "<p>Intro.</p>") < overview && overview < position(&html, "<h2>Scores</h2>"));
    assert!(position(&html, "<p>More.</p>") < scores && scores < position(&html, "<h2>Latency</h2>"));
    assert!(html.contains("<strong>Scores chart.</strong> caption of Scores chart"));
}

#[test]
fn the_markdown_becomes_html_with_its_tables_aligned() {
    let html = render(&page(vec![])).text;
    assert!(html.contains("<title>Benchmark</title>"), "the first heading titles the page");
    assert!(html.contains("<th style=\"text-align: right\">b</th>"));
    assert!(html.contains("<td style=\"text-align: right\">1</td>"));
}

#[test]
fn a_chart_after_a_heading_the_report_lacks_is_an_error_naming_the_headings_it_has() {
    let error = VegaReports::new(Arc::new(FakeCache::new()), "host test")
        .html(&page(vec![chart("Lost", Some("Sores"))]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "chart `Lost` goes after the heading `Sores`, which the report does not have; its headings: `Benchmark`, `Scores`, `Detail`, `Latency`"
    );
}

#[test]
fn a_specification_that_is_not_a_map_is_an_error() {
    let mut broken = chart("Broken", None);
    broken.spec = json!("bar");
    let error = VegaReports::new(Arc::new(FakeCache::new()), "host test").html(&page(vec![broken])).unwrap_err();
    assert!(matches!(error, HtmlError::NotASpec { chart } if chart == "Broken"));
}

#[test]
fn the_page_carries_the_specifications_the_libraries_with_their_licences_and_the_drawing_script() {
    let html = render(&page(vec![chart("One", None)]));
    assert_eq!(html.charts, 1);
    assert_eq!(
        html.libraries.iter().map(|l| format!("{}@{}", l.name, l.version)).collect::<Vec<_>>(),
        ["vega@6.4.0", "vega-lite@6.5.0"]
    );
    let text = &html.text;
    assert!(text.contains(r#"[{"id":"chart-1","spec":{"data":{"values":[{"x":1}]},"mark":"bar"}}]"#));
    assert!(
        position(text, "var lib = \"vega@6.4.0\"") < position(text, "var lib = \"vega-lite@6.5.0\""),
        "Vega loads first"
    );
    assert!(text.contains("Licence of vega@6.4.0") && text.contains("Licence of vega-lite@6.5.0"));
    assert!(!text.contains("sourceMappingURL"), "no pointer to a file the page does not have");
    assert!(text.contains("vegaLite.compile(chart.spec"));
    assert!(text.contains("data-charts=\"1\""));
    assert!(html.missing.is_none());
}

#[test]
fn data_and_titles_cannot_break_out_of_their_elements() {
    let mut hostile = chart("<b>bold</b>", None);
    hostile.spec = json!({ "mark": "text", "data": { "values": [{ "t": "</script><script>alert(1)</script><!--" }] } });
    let text = render(&page(vec![hostile])).text;
    assert!(!text.contains("</script><script>alert(1)"));
    assert!(text.contains(r"\u003c/script>\u003cscript>alert(1)\u003c/script>\u003c!--"));
    assert!(text.contains("<strong>&lt;b&gt;bold&lt;&#x2f;b&gt;.</strong>"));
}

#[test]
fn without_its_libraries_the_page_is_written_with_a_notice_in_place_of_each_chart() {
    let html =
        VegaReports::new(Arc::new(NoPackages), "host test").html(&page(vec![chart("One", Some("Latency"))])).unwrap();
    let missing = html.missing.expect("the reason the charts are not drawn");
    assert!(missing.contains("packages are not fetched here"), "{missing}");
    assert!(html.text.contains("This chart is not drawn: the charting library could not be had"));
    assert!(!html.text.contains("vegaLite.compile"), "no drawing script without the libraries");
    assert!(html.text.contains("<h2>Latency</h2>"), "the numbers are still there");
}

#[test]
fn only_a_closing_script_tag_is_escaped_in_an_inlined_library() {
    assert_eq!(inline_script("a.replace(/</g,'&lt;');s='</SCRIPT>'"), "a.replace(/</g,'&lt;');s='<\\/SCRIPT>'");
    assert_eq!(inline_script("x\n//# sourceMappingURL=x.js.map"), "x");
}

#[test]
fn the_pinned_builds_are_exact_versions() {
    for (spec, _) in PINNED {
        crate::capabilities::packages::pinned(spec).unwrap();
    }
}
