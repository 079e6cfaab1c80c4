"""Protocol features real clients rely on, against a real staved: query cancellation (libpq's
PQcancel through psycopg 3 and psql's Ctrl-C), statement_timeout, COPY ... TO STDOUT through
psql's \\copy (whose files must equal byte for byte what a real PostgreSQL writes for the same
rows), cursors (psql's FETCH_COUNT, DECLARE/FETCH/MOVE/CLOSE through psycopg) and notices.

psycopg 3 comes from tools/install-deps.sh --tests (Debian package python3-psycopg); without
it the test is skipped with exit code 77."""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from postgres_harness import PostgresServer
from stave_harness import Staved, check

SKIP = 77
# Slow in every build: a nested loop over 1,500 x 1,500 x 1,500 candidate rows, of which none
# matches, so it runs for minutes but holds little memory.
SLOW_QUERY = ("SELECT count(*) FROM numbers a, numbers b, numbers c "
              "WHERE a.n + b.n + c.n = -1")


def connect(server):
    import psycopg
    return psycopg.connect(host="127.0.0.1", port=server.pg_port, user="stave", dbname="stave",
                           autocommit=True, connect_timeout=10)


def create_numbers(server):
    values = ", ".join("(%d)" % n for n in range(1500))
    server.psql("CREATE TABLE numbers (n INT); INSERT INTO numbers VALUES " + values)


def expect_canceled(run, message):
    """Runs `run` (which must raise psycopg's QueryCanceled) and checks the message."""
    import psycopg
    started = time.monotonic()
    try:
        run()
    except psycopg.errors.QueryCanceled as error:
        check(error.sqlstate == "57014", "expected 57014, got %s" % error.sqlstate)
        check(message in str(error), "expected %r in %r" % (message, str(error)))
        return time.monotonic() - started
    raise AssertionError("the slow query finished instead of being canceled")


def test_psycopg_cancel(server):
    with connect(server) as conn:
        timer = threading.Timer(0.5, conn.cancel)
        timer.start()
        try:
            elapsed = expect_canceled(lambda: conn.execute(SLOW_QUERY).fetchall(),
                                      "canceling statement due to user request")
        finally:
            timer.cancel()
        check(elapsed < 30, "the cancel took %.1fs to take effect" % elapsed)
        # The session goes on, and a cancel that arrives while idle cancels nothing.
        check(conn.execute("SELECT count(*) FROM numbers").fetchone()[0] == 1500, "count after cancel")
        conn.cancel()
        time.sleep(0.2)
        check(conn.execute("SELECT 1").fetchone()[0] == 1, "a cancel while idle cancels nothing")
        # In a transaction block the cancel fails the block, as any error does.
        conn.autocommit = False
        timer = threading.Timer(0.5, conn.cancel)
        timer.start()
        expect_canceled(lambda: conn.execute(SLOW_QUERY).fetchall(), "due to user request")
        conn.rollback()
        check(conn.execute("SELECT 2").fetchone()[0] == 2, "after rollback")
        conn.rollback()
    print("psycopg cancel: ok")


def test_statement_timeout(server):
    import psycopg
    with connect(server) as conn:
        conn.execute("SET statement_timeout = '300ms'")
        check(conn.execute("SHOW statement_timeout").fetchone()[0] == "300ms", "SHOW 300ms")
        elapsed = expect_canceled(lambda: conn.execute(SLOW_QUERY).fetchall(),
                                  "canceling statement due to statement timeout")
        check(elapsed < 30, "the timeout took %.1fs to take effect" % elapsed)
        check(conn.execute("SELECT count(*) FROM numbers").fetchone()[0] == 1500, "quick query")
        # Extended protocol (a server-side parameter) too.
        expect_canceled(lambda: conn.execute(SLOW_QUERY + " AND a.n > %s", (0,)).fetchall(),
                        "due to statement timeout")
        conn.execute("SET statement_timeout = 5000")
        check(conn.execute("SHOW statement_timeout").fetchone()[0] == "5s", "SHOW 5s")
        conn.execute("SET statement_timeout TO '1min'")
        check(conn.execute("SHOW statement_timeout").fetchone()[0] == "1min", "SHOW 1min")
        conn.execute("RESET statement_timeout")
        check(conn.execute("SHOW statement_timeout").fetchone()[0] == "0", "SHOW 0")
        for bad, sqlstate in (("'soon'", "22023"), ("-1", "22023")):
            try:
                conn.execute("SET statement_timeout = " + bad)
                raise AssertionError("SET statement_timeout = %s was accepted" % bad)
            except psycopg.Error as error:
                check(error.sqlstate == sqlstate, "%s: %s" % (bad, error.sqlstate))
    # As a start-up option, as libpq's PGOPTIONS sends it.
    with psycopg.connect(host="127.0.0.1", port=server.pg_port, user="stave", dbname="stave",
                         autocommit=True, options="-c statement_timeout=200") as conn:
        pass
    print("statement_timeout: ok")


