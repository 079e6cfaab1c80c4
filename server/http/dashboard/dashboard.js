// The dashboard: polls the JSON API every two seconds and draws each job's dataflow graph,
// the rows per second of each job, the sources' lag and the checkpoint timeline as plain SVG.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var POLL_MS = 2000;
  var HISTORY = 60;  // Samples kept per rate line.
  var COLORS = ["#3f6fd8", "#2e8b57", "#d93025", "#f29900", "#8e44ad", "#00838f"];
  var rateHistory = {};  // Job name -> [rows per second].
  var lagHistory = {};  // "job: source" -> [records behind, over its partitions].

  function el(tag, attrs, text) {
    var node = document.createElementNS(SVG, tag);
    for (var key in attrs) node.setAttribute(key, attrs[key]);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  // With a token configured, the browser asked for it when it loaded this page and sends the
  // same Basic credentials with these calls. The origin, not a relative path: a page opened
  // as http://user:token@host/ may not fetch a URL resolved against one with credentials.
  function api(path) {
    return fetch(location.origin + path).then(function (response) {
      if (response.status === 401) throw new Error("the admin token is required: reload the page");
      if (!response.ok) throw new Error(path + ": HTTP " + response.status);
      return response.json();
    });
  }

  function number(value) {
    if (value >= 1e6) return (value / 1e6).toFixed(1) + "M";
    if (value >= 1e3) return (value / 1e3).toFixed(1) + "k";
    return String(Math.round(value * 10) / 10);
  }

  // Columns by depth from the sources, rows by order within a column.
  function layout(job) {
    var depth = {}, incoming = {};
    job.nodes.forEach(function (node) { depth[node.id] = 0; incoming[node.id] = []; });
    job.edges.forEach(function (edge) { incoming[edge.to].push(edge.from); });
    for (var pass = 0; pass < job.nodes.length; pass++) {
      job.edges.forEach(function (edge) {
        depth[edge.to] = Math.max(depth[edge.to], depth[edge.from] + 1);
      });
    }
    var columns = [];
    job.nodes.forEach(function (node) {
      var d = depth[node.id];
      (columns[d] = columns[d] || []).push(node);
    });
    return columns;
  }

  function drawGraph(job) {
    var width = 200, height = 64, gapX = 60, gapY = 16;
    var columns = layout(job), position = {}, rows = 0;
    columns.forEach(function (column, c) {
      column.forEach(function (node, r) {
        position[node.id] = { x: 10 + c * (width + gapX), y: 10 + r * (height + gapY) };
      });
      rows = Math.max(rows, column.length);
    });
    var svgWidth = 20 + columns.length * (width + gapX) - gapX;
    var svgHeight = 20 + rows * (height + gapY) - gapY;
    var svg = el("svg", { "class": "job-graph", "viewBox": "0 0 " + svgWidth + " " + svgHeight,
                          "width": svgWidth, "height": svgHeight, "data-job": job.name });
    var defs = el("defs", {});
    var marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
                                markerWidth: 6, markerHeight: 6, orient: "auto" });
    marker.appendChild(el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#888" }));
    defs.appendChild(marker);
    svg.appendChild(defs);
    job.edges.forEach(function (edge) {
      var from = position[edge.from], to = position[edge.to];
      if (!from || !to) return;
      var x1 = from.x + width, y1 = from.y + height / 2, x2 = to.x, y2 = to.y + height / 2;
      svg.appendChild(el("path", { "class": "edge",
        d: "M" + x1 + "," + y1 + " C" + (x1 + gapX / 2) + "," + y1 + " " + (x2 - gapX / 2) + "," +
           y2 + " " + x2 + "," + y2 }));
      svg.appendChild(el("text", { "class": "edge-label", x: (x1 + x2) / 2 - 14,
                                   y: (y1 + y2) / 2 - 4 }, edge.routing));
    });
    job.nodes.forEach(function (node) {
      var p = position[node.id];
      var classes = "node " + node.kind + (node.backpressure > 0 ? " backpressured" : "");
      var g = el("g", { "class": classes, "data-node": node.id,
                        transform: "translate(" + p.x + "," + p.y + ")" });
      g.appendChild(el("rect", { width: width, height: height }));
      var title = node.kind === "source" ? node.label
                                         : node.label + " x" + node.parallelism;
      g.appendChild(el("text", { x: 6, y: 14, "font-weight": "bold" }, title));
      var ops = node.operators.join(" > ");
      if (ops.length > 34) ops = ops.slice(0, 33) + "...";
      g.appendChild(el("text", { x: 6, y: 30 }, ops));
      g.appendChild(el("text", { x: 6, y: 46, "class": "node-rate" },
                       number(node.rows_in_per_second) + " rows/s in, " +
                       number(node.rows_in) + " total"));
      g.appendChild(el("text", { x: 6, y: 60 },
                       "backpressure " + Math.round(node.backpressure * 100) + "%"));
      var tooltip = el("title", {}, node.operators.join("\n"));
      g.appendChild(tooltip);
      svg.appendChild(g);
    });
    return svg;
  }

  function drawJobs(jobs) {
    var container = document.getElementById("jobs");
    clear(container);
    jobs.forEach(function (job) {
      var section = document.createElement("div");
      section.className = "job";
      section.id = "job-" + job.name;
      var heading = document.createElement("h3");
      heading.textContent = job.kind + " " + job.name + " (parallelism " + job.parallelism +
                            ", " + job.state + ")";
      if (job.state !== "running") heading.className = "failed";
      section.appendChild(heading);
      if (job.error) {
        var error = document.createElement("div");
        error.className = "failed";
        error.textContent = job.error;
        section.appendChild(error);
      }
      section.appendChild(drawGraph(job));
      container.appendChild(section);
      // The job's rate: what its sources read.
      var rate = 0;
      job.nodes.forEach(function (node) {
        if (node.kind === "source") rate += node.rows_in_per_second;
      });
      var history = rateHistory[job.name] = rateHistory[job.name] || [];
      history.push(rate);
      if (history.length > HISTORY) history.shift();
    });
    for (var name in rateHistory) {
      if (!jobs.some(function (job) { return job.name === name; })) delete rateHistory[name];
    }
    // Lag: only sources that report it (Kafka); a source of another kind has none.
    var reported = {};
    jobs.forEach(function (job) {
      job.nodes.forEach(function (node) {
        if (node.kind !== "source" || !node.lag || node.lag.length === 0) return;
        var key = job.name + ": " + node.label, behind = 0;
        node.lag.forEach(function (partition) { behind += partition.records; });
        reported[key] = true;
        var history = lagHistory[key] = lagHistory[key] || [];
        history.push(behind);
        if (history.length > HISTORY) history.shift();
      });
    });
    for (name in lagHistory) {
      if (!reported[name]) delete lagHistory[name];
    }
  }

  // One line per series of `histories` (name -> values, newest last) over the last HISTORY
  // samples, scaled to the highest value; `unit` labels the axis.
  function drawLines(svg, legend, histories, unit, lineClass, dataName) {
    clear(svg);
    clear(legend);
    var max = 1;
    for (var name in histories) {
      histories[name].forEach(function (value) { max = Math.max(max, value); });
    }
    svg.appendChild(el("line", { "class": "axis", x1: 0, y1: 150, x2: 600, y2: 150 }));
    svg.appendChild(el("text", { "class": "axis-label", x: 4, y: 12 }, number(max) + " " + unit));
    var index = 0;
    for (name in histories) {
      var color = COLORS[index++ % COLORS.length];
      var points = histories[name].map(function (value, i) {
        return (i * 600 / (HISTORY - 1)).toFixed(1) + "," + (150 - value / max * 135).toFixed(1);
      });
      var attrs = { "class": lineClass, fill: "none", stroke: color, "stroke-width": 2,
                    points: points.join(" ") };
      attrs[dataName] = name;
      svg.appendChild(el("polyline", attrs));
      var entry = document.createElement("span");
      entry.style.color = color;
      var values = histories[name];
      entry.textContent = name + ": " + number(values[values.length - 1]) + " " + unit;
      legend.appendChild(entry);
    }
    return index;
  }

  function drawRates() {
    drawLines(document.getElementById("rate-chart"), document.getElementById("rate-legend"),
              rateHistory, "rows/s", "rate-line", "data-job");
  }

  function drawLag() {
    var svg = document.getElementById("lag-chart");
    var lines = drawLines(svg, document.getElementById("lag-legend"), lagHistory, "records behind",
                          "lag-line", "data-source");
    if (lines === 0) {
      svg.appendChild(el("text", { "class": "no-data", x: 300, y: 85, "text-anchor": "middle" },
                         "no lag reported"));
    }
  }

  function drawCheckpoints(data) {
    var svg = document.getElementById("checkpoint-chart");
    clear(svg);
    var checkpoints = data.checkpoints.slice(-60);
    var max = 1;
    checkpoints.forEach(function (c) { max = Math.max(max, c.duration_ms); });
    svg.appendChild(el("line", { "class": "axis", x1: 0, y1: 150, x2: 600, y2: 150 }));
    svg.appendChild(el("text", { "class": "axis-label", x: 4, y: 12 }, number(max) + " ms"));
    var width = 600 / 60;
    checkpoints.forEach(function (c, i) {
      var h = Math.max(1, c.duration_ms / max * 135);
      var bar = el("rect", { "class": "bar", x: i * width + 1, y: 150 - h, width: width - 2,
                             height: h, "data-epoch": c.epoch });
      bar.appendChild(el("title", {}, "epoch " + c.epoch + " at " + c.started + ": " +
                                      c.duration_ms + " ms (the write " + c.write_ms + " ms), " +
                                      c.bytes + " bytes"));
      svg.appendChild(bar);
    });
    var last = checkpoints[checkpoints.length - 1];
    document.getElementById("checkpoint-summary").textContent = last
        ? "last: epoch " + last.epoch + ", " + last.duration_ms + " ms, " + number(last.bytes) +
          " bytes; interval " + data.interval_ms + " ms"
        : "no checkpoint yet";
    document.getElementById("epoch").textContent = "committed epoch " + data.committed_epoch;
  }

  function fillTable(id, rows, cells) {
    var body = document.querySelector("#" + id + " tbody");
    clear(body);
    rows.forEach(function (row) {
      var tr = document.createElement("tr");
      cells(row).forEach(function (value) {
        var td = document.createElement("td");
        td.textContent = value === null || value === undefined ? "" : String(value);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function poll() {
    Promise.all([api("/api/v1/jobs"), api("/api/v1/checkpoints"), api("/api/v1/sinks"),
                 api("/api/v1/sources")])
      .then(function (results) {
        drawJobs(results[0].jobs);
        drawRates();
        drawLag();
        drawCheckpoints(results[1]);
        fillTable("sinks", results[2].sinks, function (s) {
          return [s.name, s.connector, s.target, s.derived_delivery, s.state, s.committed_epoch,
                  s.finished_epoch, s.owed_epochs, s.last_error];
        });
        fillTable("sources", results[3].sources, function (s) {
          return [s.stream, s.connector, s.reader, s.position, s.lag, s.bad_records,
                  s.watermark, s.late_rows];
        });
        var status = document.getElementById("status");
        status.textContent = "live, updated " + new Date().toLocaleTimeString();
        status.className = "status ok";
        document.body.setAttribute("data-rendered", "true");
      })
      .catch(function (error) {
        var status = document.getElementById("status");
        status.textContent = String(error.message || error);
        status.className = "status bad";
      })
      .then(function () { setTimeout(poll, POLL_MS); });
  }

  poll();
})();
