"""Nexmark queries, differential: each query of bench/nexmark/queries runs in staved as a
materialized view and as its exactly-once PostgreSQL sink over a small run of the nexmark
generator; the same events go into a real PostgreSQL through append sinks of the three streams,
where each query runs again as a batch query. The view, the sink's table and PostgreSQL's answer
must hold the same rows. With --kills, the streams are throttled and staved is SIGKILLed and
restarted during the run: the exactly-once result must not change.

  nexmark_test.py --staved PATH [--events N] [--kills K] [--queries q0,q4,...]
                  [--state-cache SIZE]
"""

import argparse
import collections
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench", "nexmark"))
import nexmark_sql as nx  # noqa: E402
from postgres_harness import PostgresServer  # noqa: E402
from stave_harness import Staved, check  # noqa: E402

# Event time runs at 1,000 events a second, so a run of 20,000 events spans 20 s: 10 s windows
# close, HOP windows slide, and the watermark (4 s behind) cleans the joins' state.
FIRST_EVENT_RATE = 1000

# Columns compared, where a query's answer is not unique: q19 ranks bids by price alone, so which
# of two bids of equal price is 10th is arbitrary (in Flink and PostgreSQL too); the prices at
# each rank are not.
COMPARED_COLUMNS = {"q19": [0, 2, 7]}

_DECIMAL = re.compile(r"^-?\d+\.\d+$")


def normalize(row, query):
    """A row as comparable text: numerics rounded to 6 places (PostgreSQL's avg has more digits
    than Stave's), only the compared columns."""
    fields = [("%.6f" % float(v)) if _DECIMAL.match(v) else v for v in row]
    if query in COMPARED_COLUMNS:
        fields = [fields[i] for i in COMPARED_COLUMNS[query]]
    return "|".join(fields)


def last_position(table, events):
    """The reader position ('event <n>') after the last event of a table type among 0..events-1:
    of each 50 events, 0 is a person, 1..3 auctions, 4..49 bids."""
    offsets = {"person": range(0, 1), "auction": range(1, 4), "bid": range(4, 50)}[table]
    last = max(n for n in range(max(0, events - 50), events) if n % 50 in offsets)
    return last + 1


def expected_count(table, events):
    share = {"person": 1, "auction": 3, "bid": 46}[table]
    full, rest = divmod(events, 50)
    partial = {"person": min(rest, 1), "auction": max(0, min(rest, 4) - 1),
               "bid": max(0, rest - 4)}[table]
    return full * share + partial


def compare(name, got, want):
    got_counts, want_counts = collections.Counter(got), collections.Counter(want)
    if got_counts == want_counts:
        return True
    missing = list((want_counts - got_counts).elements())[:5]
    extra = list((got_counts - want_counts).elements())[:5]
    print("FAIL %s: %d rows, PostgreSQL %d; missing %r; extra %r" % (
        name, len(got), len(want), missing, extra))
    return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--kills", type=int, default=0)
    parser.add_argument("--queries", default=",".join(nx.QUERIES))
    parser.add_argument("--state-cache", default=None,
                        help="staved's --state-cache; a small one makes joins and aggregates "
                             "read their state from the store")
    args = parser.parse_args()
    queries = args.queries.split(",")

    pg = PostgresServer()
    pg.start()
    extra = ["--state-cache", args.state_cache] if args.state_cache else []
    server = Staved(args.staved, checkpoint_interval="200ms", extra_args=extra)
    server.start()
    begun = time.time()
    try:
        # Throttled when killing, so that the kills land while events still flow: each job
        # reads its own copy of the streams from event 0 for 10 s from its CREATE.
        rate = max(100, args.events // 10) if args.kills else None
        for table in nx.TABLES:
            server.psql(nx.create_stream(table, args.events, seed=7, events_per_second=rate,
                                         first_event_rate=FIRST_EVENT_RATE))
            server.psql("CREATE SINK load_%s FROM %s WITH (connector = 'postgres', url = '%s', "
                        "table = '%s', commit = 'two_phase')" % (table, table, pg.url(), table))
        for query in queries:
            server.psql(nx.view(query))
            if query not in nx.NO_POSTGRES_VARIANT:
                server.psql(nx.postgres_sink(query, pg.url()))
        started = time.time()
        print("created in %.1f s" % (started - begun))

        for _ in range(args.kills):
            time.sleep(1.5)
            server.kill()
            server.start()
            print("killed and restarted staved after %.1f s" % (time.time() - started))

        # Done when every event is in PostgreSQL, no sink owes an epoch, and two checkpoints
        # a second apart leave the views and the sinks' tables unchanged.
        # One query per server: psql's and the DDL's round trips are what make this test slow.
        sinks = ["nexmark_%s_pg" % q for q in queries if q not in nx.NO_POSTGRES_VARIANT]

        def counts(relations):
            return ", ".join("(SELECT count(*) FROM %s)" % r for r in relations)

        def snapshot():
            server.psql("CHECKPOINT")
            stave = server.rows("SELECT %s, (SELECT count(*) FROM stave_catalog.sinks WHERE "
                                "lag_epochs > 0)" % counts("nexmark_" + q for q in queries))
            target = pg.query("SELECT " + counts(nx.TABLES + sinks))[0]
            return stave, target[:len(nx.TABLES)], target[len(nx.TABLES):]

        want_tables = [str(expected_count(t, args.events)) for t in nx.TABLES]
        deadline = time.time() + 300  # generous: CI also runs this under ASan
        previous = None
        while True:
            current = snapshot()
            if current == previous and current[0][0].endswith("|0") and current[1] == want_tables:
                break
            check(time.time() < deadline, "the run did not finish: %r, want tables %r" % (
                current, want_tables))
            previous = current
            time.sleep(1)
        print("finished in %.1f s" % (time.time() - started))
        for table in nx.TABLES:
            position = "event %d" % last_position(table, args.events)
            for row in server.rows("SELECT reader, position FROM stave_catalog.sources "
                                   "WHERE stream = '%s'" % table):
                check(row.endswith("|" + position), "reader %s, expected %s" % (row, position))

        failures = 0
        for query in queries:
            want = [normalize(r, query) for r in pg.query(nx.postgres_query(query))]
            got = [normalize(r.split("|"), query)
                   for r in server.rows("SELECT * FROM nexmark_%s" % query)]
            ok = compare(query + " view", got, want)
            if query not in nx.NO_POSTGRES_VARIANT:
                sink = [normalize(r, query) for r in pg.query("SELECT * FROM nexmark_%s_pg" % query)]
                ok = compare(query + " postgres sink", sink, want) and ok
            check(len(want) > 0, "%s: PostgreSQL's answer is empty; the test would prove nothing"
                  % query)
            print("%s %s: %d rows" % ("ok  " if ok else "FAIL", query, len(want)))
            failures += 0 if ok else 1
        check(failures == 0, "%d queries differ from PostgreSQL" % failures)
        print("all %d queries match PostgreSQL over %d events (%d kills)" % (
            len(queries), args.events, args.kills))
    finally:
        server.cleanup()
        pg.cleanup()


if __name__ == "__main__":
    main()
