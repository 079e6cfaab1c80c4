"""Exactly-once under SIGKILL for epochs large enough to commit as ingested files
(docs/decisions.md, "Large epochs commit as files"), which the kill loop's small epochs, written
as synced batches, never reach.

A table of ROWS rows and a view with one group per row over it: an UPDATE of every row changes
every group in one epoch, far past the 16,384 entries from which an epoch commits as a file.
Each round starts a fresh server, arms a failpoint of the epoch protocol (or a kill at a random
instant), and runs the UPDATE and a CHECKPOINT into it; after the restart no epoch file is left
beside the database, and the view equals an oracle: every group's sum is the value the table's
rows hold, and an acknowledged UPDATE is never lost.

  large_epoch_kill_test.py --staved PATH [--rows N] [--random-kills K] [--seed S]
"""

import argparse
import glob
import os
import random
import sys
import threading

from stave_harness import Staved

FAILPOINTS = [
    "epoch_operator_flushed",
    "epoch_job_flushed",
    "epoch_before_commit",
    "epoch_after_commit",
]


def check_view(server, rows):
    server.psql("CHECKPOINT")
    # An UPDATE of every row is all there or not at all: the rows hold one value.
    values = server.rows("SELECT DISTINCT v FROM big")
    if len(values) != 1:
        raise AssertionError("big holds v in %r" % values)
    value = int(values[0])
    summary = server.rows("SELECT count(*), sum(s), sum(n) FROM per_id")
    expected = ["%d|%d|%d" % (rows, rows * value, rows)]
    if summary != expected:
        raise AssertionError("per_id sums to %r, expected %r" % (summary, expected))
    wrong = server.rows("SELECT count(*) FROM per_id WHERE s <> %d OR n <> 1" % value)
    if wrong != ["0"]:
        raise AssertionError("%s groups of per_id differ from the oracle" % wrong[0])
    return value


def round_trip(staved, rows, arm):
    """One round on a fresh server: `arm(server)` prepares the kill, an UPDATE of every row and
    a CHECKPOINT run into it; then restart and check. Returns the rows' value."""
    server = Staved(staved, checkpoint_interval="0", extra_args=["--enable-failpoints"])
    try:
        server.start()
        server.psql("CREATE TABLE big (id BIGINT PRIMARY KEY, v BIGINT)")
        server.psql("INSERT INTO big SELECT g, 1 FROM generate_series(1, %d) AS g" % rows)
        server.psql("SET streaming_parallelism = 2; CREATE MATERIALIZED VIEW per_id AS "
                    "SELECT id, sum(v) AS s, count(*) AS n FROM big GROUP BY id")
        check_view(server, rows)
        killer = arm(server)
        if server.psql("UPDATE big SET v = v + 1", check=killer is None).returncode == 0:
            server.psql("CHECKPOINT", check=False)
        if killer:
            killer.join()
        server.process.wait(timeout=120)
        server.log.close()
        server.start()
        left = glob.glob(os.path.join(server.data_dir, "*.epoch-sst"))
        if left:
            raise AssertionError("epoch files left after a restart: %r" % left)
        value = check_view(server, rows)
        # Epochs committed as ingested files here (RocksDB logs each ingestion): the view's
        # backfill and the UPDATE are each far past the size from which an epoch does.
        logs = "".join(open(path, errors="replace").read()
                       for path in glob.glob(os.path.join(server.data_dir, "LOG*")))
        if '"ingest_finished"' not in logs:
            raise AssertionError("no epoch committed as an ingested file")
        if server.stop() != 0:
            raise AssertionError("unclean exit")
        return value
    except Exception:
        server.report_failure()
        raise
    finally:
        server.cleanup()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--rows", type=int, default=100000)
    parser.add_argument("--random-kills", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    for failpoint in FAILPOINTS:
        def arm(server, failpoint=failpoint):
            server.psql("SET stave.failpoints = '%s=crash'" % failpoint)
        if round_trip(args.staved, args.rows, arm) != 2:
            raise AssertionError("the acknowledged UPDATE was lost at %s" % failpoint)
    for _ in range(args.random_kills):
        def arm(server):
            killer = threading.Timer(rng.uniform(0.1, 3.0), lambda: server.process.kill())
            killer.start()
            return killer
        round_trip(args.staved, args.rows, arm)
    print("large epoch kills: %d rows, %d failpoints and %d random kills, the view equals the oracle"
          % (args.rows, len(FAILPOINTS), args.random_kills))
    return 0


if __name__ == "__main__":
    sys.exit(main())
