//! The Rhai namespace `html::`.

use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, Map, Module, NativeCallContext};
use serde_json::json;

use super::{HtmlReports, Page};
use crate::capabilities::log::{Level, Log};
use crate::capabilities::results::{FileContent, Results};
use crate::capabilities::{docs::function, script_error, script_value};

pub fn module(reports: Arc<dyn HtmlReports>, results: Arc<dyn Results>, log: Arc<dyn Log>) -> Module {
    let mut module = Module::new();
    function(
        "report",
        &["path: &str", "page: Map", "Map"],
        "
Writes `page` as one self-contained HTML file in the run directory (atomically): the Markdown
report with its charts drawn in place, opening from disk with no network. `page` is
`#{ markdown, title?, charts? }`; each chart is `#{ title, caption?, after?, spec }`: `spec` a
Vega-Lite specification with its data inline (`data: #{ values: rows }`), `after` the text of the
Markdown heading whose section the chart ends (default: before the first `##` section). The
charts are drawn by Vega and Vega-Lite, pinned npm packages fetched once into host's cache and
recorded in the manifest; if they cannot be had, the page is written with a notice in place of
each chart, and a warning. Returns `#{ charts, libraries, missing }`.
Example: `html::report(\"report.html\", #{ markdown: md, charts: [#{ title: \"Mean score\", after: \"Scores\", spec: #{ mark: \"bar\", data: #{ values: rows }, encoding: #{ x: #{ field: \"condition\" }, y: #{ field: \"value\", type: \"quantitative\" } } } }] });`",
    )
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, path: &str, page: Map| -> Result<Map, Box<EvalAltResult>> {
            let page: Page = script_value(&context, "page for `html::report`", &page.into(), &json!({"markdown": ""}))?;
            let html = reports.html(&page).map_err(|error| script_error(&context, &error))?;
            if let Some(missing) = &html.missing {
                log.write(Level::Warn, &format!("{path}: charts not drawn: {missing}"));
            }
            results.write_file(path, FileContent::Text(html.text)).map_err(|error| script_error(&context, &error))?;
            let libraries: Array =
                html.libraries.iter().map(|l| Dynamic::from(format!("{}@{}", l.name, l.version))).collect();
            let mut map = Map::new();
            map.insert("charts".into(), Dynamic::from_int(html.charts as i64));
            map.insert("libraries".into(), libraries.into());
            map.insert("missing".into(), html.missing.map_or(Dynamic::UNIT, Dynamic::from));
            Ok(map)
        },
    );
    module
}
