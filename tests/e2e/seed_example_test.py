"""The seed's example, proven by killing the process: a view of odd and even sums over a table.

Insert 1..5 and checkpoint (odd 9, even 6); insert 6; SIGKILL before any further checkpoint;
restart; insert 7; checkpoint: odd 16, even 12 — every number counted exactly once."""

import argparse
import sys

from stave_harness import Staved, check


VIEW = "SELECT parity, total FROM sums ORDER BY parity"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    # Checkpoints only on demand, so nothing commits between the CHECKPOINT and the kill.
    server = Staved(args.staved, checkpoint_interval="0")
    try:
        server.start()
        server.psql("CREATE TABLE nums (n BIGINT)")
        server.psql("CREATE MATERIALIZED VIEW sums AS SELECT CASE WHEN n % 2 = 1 THEN 'odd' ELSE 'even' END "
                    "AS parity, sum(n) AS total FROM nums GROUP BY 1")
        server.psql("INSERT INTO nums VALUES (1), (2), (3), (4), (5)")
        server.psql("CHECKPOINT")
        check(server.rows(VIEW) == ["even|6", "odd|9"], "after 1..5: %r" % server.rows(VIEW))
        server.psql("INSERT INTO nums VALUES (6)")
        check(server.kill() == -9, "SIGKILL")

        server.start()
        check(server.rows(VIEW) == ["even|6", "odd|9"], "rolled back to the checkpoint: %r" % server.rows(VIEW))
        check(server.rows("SELECT count(*), sum(n) FROM nums") == ["6|21"], "the table kept the acknowledged 6")
        server.psql("INSERT INTO nums VALUES (7)")
        server.psql("CHECKPOINT")
        check(server.rows(VIEW) == ["even|12", "odd|16"], "exactly once: %r" % server.rows(VIEW))

        # Updates and deletes retract: the view follows the table.
        server.psql("BEGIN; UPDATE nums SET n = n * 10 WHERE n = 7; DELETE FROM nums WHERE n = 2; COMMIT")
        server.psql("BEGIN; INSERT INTO nums VALUES (1000); ROLLBACK")
        server.psql("CHECKPOINT")
        check(server.rows(VIEW) == ["even|80", "odd|9"], "after update/delete: %r" % server.rows(VIEW))
        check(server.kill() == -9, "SIGKILL")
        server.start()
        server.psql("CHECKPOINT")
        check(server.rows(VIEW) == ["even|80", "odd|9"], "after a second kill: %r" % server.rows(VIEW))
        check(server.stop() == 0, "clean exit")
        print("seed example: all checks passed")
        return 0
    except Exception:
        print(server.read_log() if server.process else "", file=sys.stderr)
        raise
    finally:
        server.cleanup()


if __name__ == "__main__":
    sys.exit(main())
