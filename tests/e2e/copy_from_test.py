"""COPY ... FROM STDIN against a real staved, compared with a real PostgreSQL: psql scripts
with inline data and psql's \\copy from files load the same rows into both (compared through
COPY TO STDOUT), and bad data fails on both with the same error and the same CONTEXT line
(PostgreSQL's line numbers), leaving the table as it was. Then what only Stave shows: views
over the table see the rows exactly once, also after a kill; psycopg's cursor.copy() with
CopyFail; transaction blocks; APPEND ONLY tables; streams and views refused; 200,000 rows.

psycopg 3 comes from tools/install-deps.sh --tests (Debian package python3-psycopg); without
it the test is skipped with exit code 77."""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from postgres_harness import PostgresServer
from stave_harness import Staved, check

SKIP = 77

# (table definition, COPY script as psql runs it); each loads table `c` of its own database
# object name, so every case starts empty.
LOADS = [
    ("id INT PRIMARY KEY, name VARCHAR, flag BOOLEAN",
     "COPY {t} FROM STDIN;\n"
     "1\tplain\tt\n"
     "2\ttab\\there\tf\n"
     "3\tnew\\nline \\\\ back\\\\slash\t\\N\n"
     "4\t\\N\ttrue\n"
     "5\toctal \\101\\x42 \\q\tno\n"
     "6\t\tyes\n"
     "\\.\n"),
    ("id BIGINT PRIMARY KEY, name TEXT, price DOUBLE PRECISION",
     "COPY {t} FROM STDIN WITH (FORMAT csv, HEADER);\n"
     "id,name,price\n"
     "1,\"comma, \"\"quoted\"\"\",1.5\n"
     "2,\"two\nlines\",\n"
     "3,\"\",-2\n"
     "4,,1e3\n"
     "\\.\n"),
    ("id INT, name VARCHAR",
     "COPY {t} FROM STDIN WITH (FORMAT csv, DELIMITER ';', NULL 'NULL', QUOTE '''', "
     "ESCAPE '\\');\n"
     "1;'it\\'s'\n"
     "2;NULL\n"
     "3;'NULL'\n"
     "4;'semi;colon'\n"
     "\\.\n"),
    ("id INT, name VARCHAR",
     "COPY {t} FROM STDIN WITH CSV HEADER DELIMITER '|';\n"
     "id|name\n"
     "1|a\n"
     "2|\"b|c\"\n"
     "\\.\n"),
    ("id INT, name VARCHAR, day DATE",
     "COPY {t} (name, id) FROM STDIN (DELIMITER '|', NULL '');\n"
     "x|1\n"
     "|2\n"
     "\\.\n"),
    ("id INT NOT NULL, at TIMESTAMP, n NUMERIC(10,2)",
     "COPY {t} FROM stdin;\n"
     "1\t2024-01-02 03:04:05\t12.345\n"
     "2\t\\N\t-0.5\n"
     "\\.\n"),
]

# (table definition, rows already there, COPY script): each must fail on both servers with
# the same ERROR and CONTEXT lines, and leave the table as it was.
FAILURES = [
    ("id INT PRIMARY KEY, name VARCHAR", "",
     "COPY {t} FROM STDIN;\n1\ta\n2\tb\nx\tc\n\\.\n"),
    ("id INT PRIMARY KEY, name VARCHAR", "",
     "COPY {t} FROM STDIN;\n1\ta\n2\n\\.\n"),
    ("id INT PRIMARY KEY, name VARCHAR", "",
     "COPY {t} FROM STDIN;\n1\ta\n2\tb\tc\n\\.\n"),
    ("id INT PRIMARY KEY, name VARCHAR NOT NULL", "",
     "COPY {t} FROM STDIN;\n1\ta\n2\t\\N\n\\.\n"),
    ("id INT PRIMARY KEY, name VARCHAR", "",
     "COPY {t} FROM STDIN;\n1\ta\n2\tb\n1\tc\n\\.\n"),
    ("id INT PRIMARY KEY, name VARCHAR", "INSERT INTO {t} VALUES (7, 'seven');\n",
     "COPY {t} FROM STDIN (FORMAT csv);\n6,six\n7,again\n\\.\n"),
    ("id INT PRIMARY KEY, name VARCHAR", "",
     "COPY {t} FROM STDIN (FORMAT csv);\n1,a\n2,\"open\n\\.\n"),
    ("id INT, flag BOOLEAN", "",
     "COPY {t} FROM STDIN (FORMAT csv, HEADER);\nid,flag\n1,t\n2,maybe\n\\.\n"),
    ("id INT, name VARCHAR", "",
     "COPY {t} (id, nope) FROM STDIN;\n\\.\n"),
]


