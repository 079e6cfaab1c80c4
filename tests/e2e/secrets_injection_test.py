"""Secrets never show, and names and values reaching a target PostgreSQL are quoted or bound.

Secrets: sinks whose passwords are given every way a PostgreSQL sink takes one (in a URL's
user information, in a URL's query, as the `password` option) and a user made with a
password; then every place that could show them is searched for each password: SHOW,
EXPLAIN, every table of stave_catalog, pg_catalog and information_schema, every GET endpoint
of the admin API, and the server's log (at debug level).

Injection: a table whose name and columns hold quotes, semicolons, spaces, mixed case, SQL
and non-ASCII letters, with values that hold quotes, backslashes, tabs and newlines, sunk into
a target table of the same kind of name in a schema of that kind, in upsert mode (keyed by a
hostile column) with two-phase commit and in append mode with progress commit; the rows must
arrive exactly, and nothing else may happen in the target (its tables are only those expected,
a bait table is intact).

  secrets_injection_test.py --staved PATH
"""

import argparse
import json
import time
import urllib.request

import postgres_harness
from stave_harness import Staved, check

URL_PASSWORD = "Url-Pw-7fq2"
QUERY_PASSWORD = "Query-Pw-9xk4"
OPTION_PASSWORD = "Option-Pw-3mz8"
USER_PASSWORD = "User-Pw-5tr1"
PASSWORDS = (URL_PASSWORD, QUERY_PASSWORD, OPTION_PASSWORD, USER_PASSWORD)

# Hostile names: a quote, a semicolon with SQL after it, spaces, mixed case, non-ASCII.
SCHEMA = 'Sch"ema; DROP TABLE bait; --'
TABLE = "Tåble'); DROP TABLE bait; --"
COLUMNS = ['Key "K"', "v'1; DELETE FROM bait", "Ünïcødé Mixed", "tab\tcol"]
VALUES = [
    (1, "it's", "back\\slash", "tab\there"),
    (2, 'say "hi"; DROP TABLE bait;', "line\nbreak", "ünïcødé ✓"),
    (3, "", "%s $1 ?", "NULL"),
]


def ident(name):
    return '"%s"' % name.replace('"', '""')


def literal(text):
    return "'%s'" % text.replace("'", "''")


def check_absent(where, text):
    for password in PASSWORDS:
        check(password not in text, "the password %s shows in %s:\n%s" % (password, where, text))


def sql_surfaces(server):
    """The text of every SQL surface: SHOW, EXPLAIN and every system table."""
    texts = {}
    for sql in ("SHOW SINKS", "SHOW MATERIALIZED VIEWS", "SHOW TABLES", "SHOW JOBS",
                "SHOW CHECKPOINTS", "EXPLAIN SINK hostile_upsert", "EXPLAIN SINK hostile_append",
                "EXPLAIN SINK by_query"):
        texts[sql] = server.psql(sql).stdout
    tables = server.rows("SELECT table_schema || '.' || table_name FROM information_schema.tables "
                         "WHERE table_schema IN ('stave_catalog', 'pg_catalog', 'information_schema')")
    # The discovery itself must work, or the search below proves nothing.
    for expected in ("stave_catalog.sinks", "stave_catalog.jobs", "stave_catalog.progress",
                     "pg_catalog.pg_class", "pg_catalog.pg_roles", "information_schema.views"):
        check(expected in tables, "%s is not listed: %r" % (expected, tables))
    for table in tables:
        schema, name = table.split(".", 1)
        texts[table] = server.psql("SELECT * FROM %s.%s" % (schema, ident(name))).stdout
    return texts


def http_surfaces(server):
    texts = {}
    for path in ("/metrics", "/api/v1/jobs", "/api/v1/checkpoints", "/api/v1/sinks",
                 "/api/v1/sources", "/api/v1/bad_records", "/", "/readyz", "/healthz"):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (server.http_port, path), timeout=30) as r:
            texts[path] = r.read().decode()
    return texts