def test_psql_interrupt(server):
    """psql answers SIGINT (Ctrl-C) with a CancelRequest (and then stops its -c commands)."""
    args = ["psql", "-X", "-h", "127.0.0.1", "-p", str(server.pg_port), "-U", "stave", "-d",
            "stave", "-At", "-c", SLOW_QUERY]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    check(process.poll() is None, "psql finished before the interrupt")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    check("canceling statement due to user request" in err, "psql stderr: %r" % err)
    check(process.returncode != 0 and out == "", "psql stdout: %r" % out)
    print("psql interrupt: ok")


# Values that need escaping in text format or quoting in CSV; NULLs; the CSV end marker.
COPY_ROWS = [
    (1, "plain", True),
    (2, "tab\there", False),
    (3, "new\nline and \r return", None),
    (4, "back\\slash \\N", True),
    (5, 'comma, "quoted"', False),
    (6, "", True),
    (7, None, None),
    (8, "\\.", True),
    (9, "semi;colon|pipe", False),
    (10, "ünïcødé", True),
]
COPY_COMMANDS = [
    r"\copy (SELECT id, name, flag FROM copied ORDER BY id) TO '{file}'",
    r"\copy (SELECT id, name, flag FROM copied ORDER BY id) TO '{file}' csv header",
    r"\copy (SELECT name FROM copied ORDER BY id) TO '{file}' csv",
    r"\copy copied TO '{file}' csv header",
    r"\copy copied (name, id) TO '{file}'",
    r"\copy (SELECT id, name FROM copied ORDER BY id) TO '{file}' WITH (FORMAT csv, HEADER, "
    r"DELIMITER ';', NULL 'NULL')",
    r"\copy (SELECT id, name FROM copied ORDER BY id) TO '{file}' WITH (DELIMITER '|', NULL '')",
    r"\copy (SELECT id, name FROM copied ORDER BY id) TO '{file}' WITH (FORMAT csv, QUOTE '''', "
    r"ESCAPE '\')",
    r"\copy (SELECT id, name FROM copied WHERE id < 0) TO '{file}' csv header",
]


