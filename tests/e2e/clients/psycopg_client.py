"""psycopg 3 against staved: server-side parameters (the extended query protocol), prepared
statements, binary parameters and results, NULLs, errors and transactions.
Run by extended_protocol_test.py with the server's port, and the password of the user stave
when the server asks for one, as its arguments."""

import datetime
import sys

import psycopg
from psycopg import errors


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def main():
    port = int(sys.argv[1])
    password = sys.argv[2] if len(sys.argv) > 2 else None
    if password is not None:
        # A wrong password is refused with 28P01 before anything else happens.
        try:
            psycopg.connect(host="127.0.0.1", port=port, user="stave", dbname="stave",
                            password=password + "-wrong")
            raise AssertionError("a wrong password was accepted")
        except psycopg.OperationalError as error:
            check('password authentication failed for user "stave"' in str(error), str(error))
    with psycopg.connect(host="127.0.0.1", port=port, user="stave", dbname="stave", autocommit=True,
                         password=password) as conn:
        conn.execute("CREATE TABLE py_items (id BIGINT PRIMARY KEY, name TEXT, price DOUBLE PRECISION, "
                     "ok BOOLEAN, at TIMESTAMP, day DATE, small SMALLINT)")
        at = datetime.datetime(2024, 1, 31, 12, 30, 15, 250000)
        day = datetime.date(2024, 2, 29)
        cur = conn.cursor()
        # %s: psycopg 3 sends the values as parameters of a Parse/Bind, never in the SQL text.
        cur.execute("INSERT INTO py_items VALUES (%s, %s, %s, %s, %s, %s, %s)", (1, "one", 1.5, True, at, day, 7))
        check(cur.rowcount == 1, "rowcount of INSERT: %r" % cur.rowcount)
        cur.executemany("INSERT INTO py_items (id, name, price) VALUES (%s, %s, %s)",
                        [(i, "item %d" % i, i * 0.5) for i in range(2, 12)])
        cur.execute("INSERT INTO py_items (id, name) VALUES (%s, %s)", (12, None))

        cur.execute("SELECT name, price, ok, at, day, small FROM py_items WHERE id = %s", (1,))
        check(cur.fetchone() == ("one", 1.5, True, at, day, 7), "text-format row")
        cur.execute("SELECT count(*) FROM py_items WHERE price > %s", (2,))
        check(cur.fetchone() == (7,), "count with a parameter")
        cur.execute("SELECT name FROM py_items WHERE id = %s", (12,))
        check(cur.fetchone() == (None,), "NULL inserted from a parameter")
        cur.execute("SELECT id FROM py_items WHERE name IS NULL AND id > %s ORDER BY id LIMIT %s", (0, 5))
        check(cur.fetchall() == [(12,)], "LIMIT with a parameter")

        # Binary parameters (%b) and binary results.
        cur = conn.cursor(binary=True)
        cur.execute("SELECT name, price, ok, at, day, small FROM py_items WHERE id = %b", (1,))
        check(cur.fetchone() == ("one", 1.5, True, at, day, 7), "binary row")
        cur.execute("SELECT id, price FROM py_items WHERE id BETWEEN %b AND %b ORDER BY id", (2, 4))
        check(cur.fetchall() == [(2, 1.0), (3, 1.5), (4, 2.0)], "binary range")

        # prepare=True: a named statement, Parsed once, then only Bind/Execute.
        for i in range(2, 12):
            row = conn.execute("SELECT name FROM py_items WHERE id = %s", (i,), prepare=True).fetchone()
            check(row == ("item %d" % i,), "prepared statement run %d: %r" % (i, row))

        conn.execute("UPDATE py_items SET name = %s WHERE id = %s", ("uno", 1))
        conn.execute("DELETE FROM py_items WHERE id >= %s", (10,))
        check(conn.execute("SELECT name FROM py_items WHERE id = %s", (1,)).fetchone() == ("uno",), "UPDATE")
        check(conn.execute("SELECT count(*) FROM py_items").fetchone() == (9,), "DELETE")

        # Errors carry PostgreSQL's SQLSTATE, and the connection goes on.
        try:
            conn.execute("SELECT name FROM py_items WHERE id = %s", ("x",))
            check(False, "a bad integer must fail")
        except errors.InvalidTextRepresentation as error:
            check("invalid input syntax for type bigint" in str(error), str(error))
        try:
            conn.execute("SELECT nosuch FROM py_items WHERE id = %s", (1,))
            check(False, "an unknown column must fail")
        except errors.UndefinedColumn:
            pass
        try:
            conn.execute("SELECT 1; SELECT %s", (2,))
            check(False, "two commands must fail")
        except errors.SyntaxError as error:
            check("cannot insert multiple commands into a prepared statement" in str(error), str(error))

        # A transaction: rolled back, then committed.
        with conn.transaction(force_rollback=True):
            conn.execute("INSERT INTO py_items (id, name) VALUES (%s, %s)", (100, "gone"))
        with conn.transaction():
            conn.execute("INSERT INTO py_items (id, name) VALUES (%s, %s)", (101, "kept"))
        rows = conn.execute("SELECT id FROM py_items WHERE id >= %s ORDER BY id", (100,)).fetchall()
        check(rows == [(101,)], "transactions: %r" % rows)
        check(conn.execute("SHOW application_name").fetchone() is not None, "SHOW")
    print("psycopg 3: ok")


if __name__ == "__main__":
    main()
