"""The HTTP admin endpoint end to end, against a running staved with a live pipeline.

A datagen stream, a view and sinks (a PostgreSQL sink whose URL holds a password, against a
real PostgreSQL server, and a blackhole sink), then: /healthz and /readyz; the JSON API
(/api/v1/jobs with each job's dataflow graph and growing counters, /api/v1/checkpoints,
POST /api/v1/checkpoints returning a committed epoch, /api/v1/sinks, /api/v1/sources); the same
facts in SQL (stave_catalog.jobs and .operators, stave_catalog.checkpoints against the API's
history, SHOW JOBS, SHOW CHECKPOINTS); /metrics parsed line by line as Prometheus' text format,
with its naming conventions; the bearer token (401 without it, 200 with it); failpoints over HTTP
only with --enable-failpoints; the admin port refusing to listen beyond loopback without a token;
and the password never showing in the API, the metrics, SHOW, EXPLAIN, the system tables or the
log.

  admin_api_test.py --staved PATH
"""

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import postgres_harness
from stave_harness import Staved, check, free_port

TOKEN = "t0ken-for-tests"
PASSWORD = "pg-Secr3t-pw"


def request(server, path, method="GET", token=None, body=None, basic=None):
    """(status, body text) of one request to the admin port; HTTP errors are returned too.
    `basic` sends HTTP Basic credentials "user:password" instead of a bearer token."""
    headers = {"Authorization": "Bearer " + token} if token else {}
    if basic is not None:
        headers = {"Authorization": "Basic " + base64.b64encode(basic.encode()).decode()}
    data = body.encode() if body is not None else None
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (server.http_port, path), data=data,
                                 method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def get_json(server, path, token=TOKEN):
    status, body = request(server, path, token=token)
    check(status == 200, "%s: %d %s" % (path, status, body))
    return json.loads(body)


# Prometheus text exposition 0.0.4: a sample line is `name{labels} value`.
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? '
                    r'(-?[0-9.eE+-]+|NaN|\+Inf|-Inf)$')
NON_BASE_UNITS = ("_milliseconds", "_microseconds", "_ms", "_us", "_kilobytes", "_megabytes")


def check_prometheus(text):
    """Parses every line; returns {family: type}. Checks names, types and units."""
    types, helps, samples = {}, set(), 0
    for line in text.splitlines():
        check(line == line.strip() and line, "blank or padded line in /metrics: %r" % line)
        if line.startswith("# HELP "):
            name = line.split(" ")[2]
            check(name not in helps, "HELP twice for " + name)
            helps.add(name)
            continue
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            check(kind in ("counter", "gauge", "histogram"), "type of %s: %s" % (name, kind))
            check(name not in types, "TYPE twice for %s (a family split in two)" % name)
            types[name] = kind
            continue
        check(not line.startswith("#"), "unknown comment line: " + line)
        match = SAMPLE.match(line)
        check(match is not None, "not a Prometheus sample line: %r" % line)
        name = match.group(1)
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in types else name
        check(family in types, "sample %s before (or without) its TYPE" % name)
        samples += 1
    for name, kind in types.items():
        check(name.startswith("stave_"), "metric without the stave_ prefix: " + name)
        check((kind == "counter") == name.endswith("_total"),
              "counters and only counters end in _total: %s is a %s" % (name, kind))
        check(not name.endswith(NON_BASE_UNITS), "not in base units: " + name)
        if "duration" in name or "latency" in name:
            check(name.endswith("_seconds"), "a duration not in seconds: " + name)
        if "bytes" in name:
            check(name.endswith(("_bytes", "_bytes_total")), "a size not in bytes: " + name)
    check(samples > 20, "only %d samples" % samples)
    return types


def sample_value(text, name, **labels):
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if not match or match.group(1) != name:
            continue
        if all('%s="%s"' % (k, v) in (match.group(2) or "") for k, v in labels.items()):
            return float(match.group(3))
    return None


def check_no_password(where, text):
    check(PASSWORD not in text, "the password shows in %s:\n%s" % (where, text))