def psql_script(port, user, dbname, script):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", user,
                           "-d", dbname, "-f", "-"], input=script, capture_output=True,
                          text=True, env=env, timeout=120)


def error_lines(stderr):
    """The ERROR and CONTEXT lines psql printed, without its "psql:<stdin>:N: " prefix."""
    lines = []
    for line in stderr.splitlines():
        line = re.sub(r"^psql:<stdin>:\d+: ", "", line)
        if line.startswith("ERROR:") or line.startswith("CONTEXT:"):
            lines.append(line)
    return lines


class Both:
    """The same scripts against staved and a real PostgreSQL."""

    def __init__(self, server, postgres):
        self.targets = [("Stave", server.pg_port, "stave", "stave"),
                        ("PostgreSQL", postgres.port, "postgres", "postgres")]

    def run(self, script):
        return [psql_script(port, user, db, script) for _, port, user, db in self.targets]

    def dump(self, table):
        script = "COPY (SELECT * FROM %s ORDER BY 1) TO STDOUT;\n" % table
        results = self.run(script)
        for (name, _, _, _), result in zip(self.targets, results):
            check(result.returncode == 0 and result.stderr == "",
                  "%s: dump of %s: %s" % (name, table, result.stderr))
        return [result.stdout for result in results]


def test_against_postgres(server):
    postgres = PostgresServer()
    postgres.start()
    try:
        both = Both(server, postgres)
        for i, (columns, script) in enumerate(LOADS):
            table = "loaded_%d" % i
            stave, pg = both.run("CREATE TABLE %s (%s);\n%s" % (table, columns,
                                                                 script.format(t=table)))
            check(stave.returncode == 0 and stave.stderr == "", "load %d: %s" % (i, stave.stderr))
            check(pg.returncode == 0 and pg.stderr == "", "load %d on PostgreSQL: %s" % (i, pg.stderr))
            stave_rows, pg_rows = both.dump(table)
            check(stave_rows == pg_rows, "load %d:\nStave has %r\nPostgreSQL has %r"
                  % (i, stave_rows, pg_rows))
            check(stave_rows.count("\n") >= 2, "load %d loaded too little: %r" % (i, stave_rows))
        for i, (columns, before, script) in enumerate(FAILURES):
            table = "failed_%d" % i
            setup = "CREATE TABLE %s (%s);\n%s" % (table, columns, before.format(t=table))
            both.run(setup)
            stave, pg = both.run(script.format(t=table))
            stave_errors, pg_errors = error_lines(stave.stderr), error_lines(pg.stderr)
            check(pg_errors, "failure %d did not fail on PostgreSQL: %r" % (i, pg.stderr))
            check(stave_errors == pg_errors, "failure %d:\nStave said %r\nPostgreSQL said %r"
                  % (i, stave_errors, pg_errors))
            stave_rows, pg_rows = both.dump(table)
            check(stave_rows == pg_rows, "failure %d left %r, PostgreSQL %r"
                  % (i, stave_rows, pg_rows))
        # psql's \copy from files, the way users load CSV exports.
        work = tempfile.mkdtemp(prefix="stave-copy-from-")
        try:
            path = os.path.join(work, "rows.csv")
            with open(path, "w") as f:
                f.write("id,name\r\n")
                for n in range(1, 1001):
                    f.write('%d,"name %d, with ""quotes"""\r\n' % (n, n))
            script = ("CREATE TABLE from_file (id INT PRIMARY KEY, name VARCHAR);\n"
                      "\\copy from_file FROM '%s' WITH (FORMAT csv, HEADER)\n" % path)
            stave, pg = both.run(script)
            check(stave.returncode == 0 and stave.stderr == "", "\\copy: %s" % stave.stderr)
            check(stave.stdout == pg.stdout, "\\copy said %r, not %r" % (stave.stdout, pg.stdout))
            stave_rows, pg_rows = both.dump("from_file")
            check(stave_rows == pg_rows and stave_rows.count("\n") == 1000, "\\copy rows differ")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    finally:
        postgres.cleanup()
    print("COPY FROM compared with PostgreSQL: ok")


