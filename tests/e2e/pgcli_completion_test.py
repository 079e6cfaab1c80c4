"""pgcli's completion refresh against staved: the real pgcli (Debian's package) runs its
catalog queries through its own executor (pgcli.pgexecute.PGExecute, the object its
completion refresher calls) and must find Stave's schemas, tables, views, streams and columns."""

import argparse
import sys

from stave_harness import Staved, check


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    try:
        from pgcli.pgexecute import PGExecute
    except ImportError:
        print("pgcli is not installed (Debian package pgcli)")
        sys.exit(77)
    server = Staved(args.staved)
    try:
        server.start()
        server.psql("CREATE TABLE accounts (id INT PRIMARY KEY, owner VARCHAR NOT NULL, balance BIGINT)")
        server.psql("CREATE STREAM clicks (user_id BIGINT, url VARCHAR) WITH (connector = 'datagen', "
                    "'rows-per-second' = '1')")
        server.psql("CREATE MATERIALIZED VIEW wealth AS SELECT owner, sum(balance) AS total "
                    "FROM accounts GROUP BY owner")
        executor = PGExecute(database="stave", user="stave", password=None, host="127.0.0.1",
                             port=server.pg_port, dsn=None)
        # What pgcli's start-up shows and its prompt uses.
        check(executor.dbname == "stave" and executor.user == "stave", "connection info")
        check(executor.conn.info.server_version >= 90000, "server version %r" % executor.conn.info.server_version)

        # The completion refresher's queries (pgcli/completion_refresher.py), one by one.
        check(executor.search_path() == ["pg_catalog", "public"], "search_path: %r" % executor.search_path())
        schemata = executor.schemata()
        check({"public", "pg_catalog", "information_schema"} <= set(schemata), "schemata: %r" % schemata)
        tables = list(executor.tables())
        check(("public", "accounts") in tables and ("public", "clicks") in tables, "tables: %r" % tables)
        check(("public", "wealth") not in tables, "a view is not a table: %r" % tables)
        views = list(executor.views())
        check(("public", "wealth") in views, "views: %r" % views)
        columns = [c[1:4] for c in executor.table_columns() if c[0] == "public"]
        check(("accounts", "id", "integer") in columns and ("accounts", "owner", "character varying") in columns
              and ("clicks", "url", "character varying") in columns, "table columns: %r" % columns)
        view_columns = [c[1:4] for c in executor.view_columns() if c[0] == "public"]
        check(view_columns == [("wealth", "owner", "character varying"), ("wealth", "total", "numeric")],
              "view columns: %r" % view_columns)
        check(executor.databases() == ["stave"], "databases: %r" % executor.databases())
        check(list(executor.datatypes()) == [], "no user types")
        # functions() compares two ::regtype values (OIDs) and casts oidvectors to regtype[];
        # Stave has no functions of its own in pg_proc.
        functions = list(executor.functions())
        check(functions == [], "functions: %r" % functions)
        # foreignkeys() orders each key's columns with array_agg(attname ORDER BY i); Stave has
        # no foreign keys.
        foreign_keys = list(executor.foreignkeys())
        check(foreign_keys == [], "foreign keys: %r" % foreign_keys)

        # And a query through it, as typing one in pgcli runs it.
        server.psql("INSERT INTO accounts VALUES (1, 'ann', 10)")
        results = list(executor.run("SELECT owner, balance FROM accounts"))
        title, rows, headers, status = results[0][:4]
        check(list(rows) == [("ann", 10)] and list(headers) == ["owner", "balance"], "query: %r" % (results,))
        executor.conn.close()
        print("pgcli completion test passed")
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