def test_pipeline(binary, postgres):
    server = Staved(binary, extra_args=["--admin-token", TOKEN, "--enable-failpoints"])
    server.start()
    try:
        # Alive and ready: no token needed for either.
        check(request(server, "/healthz") == (200, "ok\n"), "/healthz")
        check(request(server, "/readyz") == (200, "ready\n"), "/readyz")
        # Everything else needs the token, the dashboard page too.
        for path in ("/api/v1/jobs", "/api/v1/checkpoints", "/api/v1/sinks", "/metrics",
                     "/api/v1/sources", "/", "/index.html"):
            status, _ = request(server, path)
            check(status == 401, "%s without a token: %d" % (path, status))
            status, _ = request(server, path, token="wrong" + TOKEN)
            check(status == 401, "%s with a wrong token: %d" % (path, status))
            status, _ = request(server, path, basic="stave:wrong" + TOKEN)
            check(status == 401, "%s with a wrong Basic password: %d" % (path, status))
            status, _ = request(server, path, basic="stave:" + TOKEN)
            check(status == 200, "%s with the token as the Basic password: %d" % (path, status))
        # A browser is asked for Basic credentials for the page; a program for a bearer token.
        for path, scheme in (("/", "Basic"), ("/metrics", "Bearer")):
            try:
                urllib.request.urlopen("http://127.0.0.1:%d%s" % (server.http_port, path),
                                       timeout=60)
                check(False, "%s answered without a token" % path)
            except urllib.error.HTTPError as error:
                challenge = error.headers.get("WWW-Authenticate", "")
                check(challenge.startswith(scheme + " "), "%s challenge: %r" % (path, challenge))
        check(request(server, "/api/v1/nothing", token=TOKEN)[0] == 404, "unknown path")

        server.psql("""CREATE STREAM orders (id BIGINT, price DOUBLE PRECISION) WITH (
            connector = 'datagen', 'rows-per-second' = '2000', 'seed' = '7',
            'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100000000',
            'fields.price.min' = '1', 'fields.price.max' = '100')""")
        server.psql("CREATE MATERIALIZED VIEW parity AS "
                    "SELECT id % 2 AS parity, count(*) AS n, sum(id) AS total FROM orders GROUP BY id % 2")
        server.psql("CREATE SINK parity_out FROM parity WITH (connector = 'postgres', url = '%s', "
                    "table = 'parity_out', primary_key = 'parity')" % postgres.url(password=PASSWORD))
        server.psql("CREATE SINK cheap_orders WITH (connector = 'blackhole') AS "
                    "SELECT id, price FROM orders WHERE price < 50")

        # Jobs: each view and sink as a dataflow graph whose counters grow.
        jobs = {job["name"]: job for job in get_json(server, "/api/v1/jobs")["jobs"]}
        check(set(jobs) == {"parity", "parity_out", "cheap_orders"}, "jobs: %r" % list(jobs))
        parity = jobs["parity"]
        check(parity["kind"] == "materialized view" and parity["state"] == "running", repr(parity))
        check(parity["parallelism"] >= 1 and parity["error"] is None, repr(parity))
        kinds = [node["kind"] for node in parity["nodes"]]
        check(kinds[0] == "source" and "stage" in kinds, "nodes: %r" % kinds)
        check(parity["nodes"][0]["label"] == "stream orders", repr(parity["nodes"][0]))
        operators = [op for node in parity["nodes"] for op in node["operators"]]
        check(any("Aggregate" in op for op in operators), "operators: %r" % operators)
        check(any(op == "Materialize into parity" for op in operators), "operators: %r" % operators)
        ids = {node["id"] for node in parity["nodes"]}
        check(parity["edges"] and all(e["from"] in ids and e["to"] in ids for e in parity["edges"]),
              "edges: %r" % parity["edges"])
        check(any(e["routing"] == "hash" for e in parity["edges"]), "a hash exchange: %r" % parity["edges"])
        for node in parity["nodes"]:
            for key in ("rows_in", "rows_out", "rows_in_per_second", "backpressure", "parallelism"):
                check(key in node, "node lacks %s: %r" % (key, node))
        check("definition" in parity and "GROUP BY" in parity["definition"], repr(parity))
        check("definition" not in jobs["parity_out"], "a sink's definition may hold a password")
        check(jobs["parity_out"]["kind"] == "sink", repr(jobs["parity_out"]))
        check(any("Sink parity_out (postgres)" in op for node in jobs["parity_out"]["nodes"]
                  for op in node["operators"]), repr(jobs["parity_out"]))

        first = parity["nodes"][0]["rows_in"]
        time.sleep(1.5)
        parity = {j["name"]: j for j in get_json(server, "/api/v1/jobs")["jobs"]}["parity"]
        check(parity["nodes"][0]["rows_in"] > first, "the source's counter does not grow")
        check(parity["nodes"][0]["rows_in_per_second"] > 0, "no rate: %r" % parity["nodes"][0])

        # Checkpoints: the history, then one on demand.
        checkpoints = get_json(server, "/api/v1/checkpoints")
        check(checkpoints["checkpoints"], "no checkpoint in the history")
        last = checkpoints["checkpoints"][-1]
        for key in ("epoch", "started", "started_ms", "duration_ms", "bytes", "state",
                    "barrier_cpu_ms", "commit_cpu_ms", "write_ms"):
            check(key in last, "checkpoint lacks %s: %r" % (key, last))
        check(last["state"] == "committed" and last["epoch"] <= checkpoints["committed_epoch"], repr(last))
        status, body = request(server, "/api/v1/checkpoints", method="POST", token=TOKEN, body="")
        check(status == 200, "POST /api/v1/checkpoints: %d %s" % (status, body))
        epoch = json.loads(body)["epoch"]
        check(epoch > last["epoch"], "POST returned epoch %d after %d" % (epoch, last["epoch"]))
        epochs = [c["epoch"] for c in get_json(server, "/api/v1/checkpoints")["checkpoints"]]
        check(epoch in epochs, "epoch %d not in the history" % epoch)
        check(request(server, "/api/v1/checkpoints", method="DELETE", token=TOKEN)[0] == 405, "DELETE")

        # Sinks: committed and finished epochs, the target without its password.
        deadline = time.time() + 30
        while True:
            sinks = {s["name"]: s for s in get_json(server, "/api/v1/sinks")["sinks"]}
            if sinks["parity_out"]["finished_epoch"] > 0 or time.time() > deadline:
                break
            time.sleep(0.2)
        sink = sinks["parity_out"]
        check(sink["connector"] == "postgres" and sink["state"] == "running", repr(sink))
        check(sink["finished_epoch"] > 0 and sink["committed_epoch"] >= sink["finished_epoch"], repr(sink))
        check(sink["requested_delivery"] == "exactly_once", repr(sink))
        check("postgresql://postgres@127.0.0.1" in sink["target"], repr(sink))
        check(sinks["cheap_orders"]["from"] == "(query)", repr(sinks["cheap_orders"]))
        sources = get_json(server, "/api/v1/sources")["sources"]
        check(any(s["stream"] == "orders" and s["reader"] == "parity" for s in sources), repr(sources))

        # The same facts in SQL.
        rows = server.rows("SELECT name, kind, state FROM stave_catalog.jobs ORDER BY name")
        check(rows == ["cheap_orders|sink|running", "parity|materialized view|running",
                       "parity_out|sink|running"], "stave_catalog.jobs: %r" % rows)
        rows = server.rows("SELECT node, kind, operators FROM stave_catalog.operators "
                           "WHERE job = 'parity' ORDER BY node")
        check(any(r.startswith("source0|source|stream orders") for r in rows), repr(rows))
        check(any("Materialize into parity" in r for r in rows), repr(rows))
        rows = server.rows("SELECT rows_in > 0 FROM stave_catalog.jobs WHERE name = 'parity'")
        check(rows == ["t"], "rows_in of parity: %r" % rows)
        show = server.psql("SHOW JOBS").stdout
        check("parity_out|sink|running" in show, "SHOW JOBS: " + show)
        # stave_catalog.checkpoints holds the API's history: each epoch in both (checkpoints
        # go on between the two reads) with the same start (to the second), duration, bytes
        # and state.
        table = {}
        for row in server.rows("SELECT epoch, started_at, duration_ms, bytes, state "
                               "FROM stave_catalog.checkpoints"):
            e, started_at, duration, size, state = row.split("|")
            table[int(e)] = (started_at, float(duration), int(size), state)
        history = {c["epoch"]: c for c in get_json(server, "/api/v1/checkpoints")["checkpoints"]}
        both = sorted(set(table) & set(history))
        check(epoch in both and len(both) >= len(history) - 5,
              "stave_catalog.checkpoints %r against the API's %r" % (sorted(table), sorted(history)))
        for e in both:
            c = history[e]
            expected = (c["started"][:19].replace("T", " "), c["duration_ms"], c["bytes"], c["state"])
            started_at, duration, size, state = table[e]
            check((started_at, size, state) == (expected[0], expected[2], expected[3]) and
                  abs(duration - expected[1]) < 0.0005,  # Microseconds, in ms.
                  "epoch %d: stave_catalog.checkpoints %r, API %r" % (e, table[e], c))
        show = server.rows("SHOW CHECKPOINTS")
        check(show and int(show[0].split("|")[0]) >= epoch, "SHOW CHECKPOINTS: %r" % show[:3])
        check(int(show[0].split("|")[0]) > int(show[-1].split("|")[0]), "newest first: %r" % show[:3])

        # Metrics: a valid exposition with the engine's, jobs' and sinks' facts.
        status, metrics = request(server, "/metrics", token=TOKEN)
        check(status == 200, "/metrics")
        types = check_prometheus(metrics)
        for name in ("stave_checkpoint_duration_seconds", "stave_committed_epoch",
                     "stave_operator_rows_in_total", "stave_operator_rows_out_total",
                     "stave_sink_committed_epoch", "stave_sink_finished_epoch",
                     "stave_job_buffered_state_bytes", "stave_connections", "stave_build_info",
                     "stave_statements_total", "stave_source_bad_records_total",
                     "stave_stream_rows_read_total", "stave_last_checkpoint_bytes",
                     "stave_stream_read_bytes_total", "stave_view_rows_in_total",
                     "stave_view_rows_out_total", "stave_view_in_bytes_total",
                     "stave_view_out_bytes_total", "stave_sink_rows_in_total",
                     "stave_sink_rows_out_total", "stave_sink_in_bytes_total",
                     "stave_sink_rows_delivered_total",
                     "stave_sink_out_bytes_total", "stave_operator_in_bytes_total",
                     "stave_operator_out_bytes_total", "stave_job_state_bytes",
                     "stave_connections_accepted_total", "stave_connections_refused_total",
                     "stave_checkpoint_cpu_seconds_total", "stave_compaction_cpu_seconds_total"):
            check(name in types, "metric %s missing:\n%s" % (name, metrics))
        # Events and bytes in and out per source, view, sink and operator.
        for name, labels in (("stave_stream_rows_read_total", {"stream": "orders"}),
                             ("stave_stream_read_bytes_total", {"stream": "orders"}),
                             ("stave_view_rows_in_total", {"view": "parity"}),
                             ("stave_view_in_bytes_total", {"view": "parity"}),
                             ("stave_view_rows_out_total", {"view": "parity"}),
                             ("stave_view_out_bytes_total", {"view": "parity"}),
                             ("stave_sink_rows_in_total", {"sink": "cheap_orders"}),
                             ("stave_sink_in_bytes_total", {"sink": "cheap_orders"}),
                             ("stave_sink_rows_out_total", {"sink": "cheap_orders"}),
                             ("stave_sink_out_bytes_total", {"sink": "cheap_orders"}),
                             ("stave_operator_in_bytes_total", {"job": "parity", "node": "stage0"}),
                             ("stave_operator_out_bytes_total", {"job": "parity", "node": "source0"}),
                             ("stave_connections_accepted_total", {})):
            value = sample_value(metrics, name, **labels)
            check(value is not None and value > 0, "%s%r: %r" % (name, labels, value))
        # RocksDB's estimate of a small job's state may be 0, but it is there.
        check(sample_value(metrics, "stave_job_state_bytes", job="parity") is not None, "state bytes")
        # A row of (id BIGINT, price DOUBLE PRECISION) is estimated at 8 + 8 bytes and its kind.
        rows = sample_value(metrics, "stave_stream_rows_read_total", stream="orders")
        data = sample_value(metrics, "stave_stream_read_bytes_total", stream="orders")
        check(data >= rows * 8, "bytes %r for %r rows" % (data, rows))
        check(re.search(r'^stave_build_info\{version="[0-9.]+",compiler="[^"]+"\} 1$', metrics, re.M),
              "build info:\n" + metrics)
        check(types["stave_checkpoint_duration_seconds"] == "histogram", "a histogram")
        check(sample_value(metrics, "stave_checkpoint_cpu_seconds_total", phase="commit") > 0,
              "checkpoints' commit CPU")
        count = sample_value(metrics, "stave_checkpoint_duration_seconds_count")
        inf = sample_value(metrics, "stave_checkpoint_duration_seconds_bucket", le="+Inf")
        check(count and count == inf, "histogram count %r, +Inf bucket %r" % (count, inf))
        check(sample_value(metrics, "stave_operator_rows_in_total", job="parity", node="source0") > 0,
              "parity's source rows")
        check(sample_value(metrics, "stave_sink_finished_epoch", sink="parity_out") > 0, "sink epoch")
        # The parity view's two rows, as upserts the target committed.
        check(sample_value(metrics, "stave_sink_rows_delivered_total", sink="parity_out") >= 2,
              "rows delivered")
        check(sample_value(metrics, "stave_committed_epoch") >= epoch, "committed epoch")

        # Failpoints over HTTP (this server has --enable-failpoints): a bad spec is refused, a
        # delay is armed and disarmed.
        status, body = request(server, "/api/v1/failpoints", method="POST", token=TOKEN,
                               body='{"spec": "no_such_failpoint=crash"}')
        check(status == 400, "unknown failpoint: %d %s" % (status, body))
        status, body = request(server, "/api/v1/failpoints", method="POST", token=TOKEN,
                               body='{"spec": "epoch_before_commit=delay(1)"}')
        check(status == 200, "arming a delay: %d %s" % (status, body))
        status, body = request(server, "/api/v1/failpoints", method="POST", token=TOKEN, body="")
        check(status == 200, "disarming: %d %s" % (status, body))

        # The dashboard: one self-contained page.
        status, page = request(server, "/", token=TOKEN)
        check(status == 200 and "checkpoint-chart" in page and "/api/v1/jobs" in page, "dashboard")
        check(not re.search(r'(src|href)="(https?:)?//', page), "the dashboard loads nothing external")

        # The password shows nowhere.
        for path in ("/api/v1/jobs", "/api/v1/sinks", "/api/v1/sources", "/metrics"):
            check_no_password(path, request(server, path, token=TOKEN)[1])
        for sql in ("SHOW SINKS", "SHOW JOBS", "EXPLAIN SINK parity_out",
                    "SELECT * FROM stave_catalog.sinks", "SELECT * FROM stave_catalog.jobs",
                    "SELECT * FROM stave_catalog.operators", "SELECT * FROM stave_catalog.sources"):
            check_no_password(sql, server.psql(sql).stdout)
        server.psql("DROP SINK parity_out")
        server.stop()
        check_no_password("the log", server.read_log())
    finally:
        server.cleanup()


