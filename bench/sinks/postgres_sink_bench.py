#!/usr/bin/env python3
"""Rows per second into a real PostgreSQL server through Stave's postgres sink, in each mode,
beside what PostgreSQL takes without Stave, measured in the same run on the same server.

Baselines (the limits):
  copy      COPY of the same number of rows, straight from psql (the fastest way in).
  upsert    hand-written batched upserts from psql: INSERT ... VALUES (1,000 rows) ON CONFLICT
            (id) DO UPDATE, all in one transaction.
  generator the same datagen stream into a blackhole sink (what Stave produces without a target).

Stave runs each sink with checkpoints every second and exactly-once delivery: a datagen stream
of N rows (id a sequence, k and v random) → CREATE SINK → the clock stops when the target has
committed N rows (stave_sink_rows_delivered_total; the table's count is checked after), or for
the blackhole when the sink has handed over N rows. Medians over --repeats.

  bench/sinks/postgres_sink_bench.py --staved build/bench/server/staved [--rows N] [--repeats R]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "e2e"))
from postgres_harness import PostgresServer  # noqa: E402
from stave_harness import Staved  # noqa: E402

MODES = [
    ("append, progress", "commit = 'progress'"),
    ("append, two_phase", "commit = 'two_phase'"),
    ("upsert, progress", "primary_key = 'id', commit = 'progress'"),
    ("upsert, two_phase", "primary_key = 'id', commit = 'two_phase'"),
]


def rows_text(n):
    # The shape the datagen stream has: three bigints.
    return "".join("%d\t%d\t%d\n" % (i, (i * 7919) % 100000, (i * 104729) % 1000) for i in range(1, n + 1))


def timed_psql(pg, sql_file, db="postgres"):
    started = time.time()
    subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-d", db,
                    "-v", "ON_ERROR_STOP=1", "-f", sql_file], check=True, capture_output=True)
    return time.time() - started


def settle(pg, table):
    # Each run starts on a quiet server: the table a run filled is dropped at once, so no
    # autovacuum of its millions of rows runs into the next measurement, and a checkpoint
    # writes the dirty pages out now rather than during it.
    pg.psql("DROP TABLE IF EXISTS %s; CHECKPOINT" % table)


def copy_baseline(pg, n, work):
    pg.psql("CREATE TABLE copy_base (id bigint, k bigint, v bigint)")
    data = os.path.join(work, "rows.tsv")
    with open(data, "w") as f:
        f.write(rows_text(n))
    script = os.path.join(work, "copy.sql")
    with open(script, "w") as f:
        f.write("\\copy copy_base FROM '%s'\n" % data)
    elapsed = timed_psql(pg, script)
    settle(pg, "copy_base")
    return elapsed


def upsert_baseline(pg, n, work):
    pg.psql("CREATE TABLE upsert_base (id bigint PRIMARY KEY, k bigint, v bigint)")
    script = os.path.join(work, "upsert.sql")
    with open(script, "w") as f:
        f.write("BEGIN;\n")
        for first in range(1, n + 1, 1000):
            values = ",".join("(%d,%d,%d)" % (i, (i * 7919) % 100000, (i * 104729) % 1000)
                              for i in range(first, min(n, first + 999) + 1))
            f.write("INSERT INTO upsert_base (id, k, v) VALUES %s ON CONFLICT (id) DO UPDATE SET "
                    "k = EXCLUDED.k, v = EXCLUDED.v;\n" % values)
        f.write("COMMIT;\n")
    elapsed = timed_psql(pg, script)
    settle(pg, "upsert_base")
    return elapsed


def stream_sql(name, n):
    return ("CREATE STREAM %s (id BIGINT, k BIGINT, v BIGINT) WITH (connector = 'datagen', "
            "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '%d', "
            "'fields.k.min' = '0', 'fields.k.max' = '99999', 'fields.v.min' = '0', "
            "'fields.v.max' = '999', 'seed' = '1')" % (name, n))


def sink_counter(staved, name, sink):
    _, text = staved.http("/metrics")
    match = re.search(r'%s\{sink="%s"\} (\d+)' % (name, sink), text)
    return int(match.group(1)) if match else 0


def run_stave(staved, pg, n, index, label, options):
    stream, sink, table = "s%d" % index, "k%d" % index, "t%d" % index
    staved.psql(stream_sql(stream, n))
    if options is None:
        started = time.time()
        staved.psql("CREATE SINK %s FROM %s WITH (connector = 'blackhole')" % (sink, stream))
        while sink_counter(staved, "stave_sink_rows_out_total", sink) < n:
            time.sleep(0.02)
    else:
        started = time.time()
        staved.psql("CREATE SINK %s FROM %s WITH (connector = 'postgres', url = '%s', table = '%s', %s)"
                    % (sink, stream, pg.url(), table, options))
        # Stave's count of rows the target committed: a count(*) of the growing table each
        # time would load the server under test.
        while sink_counter(staved, "stave_sink_rows_delivered_total", sink) < n:
            time.sleep(0.02)
    elapsed = time.time() - started
    if options is not None:
        count = int(pg.query("SELECT count(*) FROM %s" % table)[0][0])
        if count != n:
            sys.exit("%s: the target holds %d rows, not %d" % (label, count, n))
    staved.psql("DROP SINK %s" % sink)
    staved.psql("DROP STREAM %s" % stream)
    if options is not None:
        settle(pg, table)
    print("  %s: %.0f K rows/s" % (label, n / elapsed / 1000), file=sys.stderr)
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--rows", type=int, default=1000000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = args.rows
    times = {}
    with tempfile.TemporaryDirectory(prefix="stave-sink-bench-") as work, PostgresServer() as pg:
        staved = Staved(args.staved, checkpoint_interval="1s")
        try:
            staved.start()
            index = 0
            for repeat in range(args.repeats):
                print("repeat %d/%d" % (repeat + 1, args.repeats), file=sys.stderr)
                times.setdefault("copy", []).append(copy_baseline(pg, n, work))
                print("  copy: %.0f K rows/s" % (n / times["copy"][-1] / 1000), file=sys.stderr)
                times.setdefault("upsert", []).append(upsert_baseline(pg, n, work))
                print("  upsert: %.0f K rows/s" % (n / times["upsert"][-1] / 1000), file=sys.stderr)
                times.setdefault("generator", []).append(run_stave(staved, pg, n, index, "generator", None))
                index += 1
                for label, options in MODES:
                    times.setdefault(label, []).append(run_stave(staved, pg, n, index, label, options))
                    index += 1
            staved.stop()
        finally:
            staved.cleanup()

    rate = {name: n / statistics.median(values) for name, values in times.items()}
    print("%d rows per run, %d runs, medians; checkpoints every 1 s, delivery exactly_once\n" % (n, args.repeats))
    print("| what | rows/s | vs COPY | vs batched upsert |")
    print("|---|---:|---:|---:|")
    for name in ["copy", "upsert", "generator"] + [label for label, _ in MODES]:
        title = {"copy": "COPY from psql (baseline)", "upsert": "batched upsert from psql (baseline)",
                 "generator": "Stave: datagen into blackhole"}.get(name, "Stave sink: " + name)
        print("| %s | %.0f K | %.2f | %.2f |" % (title, rate[name] / 1000, rate[name] / rate["copy"],
                                               rate[name] / rate["upsert"]))


if __name__ == "__main__":
    main()