def psql_copy(port, user, dbname, command, path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    result = subprocess.run(["psql", "-X", "-h", "127.0.0.1", "-p", str(port), "-U", user, "-d",
                             dbname, "-v", "ON_ERROR_STOP=1", "-c", command.format(file=path)],
                            capture_output=True, text=True, env=env, timeout=60)
    check(result.returncode == 0, "%s failed: %s" % (command, result.stderr))
    with open(path, "rb") as f:
        return result.stdout, f.read()


def test_copy(server):
    import psycopg
    postgres = PostgresServer()
    postgres.start()
    work = tempfile.mkdtemp(prefix="stave-copy-")
    try:
        create = "CREATE TABLE copied (id INT PRIMARY KEY, name VARCHAR, flag BOOLEAN)"
        targets = [(server.pg_port, "stave", "stave"), (postgres.port, "postgres", "postgres")]
        for port, user, dbname in targets:
            with psycopg.connect(host="127.0.0.1", port=port, user=user, dbname=dbname,
                                 autocommit=True) as conn:
                conn.execute(create)
                for row in COPY_ROWS:
                    conn.execute("INSERT INTO copied VALUES (%s, %s, %s)", row)
        for i, command in enumerate(COPY_COMMANDS):
            stave_out, stave_file = psql_copy(server.pg_port, "stave", "stave", command,
                                              os.path.join(work, "stave-%d" % i))
            pg_out, pg_file = psql_copy(postgres.port, "postgres", "postgres", command,
                                        os.path.join(work, "pg-%d" % i))
            if "(SELECT" not in command:
                # A whole table: PostgreSQL writes its heap order, Stave its key encoding's.
                stave_file = sorted(stave_file.split(b"\n"))
                pg_file = sorted(pg_file.split(b"\n"))
            check(stave_file == pg_file, "%s:\nStave wrote %r\nPostgreSQL wrote %r"
                  % (command, stave_file, pg_file))
            check(stave_out == pg_out, "%s: psql printed %r, not %r" % (command, stave_out, pg_out))
        with open(os.path.join(work, "stave-0"), "rb") as f:
            check(b"tab\\there" in f.read(), "an escaped tab")
        # COPY TO STDOUT straight through psql, and of a materialized view.
        server.psql("CREATE MATERIALIZED VIEW copied_flags AS "
                    "SELECT flag, count(*) AS n FROM copied GROUP BY flag")
        server.psql("CHECKPOINT")
        out = server.psql("COPY (SELECT flag, n FROM copied_flags ORDER BY flag) TO STDOUT "
                          "WITH (FORMAT csv, HEADER)").stdout
        check(out == "flag,n\nf,3\nt,5\n,2\n", "COPY of a view: %r" % out)
        out = server.psql("COPY copied_flags TO STDOUT").stdout
        check(sorted(out.splitlines()) == ["\\N\t2", "f\t3", "t\t5"], "COPY view: %r" % out)
        # Errors name what is wrong, with PostgreSQL's SQLSTATEs.
        for sql, sqlstate in (("COPY copied FROM '/tmp/x'", "0A000"),
                              ("COPY copied TO '/tmp/x'", "0A000"),
                              ("COPY copied TO STDOUT (FORMAT binary)", "0A000"),
                              ("COPY copied TO STDOUT (FORMAT xml)", "22023"),
                              ("COPY copied TO STDOUT (BOGUS)", "42601"),
                              ("COPY copied TO STDOUT (QUOTE '\"')", "0A000"),
                              ("COPY nothing TO STDOUT", "42P01"),
                              ("COPY (SELECT nope FROM copied) TO STDOUT", "42703")):
            result = server.psql(sql, check=False, verbose=True)
            check("ERROR:  %s:" % sqlstate in result.stderr, "%s: %s" % (sql, result.stderr))
        result = server.psql("COPY (SELECT nope FROM copied) TO STDOUT", check=False)
        check("LINE 1: COPY (SELECT nope FROM copied) TO STDOUT\n" in result.stderr and
              "\n" + " " * (len("LINE 1: COPY (SELECT ")) + "^" in result.stderr,
              "position: %r" % result.stderr)
        # psycopg's copy() reads the same stream.
        with connect(server) as conn:
            copy_sql = "COPY (SELECT id, name FROM copied ORDER BY id) TO STDOUT"
            with conn.cursor().copy(copy_sql) as copy:
                rows = list(copy.rows())
            check(len(rows) == len(COPY_ROWS) and rows[1] == ("2", "tab\there"), "psycopg: %r" % rows)
            check(conn.execute("SELECT 1").fetchone()[0] == 1, "after copy")
    finally:
        postgres.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    print("COPY TO: ok")


def test_cursors(server):
    """psql's FETCH_COUNT reads a query through a cursor, FETCH_COUNT rows at a time; its output
    must equal the one without."""
    server.psql("CREATE MATERIALIZED VIEW numbers_view AS SELECT n, n % 7 AS r FROM numbers")
    server.psql("CHECKPOINT")
    for query in ("SELECT n, 'row ' || n AS label FROM numbers ORDER BY n",
                  "SELECT * FROM numbers_view ORDER BY n"):
        base = ["psql", "-X", "-h", "127.0.0.1", "-p", str(server.pg_port), "-U", "stave", "-d",
                "stave", "-v", "ON_ERROR_STOP=1"]
        plain = subprocess.run(base + ["-c", query], capture_output=True, text=True, timeout=60)
        fetched = subprocess.run(base + ["-v", "FETCH_COUNT=10", "-c", query],
                                 capture_output=True, text=True, timeout=60)
        check(plain.returncode == 0 and fetched.returncode == 0,
              "psql failed: %s %s" % (plain.stderr, fetched.stderr))
        check("(1500 rows)" in plain.stdout, "plain output: %r" % plain.stdout[-200:])
        # psql aligns each FETCH_COUNT batch on its own, so compare the values, not the spacing.
        def cells(text):
            return [[c.strip() for c in line.split("|")] for line in text.splitlines()
                    if "|" in line]
        check(cells(plain.stdout) == cells(fetched.stdout), "FETCH_COUNT output differs")
        check("(1500 rows)" in fetched.stdout, "FETCH_COUNT output: %r" % fetched.stdout[-200:])
    # The rules, through psycopg (extended protocol) and psql (simple).
    import psycopg
    with connect(server) as conn:
        try:
            conn.execute("DECLARE c CURSOR FOR SELECT n FROM numbers")
            raise AssertionError("DECLARE outside a transaction block was accepted")
        except psycopg.Error as error:
            check(error.sqlstate == "25P01", "DECLARE outside a block: %s" % error.sqlstate)
            check("DECLARE CURSOR can only be used in transaction blocks" in str(error), str(error))
        conn.execute("BEGIN")
        conn.execute("DECLARE c CURSOR FOR SELECT n FROM numbers ORDER BY n")
        conn.execute("DECLARE h CURSOR WITH HOLD FOR SELECT n FROM numbers ORDER BY n DESC")
        cur = conn.execute("FETCH FORWARD 3 FROM c")
        check([r[0] for r in cur.fetchall()] == [0, 1, 2], "FETCH 3")
        check(cur.statusmessage == "FETCH 3", "tag %r" % cur.statusmessage)
        check(conn.execute("MOVE 1000 IN c").statusmessage == "MOVE 1000", "MOVE")
        check(len(conn.execute("FETCH ALL FROM c").fetchall()) == 497, "FETCH ALL")
        conn.execute("COMMIT")
        try:
            conn.execute("FETCH c")
            raise AssertionError("a cursor without HOLD outlived COMMIT")
        except psycopg.Error as error:
            check(error.sqlstate == "34000", "FETCH after COMMIT: %s" % error.sqlstate)
        check(conn.execute("FETCH 2 FROM h").fetchall() == [(1499,), (1498,)], "WITH HOLD")
        check(conn.execute("CLOSE h").statusmessage == "CLOSE CURSOR", "CLOSE")
    # psycopg's named (server-side) cursors: DECLARE, Describe of the cursor as a portal, FETCH.
    with psycopg.connect(host="127.0.0.1", port=server.pg_port, user="stave", dbname="stave",
                         connect_timeout=10) as conn:
        with conn.cursor(name="named") as cur:
            cur.execute("SELECT n, n * 2 AS twice FROM numbers ORDER BY n")
            check([d.name for d in cur.description] == ["n", "twice"], "description")
            check(cur.fetchmany(3) == [(0, 0), (1, 2), (2, 4)], "fetchmany")
            check(len(cur.fetchall()) == 1497, "fetchall")
        conn.commit()
    print("cursors: ok")


def test_notices(server):
    result = server.psql("DROP TABLE IF EXISTS missing_table", verbose=True)
    check("NOTICE:  00000: table \"missing_table\" does not exist, skipping" in result.stderr,
          "DROP IF EXISTS: %r" % result.stderr)
    for statement in ("COMMIT", "ROLLBACK"):
        result = server.psql(statement, verbose=True)
        check("WARNING:  25P01: there is no transaction in progress" in result.stderr,
              "%s: %r" % (statement, result.stderr))
    result = server.psql("BEGIN; BEGIN; COMMIT", verbose=True)
    check("WARNING:  25001: there is already a transaction in progress" in result.stderr,
          "BEGIN twice: %r" % result.stderr)
    check("no transaction in progress" not in result.stderr, "COMMIT in a block: %r" % result.stderr)
    print("notices: ok")


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
        create_numbers(server)
        test_psycopg_cancel(server)
        test_statement_timeout(server)
        test_psql_interrupt(server)
        test_copy(server)
        test_cursors(server)
        test_notices(server)
    except BaseException:
        server.report_failure()
        raise
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
