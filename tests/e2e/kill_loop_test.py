"""Exactly-once under SIGKILL: rows are fed into a table while staved is killed at every failpoint
once and at random instants; after the last restart every view must equal an oracle computed here.

A batch of rows is one INSERT; a batch whose reply was lost to a kill is in doubt, and is resolved
after the restart by reading the table (a batch is all there or not at all), so the oracle knows
exactly which rows the table holds. Then CHECKPOINT, and each view is compared with the oracle.

  kill_loop_test.py --staved PATH [--rows N] [--batch B] [--random-kills K] [--seed S]
"""

import argparse
import random
import subprocess
import sys
import threading
import time

from stave_harness import Staved

FAILPOINTS = [
    "table_write_before_sync",
    "table_write_after_sync",
    "epoch_barrier_injected",
    "epoch_operator_flushed",
    "epoch_job_flushed",
    "epoch_before_commit",
    "epoch_after_commit",
]

VIEWS = {
    "by_key": "SELECT k, count(*) AS n, sum(v) AS total FROM events GROUP BY k",
    "big_by_key": "SELECT k, count(*) AS n, sum(v) AS top FROM events WHERE v >= 500 GROUP BY k",
    "overall": "SELECT count(*) AS n, sum(v) AS total, sum(k) AS keys FROM events",
    # Views over a view.
    "summary": "SELECT count(*) AS groups, sum(n) AS n, sum(total) AS total FROM by_key",
    "busy_keys": "SELECT k, n FROM by_key WHERE n % 3 = 0",
}


def oracle(rows):
    by_key, big, overall = {}, {}, [0, 0, 0]
    for (k, v) in rows:
        n, total = by_key.get(k, (0, 0))
        by_key[k] = (n + 1, total + v)
        if v >= 500:
            n, top = big.get(k, (0, 0))
            big[k] = (n + 1, top + v)
        overall = [overall[0] + 1, overall[1] + v, overall[2] + k]
    total = str(overall[1]) if overall[0] else ""
    keys = str(overall[2]) if overall[0] else ""
    groups = len(by_key)
    summary = "%d|%s|%s" % (groups, sum(n for n, _ in by_key.values()) if groups else "",
                            sum(t for _, t in by_key.values()) if groups else "")
    return {
        "summary": [summary],
        "busy_keys": sorted("%d|%d" % (k, n) for k, (n, _) in by_key.items() if n % 3 == 0),
        "by_key": sorted("%d|%d|%d" % (k, n, t) for k, (n, t) in by_key.items()),
        "big_by_key": sorted("%d|%d|%d" % (k, n, t) for k, (n, t) in big.items()),
        "overall": ["%d|%s|%s" % (overall[0], total, keys)],
    }


def batch_rows(start, count, rng_seed):
    rng = random.Random(rng_seed * 1000003 + start)
    return [(i, rng.randrange(0, 50), rng.randrange(0, 1000)) for i in range(start, start + count)]


class Feeder:
    """Inserts batches in order; survives kills by resolving the batch in doubt."""

    def __init__(self, server, total, batch, seed):
        self.server, self.total, self.batch, self.seed = server, total, batch, seed
        self.next_id = 0
        self.committed = []  # (k, v) of every row the table holds

    def resolve_in_doubt(self):
        start = self.next_id
        count = min(self.batch, self.total - start)
        if count <= 0:
            return
        present = int(self.server.rows("SELECT count(*) FROM events WHERE id >= %d" % start)[0])
        if present not in (0, count):
            raise AssertionError("batch at %d is partly there: %d of %d rows" % (start, present, count))
        if present == count:
            self.accept(start, count)

    def accept(self, start, count):
        self.committed.extend((k, v) for (_, k, v) in batch_rows(start, count, self.seed))
        self.next_id = start + count

    def feed_until_dead_or_done(self):
        while self.next_id < self.total:
            start = self.next_id
            count = min(self.batch, self.total - start)
            values = ",".join("(%d,%d,%d)" % row for row in batch_rows(start, count, self.seed))
            result = self.server.psql("INSERT INTO events VALUES " + values, check=False)
            if result.returncode != 0:
                if self.server.process.poll() is None and "terminated" not in result.stderr \
                        and "connection" not in result.stderr and "server closed" not in result.stderr:
                    raise AssertionError("INSERT failed: " + result.stderr)
                return False  # Killed: the batch is in doubt.
            self.accept(start, count)
        return True


def wait_dead(server, timeout=30):
    try:
        server.process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError("the armed failpoint never fired")
    server.log.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--random-kills", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    server = Staved(args.staved, checkpoint_interval="100ms", extra_args=["--enable-failpoints"])
    feeder = Feeder(server, args.rows, args.batch, args.seed)
    kills = 0
    started = time.time()
    try:
        server.start()
        server.psql("CREATE TABLE events (id BIGINT PRIMARY KEY, k INT, v BIGINT)")
        for name, query in VIEWS.items():
            server.psql("CREATE MATERIALIZED VIEW %s AS %s" % (name, query))

        # Every failpoint once: arm it, feed until the server dies at it, restart.
        for failpoint in FAILPOINTS:
            server.psql("SET stave.failpoints = '%s=crash'" % failpoint)
            if feeder.feed_until_dead_or_done():
                raise AssertionError("ran out of rows before %s fired; use more --rows" % failpoint)
            wait_dead(server)
            kills += 1
            server.start()
            feeder.resolve_in_doubt()

        # Kills at random instants while feeding.
        for _ in range(args.random_kills):
            delay = rng.uniform(0.05, 1.5)
            killer = threading.Timer(delay, lambda: server.process.kill())
            killer.start()
            done = feeder.feed_until_dead_or_done()
            killer.join()
            server.process.wait()
            server.log.close()
            kills += 1
            server.start()
            feeder.resolve_in_doubt()
            if done:
                break
        feeder.feed_until_dead_or_done()

        server.psql("CHECKPOINT")
        expected = oracle(feeder.committed)
        for name in VIEWS:
            got = sorted(server.rows("SELECT * FROM %s" % name))
            if got != expected[name]:
                missing = sorted(set(expected[name]) - set(got))[:5]
                extra = sorted(set(got) - set(expected[name]))[:5]
                raise AssertionError("view %s differs from the oracle: missing %r, extra %r" % (name, missing, extra))
        table_count = int(server.rows("SELECT count(*) FROM events")[0])
        if table_count != len(feeder.committed):
            raise AssertionError("table holds %d rows, oracle %d" % (table_count, len(feeder.committed)))
        check_code = server.stop()
        if check_code != 0:
            raise AssertionError("unclean exit %d" % check_code)
        print("kill loop: %d rows, %d kills (%d failpoints, %d random), views equal the oracle, %.1fs"
              % (len(feeder.committed), kills, len(FAILPOINTS), kills - len(FAILPOINTS), time.time() - started))
        return 0
    except Exception:
        server.report_failure()
        raise
    finally:
        server.cleanup()


if __name__ == "__main__":
    sys.exit(main())
