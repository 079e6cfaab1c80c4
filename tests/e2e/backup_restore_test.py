"""BACKUP TO and POST /api/v1/backups end to end, and the data directory's format version.

Tables, a view over them and data; a backup in SQL and one over HTTP; more writes and a new
view; then staved is killed and started on each backup, which must show exactly the state at
backup time, with the view still following new writes. Also checks the errors (a relative
path, an existing target, a missing parent, over HTTP a missing token) with their SQLSTATEs,
and that staved refuses to start on a data directory of a newer format version.

  backup_restore_test.py --staved PATH
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request

from stave_harness import Staved, check

TOKEN = "backup-t0ken"


def post(server, path, body, token=TOKEN):
    headers = {"Authorization": "Bearer " + token} if token else {}
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (server.http_port, path),
                                 data=json.dumps(body).encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            return response.status, json.loads(response.read().decode())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read().decode() or "{}")


def sql_error(server, sql):
    """The SQLSTATE and message of a statement that must fail."""
    result = server.psql(sql, check=False, verbose=True)
    check(result.returncode != 0, "%r succeeded" % sql)
    return result.stderr


def state(server):
    return (server.rows("SELECT id, grp, amount FROM orders ORDER BY id"),
            server.rows("SELECT name FROM customers ORDER BY name"),
            server.rows("SELECT grp, n, total FROM totals ORDER BY grp"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="stave-backup-")
    sql_backup = os.path.join(root, "sql-backup")
    http_backup = os.path.join(root, "http-backup")
    server = Staved(args.staved, extra_args=["--admin-token", TOKEN])
    restored = []
    try:
        server.start()
        server.psql("CREATE TABLE orders (id int PRIMARY KEY, grp text, amount bigint)")
        server.psql("CREATE TABLE customers (name text PRIMARY KEY)")
        server.psql("CREATE MATERIALIZED VIEW totals AS "
                    "SELECT grp, count(*) AS n, sum(amount) AS total FROM orders GROUP BY grp")
        server.psql("INSERT INTO orders SELECT g, 'g' || (g % 3), g * 10 "
                    "FROM generate_series(1, 300) AS g")
        server.psql("INSERT INTO customers VALUES ('ada'), ('grace')")
        server.psql("UPDATE orders SET amount = 7 WHERE id <= 10")
        server.psql("DELETE FROM orders WHERE id > 290")
        # Acknowledged writes, not yet in a checkpoint: BACKUP must still hold them.
        result = server.psql("BACKUP TO '%s'" % sql_backup)
        check("backup of epoch" in result.stderr, "no notice: %r" % result.stderr)
        at_backup = state(server)
        check(len(at_backup[0]) == 290 and len(at_backup[2]) == 3, "unexpected state %r" % (at_backup,))
        status, body = post(server, "/api/v1/backups", {"directory": http_backup + "/"})
        check(status == 200 and body["epoch"] > 0, "HTTP backup: %d %r" % (status, body))

        # Errors, each with its SQLSTATE; none leaves anything behind.
        check("42602" in sql_error(server, "BACKUP TO 'relative/dir'"), "relative path")
        check("58P02" in sql_error(server, "BACKUP TO '%s'" % sql_backup), "existing target")
        missing = os.path.join(root, "no-such-parent", "backup")
        check("58P01" in sql_error(server, "BACKUP TO '%s'" % missing), "missing parent")
        status, body = post(server, "/api/v1/backups", {"directory": sql_backup})
        check(status == 409 and body.get("sqlstate") == "58P02", "HTTP existing: %d %r" % (status, body))
        status, body = post(server, "/api/v1/backups", {"directory": os.path.join(root, "x")}, token=None)
        check(status == 401, "HTTP without token: %d" % status)
        status, body = post(server, "/api/v1/backups", {"dir": "/tmp"})
        check(status == 400, "HTTP bad body: %d" % status)
        in_block = "BEGIN; INSERT INTO customers VALUES ('zed'); BACKUP TO '%s'" % os.path.join(root, "b")
        check("25001" in sql_error(server, in_block), "uncommitted writes")
        check(sorted(os.listdir(root)) == ["http-backup", "sql-backup"], "left behind: %r" % os.listdir(root))
        empty = os.path.join(root, "empty")
        os.mkdir(empty)  # An empty directory is a fine target.
        server.psql("BACKUP TO '%s'" % empty)

        # Writes after the backups, which a restore must not show.
        server.psql("INSERT INTO orders VALUES (1000, 'g9', 1)")
        server.psql("DELETE FROM orders WHERE id = 5")
        server.psql("DELETE FROM customers WHERE name = 'ada'")
        server.psql("CREATE MATERIALIZED VIEW late AS SELECT count(*) AS n FROM orders")
        server.wait_for("SELECT grp FROM totals WHERE grp = 'g9'", ["g9"])
        server.kill()

        for backup in (sql_backup, http_backup, empty):
            copy = Staved(args.staved, data_dir=backup)
            restored.append(copy)
            copy.start()
            check(state(copy) == at_backup, "%s restored %r, expected %r" % (backup, state(copy), at_backup))
            check(copy.psql("SELECT 1 FROM late", check=False).returncode != 0, "late view restored")
            # The view keeps following its table.
            copy.psql("INSERT INTO orders VALUES (2000, 'g0', 5)")
            copy.wait_for("SELECT n FROM totals WHERE grp = 'g0'",
                          [str(int(dict(r.split("|")[:2] for r in at_backup[2])["g0"]) + 1)])
            copy.stop()

        # The original is intact and still has everything.
        server.start()
        server.wait_for("SELECT n FROM late", ["290"])

        # A data directory of a newer format is refused, untouched.
        server.stop()
        marker = os.path.join(http_backup, "STAVE_FORMAT")
        with open(marker, "w") as f:
            f.write("stave data directory format 999\n")
        result = subprocess.run([args.staved, "--data-dir", http_backup, "--pg-port", "0", "--http-port", "0"],
                                capture_output=True, text=True, timeout=60)
        output = result.stdout + result.stderr
        check(result.returncode != 0, "staved started on a newer format")
        check("format version 999, newer than this server reads" in output, "no clear message: %s" % output)
        with open(marker) as f:
            check(f.read() == "stave data directory format 999\n", "marker rewritten")
        print("backup and restore: 3 backups restored exactly, errors checked, newer format refused")
    finally:
        for copy in restored:
            copy.cleanup()
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
