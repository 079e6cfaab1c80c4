"""PostgreSQL sinks end to end, against a real PostgreSQL server started for the test.

The seed's pipeline (a table of numbers, the odd and even sums, a sink) in every mode: upserts
with commit='progress' and 'two_phase', keyless appends with both, and a sink AS SELECT. Rows
are fed while staved is SIGKILLed at every sink failpoint once and at random instants, and
while the target PostgreSQL is stopped for a while; at the end every target table must equal
an oracle computed here (nothing lost, nothing twice) and no prepared transaction of ours may
be left. Then: pause and resume, DROP SINK's cleaning, errors at CREATE SINK, passwords that
never show, and the delivery analysis refusing a socket source.

  postgres_sink_test.py --staved PATH [--rows N] [--batch B] [--random-kills K] [--seed S]
"""

import argparse
import random
import socket
import subprocess
import threading
import time

from postgres_harness import PostgresServer
from stave_harness import Staved, check, free_port

SINK_FAILPOINTS = [
    "sink_before_prepare",
    "sink_after_prepare",
    "sink_before_commit_prepared",
    "sink_after_commit_prepared",
    "sink_before_deliver",
    "sink_after_staged_part",
    "sink_after_deliver",
]
PASSWORD = "s3cret-Pw"  # Trust authentication ignores it; it must never show anywhere.


def batch_rows(start, count, seed):
    rng = random.Random(seed * 1000003 + start)
    return [(i, rng.randrange(0, 1000)) for i in range(start, start + count)]


class Feeder:
    """Inserts batches of (id, n) in order; a batch whose reply a kill lost is resolved after
    the restart by counting its rows (an INSERT is all there or not at all)."""

    def __init__(self, server, total, batch, seed):
        self.server, self.total, self.batch, self.seed = server, total, batch, seed
        self.next_id = 0
        self.committed = []

    def resolve_in_doubt(self):
        start = self.next_id
        count = min(self.batch, self.total - start)
        if count <= 0:
            return
        present = int(self.server.rows("SELECT count(*) FROM nums WHERE id >= %d" % start)[0])
        check(present in (0, count), "batch at %d is partly there: %d of %d" % (start, present, count))
        if present == count:
            self.accept(start, count)

    def accept(self, start, count):
        self.committed.extend(batch_rows(start, count, self.seed))
        self.next_id = start + count

    def feed(self, batches=None, pause=0.0):
        """Feeds until done, the server dies, or `batches` batches. True if it is alive."""
        fed = 0
        while self.next_id < self.total and (batches is None or fed < batches):
            start = self.next_id
            count = min(self.batch, self.total - start)
            values = ",".join("(%d,%d)" % row for row in batch_rows(start, count, self.seed))
            result = self.server.psql("INSERT INTO nums VALUES " + values, check=False)
            if result.returncode != 0:
                if self.server.process.poll() is None and "server closed" not in result.stderr \
                        and "connection" not in result.stderr and "terminated" not in result.stderr:
                    raise AssertionError("INSERT failed: " + result.stderr)
                return False
            self.accept(start, count)
            fed += 1
            time.sleep(pause)
        return True


def expected_targets(rows):
    sums, buckets = {}, {}
    for (i, n) in rows:
        total, cnt = sums.get(n % 2, (0, 0))
        sums[n % 2] = (total + n, cnt + 1)
        cnt, total = buckets.get(i % 50, (0, 0))
        buckets[i % 50] = (cnt + 1, total + n)
    copy = sorted("%d|%d" % row for row in rows)
    return {
        "sums_progress": sorted("%d|%d|%d" % (p, t, c) for p, (t, c) in sums.items()),
        "sums_two_phase": sorted("%d|%d|%d" % (p, t, c) for p, (t, c) in sums.items()),
        "buckets_two_phase": sorted("%d|%d|%d" % (b, c, t) for b, (c, t) in buckets.items()),
        "copy_progress": copy,
        "copy_two_phase": copy,
        "evens": sorted("%d|%d" % (i, n) for (i, n) in rows if n % 2 == 0),
        "staged_copy": copy,
        "staged_sums": sorted("%d|%d|%d" % (p, t, c) for p, (t, c) in sums.items()),
    }


