"""Memory limits of ad-hoc queries against a real staved through psycopg 3: a SELECT whose
sort, hash join, aggregate, cross join or series would hold more than its budget fails with 53200
out_of_memory (and the server and the session go on), SET query_memory_limit changes the
budget per session, and --query-memory-limit sets the server's default.

psycopg 3 comes from tools/install-deps.sh --tests (python3-psycopg); without it the test is
skipped with exit code 77."""

import argparse
import sys

from stave_harness import Staved, check

SKIP = 77
ROWS = 4000
# About 100 bytes of text per row: the table holds about half a megabyte.
TEXT = "x" * 90


def connect(server):
    import psycopg
    return psycopg.connect(host="127.0.0.1", port=server.pg_port, user="stave", dbname="stave",
                           autocommit=True, connect_timeout=10)


def expect_out_of_memory(conn, sql, limit):
    import psycopg
    try:
        conn.execute(sql).fetchall()
    except psycopg.Error as error:
        check(error.sqlstate == "53200", "%s: expected 53200, got %s (%s)" % (sql, error.sqlstate, error))
        check("out of memory" in str(error), "message: %r" % str(error))
        detail = error.diag.message_detail or ""
        check("memory limit of %s" % limit in detail, "detail: %r" % detail)
        check("query_memory_limit" in (error.diag.message_hint or ""), "hint: %r" % error.diag.message_hint)
        return
    raise AssertionError("%s ran within a %s budget" % (sql, limit))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    try:
        import psycopg
    except ImportError:
        print("SKIPPED: psycopg 3 is not installed (Debian package python3-psycopg)")
        sys.exit(SKIP)
    server = Staved(args.staved, extra_args=["--query-memory-limit", "16MB"])
    try:
        server.start()
        with connect(server) as conn:
            conn.execute("CREATE TABLE items (n INT PRIMARY KEY, s TEXT, g INT)")
            values = ", ".join("(%d, '%s%05d', %d)" % (n, TEXT, n, n % 7) for n in range(ROWS))
            conn.execute("INSERT INTO items VALUES " + values)
            check(conn.execute("SHOW query_memory_limit").fetchone()[0] == "default", "SHOW default")

            # The server's default (16MB): a cross join of 16 million rows is refused, where it
            # would otherwise grow the server by gigabytes.
            expect_out_of_memory(conn, "SELECT count(*) FROM items a, items b", "16MB")
            check(conn.execute("SELECT count(*) FROM items").fetchone()[0] == ROWS, "count")
            # A series is made a chunk at a time and counted like any other rows: one of a
            # quintillion numbers is refused, and a LIMIT above it reads only what it returns.
            expect_out_of_memory(
                conn, "SELECT count(*) FROM generate_series(1, 1000000000000000000)", "16MB")
            rows = conn.execute(
                "SELECT g * 2 FROM generate_series(1, 1000000000000000000) AS g LIMIT 3 OFFSET 2"
            ).fetchall()
            check([r[0] for r in rows] == [6, 8, 10], "series under a limit: %r" % rows)

            # A session's own budget: each kind of operator that holds rows is limited.
            conn.execute("SET query_memory_limit = '256kB'")
            check(conn.execute("SHOW query_memory_limit").fetchone()[0] == "256kB", "SHOW 256kB")
            expect_out_of_memory(conn, "SELECT n, s FROM items ORDER BY s DESC", "256kB")
            expect_out_of_memory(conn, "SELECT s, count(*) FROM items GROUP BY s", "256kB")
            expect_out_of_memory(
                conn, "SELECT a.n FROM items a JOIN items b ON a.n = b.n", "256kB")
            # A scan reads only the columns the query uses: without the text, these hold
            # a fraction of the table.
            check(conn.execute("SELECT count(*) FROM items").fetchone()[0] == ROWS, "count, 256kB")
            groups = conn.execute("SELECT g, count(*) FROM items GROUP BY g ORDER BY g").fetchall()
            check(len(groups) == 7 and sum(c for _, c in groups) == ROWS, "groups: %r" % groups)
            rows = conn.execute("SELECT n FROM items WHERE g = 3 AND n < 100 ORDER BY n").fetchall()
            check([r[0] for r in rows] == [n for n in range(100) if n % 7 == 3], "filter: %r" % rows)
            # A scan under a LIMIT stops at the rows it returns, so it holds little.
            check(len(conn.execute("SELECT n, s FROM items LIMIT 5").fetchall()) == 5, "limit")
            # A query that holds little still runs under it: a point lookup by the key.
            row = conn.execute("SELECT s FROM items WHERE n = 7").fetchone()
            check(row[0] == TEXT + "00007", "point lookup: %r" % (row,))
            # In a transaction block the error fails the block, as any error does.
            conn.autocommit = False
            expect_out_of_memory(conn, "SELECT n, s FROM items ORDER BY s DESC", "256kB")
            conn.rollback()
            conn.autocommit = True

            # No limit: the same sort runs, and is right.
            conn.execute("SET query_memory_limit = 0")
            check(conn.execute("SHOW query_memory_limit").fetchone()[0] == "0", "SHOW 0")
            rows = conn.execute("SELECT n FROM items ORDER BY s DESC").fetchall()
            check([r[0] for r in rows] == list(range(ROWS - 1, -1, -1)), "sorted without a limit")
            conn.execute("SET query_memory_limit = '1GB'")
            check(conn.execute("SHOW query_memory_limit").fetchone()[0] == "1GB", "SHOW 1GB")
            groups = conn.execute("SELECT g, count(*) FROM items GROUP BY g ORDER BY g").fetchall()
            check(len(groups) == 7 and sum(c for _, c in groups) == ROWS, "groups: %r" % groups)

            for bad in ("'lots'", "'-1MB'", "'5 parsecs'"):
                try:
                    conn.execute("SET query_memory_limit = " + bad)
                    raise AssertionError("SET query_memory_limit = %s was accepted" % bad)
                except psycopg.Error as error:
                    check(error.sqlstate == "22023", "%s: %s" % (bad, error.sqlstate))
            conn.execute("RESET query_memory_limit")
            check(conn.execute("SHOW query_memory_limit").fetchone()[0] == "default", "RESET")
        # The setting is the session's: another one starts with the server's default.
        with connect(server) as conn:
            conn.execute("SET query_memory_limit = '128kB'")
            with connect(server) as other:
                check(other.execute("SHOW query_memory_limit").fetchone()[0] == "default",
                      "another session's SET leaks")
                check(len(other.execute("SELECT s FROM items ORDER BY s").fetchall()) == ROWS,
                      "sort under the server's default")
            expect_out_of_memory(conn, "SELECT s FROM items ORDER BY s", "128kB")
        check(server.process.poll() is None, "staved is still running")
        print("query memory limits: ok")
    except BaseException:
        server.report_failure()
        raise
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
