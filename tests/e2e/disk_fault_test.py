"""Disk faults end to end: a full disk and failing fsyncs under a running staved.

Failpoints in the storage's file system (armed over HTTP on a server started with
--enable-failpoints) make RocksDB's writes fail as a full disk does (ENOSPC) or its syncs as
a failing disk does (EIO). While armed, a table write fails with a clear error (SQLSTATE
53100 disk_full for a full disk, 58030 for an I/O error), the next checkpoint fails, and the
jobs stop with that error in the log, in stave_catalog.jobs and in /api/v1/jobs. Once
disarmed, the server recovers by itself: checkpoints commit again and the views restart from
the last committed epoch, without a restart of the process. Then the tables and views must
equal an oracle of the acknowledged writes: nothing lost, nothing twice (a write whose sync
failed may or may not have landed, but only once) -- and again after a kill -9 and a restart.

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


def fault_round(server, spec, sqlstate, cause, present, start, ambiguous):
    """Arms `spec` mid-stream, checks the errors, disarms and waits for the server to recover
    in-process; returns the rows present and the next id. `ambiguous`: a failed write may
    have reached the file (a failed sync)."""
    acknowledged = set(present)
    check(insert(server, start, start + 99).returncode == 0, "insert before the fault")
    acknowledged |= set(range(start, start + 100))
    server.psql("CHECKPOINT")

    arm(server, spec + "=error")
    failed = insert(server, start + 100, start + 199)
    check(failed.returncode != 0, "an insert succeeded on a faulty disk")
    check(sqlstate in failed.stderr and cause in failed.stderr, "unclear error: %r" % failed.stderr)
    indeterminate = set(range(start + 100, start + 200)) if ambiguous else set()
    checkpoint = server.psql("CHECKPOINT", check=False, verbose=True)
    check(checkpoint.returncode != 0 and sqlstate in checkpoint.stderr and cause in checkpoint.stderr,
          "CHECKPOINT on a faulty disk: %r" % checkpoint.stderr)
    # The jobs stopped, and say why, in the system table and the admin API.
    jobs = server.rows("SELECT name, state, error FROM stave_catalog.jobs")
    check(len(jobs) == 1 and "|failed|" in jobs[0] and "storage failure" in jobs[0]
          and cause in jobs[0], "stave_catalog.jobs during the fault: %r" % jobs)
    status, body = server.http("/api/v1/jobs")
    api = json.loads(body)["jobs"]
    check(status == 200 and api[0]["state"] == "failed" and cause in (api[0]["error"] or ""),
          "/api/v1/jobs during the fault: %r" % api)
    # Reads keep working from the last committed epoch.
    check(server.rows("SELECT count(*) FROM events") != [], "reads stopped")

    arm(server, "")  # Space returns.
    # The engine retries with backoff: checkpoints commit again without a restart (RocksDB
    # resumes, or is reopened where it will not resume).
    deadline = time.time() + 30
    recovered = False
    while time.time() < deadline:
        retried = server.psql("CHECKPOINT", check=False, verbose=True)
        if retried.returncode == 0:
            recovered = True
            break
        check(sqlstate in retried.stderr, "unclear error: %r" % retried.stderr)
        time.sleep(0.2)
    check(recovered, "no checkpoint commits after the fault is gone: %r" % retried.stderr)
    log = server.read_log()
    check("checkpoint of epoch" in log and cause in log, "the log does not say why")
    check("storage works again" in log, "the log does not say it recovered")
    reopened = "reopened the data directory" in log
    check(insert(server, start + 200, start + 299).returncode == 0, "insert after the fault")
    acknowledged |= set(range(start + 200, start + 300))
    jobs = server.rows("SELECT name, state FROM stave_catalog.jobs")
    check(jobs == ["per_key|running"], "jobs after the fault: %r" % jobs)
    present = expect_oracle(server, acknowledged, indeterminate)
    print("%s: recovered in-process (%s), %d rows equal the oracle"
          % (spec, "RocksDB reopened" if reopened else "RocksDB resumed", len(present)))

    server.kill()  # And the recovered state survives a crash.
    server.start()
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
        present, next_id = fault_round(server, "storage_write_no_space", "53100",
                                       "the data directory's disk is full", set(), 1,
                                       ambiguous=False)
        present, next_id = fault_round(server, "storage_sync_error", "58030", "Input/output error",
                                       present, next_id, ambiguous=True)
        # After both, the server works as before.
        check(insert(server, next_id, next_id + 9).returncode == 0, "insert after recovery")
        server.psql("CHECKPOINT")
        print("disk faults: full disk and failed fsync survived, %d rows equal the oracle" % (len(present) + 10))
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