SINKS = {
    "sums_progress": "FROM sums WITH (connector = 'postgres', url = '{url}', table = 'sums_progress', "
                     "primary_key = 'parity')",
    "sums_two_phase": "FROM sums WITH (connector = 'postgres', url = '{url}', table = 'sums_two_phase', "
                      "primary_key = 'parity', commit = 'two_phase')",
    "buckets_two_phase": "FROM buckets WITH (connector = 'postgres', url = '{url}', "
                         "table = 'public.buckets_two_phase', primary_key = 'bucket', "
                         "commit = 'two_phase', delivery = 'exactly_once')",
    "copy_progress": "FROM nums WITH (connector = 'postgres', url = '{url}', table = 'copy_progress')",
    "copy_two_phase": "FROM nums WITH (connector = 'postgres', url = '{url}', table = 'copy_two_phase', "
                      "commit = 'two_phase', mode = 'append')",
    "evens": "WITH (connector = 'postgres', url = '{url}', table = 'evens') AS "
             "SELECT id, n FROM nums WHERE n % 2 = 0",
    # Epochs larger than one transaction may hold: staged in parts, merged in one.
    "staged_copy": "FROM nums WITH (connector = 'postgres', url = '{url}', table = 'staged_copy', "
                   "max_rows_per_transaction = '30')",
    "staged_sums": "FROM sums WITH (connector = 'postgres', url = '{url}', table = 'staged_sums', "
                   "primary_key = 'parity', commit = 'two_phase', max_rows_per_transaction = '1')",
}


def target_rows(pg, table):
    return sorted("|".join(row) for row in pg.query("SELECT * FROM %s" % table))


def wait_targets(pg, expected, timeout=60):
    deadline = time.time() + timeout
    while True:
        differing = [t for t in expected if target_rows(pg, t) != expected[t]]
        if not differing:
            return
        if time.time() > deadline:
            table = differing[0]
            got, want = target_rows(pg, table), expected[table]
            raise AssertionError("target %s differs from the oracle: %d rows vs %d; missing %r, extra %r"
                                 % (table, len(got), len(want), sorted(set(want) - set(got))[:5],
                                    sorted(set(got) - set(want))[:5]))
        time.sleep(0.2)


def our_prepared(pg):
    return pg.query("SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'stave:%'")


def wait_dead(server, timeout=60):
    try:
        server.process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError("the armed failpoint never fired")
    server.log.close()


def expect_error(server, sql, sqlstate, fragment):
    result = server.psql(sql, check=False, verbose=True)
    check(result.returncode != 0, "%r should fail" % sql)
    check(sqlstate in result.stderr and fragment in result.stderr,
          "%r: expected %s and %r, got %s" % (sql, sqlstate, fragment, result.stderr))
    return result.stderr


def kills_and_outage(args, pg, server, url, rng):
    server.psql("CREATE TABLE nums (id BIGINT, n BIGINT) APPEND ONLY")
    server.psql("CREATE MATERIALIZED VIEW sums AS "
                "SELECT n % 2 AS parity, sum(n) AS total, count(*) AS cnt FROM nums GROUP BY n % 2")
    server.psql("CREATE MATERIALIZED VIEW buckets AS "
                "SELECT id % 50 AS bucket, count(*) AS cnt, sum(n) AS total FROM nums GROUP BY id % 50")
    for name, definition in SINKS.items():
        server.psql("CREATE SINK %s %s" % (name, definition.format(url=url)))

    feeder = Feeder(server, args.rows, args.batch, args.seed)
    kills = 0
    for failpoint in SINK_FAILPOINTS:
        server.psql("SET stave.failpoints = '%s=crash'" % failpoint)
        # Feed until it fires; a slow build may need more rows than --rows for all of them.
        deadline = time.time() + 120
        armed_at = feeder.next_id
        while feeder.feed(pause=0.02) and server.process.poll() is None:
            check(time.time() < deadline, "%s never fired" % failpoint)
            feeder.total += 10 * args.batch
        wait_dead(server)
        print("%s fired after %d more rows" % (failpoint, feeder.next_id - armed_at))
        kills += 1
        server.start()
        feeder.resolve_in_doubt()

    for _ in range(args.random_kills):
        killer = threading.Timer(rng.uniform(0.1, 1.0), lambda: server.process.kill())
        killer.start()
        feeder.feed(pause=0.01)
        killer.join()
        server.process.wait()
        server.log.close()
        kills += 1
        server.start()
        feeder.resolve_in_doubt()

    # The target goes away: checkpoints of every job go on, the sinks owe and retry.
    pg.stop()
    feeder.feed(batches=3)
    started = time.time()
    server.psql("CHECKPOINT")
    check(time.time() - started < 10, "CHECKPOINT waited for the absent target")
    deadline = time.time() + 30
    while True:
        states = server.rows("SELECT name, state, lag_epochs FROM stave_catalog.sinks")
        retrying = [s for s in states if s.split("|")[1] == "retrying" and int(s.split("|")[2]) > 0]
        if len(retrying) == len(SINKS):
            break
        check(time.time() < deadline, "sinks did not notice the absent target: %r" % states)
        time.sleep(0.2)
    error = server.rows("SELECT last_error FROM stave_catalog.sinks LIMIT 1")[0]
    check("127.0.0.1" in error and PASSWORD not in error, "unexpected last_error %r" % error)
    # A kill while the target is away: the owed epochs wait in the checkpoint.
    server.kill()
    server.start()
    feeder.feed(batches=2)
    pg.start_existing()
    feeder.feed()
    server.psql("CHECKPOINT")
    wait_targets(pg, expected_targets(feeder.committed))
    check(our_prepared(pg) == [], "prepared transactions left: %r" % our_prepared(pg))
    states = server.rows("SELECT state, lag_epochs FROM stave_catalog.sinks")
    check(all(s == "running|0" for s in states), "sinks not caught up: %r" % states)
    print("postgres sinks: %d rows, %d kills (%d failpoints, %d random), one target outage; "
          "%d targets equal the oracle" % (len(feeder.committed), kills, len(SINK_FAILPOINTS),
                                           kills - len(SINK_FAILPOINTS), len(SINKS)))
    return feeder


