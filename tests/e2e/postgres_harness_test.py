"""Self-test of postgres_harness.py: the PostgreSQL sink tests rely on a real server that starts,
supports two-phase commit, keeps its data across a restart and recovers from a SIGKILL. Fails
(does not skip) when PostgreSQL is not installed."""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from postgres_harness import PostgresServer, available  # noqa: E402
from stave_harness import check  # noqa: E402


def main():
    ok, reason = available()
    check(ok, "PostgreSQL is not available: " + reason)
    with PostgresServer() as server:
        pass  # The context manager starts and cleans up.
    check(server.temp_dir is None, "cleanup() removes the temp dir")

    server = PostgresServer()
    try:
        began = time.monotonic()
        server.start()
        print("start() took %.2fs" % (time.monotonic() - began))
        check(server.url() == "postgresql://postgres@127.0.0.1:%d/postgres" % server.port, server.url())
        check(server.url("sink", "u", "pw").endswith("u:pw@127.0.0.1:%d/sink" % server.port), "url() with password")

        server.create_database("sink")
        check(server.query("SHOW max_prepared_transactions", db="sink") == [["64"]], "max_prepared_transactions")
        check(server.query("SHOW listen_addresses") == [["127.0.0.1"]], "listen_addresses")
        server.psql("CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT)", db="sink")
        server.psql("INSERT INTO t VALUES (1, 'a|b'), (2, ''), (3, NULL)", db="sink")
        check(server.psql("SELECT id, name FROM t ORDER BY id", db="sink").stdout == "1|a|b\n2|\n3|\n",
              "psql() output format")
        check(server.query("SELECT id, name FROM t ORDER BY id", db="sink") == [["1", "a|b"], ["2", ""], ["3", ""]],
              "query() rows")
        check(server.query("SELECT name FROM t ORDER BY id", db="sink", null=None) == [["a|b"], [""], [None]],
              "query() tells NULL from ''")
        check(server.query("SELECT 1 WHERE false") == [], "no rows")
        check(server.query("SELECT ''") == [[""]], "one row of one empty string")
        check(server.query("SET search_path = public; SELECT 'a\nb'") == [["a\nb"]], "SET first; newline in a value")
        check(server.psql("SELECT nonsense", check=False).returncode != 0, "errors give a non-zero exit code")

        # Two-phase commit round trip, in separate sessions as a sink's recovery would do it.
        server.psql("BEGIN; INSERT INTO t VALUES (4, 'prepared'); PREPARE TRANSACTION 'x';", db="sink")
        check(server.query("SELECT gid FROM pg_prepared_xacts", db="sink") == [["x"]], "prepared transaction listed")
        check(server.query("SELECT count(*) FROM t WHERE id = 4", db="sink") == [["0"]], "prepared is invisible")
        server.psql("COMMIT PREPARED 'x'", db="sink")
        check(server.query("SELECT count(*) FROM t WHERE id = 4", db="sink") == [["1"]], "committed is visible")

        # A prepared transaction survives a restart, like the committed data.
        server.psql("BEGIN; INSERT INTO t VALUES (5, 'in doubt'); PREPARE TRANSACTION 'y';", db="sink")
        began = time.monotonic()
        server.restart()
        print("restart() took %.2fs" % (time.monotonic() - began))
        check(server.query("SELECT count(*) FROM t", db="sink") == [["4"]], "data survives a restart")
        check(server.query("SELECT gid FROM pg_prepared_xacts") == [["y"]], "prepared survives a restart")
        server.psql("COMMIT PREPARED 'y'", db="sink")

        # Down for a while, then back on the same port.
        server.stop()
        check(not server.running(), "stopped")
        check(server.psql("SELECT 1", check=False).returncode != 0, "no connections while stopped")
        server.stop()  # A no-op when stopped.
        server.start_existing()

        # A crash: SIGKILL, then crash recovery.
        server.psql("INSERT INTO t VALUES (6, 'before kill')", db="sink")
        server.psql("BEGIN; INSERT INTO t VALUES (7, 'in doubt'); PREPARE TRANSACTION 'z';", db="sink")
        pid = server.pid()
        sleeper = subprocess.Popen(["psql", "-X", "-d", server.url(), "-c", "SELECT pg_sleep(60)"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while server.query("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'") != [["1"]]:
            check(time.monotonic() < deadline, "the sleeping session did not show up")
            time.sleep(0.05)
        server.kill()
        check(sleeper.wait(timeout=10) != 0, "kill() ends the sessions")
        check(not server.running(), "killed")
        began = time.monotonic()
        server.start_existing()
        print("start_existing() after kill() took %.2fs" % (time.monotonic() - began))
        check(server.pid() != pid, "a new postmaster")
        check(server.query("SELECT id FROM t ORDER BY id", db="sink") == [[str(i)] for i in range(1, 7)],
              "data survives a SIGKILL")
        check(server.query("SELECT gid FROM pg_prepared_xacts") == [["z"]], "prepared survives a SIGKILL")
        server.psql("ROLLBACK PREPARED 'z'", db="sink")
        check("database system was interrupted" in server.read_log(), "the log shows crash recovery")
    finally:
        temp_dir = server.temp_dir
        server.cleanup()
    check(temp_dir is not None and not os.path.exists(temp_dir), "cleanup() removes the temp dir")
    print("postgres_harness ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
