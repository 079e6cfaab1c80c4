"""The admin dashboard in a real browser: headless Chromium loads the page from a running staved
with a live pipeline, runs its script (which polls the JSON API) and renders; the test checks the
rendered DOM (each job's dataflow graph with its nodes and edges, the checkpoint chart's bars,
the rate chart's lines, the sinks and sources tables, the lag chart) and saves a screenshot.

A datagen source reports no lag: the lag chart says so. With --tool (stave-kafka-dev, librdkafka's
mock cluster), a Kafka stream with a WATERMARK is added next, and the lag chart draws its line.

The server has an admin token, as a production one would: loaded without it, the page is refused;
opened as http://stave:TOKEN@host/, the browser sends the token as Basic credentials for the page
and for the page's API calls.

Skips (exit 77) when Chromium is not installed (tools/install-deps.sh --tests installs it).

  dashboard_browser_test.py --staved PATH [--tool PATH] [--screenshot FILE]
"""

import json

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from stave_harness import Staved, check


TOKEN = "dashboard-t0ken"


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(chromium, profile, *args):
    # --virtual-time-budget lets the page's timers (its polling) run ahead without waiting in
    # real time; network requests still happen for real and are waited for.
    command = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
               "--disable-dev-shm-usage", "--user-data-dir=" + profile,
               "--virtual-time-budget=10000", "--window-size=1280,1600"] + list(args)
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def count(pattern, text):
    return len(re.findall(pattern, text))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--tool", help="stave-kafka-dev, for a Kafka source")
    parser.add_argument("--screenshot", default="dashboard.png")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("chromium not found: skipped (tools/install-deps.sh --tests installs it)")
        sys.exit(77)

    server = Staved(args.staved, extra_args=["--admin-token", TOKEN])
    profile = tempfile.mkdtemp(prefix="stave-chromium-")
    cluster = None
    server.start()
    try:
        server.psql("""CREATE STREAM clicks (id BIGINT, page VARCHAR) WITH (connector = 'datagen',
            'rows-per-second' = '500', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1',
            'fields.id.end' = '100000000', 'fields.page.length' = '1')""")
        server.psql("CREATE MATERIALIZED VIEW per_page AS "
                    "SELECT page, count(*) AS n FROM clicks GROUP BY page")
        server.psql("CREATE SINK clicks_out WITH (connector = 'blackhole') AS "
                    "SELECT id FROM clicks WHERE id % 3 = 0")
        server.psql("CHECKPOINT")
        time.sleep(1.2)  # A second sample, so the API reports rates above zero.
        result = run_chromium(chromium, profile, "--dump-dom",
                              "http://127.0.0.1:%d/" % server.http_port)
        # (Headless Chromium gives up at the Basic challenge and dumps an empty document.)
        check("checkpoint-chart" not in result.stdout, "the page without the token:\n" +
              result.stdout[:4000])
        url = "http://stave:%s@127.0.0.1:%d/" % (TOKEN, server.http_port)

        result = run_chromium(chromium, profile, "--dump-dom", url)
        dom = result.stdout
        check(result.returncode == 0 and "<html" in dom,
              "chromium failed (%d): %s" % (result.returncode, result.stderr[-2000:]))
        check('data-rendered="true"' in dom, "the page did not render the API's data:\n" + dom[:4000])
        for job in ("per_page", "clicks_out"):
            match = re.search(r'<div class="job" id="job-%s">(.*?)</svg>' % job, dom, re.S)
            check(match is not None, "no graph for job %s" % job)
            graph = match.group(1)
            check(count(r'<g class="node source', graph) == 1, "%s: one source node" % job)
            check(count(r'<g class="node stage', graph) >= 1, "%s: stage nodes" % job)
            check(count(r'<path class="edge"', graph) >= 1, "%s: edges" % job)
            check("rows/s in" in graph, "%s: no rates in the graph" % job)
        check("Materialize into per_page" in dom, "the view's operators")
        check(count(r'<rect class="bar"', dom) >= 1, "no bar in the checkpoint chart")
        check(count(r'<polyline class="rate-line"', dom) == 2, "one rate line per job")
        check(re.search(r"<td>clicks_out</td><td>blackhole</td>", dom), "the sinks table")
        check("committed epoch" in dom, "the committed epoch in the header")
        sources = re.search(r'<table id="sources">.*?<tbody>(.*?)</tbody>', dom, re.S)
        check(sources and re.search(r"<tr><td>clicks</td><td>datagen</td><td>per_page</td>",
                                    sources.group(1)), "the sources table:\n" + dom[-4000:])
        lag_chart = re.search(r'<svg id="lag-chart"[^>]*>(.*?)</svg>', dom, re.S)
        check(lag_chart is not None, "no lag chart")
        check(count(r"<polyline", lag_chart.group(1)) == 0 and
              "no lag reported" in lag_chart.group(1), "datagen reports no lag: " + lag_chart.group(1))

        if args.tool:
            # A Kafka stream with event time over two partitions: the chart draws its lag.
            from kafka_harness import KafkaCluster
            cluster = KafkaCluster(args.tool, brokers=1, topics=["visits_in:2"])
            cluster.start()
            for partition in (0, 1):
                cluster.produce("visits_in", [json.dumps({"id": i, "ts": 1000 * i})
                                              for i in range(200)], partition=partition)
            server.psql("CREATE STREAM visits (id BIGINT, ts BIGINT, WATERMARK FOR ts AS ts - 1000) "
                        "WITH (connector = 'kafka', topic = 'visits_in', "
                        "properties.bootstrap.server = '%s') FORMAT JSON" % cluster.bootstrap)
            server.psql("CREATE MATERIALIZED VIEW visit_count AS SELECT count(*) AS n FROM visits")
            server.wait_for("SELECT n FROM visit_count", ["400"], timeout=60)
            server.wait_for("SELECT lag FROM stave_catalog.sources WHERE reader = 'visit_count'",
                            ["0:0,1:0"], timeout=60)
            result = run_chromium(chromium, profile, "--dump-dom", url)
            dom = result.stdout
            check('data-rendered="true"' in dom, "the page did not render:\n" + dom[:4000])
            lag_chart = re.search(r'<svg id="lag-chart"[^>]*>(.*?)</svg>', dom, re.S)
            check(lag_chart is not None, "no lag chart")
            lines = re.findall(r'<polyline class="lag-line"[^>]*data-source="([^"]*)"',
                               lag_chart.group(1))
            check(lines == ["visit_count: stream visits"], "lag lines: %r" % lines)
            check("no lag reported" not in lag_chart.group(1), "a lag line and 'no lag reported'")
            legend = re.search(r'<div id="lag-legend"[^>]*>(.*?)</div>', dom, re.S)
            check(legend and "visit_count: stream visits: 0 records behind" in legend.group(1),
                  "the lag legend: %r" % (legend and legend.group(1)))
            check(re.search(r"<tr><td>visits</td><td>kafka</td><td>visit_count</td>(<td>[^<]*</td>)"
                            r"<td>0:0,1:0</td>", dom), "the sources table's lag:\n" + dom[-4000:])

        screenshot = os.path.abspath(args.screenshot)
        if os.path.exists(screenshot):
            os.remove(screenshot)
        result = run_chromium(chromium, profile, "--screenshot=" + screenshot, url)
        check(os.path.exists(screenshot) and os.path.getsize(screenshot) > 10000,
              "no screenshot (%d): %s" % (result.returncode, result.stderr[-2000:]))
        print("dashboard browser test passed; screenshot in", screenshot)
    finally:
        server.stop()
        server.cleanup()
        if cluster is not None:
            cluster.cleanup()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