def pause_resume_drop(pg, server, feeder):
    server.psql("ALTER SINK copy_progress PAUSE")
    before = target_rows(pg, "copy_progress")
    feeder.total += 400
    feeder.feed()
    server.psql("CHECKPOINT")
    time.sleep(0.5)
    check(target_rows(pg, "copy_progress") == before, "a paused sink wrote")
    check(server.rows("SELECT state FROM stave_catalog.sinks WHERE name = 'copy_progress'") == ["paused"],
          "state is not paused")
    server.kill()  # The pause is in the checkpoint.
    server.start()
    time.sleep(0.5)
    check(target_rows(pg, "copy_progress") == before, "a paused sink wrote after a restart")
    server.psql("ALTER SINK copy_progress RESUME")
    wait_targets(pg, expected_targets(feeder.committed))

    for row in server.rows("SHOW SINKS"):
        server.psql('DROP SINK "%s"' % row.split("|")[0].replace('"', '""'))
    check(pg.query("SELECT count(*) FROM stave_sink_progress") == [["0"]], "progress rows left")
    check(our_prepared(pg) == [], "prepared transactions left after DROP SINK")
    check(pg.query("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'stave_stage_%'") == [["0"]],
          "staging tables left after DROP SINK")
    check(server.rows("SHOW SINKS") == [], "SHOW SINKS lists dropped sinks")


