"""psql's describe commands (\\d, \\d+, \\dt, \\dv, \\dm, \\dn, \\l, \\df, \\det, \\x) against staved: the real psql
sends its real catalog queries (pg_class, pg_attribute, pg_namespace, ...) and its output must
name Stave's streams, tables and views with their columns."""

import argparse
import os
import subprocess

from stave_harness import Staved, check


def describe(server, *commands):
    """Runs psql backslash commands; returns their stdout (fails on any error)."""
    args = ["psql", "-X", "-h", "127.0.0.1", "-p", str(server.pg_port), "-U", "stave", "-d", "stave",
            "-v", "ON_ERROR_STOP=1"]
    for command in commands:
        args += ["-c", command]
    command = " ".join(commands)
    env = dict(os.environ, PGCONNECT_TIMEOUT="5")
    result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    check(result.returncode == 0 and "ERROR" not in result.stderr,
          "psql %s failed: %s" % (command, result.stderr))
    return result.stdout


def lines_with(output, *words):
    """The output's lines holding every word, as '|'-split, stripped cells."""
    found = []
    for line in output.splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if all(word in cells for word in words):
            found.append(cells)
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    server = Staved(args.staved)
    try:
        server.start()
        server.psql("CREATE TABLE accounts (id INT PRIMARY KEY, owner VARCHAR NOT NULL, "
                    "balance BIGINT, opened TIMESTAMP)")
        server.psql("CREATE TABLE notes (body TEXT)")
        server.psql("CREATE STREAM clicks (user_id BIGINT, url VARCHAR, price DOUBLE PRECISION) WITH ("
                    "connector = 'datagen', 'rows-per-second' = '1')")
        server.psql("CREATE MATERIALIZED VIEW wealth AS SELECT owner, sum(balance) AS total "
                    "FROM accounts GROUP BY owner")

        everything = describe(server, "\\d")
        check(lines_with(everything, "public", "accounts", "table", "stave"), "\\d lists the table:\n" + everything)
        check(lines_with(everything, "public", "notes", "table"), "\\d lists the keyless table:\n" + everything)
        check(lines_with(everything, "public", "wealth", "materialized view"), "\\d lists the view:\n" + everything)
        check(lines_with(everything, "public", "clicks", "foreign table"),
              "\\d lists the stream as a foreign table:\n" + everything)
        check("pg_class" not in everything and "checkpoints" not in everything,
              "\\d lists no system tables:\n" + everything)

        tables = describe(server, "\\dt")
        check(lines_with(tables, "accounts", "table") and lines_with(tables, "notes", "table"), "\\dt:\n" + tables)
        check("wealth" not in tables and "clicks" not in tables, "\\dt lists only tables:\n" + tables)

        views = describe(server, "\\dm")
        check(lines_with(views, "wealth", "materialized view"), "\\dm:\n" + views)
        check("accounts" not in views, "\\dm lists only materialized views:\n" + views)
        plain_views = describe(server, "\\dv")
        check("wealth" not in plain_views and "accounts" not in plain_views,
              "\\dv: Stave has no plain views:\n" + plain_views)
        check(lines_with(describe(server, "\\dE"), "clicks", "foreign table"), "\\dE lists streams")

        schemas = describe(server, "\\dn")
        check(lines_with(schemas, "public", "stave"), "\\dn:\n" + schemas)
        check(lines_with(describe(server, "\\dnS"), "stave_catalog"), "\\dnS lists stave_catalog")
        databases = describe(server, "\\l")
        check(lines_with(databases, "stave", "stave", "UTF8"), "\\l:\n" + databases)
        check("(0 rows)" in describe(server, "\\df"), "\\df: no user functions")

        table = describe(server, "\\d accounts")
        check('Table "public.accounts"' in table, "\\d accounts title:\n" + table)
        check(lines_with(table, "id", "integer", "not null"), "\\d accounts id:\n" + table)
        check(lines_with(table, "owner", "character varying", "not null"), "\\d accounts owner:\n" + table)
        check(lines_with(table, "balance", "bigint"), "\\d accounts balance:\n" + table)
        check(lines_with(table, "opened", "timestamp without time zone"), "\\d accounts opened:\n" + table)
        check('"accounts_pkey" PRIMARY KEY, btree (id)' in table, "\\d accounts index:\n" + table)

        view = describe(server, "\\d wealth")
        check('Materialized view "public.wealth"' in view, "\\d wealth title:\n" + view)
        check(lines_with(view, "total", "numeric"), "\\d wealth columns:\n" + view)
        definition = server.rows("SELECT pg_get_viewdef('wealth'::regclass)")
        check("sum(balance)" in definition[0], "pg_get_viewdef: %r" % definition)

        # A stream is a foreign table: its connector is the server, its WITH options the
        # table's options (psql reads them through pg_options_to_table).
        stream = describe(server, "\\d clicks")
        check('Foreign table "public.clicks"' in stream, "\\d clicks title:\n" + stream)
        check(lines_with(stream, "user_id", "bigint") and lines_with(stream, "price", "double precision"),
              "\\d clicks columns:\n" + stream)
        check("Server: datagen" in stream and "FDW options: (\"rows-per-second\" '1')" in stream,
              "\\d clicks server and options:\n" + stream)
        check(lines_with(describe(server, "\\det"), "public", "clicks", "datagen"), "\\det lists the stream")

        # \\d+ adds storage, sizes (unknown to Stave: empty) and descriptions.
        verbose_table = describe(server, "\\d+ accounts")
        check(lines_with(verbose_table, "balance", "bigint", "plain"), "\\d+ accounts:\n" + verbose_table)
        check("Access method: heap" in verbose_table, "\\d+ accounts access method:\n" + verbose_table)
        verbose_view = describe(server, "\\d+ wealth")
        check("View definition:" in verbose_view and "sum(balance)" in verbose_view,
              "\\d+ wealth definition:\n" + verbose_view)
        verbose_stream = describe(server, "\\d+ clicks")
        check(lines_with(verbose_stream, "url", "character varying", "plain") and "Server: datagen" in verbose_stream,
              "\\d+ clicks:\n" + verbose_stream)
        listing = describe(server, "\\d+")
        check(lines_with(listing, "public", "accounts", "table", "stave", "permanent", "heap"),
              "\\d+ lists the table:\n" + listing)
        check(lines_with(listing, "public", "clicks", "foreign table", "stave", "permanent"),
              "\\d+ lists the stream:\n" + listing)
        check(lines_with(listing, "public", "wealth", "materialized view"), "\\d+ lists the view:\n" + listing)
        check("(0 rows)" in describe(server, "\\df+"), "\\df+: no user functions")
        check(lines_with(describe(server, "\\du"), "stave"), "\\du lists the role")

        # A sink is no relation: psql says so, and SHOW SINKS lists it.
        server.psql("CREATE SINK wealth_out WITH (connector = 'blackhole') AS SELECT * FROM wealth")
        sink = subprocess.run(
            ["psql", "-X", "-h", "127.0.0.1", "-p", str(server.pg_port), "-U", "stave", "-d", "stave",
             "-c", "\\d wealth_out"], capture_output=True, text=True, timeout=60)
        check('Did not find any relation named "wealth_out"' in sink.stderr, "\\d of a sink: " + sink.stderr)
        check("wealth_out" not in describe(server, "\\d"), "\\d lists no sinks")

        system = describe(server, "\\d stave_catalog.checkpoints")
        check(lines_with(system, "epoch", "bigint"), "\\d of a system table:\n" + system)

        expanded = describe(server, "\\x on", "\\dt accounts")
        check(lines_with(expanded, "Name", "accounts"), "\\x expanded output:\n" + expanded)
        expanded = describe(server, "\\x on", "\\d+")
        check(lines_with(expanded, "Name", "clicks") and lines_with(expanded, "Type", "foreign table"),
              "\\x \\d+ expanded output:\n" + expanded)
        expanded = describe(server, "\\x on", "SELECT id, owner FROM accounts")
        check("(0 rows)" in expanded, "\\x over a query:\n" + expanded)
        server.psql("INSERT INTO accounts VALUES (1, 'ann', 10, NULL)")
        expanded = describe(server, "\\x on", "SELECT id, owner FROM accounts")
        check(lines_with(expanded, "owner", "ann") and "-[ RECORD 1 ]" in expanded,
              "\\x over a query:\n" + expanded)

        missing = subprocess.run(
            ["psql", "-X", "-h", "127.0.0.1", "-p", str(server.pg_port), "-U", "stave", "-d", "stave",
             "-c", "\\d no_such_relation"], capture_output=True, text=True, timeout=60)
        check('Did not find any relation named "no_such_relation"' in missing.stderr,
              "\\d of a missing relation: " + missing.stderr)
        print("psql catalog test passed")
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
