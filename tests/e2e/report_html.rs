//! report.html in a real browser: the offline Cortex run's page opened from disk by Debian's
//! chromium, headless (`tests/run` installs it when missing), as a reader would open it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{host_in, offline_run, repo_root};

/// The charts of the Cortex report, in page order.
const CORTEX_CHARTS: [&str; 5] = [
    "Mean score by category",
    "Paired differences by category",
    "Score distribution",
    "Retrieval hit rate",
    "Cortex retrieval latency",
];

/// What the browser made of a page: the DOM once its scripts ran, the console messages, and a
/// screenshot.
struct Rendered {
    dom: String,
    console: Vec<String>,
    screenshot: PathBuf,
}

fn chromium() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join("chromium"))
        .find(|candidate| candidate.is_file())
        .expect("Debian's chromium on PATH (tests/run installs it)")
}

/// `page` opened headless, its scripts given up to 20 s of virtual time to finish.
fn render(page: &Path, scratch: &Path) -> Rendered {
    let url = format!("file://{}", page.display());
    let browser = |extra: &[String]| {
        let output = Command::new(chromium())
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=20000"])
            .arg(format!("--user-data-dir={}", scratch.join("profile").display()))
            .args(extra)
            .arg(&url)
            .output()
            .expect("start chromium");
        assert!(output.status.success(), "chromium failed: {}", String::from_utf8_lossy(&output.stderr));
        output
    };
    let dumped = browser(&["--enable-logging=stderr".into(), "--v=0".into(), "--dump-dom".into()]);
    let console = String::from_utf8_lossy(&dumped.stderr)
        .lines()
        .filter(|line| line.contains(":CONSOLE"))
        .map(String::from)
        .collect();
    let screenshot = scratch.join("report.png");
    browser(&["--window-size=1100,5000".into(), format!("--screenshot={}", screenshot.display())]);
    Rendered { dom: String::from_utf8_lossy(&dumped.stdout).into_owned(), console, screenshot }
}

/// Each chart's figure in the DOM: its caption's title and its markup.
fn figures(dom: &str) -> Vec<(String, String)> {
    dom.split("<figure class=\"chart\"")
        .skip(1)
        .map(|rest| {
            let figure = &rest[..rest.find("</figure>").expect("a closed figure")];
            let title = figure.split("<strong>").nth(1).and_then(|t| t.split('<').next()).unwrap_or_default();
            (title.trim_end_matches('.').to_string(), figure.to_string())
        })
        .collect()
}

/// How many pixels of the PNG at `path` are clearly coloured (not white, grey or black), and how
/// many there are.
fn coloured_pixels(path: &Path) -> (usize, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).expect("the screenshot")));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buffer = vec![0; reader.output_buffer_size().expect("a size")];
    let frame = reader.next_frame(&mut buffer).expect("a frame");
    let channels = frame.color_type.samples();
    assert!(channels >= 3, "a colour screenshot");
    let pixels = buffer[..frame.buffer_size()].chunks(channels);
    let total = pixels.len();
    let coloured =
        pixels.filter(|p| p[..3].iter().max().unwrap_or(&0) - p[..3].iter().min().unwrap_or(&0) > 80).count();
    (coloured, total)
}

/// Opens `page` in the browser and checks that the console stays quiet, that the charts titled
/// `titles` (in page order) each drew marks and axes as SVG, and that the screenshot is not blank.
pub fn assert_every_chart_draws(page: &Path, titles: &[&str]) {
    let scratch = tempfile::tempdir().expect("temporary directory");
    let rendered = render(page, scratch.path());
    assert!(rendered.console.is_empty(), "the console must stay quiet, yet says:\n{}", rendered.console.join("\n"));
    assert!(rendered.dom.contains("data-charts-done=\"true\""), "the drawing script finished");
    assert!(rendered.dom.contains(&format!("data-charts-drawn=\"{}\"", titles.len())));
    assert!(rendered.dom.contains("data-chart-errors=\"0\""));
    let figures = figures(&rendered.dom);
    assert_eq!(figures.iter().map(|(title, _)| title.as_str()).collect::<Vec<_>>(), titles);
    for (title, figure) in &figures {
        assert!(figure.contains("data-drawn=\"true\""), "`{title}` did not draw");
        let shapes = figure.matches("<path").count();
        assert!(figure.contains("<svg") && figure.contains("role-mark"), "`{title}` has no marks");
        assert!(figure.contains("role-axis") && shapes >= 5, "`{title}` has only {shapes} shapes");
    }
    let (coloured, total) = coloured_pixels(&rendered.screenshot);
    // Text, tables and rules are black, grey or white: colour is the charts' marks.
    assert!(coloured >= 1000 * titles.len(), "the screenshot is nearly blank: {coloured} coloured pixels of {total}");
}

#[test]
fn the_offline_cortex_report_draws_every_chart_in_a_real_browser_with_a_quiet_console() {
    let out = tempfile::tempdir().expect("temporary directory");
    let run = offline_run("scripts/cortex_v11.rhai", out.path(), &[]);
    let page = run.join("report.html");
    let html = std::fs::read_to_string(&page).expect("report.html");
    for external in ["<script src", "<link", "<img", "<iframe"] {
        assert!(!html.contains(external), "the page must need no other file, yet has `{external}`");
    }
    let style = html.split("<style>").nth(1).and_then(|s| s.split("</style>").next()).expect("a style sheet");
    assert!(!style.contains("url(") && !style.contains("@import"), "the style sheet must need no other file");

    assert_every_chart_draws(&page, &CORTEX_CHARTS);

    // The libraries the page inlined are the run's, recorded with their archives' hashes.
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    let packages: Vec<&str> = manifest["settings"]["packages"]
        .as_array()
        .expect("settings.packages")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(packages, ["vega", "vega-lite"]);

    // `host report` writes both reports again from the run's tables: the same page, ids apart.
    let again = out.path().join("again");
    host_in(&repo_root(), &["report", &run.display().to_string(), "--out", &again.display().to_string()])
        .expect_code(0);
    let id = |dir: &Path| -> String {
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
        manifest["run_id"].as_str().expect("a run id").to_string()
    };
    let regenerated = std::fs::read_to_string(again.join("report.html")).expect("report.html again");
    assert_eq!(regenerated.replace(&id(&again), "RUN"), html.replace(&id(&run), "RUN"));
}
