"""Disk faults end to end: a full disk and failing fsyncs under a running staved.

Failpoints in the storage's file system (armed over HTTP on a server started with
--enable-failpoints) make RocksDB's writes fail as a full disk does (ENOSPC) or its syncs as
a failing disk does (EIO). While armed, a table write fails with SQLSTATE 58030 and a message
that names the cause, the next checkpoint fails and the engine stops with that error in the
log and for clients; once disarmed, table writes work again, and a restart brings the views
back. Then the tables and views must equal an oracle of the acknowledged writes: nothing lost,
nothing twice (a write whose sync failed may or may not have landed, but only once).

  disk_fault_test.py --staved PATH
"""

import argparse
import json
import time
import urllib.request

from stave_harness import Staved, check


def arm(server, spec):
    req = urllib.request.Request("http://127.0.0.1:%d/api/v1/failpoints" % server.http_port,
                                 data=json.dumps({"spec": spec}).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=30) as response:
        check(response.status == 200, "arming %r: %d" % (spec, response.status))


def insert(server, first, last):
    return server.psql("INSERT INTO events SELECT g, g %% 5 FROM generate_series(%d, %d) AS g"
                       % (first, last), check=False, verbose=True)


def expect_oracle(server, acknowledged, indeterminate=()):
    rows = [int(r) for r in server.rows("SELECT id FROM events ORDER BY id")]
    check(len(rows) == len(set(rows)), "a row twice")
    present = set(rows)
    check(acknowledged <= present, "lost: %r" % sorted(acknowledged - present)[:10])
    extra = present - acknowledged
    check(extra <= set(indeterminate), "never acknowledged: %r" % sorted(extra)[:10])
    expected = {}
    for i in present:
        n, total = expected.get(i % 5, (0, 0))
        expected[i % 5] = (n + 1, total + i)
    want = ["%d|%d|%d" % (k, n, t) for k, (n, t) in sorted(expected.items())]
    server.wait_for("SELECT k, n, total FROM per_key ORDER BY k", want)
    return present


def fault_round(server, spec, cause, present, start, ambiguous):
    """Arms `spec` mid-stream, checks the errors, disarms, restarts; returns the rows present
    and the next id. `ambiguous`: a failed write may have reached the file (a failed sync)."""
    acknowledged = set(present)
    check(insert(server, start, start + 99).returncode == 0, "insert before the fault")
    acknowledged |= set(range(start, start + 100))
    server.psql("CHECKPOINT")

    arm(server, spec + "=error")
    failed = insert(server, start + 100, start + 199)
    check(failed.returncode != 0, "an insert succeeded on a faulty disk")
    check("58030" in failed.stderr and cause in failed.stderr, "unclear error: %r" % failed.stderr)
    indeterminate = set(range(start + 100, start + 200)) if ambiguous else set()
    checkpoint = server.psql("CHECKPOINT", check=False, verbose=True)
    check(checkpoint.returncode != 0 and "58030" in checkpoint.stderr and cause in checkpoint.stderr,
          "CHECKPOINT on a faulty disk: %r" % checkpoint.stderr)
    # Reads keep working from the last committed epoch.
    check(server.rows("SELECT count(*) FROM events") != [], "reads stopped")

    arm(server, "")  # Space returns.
    # Table writes resume without a restart, unless RocksDB found the failure fatal (a write
    # of its MANIFEST failed during a flush); then they fail, with the same clear error, until
    # the restart below.
    resumed = False
    deadline = time.time() + 10
    while not resumed and time.time() < deadline:
        retried = insert(server, start + 200, start + 299)
        resumed = retried.returncode == 0
        if not resumed:
            check("58030" in retried.stderr, "unclear error: %r" % retried.stderr)
            time.sleep(0.5)
    print("%s: table writes %s" % (spec, "resumed without a restart" if resumed else "resumed after the restart"))
    log = server.read_log()
    check("checkpoint of epoch" in log and cause in log, "the log does not say why")

    server.kill()  # The stopped engine comes back with a restart.
    server.start()
    if not resumed:
        check(insert(server, start + 200, start + 299).returncode == 0, "insert after the restart")
    acknowledged |= set(range(start + 200, start + 300))
    present = expect_oracle(server, acknowledged, indeterminate)
    return present, start + 300


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    server = Staved(args.staved, extra_args=["--enable-failpoints"])
    try:
        server.start()
        server.psql("CREATE TABLE events (id int PRIMARY KEY, k int)")
        server.psql("CREATE MATERIALIZED VIEW per_key AS "
                    "SELECT k, count(*) AS n, sum(id) AS total FROM events GROUP BY k")
        # A write that fails for want of space never reaches the file: it must be absent.
        present, next_id = fault_round(server, "storage_write_no_space", "no space left", set(), 1,
                                       ambiguous=False)
        present, next_id = fault_round(server, "storage_sync_error", "Input/output error", present,
                                       next_id, ambiguous=True)
        # After both, the server works as before.
        check(insert(server, next_id, next_id + 9).returncode == 0, "insert after recovery")
        server.psql("CHECKPOINT")
        print("disk faults: full disk and failed fsync survived, %d rows equal the oracle" % (len(present) + 10))
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
