"""SQLAlchemy's inspector (over psycopg2) against staved, as Superset uses it: the real driver
sends its real catalog queries (pg_namespace, pg_class, pg_attribute, pg_index, ...) and must
find Stave's schemas, tables, views and streams, their columns and primary keys. Then
parameterized statements through SQLAlchemy and through psycopg2 alone."""

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
        server.psql("CREATE TABLE pairs (b INT, a VARCHAR, c INT, PRIMARY KEY (c, a))")
        server.psql("CREATE STREAM clicks (user_id BIGINT) WITH (connector = 'datagen', 'rows-per-second' = '1')")
        server.psql("CREATE MATERIALIZED VIEW wealth AS SELECT owner, sum(balance) AS total "
                    "FROM accounts GROUP BY owner")
        engine = sqlalchemy.create_engine(
            "postgresql+psycopg2://stave@127.0.0.1:%d/stave" % server.pg_port)
        inspector = sqlalchemy.inspect(engine)
        schemas = inspector.get_schema_names()
        check("public" in schemas and "information_schema" in schemas, "schemas: %r" % schemas)
        tables = inspector.get_table_names()
        check(sorted(tables) == ["accounts", "notes", "pairs"], "tables: %r" % tables)
        views = inspector.get_view_names()
        check(views == ["wealth"], "views: %r" % views)
        check(inspector.has_table("accounts") and not inspector.has_table("missing"), "has_table")
        # What Superset reads of each table: columns with types and nullability, the key.
        columns = [(c["name"], type(c["type"]).__name__, c["nullable"], c["default"])
                   for c in inspector.get_columns("accounts")]
        check(columns == [("id", "INTEGER", False, None), ("owner", "VARCHAR", False, None),
                          ("balance", "BIGINT", True, None)], "get_columns(accounts): %r" % columns)
        view_columns = [(c["name"], type(c["type"]).__name__) for c in inspector.get_columns("wealth")]
        check(view_columns == [("owner", "VARCHAR"), ("total", "NUMERIC")], "get_columns(wealth): %r" % view_columns)
        stream_columns = [c["name"] for c in inspector.get_columns("clicks")]
        check(stream_columns == ["user_id"], "get_columns(clicks): %r" % stream_columns)
        key = inspector.get_pk_constraint("accounts")
        check(key == {"constrained_columns": ["id"], "name": "accounts_pkey"}, "get_pk_constraint: %r" % key)
        key = inspector.get_pk_constraint("pairs")
        check(key["constrained_columns"] == ["c", "a"], "get_pk_constraint keeps key order: %r" % key)
        check(inspector.get_pk_constraint("notes")["constrained_columns"] == [], "no key")
        materialized = inspector.get_view_names(include=("materialized",))
        check(materialized == ["wealth"], "materialized views: %r" % materialized)
        check(inspector.get_view_names(include=("plain",)) == [], "Stave has no plain views")
        check(inspector.get_foreign_table_names() == ["clicks"], "streams as foreign tables")
        check("sum(balance)" in inspector.get_view_definition("wealth"), "view definition")
        check(inspector.get_foreign_keys("accounts") == [] and inspector.get_indexes("accounts") == [],
              "no foreign keys, no indexes but the key")
        # Superset reflects a table into a Table object.
        reflected = sqlalchemy.Table("accounts", sqlalchemy.MetaData(), autoload_with=engine)
        check([c.name for c in reflected.primary_key.columns] == ["id"], "reflected key")
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
        # Parameters, which psycopg2 quotes into the statement's text.
        with engine.begin() as connection:
            connection.execute(sqlalchemy.text(
                "INSERT INTO accounts VALUES (:id, :owner, :balance)"),
                [{"id": 1, "owner": "o'neil", "balance": 10}, {"id": 2, "owner": "ann", "balance": None}])
        with engine.connect() as connection:
            rows = connection.execute(sqlalchemy.text(
                "SELECT id, balance FROM accounts WHERE owner = :owner OR balance IS NULL ORDER BY id"),
                {"owner": "o'neil"}).fetchall()
            check([tuple(r) for r in rows] == [(1, 10), (2, None)], "parameterized query: %r" % rows)
        engine.dispose()
        # psycopg2 itself, as scripts and Airflow's hooks use it.
        import psycopg2
        with psycopg2.connect(host="127.0.0.1", port=server.pg_port, user="stave",
                              dbname="stave") as conn:
            with conn.cursor() as cur:
                cur.execute("SELECT owner FROM accounts WHERE id = %s AND owner LIKE %s", (1, "o%"))
                check(cur.fetchall() == [("o'neil",)], "psycopg2 parameters")
        conn.close()
        print("SQLAlchemy inspector test passed")
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