def errors_and_secrets(pg, server, url):
    expect_error(server, "CREATE SINK e FROM sums WITH (connector = 'postgres', url = '%s', table = 'x')" % url,
                 "22023", "append needs an append-only input")
    expect_error(server, "CREATE SINK e FROM sums WITH (connector = 'postgres', url = '%s', table = 'x', "
                 "primary_key = 'nope')" % url, "22023", 'no column "nope"')
    expect_error(server, "CREATE SINK e FROM nums WITH (connector = 'postgres', url = '%s', table = 'x', "
                 "colour = 'red')" % url, "22023", "unknown option 'colour'")
    expect_error(server, "CREATE SINK e FROM nums WITH (connector = 'postgres', url = '%s', table = 'absent', "
                 "create_table = 'false')" % url, "42P01", "does not exist")
    pg.psql("CREATE TABLE wrong_types (id text, n bigint)")
    expect_error(server, "CREATE SINK e FROM nums WITH (connector = 'postgres', url = '%s', "
                 "table = 'wrong_types')" % url, "42804", "wrong_types")
    pg.psql("CREATE TABLE no_key (parity bigint, total numeric, cnt bigint)")
    expect_error(server, "CREATE SINK e FROM sums WITH (connector = 'postgres', url = '%s', "
                 "table = 'no_key', primary_key = 'parity')" % url, "22023", "unique index")
    dead = "postgresql://postgres:%s@127.0.0.1:%d/postgres" % (PASSWORD, free_port())
    message = expect_error(server, "CREATE SINK e FROM nums WITH (connector = 'postgres', url = '%s', "
                           "table = 'x')" % dead, "08001", "cannot connect")
    check(PASSWORD not in message.split("LINE 1")[0], "the password is in an error: " + message)
    expect_error(server, "CREATE SINK e FROM nums WITH (connector = 'nowhere')", "22023", "unknown sink connector")
    # Missing permissions are known at CREATE SINK (PostgreSQL 15: no CREATE on public).
    pg.psql("CREATE ROLE limited LOGIN")
    expect_error(server, "CREATE SINK e FROM nums WITH (connector = 'postgres', url = '%s', table = 'x')"
                 % pg.url(user="limited"), "42501", "permission denied")
    expect_error(server, "SELECT * FROM sums_progress", "42809", "is a sink")
    expect_error(server, "CREATE SINK sums_progress FROM nums WITH (connector = 'blackhole')", "42710",
                 "already exists")

    # A value the target refuses at run time: the sink says so and waits; nothing else stops.
    pg.psql("CREATE TABLE narrow (id bigint, word varchar(3))")
    server.psql("CREATE TABLE words (id BIGINT, word VARCHAR) APPEND ONLY")
    server.psql("CREATE SINK narrow FROM words WITH (connector = 'postgres', url = '%s', "
                "table = 'narrow')" % url)
    server.psql("INSERT INTO words VALUES (1, 'ok'), (2, 'too long')")
    server.psql("CHECKPOINT")
    deadline = time.time() + 30
    while True:
        state = server.rows("SELECT state, lag_epochs > 0, last_error FROM stave_catalog.sinks "
                            "WHERE name = 'narrow'")[0]
        if state.startswith("failed|t|") and "22001" not in state and "too long" in state:
            break
        check(time.time() < deadline, "the refused value did not show: %r" % state)
        time.sleep(0.2)
    server.psql("INSERT INTO words VALUES (3, 'abc')")
    server.psql("CHECKPOINT")  # Checkpoints go on.
    pg.psql("ALTER TABLE narrow ALTER COLUMN word TYPE varchar(20)")
    deadline = time.time() + 30
    while pg.query("SELECT id, word FROM narrow ORDER BY id") != [["1", "ok"], ["2", "too long"],
                                                                   ["3", "abc"]]:
        check(time.time() < deadline, "the sink did not resume once the target took the value")
        time.sleep(0.2)
    check(server.rows("SELECT state FROM stave_catalog.sinks WHERE name = 'narrow'") == ["running"],
          "the sink is not running again")

    # Hostile names are quoted, never spliced.
    server.psql('CREATE MATERIALIZED VIEW "we""ird" AS SELECT id AS "a ""b"" c", n AS "drop table nums;" '
                'FROM nums')
    server.psql("""CREATE SINK hostile FROM "we""ird" WITH (connector = 'postgres', url = '%s', """
                """table = 'odd"name; DROP TABLE copy_progress', mode = 'append')""" % url)
    server.psql("CHECKPOINT")
    deadline = time.time() + 30
    while pg.query('SELECT count(*) FROM "odd""name; DROP TABLE copy_progress"') != \
            [[server.rows("SELECT count(*) FROM nums")[0]]]:
        check(time.time() < deadline, "the hostile sink did not catch up")
        time.sleep(0.2)
    check(pg.query("SELECT to_regclass('copy_progress') IS NOT NULL") == [["t"]], "a table was dropped")

    shown = "\n".join(server.rows("SHOW SINKS") + server.rows("EXPLAIN SINK sums_progress") +
                      server.rows("SELECT * FROM stave_catalog.sinks"))
    check(PASSWORD not in shown, "a password shows: " + shown)
    check("postgresql://postgres@127.0.0.1" in shown, "the target does not show: " + shown)
    check(PASSWORD not in server.read_log(), "a password is in the log")


