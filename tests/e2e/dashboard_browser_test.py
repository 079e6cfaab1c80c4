"""The admin dashboard in a real browser: headless Chromium loads the page from a running staved
with a live pipeline, runs its script (which polls the JSON API) and renders; the test checks the
rendered DOM (each job's dataflow graph with its nodes and edges, the checkpoint chart's bars,
the rate chart's lines, the sinks table) and saves a screenshot.

Skips (exit 77) when Chromium is not installed (tools/install-deps.sh --tests installs it).

  dashboard_browser_test.py --staved PATH [--screenshot FILE]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from stave_harness import Staved, check


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
    parser.add_argument("--screenshot", default="dashboard.png")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("chromium not found: skipped (tools/install-deps.sh --tests installs it)")
        sys.exit(77)

    server = Staved(args.staved)
    profile = tempfile.mkdtemp(prefix="stave-chromium-")
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
        url = "http://127.0.0.1:%d/" % server.http_port

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
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    main()