def test_stave_only(server):
    import psycopg
    with psycopg.connect(host="127.0.0.1", port=server.pg_port, user="stave", dbname="stave",
                         autocommit=True) as conn:
        conn.execute("CREATE TABLE events (id BIGINT PRIMARY KEY, kind VARCHAR, amount INT)")
        conn.execute("CREATE MATERIALIZED VIEW per_kind AS "
                     "SELECT kind, count(*) AS n, sum(amount) AS total FROM events GROUP BY kind")
        # psycopg's copy(): rows written by the driver, in several CopyData messages.
        with conn.cursor().copy("COPY events (id, kind, amount) FROM STDIN") as copy:
            for n in range(1, 301):
                copy.write_row((n, "odd" if n % 2 else "even", n))
        # An exception inside the block sends CopyFail: nothing of it is written.
        try:
            with conn.cursor().copy("COPY events FROM STDIN") as copy:
                copy.write_row((1000, "odd", 1))
                raise RuntimeError("the client gives up")
        except psycopg.errors.QueryCanceled as error:
            check(error.sqlstate == "57014", "CopyFail: %s" % error.sqlstate)
            check("COPY from stdin failed" in str(error), "CopyFail message: %s" % error)
        check(conn.execute("SELECT count(*) FROM events").fetchone()[0] == 300, "after CopyFail")
        # In a transaction block the rows commit with the block, or not at all.
        conn.autocommit = False
        with conn.cursor().copy("COPY events FROM STDIN (FORMAT csv)") as copy:
            copy.write("301,odd,301\n302,even,302\n")
        conn.rollback()
        with conn.cursor().copy("COPY events FROM STDIN (FORMAT csv)") as copy:
            copy.write("301,odd,3")
            copy.write("01\n302,ev")
            copy.write("en,302\n")
        conn.commit()
        conn.autocommit = True
        check(conn.execute("SELECT count(*) FROM events").fetchone()[0] == 302, "block")
        # Streams and views take no rows.
        conn.execute("CREATE STREAM ticks (n BIGINT) WITH (connector = 'datagen', "
                     "'rows-per-second' = '1', 'fields.n.kind' = 'sequence')")
        for target, sqlstate in (("ticks", "42809"), ("per_kind", "42809"), ("nothing", "42P01")):
            try:
                with conn.cursor().copy("COPY %s FROM STDIN" % target) as copy:
                    copy.write("1\n")
                raise AssertionError("COPY into %s was accepted" % target)
            except psycopg.Error as error:
                check(error.sqlstate == sqlstate, "COPY into %s: %s %s"
                      % (target, error.sqlstate, error))
        # An APPEND ONLY table takes COPY as it takes INSERT.
        conn.execute("CREATE TABLE log (line VARCHAR) APPEND ONLY")
        with conn.cursor().copy("COPY log FROM STDIN") as copy:
            copy.write("one\ntwo\n")
        check(conn.execute("SELECT count(*) FROM log").fetchone()[0] == 2, "append only")
    # 200,000 rows through psql's \copy; the view sees each exactly once, also after a kill.
    work = tempfile.mkdtemp(prefix="stave-copy-big-")
    try:
        path = os.path.join(work, "big.txt")
        with open(path, "w") as f:
            for n in range(1000, 201000):
                f.write("%d\t%s\t%d\n" % (n, "odd" if n % 2 else "even", n % 7))
        started = time.monotonic()
        result = server.psql("\\copy events FROM '%s'" % path)
        elapsed = time.monotonic() - started
        print("200,000 rows by \\copy in %.1fs" % elapsed)
        check(result.stdout.strip() == "", "psql -q printed %r" % result.stdout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    expected = server.rows("SELECT count(*), sum(amount) FROM events")
    check(expected[0].startswith("200302|"), "rows after the big COPY: %r" % expected)
    server.psql("CHECKPOINT")
    view = "SELECT sum(n), sum(total) FROM per_kind"
    check(server.rows(view) == expected, "view %r, table %r" % (server.rows(view), expected))
    server.kill()
    server.start()
    check(server.rows("SELECT count(*), sum(amount) FROM events") == expected, "table after kill")
    server.wait_for(view, expected)
    print("COPY FROM into tables and views: ok")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        print("SKIPPED: psycopg 3 is not installed (Debian package python3-psycopg)")
        sys.exit(SKIP)
    server = Staved(args.staved)
    try:
        server.start()
        test_against_postgres(server)
        test_stave_only(server)
    except BaseException:
        server.report_failure()
        raise
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