def test_open_on_loopback_without_token(binary):
    """Without a token the loopback port is open; without --enable-failpoints there is no
    failpoint endpoint."""
    server = Staved(binary)
    server.start()
    try:
        status, body = request(server, "/api/v1/jobs")
        check(status == 200 and json.loads(body)["jobs"] == [], "open /api/v1/jobs: %d %s" % (status, body))
        check(request(server, "/api/v1/failpoints", method="POST", body="x=crash")[0] == 404,
              "failpoints without --enable-failpoints")
        check(server.psql("SET stave.failpoints = 'epoch_before_commit=crash'", check=False).returncode != 0,
              "SET stave.failpoints without --enable-failpoints")
    finally:
        server.stop()
        server.cleanup()


def test_refuses_public_port_without_token(binary):
    """Listening beyond loopback needs a token: without one staved refuses to start; with
    STAVE_ADMIN_TOKEN it starts."""
    for env_token, expect_start in ((None, False), (TOKEN, True)):
        env = dict(os.environ)
        env.pop("STAVE_ADMIN_TOKEN", None)
        if env_token:
            env["STAVE_ADMIN_TOKEN"] = env_token
        data_dir = tempfile.mkdtemp(prefix="stave-admin-")

        def launch():
            args = [binary, "--data-dir", data_dir, "--http-listen", "0.0.0.0",
                    "--http-port", str(free_port()), "--pg-port", str(free_port())]
            return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    env=env)

        process = launch()
        if not expect_start:
            out, _ = process.communicate(timeout=30)
            check(process.returncode == 2, "exit code %r" % process.returncode)
            check(b"only with a token" in out, "message: %r" % out)
        else:
            # A port free_port() found may be taken by a test running beside this one before
            # staved binds it: then other ports, as Staved.start does.
            for attempt in range(3):
                time.sleep(1.0)
                if process.poll() is None:
                    break
                out, _ = process.communicate(timeout=30)
                check(b"Address already in use" in out and attempt < 2,
                      "staved with STAVE_ADMIN_TOKEN on 0.0.0.0 exited: %r" % out)
                process = launch()
            process.terminate()
            process.communicate(timeout=30)
        shutil.rmtree(data_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    test_refuses_public_port_without_token(args.staved)
    test_open_on_loopback_without_token(args.staved)
    ok, reason = postgres_harness.available()
    check(ok, reason)
    with postgres_harness.PostgresServer() as postgres:
        test_pipeline(args.staved, postgres)
    print("admin API test passed")


if __name__ == "__main__":
    main()
