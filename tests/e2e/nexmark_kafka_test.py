"""Nexmark fed from Kafka: tools/nexmark-to-kafka fills the person, auction and bid topics of a
test Kafka cluster with the generator's events as JSON; staved reads them through Kafka streams
(FORMAT JSON) and, beside them, through `nexmark` streams of the same seed and event count. Each
Kafka-fed copy must hold exactly the rows of the generator-fed one (EXCEPT ALL both ways empty,
counts equal), and a Nexmark query over the Kafka streams must give the same answer as over the
generator: the Kafka-fed benchmark runs (bench/nexmark/run.py --source kafka) measure the same
events.

  nexmark_kafka_test.py --staved PATH --tool STAVE_KAFKA_DEV --filler NEXMARK_TO_KAFKA [--events N]
"""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench", "nexmark"))
import nexmark_sql as nx  # noqa: E402
from kafka_harness import KafkaCluster  # noqa: E402
from nexmark_test import expected_count  # noqa: E402
from stave_harness import Staved, check  # noqa: E402

SEED = 7
# Event time at 1,000 events a second: 20,000 events span 20 s, so q5's 10 s windows close.
FIRST_EVENT_RATE = 1000
# The test cluster keeps about 5 MB of each partition: enough partitions that nothing of a run
# of --events is deleted before it is read.
PARTITIONS = {"person": 1, "auction": 2, "bid": 4}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--filler", required=True)
    parser.add_argument("--events", type=int, default=20000)
    args = parser.parse_args()

    cluster = KafkaCluster(args.tool, brokers=1,
                           topics=["%s:%d" % (t, PARTITIONS[t]) for t in nx.TABLES])
    check(args.events % 50 == 0, "--events must be a multiple of 50")
    cluster.start()
    server = Staved(args.staved, checkpoint_interval="500ms")
    try:
        filled = subprocess.run(
            [args.filler, "--bootstrap-servers", cluster.bootstrap, "--events", str(args.events),
             "--seed", str(SEED), "--first-event-rate", str(FIRST_EVENT_RATE)],
            capture_output=True, text=True, timeout=120)
        check(filled.returncode == 0, "nexmark-to-kafka failed: " + filled.stderr)
        check(filled.stdout.strip() == "events=%d records=%d" % (args.events, args.events),
              "nexmark-to-kafka: " + filled.stdout)
        bad = subprocess.run([args.filler, "--bootstrap-servers", cluster.bootstrap,
                              "--tables", "bids"], capture_output=True, text=True, timeout=60)
        check(bad.returncode != 0 and "bids" in bad.stderr, "a bad table type: " + bad.stderr)

        server.start()
        for table in nx.TABLES:
            server.psql(nx.kafka_stream(table, cluster.bootstrap, name="k_" + table))
            server.psql(nx.create_stream(table, args.events, seed=SEED,
                                         first_event_rate=FIRST_EVENT_RATE, name="g_" + table))
            server.psql("CREATE MATERIALIZED VIEW kv_%s AS SELECT * FROM k_%s" % (table, table))
            server.psql("CREATE MATERIALIZED VIEW gv_%s AS SELECT * FROM g_%s" % (table, table))
        # q3 (a join and filters) over each pair of streams.
        q3 = nx.query_body("q3")
        for prefix in ("k_", "g_"):
            body = q3
            for table in nx.TABLES:
                body = body.replace(" %s " % table, " %s%s " % (prefix, table))
            check(body != q3, "q3 names no stream: " + q3)
            server.psql("CREATE MATERIALIZED VIEW %sq3 AS %s" % (prefix, body))

        for table in nx.TABLES:
            count = str(expected_count(table, args.events))
            for view in ("gv_", "kv_"):
                server.wait_for("SELECT count(*) FROM %s%s" % (view, table), [count], timeout=120)
            for a, b in (("kv_", "gv_"), ("gv_", "kv_")):
                differ = server.rows("SELECT count(*) FROM (SELECT * FROM %s%s EXCEPT ALL "
                                     "SELECT * FROM %s%s) d" % (a, table, b, table))
                check(differ == ["0"], "%s%s has %s rows %s%s lacks" % (a, table, differ, b, table))
            print("%s: %s rows through Kafka and from the generator, identical" % (table, count))
        # The copies are complete: q3 over them, as a batch query, is the final answer, which
        # both views (each with readers of its own) must reach.
        answer = q3
        for table in nx.TABLES:
            answer = answer.replace(" %s " % table, " gv_%s " % table)
        final = server.rows("SELECT count(*) FROM (%s) d" % answer)[0]
        check(int(final) > 0, "q3 has no rows over %d events" % args.events)
        for view in ("g_q3", "k_q3"):
            server.wait_for("SELECT count(*) FROM %s" % view, [final], timeout=120)
            for a, b in ((view, "(%s)" % answer), ("(%s)" % answer, view)):
                differ = server.rows("SELECT count(*) FROM (SELECT * FROM %s x EXCEPT ALL "
                                     "SELECT * FROM %s y) d" % (a, b))
                check(differ == ["0"], "%s differs from the batch answer: %s" % (view, differ))
        print("q3: %s rows, the same over Kafka and over the generator" % final)
        print("nexmark_kafka_test: ok")
    finally:
        server.cleanup()
        cluster.cleanup()


if __name__ == "__main__":
    main()