def copy_escapes(pg, server, url):
    # COPY's text format escapes tab, newline, carriage return and backslash, and spells NULL
    # \N; the rows go out in blocks of many lines, so there are enough to span several.
    server.psql("CREATE TABLE texts (id BIGINT, word VARCHAR) APPEND ONLY")
    for commit in ["progress", "two_phase"]:
        server.psql("CREATE SINK texts_%s FROM texts WITH (connector = 'postgres', url = '%s', "
                    "table = 'texts_%s', commit = '%s')" % (commit, url, commit, commit))
    server.psql("INSERT INTO texts SELECT g, CASE WHEN g % 7 = 0 THEN NULL ELSE repeat('x', g % 90) || "
                "E'\\t\\\\\\n\\r\\\\N' || g || 'é' END FROM generate_series(1, 6000) g")
    server.psql("CHECKPOINT")
    digest = "md5(string_agg(id || ':' || coalesce(word, '<null>'), ',' ORDER BY id))"
    want = server.rows("SELECT %s FROM texts" % digest)
    for commit in ["progress", "two_phase"]:
        deadline = time.time() + 30
        while pg.query("SELECT %s FROM texts_%s" % (digest, commit)) != [want]:
            check(time.time() < deadline, "texts_%s differs from the table" % commit)
            time.sleep(0.2)


def socket_source(pg, server, url):
    port = free_port()
    server.psql("CREATE STREAM lines (line VARCHAR) WITH (connector = 'socket', host = '127.0.0.1', "
                "port = '%d')" % port)
    message = expect_error(server, "CREATE SINK copy_lines FROM lines WITH (connector = 'postgres', "
                           "url = '%s', table = 'lines')" % url, "0A000", 'source "lines" (socket)')
    check("cannot rewind" in message and "at_most_once" in message, "no reason or hint: " + message)
    expect_error(server, "CREATE SINK copy_lines FROM lines WITH (connector = 'blackhole', "
                 "delivery = 'at_least_once')", "0A000", "weakest stave")
    plan = "\n".join(server.rows("EXPLAIN CREATE SINK copy_lines FROM lines WITH (connector = 'blackhole')"))
    check("refused" in plan and 'source "lines" (socket): at_most_once' in plan, "EXPLAIN: " + plan)
    # Created before anything listens; the source connects once the server is up.
    server.psql("CREATE SINK copy_lines FROM lines WITH (connector = 'postgres', url = '%s', "
                "table = 'lines', delivery = 'at_most_once')" % url)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1)
    listener.settimeout(30)
    connection, _ = listener.accept()
    connection.sendall(b"first line\nsecond\r\nthird, with | and \\ and \t tab\n")
    deadline = time.time() + 30
    want = sorted(["first line", "second", "third, with | and \\ and \t tab"])
    while sorted(row[0] for row in pg.query("SELECT line FROM lines")) != want:
        check(time.time() < deadline, "socket lines did not arrive: %r" % pg.query("SELECT line FROM lines"))
        server.psql("CHECKPOINT")
        time.sleep(0.2)
    connection.close()
    listener.close()
    print("socket source: exactly_once and at_least_once refused naming the socket; at_most_once runs")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--rows", type=int, default=12000)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--random-kills", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.time()
    pg = PostgresServer()
    server = Staved(args.staved, checkpoint_interval="100ms", extra_args=["--enable-failpoints"])
    try:
        pg.start()
        url = pg.url(password=PASSWORD)
        server.start()
        feeder = kills_and_outage(args, pg, server, url, rng)
        errors_and_secrets(pg, server, url)
        copy_escapes(pg, server, url)
        socket_source(pg, server, url)
        pause_resume_drop(pg, server, feeder)
        # Two-phase needs prepared transactions: said at CREATE SINK.
        pg.psql("ALTER SYSTEM SET max_prepared_transactions = 0")
        pg.restart()
        expect_error(server, "CREATE SINK e FROM nums WITH (connector = 'postgres', url = '%s', "
                     "table = 'x', commit = 'two_phase')" % url, "0A000", "max_prepared_transactions = 0")
        check(server.stop() == 0, "unclean exit")
        print("postgres sink test passed in %.1fs" % (time.time() - started))
    except Exception:
        server.report_failure()
        if server.process and server.process.poll() is None:
            print("---- stave_catalog.sinks ----")
            print(server.psql("SELECT * FROM stave_catalog.sinks", check=False).stdout)
            print(server.psql("SELECT * FROM stave_catalog.checkpoints ORDER BY epoch DESC LIMIT 5",
                              check=False).stdout)
        raise
    finally:
        server.cleanup()
        pg.cleanup()


if __name__ == "__main__":
    main()
