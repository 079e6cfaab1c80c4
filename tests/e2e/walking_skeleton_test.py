"""The walking skeleton end to end: psql → CREATE STREAM → MATERIALIZED VIEW → SELECT, errors with
SQLSTATEs and positions, metrics over HTTP, and a clean stop and start that counts nothing twice."""

import argparse
import concurrent.futures
import re
import socket
import struct
import sys

from stave_harness import Staved, check

PARITY = ["0|500|250500", "1|500|250000"]
PARITY_SQL = "SELECT * FROM parity ORDER BY parity"


def metric(text, name, labels):
    match = re.search(r"^%s\{%s\} (\d+)$" % (re.escape(name), re.escape(labels)), text, re.M)
    return int(match.group(1)) if match else None


def expect_error(server, sql, sqlstate, message_part, position_line=None):
    result = server.psql(sql, check=False, verbose=True)
    check(result.returncode != 0, "expected %r to fail" % sql)
    check(("ERROR:  %s:" % sqlstate) in result.stderr, "expected SQLSTATE %s for %r, got: %s" % (sqlstate, sql, result.stderr))
    check(message_part in result.stderr, "expected %r in: %s" % (message_part, result.stderr))
    if position_line:
        check(position_line in result.stderr, "expected %r in: %s" % (position_line, result.stderr))


def garbage_client(port):
    """A client that sends a startup packet and then nonsense; the server must survive it."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        params = b"user\x00x\x00database\x00stave\x00\x00"
        s.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
        s.recv(4096)
        s.sendall(b"Q\xff\xff\xff\xffgarbage")
        try:
            s.recv(4096)
        except OSError:
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    server = Staved(args.staved)
    try:
        server.start()
        check(server.rows("SELECT 1") == ["1"], "SELECT 1")
        check(server.rows("SELECT version()")[0].startswith("PostgreSQL 15"), "version()")
        check(server.rows("SELECT 1; SELECT 2") == ["1", "2"], "two statements in one query")
        check(server.psql("-- only a comment").returncode == 0, "comment-only query")
        check(server.rows("SET application_name = 'e2e'; SHOW application_name") == ["e2e"], "SET/SHOW")

        server.psql("CREATE STREAM s (id BIGINT) WITH (connector = 'datagen', 'fields.id.kind' = 'sequence', "
                    "'fields.id.start' = '1', 'fields.id.end' = '1000', 'rows-per-second' = '5000')")
        server.psql("CREATE MATERIALIZED VIEW parity AS SELECT id % 2 AS parity, count(*), sum(id) "
                    "FROM s GROUP BY id % 2")
        # A session's parallelism applies to the views it creates, and stays with them.
        check(server.rows("SHOW streaming_parallelism") == ["default"], "default parallelism")
        server.psql("SET streaming_parallelism = 3; "
                    "CREATE MATERIALIZED VIEW evens AS SELECT id, id * 10 AS tenfold FROM s WHERE id % 2 = 0")
        server.wait_for(PARITY_SQL, PARITY)
        server.wait_for("SELECT count(*), min(id), max(tenfold) FROM evens", ["500|2|10000"])
        check(server.rows("SHOW STREAMS") == ["s|datagen"], "SHOW STREAMS")
        check([r.split("|")[0] for r in server.rows("SHOW MATERIALIZED VIEWS")] == ["evens", "parity"],
              "SHOW MATERIALIZED VIEWS")

        # Errors reach psql with SQLSTATE, message and position, and the server keeps serving.
        expect_error(server, "SELEC 1", "42601", 'syntax error at or near "SELEC"', "LINE 1: SELEC 1")
        expect_error(server, "SELECT * FROM nowhere", "42P01", 'relation "nowhere" does not exist')
        expect_error(server, "SET streaming_parallelism = 5000", "22023",
                     'invalid value for parameter "streaming_parallelism": "5000"')
        expect_error(server, "SELECT parity FROM parity WHERE parity", "42804",
                     "argument of WHERE must be type boolean, not type bigint")
        expect_error(server, "CREATE STREAM s (x INT) WITH (connector = 'datagen')", "42P07",
                     'relation "s" already exists')
        expect_error(server, "DROP STREAM s", "2BP01", "other objects depend on it")
        expect_error(server, "CREATE STREAM bad (x INT) WITH (connector = 'datagen', speed = '1')", "22023",
                     "unknown datagen option 'speed'")
        expect_error(server, "SELECT * FROM s", "0A000", 'cannot read stream "s" directly')

        # Many clients at once, and one that sends garbage, do not disturb each other.
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            futures = [pool.submit(server.rows, PARITY_SQL) for _ in range(16)]
            pool.submit(garbage_client, server.pg_port).result()
            check(all(f.result() == PARITY for f in futures), "concurrent readers")
        check(server.rows("SELECT 1") == ["1"], "serving after a garbage client")

        status, body = server.http("/healthz")
        check(status == 200 and body.strip() == "ok", "/healthz")
        status, metrics = server.http("/metrics")
        check(metric(metrics, "stave_view_rows_in_total", 'view="parity"') == 1000, "rows in metric:\n" + metrics)
        check(metric(metrics, "stave_stream_rows_read_total", 'stream="s"') == 2000, "stream rows metric")

        # A clean stop and start: everything is back, and nothing is counted twice.
        check(server.stop() == 0, "clean exit on SIGTERM")
        server.start()
        check(server.rows(PARITY_SQL) == PARITY, "after restart")
        check(server.rows("SELECT count(*) FROM evens") == ["500"], "evens after restart")
        import time
        time.sleep(1.0)
        check(server.rows(PARITY_SQL) == PARITY, "after restart, a second later")
        status, metrics = server.http("/metrics")
        check(metric(metrics, "stave_view_rows_in_total", 'view="parity"') in (None, 0),
              "the finished stream was read again after restart:\n" + metrics)

        server.psql("DROP MATERIALIZED VIEW evens")
        expect_error(server, "SELECT * FROM evens", "42P01", 'relation "evens" does not exist')
        check(server.stop() == 0, "clean exit")
        print("walking skeleton: all checks passed")
        return 0
    except Exception:
        print(server.read_log() if server.process else "", file=sys.stderr)
        raise
    finally:
        server.cleanup()


if __name__ == "__main__":
    sys.exit(main())
