// Draws each chart of the page: its Vega-Lite specification compiled to Vega and rendered as SVG
// into the chart's figure. When all are done, <body> says how it went: data-charts-drawn (how
// many drew), data-chart-errors (how many failed) and data-charts-done="true". A chart that fails
// says why in its place and on the console; the others still draw.
(function () {
  "use strict";
  var body = document.body;
  var specs = JSON.parse(document.getElementById("chart-specs").textContent);
  var drawn = 0;
  var failed = 0;
  var config = { font: "system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif", view: { stroke: null } };

  function draw(chart) {
    var figure = document.getElementById(chart.id);
    var view = figure.querySelector(".view");
    function fail(error) {
      failed += 1;
      figure.setAttribute("data-drawn", "false");
      view.textContent = "This chart could not be drawn: " + error.message;
      console.error(chart.id + ": " + error.message);
    }
    try {
      var compiled = vegaLite.compile(chart.spec, { config: config }).spec;
      return new vega.View(vega.parse(compiled), { renderer: "svg", container: view, hover: true })
        .runAsync()
        .then(function () {
          drawn += 1;
          figure.setAttribute("data-drawn", "true");
        }, fail);
    } catch (error) {
      fail(error);
      return Promise.resolve();
    }
  }

  Promise.all(specs.map(draw)).then(function () {
    body.setAttribute("data-charts-drawn", String(drawn));
    body.setAttribute("data-chart-errors", String(failed));
    body.setAttribute("data-charts-done", "true");
  });
})();