def wait_rows(pg, sql, expected, timeout=60):
    deadline = time.time() + timeout
    rows = None
    while time.time() < deadline:
        rows = pg.query(sql, db="target", null=None)
        if rows == expected:
            return
        time.sleep(0.2)
    raise AssertionError("%s gave %r, expected %r" % (sql, rows, expected))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    ok, reason = postgres_harness.available()
    check(ok, reason)
    with postgres_harness.PostgresServer() as pg:
        pg.create_database("target")
        pg.psql("CREATE SCHEMA %s; CREATE TABLE bait (n int); INSERT INTO bait VALUES (42);"
                % ident(SCHEMA), db="target")
        server = Staved(args.staved, extra_args=["--log-level", "debug"])
        server.start()
        try:
            server.psql("CREATE USER alice WITH PASSWORD %s" % literal(USER_PASSWORD))
            server.psql("ALTER USER alice WITH PASSWORD %s" % literal(USER_PASSWORD + "x"))
            columns = ", ".join("%s %s" % (ident(c), "BIGINT PRIMARY KEY" if i == 0 else "VARCHAR")
                                for i, c in enumerate(COLUMNS))
            server.psql("CREATE TABLE %s (%s)" % (ident(TABLE), columns))
            # An append-only twin for the append sink.
            server.psql("CREATE TABLE %s (%s) APPEND ONLY" % (
                ident(TABLE + " log"), columns.replace(" PRIMARY KEY", "")))
            for row in VALUES:
                for table in (TABLE, TABLE + " log"):
                    server.psql("INSERT INTO %s VALUES (%d, %s)"
                                % (ident(table), row[0], ", ".join(literal(v) for v in row[1:])))
            server.psql("CREATE MATERIALIZED VIEW %s AS SELECT * FROM %s" % (ident(TABLE + " view"),
                                                                            ident(TABLE)))
            url = pg.url(dbname="target", password=URL_PASSWORD)
            qualified = literal("%s.%s" % (SCHEMA, TABLE))
            # Upsert keyed by a hostile column, two-phase commit, the password in the URL.
            server.psql("CREATE SINK hostile_upsert FROM %s WITH (connector = 'postgres', url = %s, "
                        "table = %s, primary_key = %s, commit = 'two_phase')"
                        % (ident(TABLE + " view"), literal(url), qualified, literal(COLUMNS[0])))
            # Append, progress commit, the password as an option.
            server.psql("CREATE SINK hostile_append WITH (connector = 'postgres', host = '127.0.0.1', "
                        "port = '%d', user = 'postgres', password = %s, dbname = 'target', "
                        "table = %s, mode = 'append') AS SELECT %s FROM %s WHERE %s > 0"
                        % (pg.port, literal(OPTION_PASSWORD), literal(TABLE + " appended"),
                           ", ".join(ident(c) for c in COLUMNS), ident(TABLE + " log"),
                           ident(COLUMNS[0])))
            # The password in the URL's query.
            server.psql("CREATE SINK by_query FROM %s WITH (connector = 'postgres', url = %s, "
                        "table = 'by_query', primary_key = %s)"
                        % (ident(TABLE + " view"),
                           literal("postgresql://postgres@127.0.0.1:%d/target?password=%s"
                                   % (pg.port, QUERY_PASSWORD)), literal(COLUMNS[0])))
            server.psql("CHECKPOINT")

            # The rows arrive exactly, under their hostile names.
            expected = [[str(row[0])] + list(row[1:]) for row in VALUES]
            select = "SELECT %s FROM %%s ORDER BY 1" % ", ".join(ident(c) for c in COLUMNS)
            wait_rows(pg, select % ("%s.%s" % (ident(SCHEMA), ident(TABLE))), expected)
            wait_rows(pg, select % ("public.%s" % ident(TABLE + " appended")), expected)
            wait_rows(pg, select % "by_query", expected)
            # An update and a delete travel as well.
            server.psql("UPDATE %s SET %s = 'it''s; updated' WHERE %s = 1"
                        % (ident(TABLE), ident(COLUMNS[1]), ident(COLUMNS[0])))
            server.psql("DELETE FROM %s WHERE %s = 3" % (ident(TABLE), ident(COLUMNS[0])))
            server.psql("CHECKPOINT")
            expected[0][1] = "it's; updated"
            wait_rows(pg, select % ("%s.%s" % (ident(SCHEMA), ident(TABLE))), expected[:2])
            # Nothing else happened in the target: the bait is intact and the only tables are
            # the sinks' and the sink's progress table.
            check(pg.query("SELECT n FROM public.bait", db="target") == [["42"]], "the bait is gone")
            tables = pg.query("SELECT table_schema || '.' || table_name FROM information_schema.tables "
                              "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') "
                              "AND table_name NOT LIKE 'stave_stage_%' ORDER BY 1", db="target")
            check(sorted(t[0] for t in tables) == sorted(["%s.%s" % (SCHEMA, TABLE), "public.bait",
                                                    "%s.stave_sink_progress" % SCHEMA,
                                                    "public.%s" % (TABLE + " appended"),
                                                    "public.by_query", "public.stave_sink_progress"]),
                  "target tables: %r" % tables)
            columns = pg.query("SELECT column_name FROM information_schema.columns WHERE "
                               "table_name = %s ORDER BY ordinal_position" % literal(TABLE), db="target")
            check([c[0] for c in columns] == COLUMNS, "target columns: %r" % columns)

            # No password anywhere.
            sinks = server.rows("SELECT name, target FROM stave_catalog.sinks ORDER BY name")
            check(any("postgresql://postgres@127.0.0.1" in s for s in sinks), "targets: %r" % sinks)
            for where, text in sql_surfaces(server).items():
                check_absent(where, text)
            for where, text in http_surfaces(server).items():
                check_absent(where, text)
            jobs = json.loads(http_surfaces(server)["/api/v1/jobs"])["jobs"]
            check({j["name"] for j in jobs} >= {"hostile_upsert", "hostile_append", "by_query"},
                  "jobs: %r" % [j["name"] for j in jobs])
            server.psql("DROP SINK by_query")
            server.stop()
            check_absent("the log", server.read_log())
        finally:
            server.cleanup()
    print("secrets and injection test passed")


if __name__ == "__main__":
    main()
