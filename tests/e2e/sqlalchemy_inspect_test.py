"""SQLAlchemy's inspector (over psycopg2) against staved: the real driver sends its real
catalog queries (pg_namespace, pg_class, ...) and must find Stave's schemas, tables and views."""

import argparse

import sqlalchemy

from stave_harness import Staved, check


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    server = Staved(args.staved)
    try:
        server.start()
        server.psql("CREATE TABLE accounts (id INT PRIMARY KEY, owner VARCHAR NOT NULL, balance BIGINT)")
        server.psql("CREATE TABLE notes (body TEXT)")
        server.psql("CREATE STREAM clicks (user_id BIGINT) WITH (connector = 'datagen', 'rows-per-second' = '1')")
        server.psql("CREATE MATERIALIZED VIEW wealth AS SELECT owner, sum(balance) AS total "
                    "FROM accounts GROUP BY owner")
        engine = sqlalchemy.create_engine(
            "postgresql+psycopg2://stave@127.0.0.1:%d/stave" % server.pg_port)
        inspector = sqlalchemy.inspect(engine)
        schemas = inspector.get_schema_names()
        check("public" in schemas and "information_schema" in schemas, "schemas: %r" % schemas)
        tables = inspector.get_table_names()
        check(sorted(tables) == ["accounts", "notes"], "tables: %r" % tables)
        views = inspector.get_view_names()
        check(views == ["wealth"], "views: %r" % views)
        check(inspector.has_table("accounts") and not inspector.has_table("missing"), "has_table")
        with engine.connect() as connection:
            rows = connection.execute(sqlalchemy.text(
                "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                "WHERE table_name = 'accounts' ORDER BY ordinal_position")).fetchall()
            check([tuple(r) for r in rows] == [("id", "integer", "NO"), ("owner", "character varying", "NO"),
                                               ("balance", "bigint", "YES")],
                  "information_schema.columns: %r" % rows)
            keys = connection.execute(sqlalchemy.text(
                "SELECT k.column_name FROM information_schema.table_constraints c "
                "JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name "
                "WHERE c.table_name = 'accounts' AND c.constraint_type = 'PRIMARY KEY'")).fetchall()
            check([r[0] for r in keys] == ["id"], "primary key: %r" % keys)
        engine.dispose()
        print("SQLAlchemy inspector test passed")
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
