"""Point reads of a materialized view by key with pgbench, against Stave and against a real local
PostgreSQL holding the same data (the anchor). Prints queries/s for each protocol mode and client
count, the medians over --repeats runs, and Stave's rate as a share of PostgreSQL's.

    bench/pgbench/run.py --staved build/release/server/staved [--rows 100000] [--seconds 10]
        [--clients 1,8] [--modes simple,extended,prepared] [--repeats 3]

Each run is `pgbench -n -f point_read.sql -M <mode> -c <clients> -j <clients> -T <seconds>`
with point_read.sql:

    \\set k random(1, <rows>)
    SELECT v FROM kv_view WHERE k = :k;
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))

from postgres_harness import PostgresServer  # noqa: E402
from stave_harness import Staved  # noqa: E402


def load(run_sql, rows, postgres):
    run_sql("CREATE TABLE kv (k INT PRIMARY KEY, v BIGINT)")
    step = 5000
    for start in range(1, rows + 1, step):
        values = ", ".join("(%d, %d)" % (k, k * 7) for k in range(start, min(start + step, rows + 1)))
        run_sql("INSERT INTO kv VALUES " + values)
    run_sql("CREATE MATERIALIZED VIEW kv_view AS SELECT k, v FROM kv")
    if postgres:
        run_sql("CREATE UNIQUE INDEX kv_view_k ON kv_view (k)")
        run_sql("VACUUM ANALYZE kv_view")
    else:
        run_sql("CHECKPOINT")


def pgbench(port, user, dbname, script, mode, clients, seconds):
    args = ["pgbench", "-n", "-h", "127.0.0.1", "-p", str(port), "-U", user, "-f", script, "-M", mode,
            "-c", str(clients), "-j", str(clients), "-T", str(seconds), dbname]
    result = subprocess.run(args, capture_output=True, text=True, timeout=seconds + 120)
    if result.returncode != 0:
        raise RuntimeError("pgbench failed: %s\n%s" % (" ".join(args), result.stderr[-2000:]))
    failed = re.search(r"number of failed transactions: (\d+)", result.stdout)
    if failed and int(failed.group(1)) > 0:
        raise RuntimeError("pgbench: failed transactions:\n" + result.stdout)
    match = re.search(r"tps = ([0-9.]+) \(without initial connection time\)", result.stdout)
    if not match:
        raise RuntimeError("no tps in pgbench output:\n" + result.stdout)
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--rows", type=int, default=100000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--clients", default="1,8")
    parser.add_argument("--modes", default="simple,extended,prepared")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    modes = args.modes.split(",")

    script = tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False)
    script.write("\\set k random(1, %d)\nSELECT v FROM kv_view WHERE k = :k;\n" % args.rows)
    script.close()
    os.chmod(script.name, 0o644)

    stave = Staved(args.staved, checkpoint_interval="1s")
    postgres = PostgresServer()
    try:
        print("loading %d rows into Stave and PostgreSQL ..." % args.rows, file=sys.stderr)
        stave.start()
        load(stave.psql, args.rows, postgres=False)
        postgres.start()
        load(postgres.psql, args.rows, postgres=True)
        check_stave = stave.rows("SELECT v FROM kv_view WHERE k = 7")
        if check_stave != ["49"]:
            raise RuntimeError("Stave's view is not loaded: %r" % check_stave)

        servers = [("Stave", stave.pg_port, "stave", "stave"),
                   ("PostgreSQL", postgres.port, "postgres", "postgres")]
        results = {}
        # Repeats interleave the servers, so a change in the machine's load hits both alike.
        for repeat in range(args.repeats):
            for mode in modes:
                for count in clients:
                    for name, port, user, db in servers:
                        tps = pgbench(port, user, db, script.name, mode, count, args.seconds)
                        results.setdefault((mode, count, name), []).append(tps)
                        print("run %d: %-10s -M %-8s -c %d: %.0f queries/s" % (repeat + 1, name, mode, count, tps),
                              file=sys.stderr)

        print("pgbench -n -f point_read.sql -M <mode> -c <clients> -j <clients> -T %d; %d rows; "
              "median of %d runs" % (args.seconds, args.rows, args.repeats))
        print()
        print("| mode | clients | Stave queries/s | PostgreSQL queries/s | Stave / PostgreSQL |")
        print("|---|---|---|---|---|")
        for mode in modes:
            for count in clients:
                stave_tps = statistics.median(results[(mode, count, "Stave")])
                pg_tps = statistics.median(results[(mode, count, "PostgreSQL")])
                print("| %s | %d | %.0f | %.0f | %.2f |" % (mode, count, stave_tps, pg_tps, stave_tps / pg_tps))
    finally:
        stave.cleanup()
        postgres.cleanup()
        os.unlink(script.name)


if __name__ == "__main__":
    main()
