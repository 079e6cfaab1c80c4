"""Kafka in and out, with kills: a grouped view over a Kafka stream equals an oracle after
SIGKILLs at random instants and at every source and epoch failpoint; bad records are
dead-lettered once each and counted once each; Kafka sinks publish every row, in order per
key, with tombstones, and republish epochs after a crash between checkpoint and Kafka commit.

Runs against stave-kafka-dev (librdkafka's mock cluster), which shows aborted transactions'
records to read_committed readers: there, CREATE SINK refuses exactly-once (checked) and the
sinks run at-least-once; the test checks that nothing is lost, that the final value of every
key is right and that the order per key holds. With STAVE_TEST_KAFKA_BOOTSTRAP set to a real
broker, it also runs the sink with exactly-once and checks that no record is duplicated.

  kafka_test.py --staved PATH --tool PATH [--records N] [--random-kills K] [--seed S]
"""

import argparse
import json
import os
import random
import re
import sys
import threading
import time

from kafka_harness import KafkaCluster
from stave_harness import Staved, check

SOURCE_FAILPOINTS = ["source_chunk_read", "epoch_barrier_injected", "epoch_before_commit",
                     "epoch_after_commit"]
SINK_FAILPOINTS = ["sink_before_deliver", "kafka_sink_before_commit", "sink_after_deliver"]
PARTITIONS = 4
# How long views and sinks may take to catch up (slow under sanitizers).
CATCH_UP_SECONDS = 180
KEYS = 40


def record(i, rng):
    """Record i: mostly good JSON; every 50th is bad in one of several ways."""
    k, v = rng.randrange(KEYS), rng.randrange(1000)
    if i % 50 == 49:
        kind = (i // 50) % 5
        bad = [b'{"id": %d, "k": ' % i,  # Truncated.
               b'{"id": %d, "k": "seven", "v": 1}' % i,  # Wrong type.
               b"\xff\xfe\x00garbage",  # Not JSON at all.
               b'[1, 2, 3]',  # Not an object.
               b'{"id": %d, "k": 99999999999999999999999}' % i][kind]  # Out of range.
        return k, bad, None
    return k, json.dumps({"id": i, "k": k, "v": v, "note": "x" * (i % 7)}).encode(), (k, v)


class Producer(threading.Thread):
    """Feeds the topic in small batches, independent of staved's kills (Kafka keeps them)."""

    def __init__(self, cluster, first, records, seed):
        super().__init__(daemon=True)
        self.cluster, self.first, self.records, self.seed = cluster, first, records, seed
        self.good, self.bad = [], []  # (k, v) of good records; count of bad ones.
        self.error = None

    def run(self):
        try:
            rng = random.Random(self.seed)
            batch = 200
            end = self.first + self.records
            for start in range(self.first, end, batch):
                keys, values = [], []
                for i in range(start, min(start + batch, end)):
                    k, value, good = record(i, rng)
                    keys.append(str(k))
                    values.append(value)
                    if good:
                        self.good.append(good)
                    else:
                        self.bad.append(i)
                self.cluster.produce("events", values, keys=keys)
                time.sleep(0.02)
        except Exception as e:  # Reported by the main thread.
            self.error = e


def oracle(good):
    by_key = {}
    for k, v in good:
        n, total = by_key.get(k, (0, 0))
        by_key[k] = (n + 1, total + v)
    return by_key


def wait_dead(server, timeout=60):
    server.process.wait(timeout=timeout)
    server.log.close()


def restart(server):
    server.start()


def final_values(records):
    """The last value per key (a tombstone removes it), and whether n grew monotonically per key."""
    last, ordered = {}, True
    seen_n = {}
    for r in records:  # Sorted by (partition, offset): per key, in publish order.
        key = json.loads(r.key)["k"]
        if r.value is None:
            last.pop(key, None)
            continue
        row = json.loads(r.value)
        if row["n"] < seen_n.get(key, 0):
            ordered = False
        seen_n[key] = row["n"]
        last[key] = (row["n"], row["total"])
    return last, ordered


def metric_samples(metrics, name):
    """{labels text: value} of the samples of one metric in a Prometheus text exposition."""
    samples = {}
    for line in metrics.splitlines():
        match = re.match(r"^%s(\{[^}]*\})? (\S+)$" % re.escape(name), line)
        if match:
            samples[match.group(1) or ""] = float(match.group(2))
    return samples


def check_watermarked_stream_reports(server, payload_bytes):
    """A stream with a WATERMARK (clicks, over partitions 0 and 1 of clicks_in, read by view
    clicks_10s) reports what its Kafka reader knows: the lag per partition in
    stave_catalog.sources, /api/v1/jobs and /metrics, and its records' payload bytes."""
    deadline = time.time() + CATCH_UP_SECONDS
    while True:
        rows = server.rows("SELECT coalesce(lag, '') FROM stave_catalog.sources "
                           "WHERE reader = 'clicks_10s'")
        lag = dict(part.split(":") for part in rows[0].split(",") if part) if rows else {}
        if lag.get("0") == "0" and lag.get("1") == "0":
            break  # Caught up with both partitions that have records.
        check(time.time() < deadline, "stave_catalog.sources lag of clicks_10s: %r" % rows)
        time.sleep(0.2)
    status, body = server.http("/api/v1/jobs")
    check(status == 200, "/api/v1/jobs: %d" % status)
    job = [j for j in json.loads(body)["jobs"] if j["name"] == "clicks_10s"]
    check(job, "no job clicks_10s in /api/v1/jobs")
    node_lag = {entry["partition"]: entry["records"] for entry in job[0]["nodes"][0]["lag"]}
    check(node_lag.get(0) == 0 and node_lag.get(1) == 0, "lag in /api/v1/jobs: %r" % node_lag)
    while True:
        status, metrics = server.http("/metrics")
        check(status == 200, "/metrics: %d" % status)
        lag = {labels: value for labels, value in
               metric_samples(metrics, "stave_source_lag_records").items()
               if 'job="clicks_10s"' in labels and 'source="stream clicks"' in labels}
        read = metric_samples(metrics, "stave_stream_read_bytes_total").get('{stream="clicks"}')
        partitions = sorted(re.search(r'partition="(\d+)"', labels).group(1) for labels in lag)
        # The records' payloads as received, not an estimate from the decoded rows.
        if read == payload_bytes and {"0", "1"} <= set(partitions):
            break
        check(time.time() < deadline, "clicks in /metrics: lag %r, %r bytes read of %d" %
              (lag, read, payload_bytes))
        time.sleep(0.2)
    check(all(value == 0 for value in lag.values()), "stave_source_lag_records: %r" % lag)


def real_broker_exactly_once(args, bootstrap):
    """An exactly-once Kafka sink against a real broker, killed before and after its Kafka
    commits: read_committed readers see every row once."""
    import uuid
    from confluent_kafka.admin import AdminClient, NewTopic
    prefix = "stave-test-" + uuid.uuid4().hex[:8]
    events, out = prefix + "-events", prefix + "-out"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(events, 2, 1), NewTopic(out, 2, 1)]).values():
        future.result(30)
    cluster = KafkaCluster(args.tool)
    cluster.bootstrap = bootstrap  # Its clients only; no mock is started.
    records = 5000
    cluster.produce(events, [json.dumps({"id": i}) for i in range(records)])
    server = Staved(args.staved, checkpoint_interval="200ms", extra_args=["--enable-failpoints"])
    try:
        server.start()
        server.psql("CREATE STREAM e (id BIGINT) WITH (connector='kafka', topic='%s', "
                    "properties.bootstrap.server='%s') FORMAT JSON" % (events, bootstrap))
        server.psql("CREATE SINK o WITH (connector='kafka', topic='%s', properties.bootstrap.server="
                    "'%s', delivery='exactly_once') AS SELECT id FROM e" % (out, bootstrap))
        for failpoint in ["kafka_sink_before_commit", "sink_after_deliver"]:
            server.psql("SET stave.failpoints = '%s=crash'" % failpoint)
            cluster.produce(events, [json.dumps({"id": i}) for i in range(records, records + 500)])
            records += 500
            wait_dead(server)
            restart(server)
        server.wait_for("SELECT lag_epochs FROM stave_catalog.sinks WHERE name = 'o'", ["0"], timeout=CATCH_UP_SECONDS)
        server.psql("CHECKPOINT")
        server.wait_for("SELECT lag_epochs FROM stave_catalog.sinks WHERE name = 'o'", ["0"], timeout=CATCH_UP_SECONDS)
        ids = [json.loads(r.value)["id"] for r in
               cluster.consume_all(out, config={"isolation.level": "read_committed"})]
        check(sorted(ids) == list(range(records)),
              "exactly-once sink: %d records for %d ids, %d distinct"
              % (len(ids), records, len(set(ids))))
        server.stop()
        print("real broker: exactly-once Kafka sink, %d rows once each after 2 kills" % records)
    finally:
        server.cleanup()
        admin.delete_topics([events, out])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--records", type=int, default=30000)
    parser.add_argument("--random-kills", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.time()
    real_broker = os.environ.get("STAVE_TEST_KAFKA_BOOTSTRAP")
    if real_broker:
        real_broker_exactly_once(args, real_broker)
    else:
        print("real-broker exactly-once sink test skipped: STAVE_TEST_KAFKA_BOOTSTRAP is not set "
              "(the mock cluster shows aborted records, so it cannot prove exactly-once)")

    cluster = KafkaCluster(args.tool, brokers=3,
                           topics=["events:%d" % PARTITIONS, "by_key_out:3", "raw_out:3",
                                   "accounts_out:2"])
    cluster.start()
    server = Staved(args.staved, checkpoint_interval="200ms", extra_args=["--enable-failpoints"])
    bootstrap = cluster.bootstrap
    try:
        server.start()
        # Errors first: an unreachable broker, a bad option, a bad setting. (A missing topic
        # cannot be checked here: the mock creates every topic a client asks about.)
        bad = server.psql("CREATE STREAM nope (id BIGINT) WITH (connector='kafka', topic='events', "
                          "properties.bootstrap.server='127.0.0.1:1')", check=False)
        check(bad.returncode != 0 and "cannot reach Kafka" in bad.stderr, "no broker: " + bad.stderr)
        bad = server.psql("CREATE STREAM nope (id BIGINT) WITH (connector='kafka', topic='events', "
                          "properties.bootstrap.server='%s', properties.no.such.thing='1')"
                          % bootstrap, check=False)
        check(bad.returncode != 0 and "no.such.thing" in bad.stderr, "bad setting: " + bad.stderr)
        bad = server.psql("CREATE STREAM nope (id BIGINT) WITH (connector='kafka', topic='events', "
                          "properties.bootstrap.server='%s', on_error='ignore')" % bootstrap,
                          check=False)
        check(bad.returncode != 0 and "on_error" in bad.stderr, "bad on_error: " + bad.stderr)
        bad = server.psql("CREATE STREAM nope (id BIGINT, _offset VARCHAR) WITH (connector='kafka', "
                          "topic='events', properties.bootstrap.server='%s')" % bootstrap, check=False)
        check(bad.returncode != 0 and "_offset" in bad.stderr, "bad metadata type: " + bad.stderr)

        # CSV, on_error = 'skip': counted, not kept. on_error = 'fail': the view stops there.
        cluster.create_topic("people_in", 2)
        cluster.produce("people_in", ["1,ann", '2,"bob, jr"', "x,bad", "3,"], partition=0)
        server.psql("CREATE STREAM people (id BIGINT, name VARCHAR) WITH (connector='kafka', "
                    "topic='people_in', properties.bootstrap.server='%s', on_error='skip') "
                    "FORMAT CSV" % bootstrap)
        server.psql("CREATE MATERIALIZED VIEW people_v AS SELECT id, name FROM people")
        server.wait_for("SELECT count(*) FROM people_v", ["3"], timeout=CATCH_UP_SECONDS)
        people = sorted(server.rows("SELECT id, coalesce(name, '(null)') FROM people_v"))
        check(people == ["1|ann", "2|bob, jr", "3|(null)"], "people: %r" % people)
        server.wait_for("SELECT bad_records FROM stave_catalog.sources WHERE stream = 'people'",
                   ["1"], timeout=CATCH_UP_SECONDS)
        check(server.rows("SELECT count(*) FROM stave_catalog.bad_records WHERE stream = 'people'")
              == ["0"], "on_error = 'skip' kept a dead letter")
        # Caught up: partition 0 (all four records) is behind by none.
        server.wait_for("SELECT split_part(lag, ',', 1) FROM stave_catalog.sources "
                        "WHERE reader = 'people_v'", ["0:0"], timeout=CATCH_UP_SECONDS)
        cluster.create_topic("strict_in", 1)
        cluster.produce("strict_in", ['{"id": 1}', '{"id": "two"}', '{"id": 3}'])
        server.psql("CREATE STREAM strict (id BIGINT) WITH (connector='kafka', topic='strict_in', "
                    "properties.bootstrap.server='%s', on_error='fail') FORMAT JSON" % bootstrap)
        server.psql("CREATE MATERIALIZED VIEW strict_v AS SELECT count(*) AS n FROM strict")
        deadline = time.time() + 30
        while True:  # Reading the stopped view says why it stopped.
            stopped = server.psql("SELECT n FROM strict_v", check=False)
            if stopped.returncode != 0:
                break
            check(time.time() < deadline, "on_error = 'fail' did not stop the view")
            time.sleep(0.2)
        check("bad record at partition 0 offset 1" in stopped.stderr and
              "expected a bigint" in stopped.stderr, "strict_v: " + stopped.stderr)
        server.psql("DROP MATERIALIZED VIEW strict_v")

        # Event time over partitions: each partition's rows are judged against that
        # partition's own watermark, so a partition read after another ran ahead loses
        # nothing; the stream's watermark is the slowest active partition's, and a partition
        # idle for 'scan.watermark.idle-timeout' stops holding it back (here the empty one).
        cluster.create_topic("clicks_in", 3)
        clicks = [json.dumps({"id": i, "ts": 1000 * i}) for i in range(30)]
        cluster.produce("clicks_in", clicks, partition=0)
        late = [json.dumps({"id": 100 + i, "ts": 500 * i}) for i in range(20)] + \
            [json.dumps({"id": 999, "ts": 100})]  # The last is late.
        cluster.produce("clicks_in", late, partition=1)
        clicks += late
        server.psql("CREATE STREAM clicks (id BIGINT, ts BIGINT, WATERMARK FOR ts AS ts - 1000) "
                    "WITH (connector='kafka', topic='clicks_in', properties.bootstrap.server='%s', "
                    "'scan.watermark.idle-timeout'='3000') FORMAT JSON" % bootstrap)
        server.psql("CREATE MATERIALIZED VIEW clicks_10s AS SELECT window_start, count(*) AS n "
                    "FROM TUMBLE(clicks, ts, 10000) GROUP BY window_start EMIT ON WINDOW CLOSE")
        server.wait_for("SELECT late_rows FROM stave_catalog.sources WHERE stream = 'clicks'",
                        ["1"], timeout=CATCH_UP_SECONDS)
        # Partitions 1 and 2 fall idle; partition 0 moves on alone. (A timeout short enough to
        # pass while the brokers still hand out partition 1's first records would make them
        # late: an idle partition's rows below the stream's watermark are.)
        time.sleep(4)
        more = [json.dumps({"id": i, "ts": 1000 * i}) for i in range(30, 50)]
        cluster.produce("clicks_in", more, partition=0)
        clicks += more
        server.wait_for("SELECT window_start, n FROM clicks_10s ORDER BY window_start",
                        ["0|30", "10000|10", "20000|10", "30000|10"], timeout=CATCH_UP_SECONDS)
        server.wait_for("SELECT watermark FROM stave_catalog.sources WHERE stream = 'clicks'",
                        ["48000"], timeout=CATCH_UP_SECONDS)
        check_watermarked_stream_reports(server, payload_bytes=sum(len(c) for c in clicks))
        bad = server.psql("CREATE STREAM nope (id BIGINT) WITH (connector='kafka', topic='events', "
                          "properties.bootstrap.server='%s', 'scan.watermark.idle-timeout'='300')"
                          % bootstrap, check=False)
        check(bad.returncode != 0 and "needs a WATERMARK" in bad.stderr, "idle: " + bad.stderr)

        # Records the log deleted before the stream read them (the mock keeps about 5 MB of a
        # partition; Kafka's retention does the same to a stream stopped for too long): they
        # cannot be replayed, so they are counted in lost_records and logged, and the reader
        # goes on from the partition's first offset. Never skipped silently.
        cluster.create_topic("retained_in", 1)
        cluster.produce("retained_in", [json.dumps({"id": i}) for i in range(10)])
        server.psql("CREATE STREAM retained (id BIGINT, pad VARCHAR) WITH (connector='kafka', "
                    "topic='retained_in', properties.bootstrap.server='%s') FORMAT JSON"
                    % bootstrap)
        server.psql("CREATE MATERIALIZED VIEW retained_v AS SELECT count(*) AS n FROM retained")
        server.wait_for("SELECT n FROM retained_v", ["10"], timeout=CATCH_UP_SECONDS)
        server.psql("CHECKPOINT")
        server.process.kill()
        wait_dead(server)
        pad = "x" * 1000
        total = 10010
        cluster.produce("retained_in", [json.dumps({"id": i, "pad": pad}) for i in range(10, total)])
        restart(server)
        server.wait_for("SELECT lost_records > 0, (SELECT n FROM retained_v) + lost_records FROM "
                        "stave_catalog.sources WHERE stream = 'retained'", ["t|%d" % total],
                        timeout=CATCH_UP_SECONDS)
        check("were deleted from the log" in server.read_log(), "the lost records were not logged")
        server.psql("DROP MATERIALIZED VIEW retained_v")

        server.psql("CREATE STREAM events (id BIGINT, k BIGINT, v BIGINT, _partition INT, "
                    "_offset BIGINT) WITH (connector='kafka', topic='events', "
                    "properties.bootstrap.server='%s', on_error='dead_letter') FORMAT JSON"
                    % bootstrap)
        server.psql("CREATE MATERIALIZED VIEW by_key AS "
                    "SELECT k, count(*) AS n, sum(v) AS total FROM events GROUP BY k")
        server.psql("CREATE MATERIALIZED VIEW overall AS SELECT count(*) AS n FROM events")
        # The sinks. Against the mock, exactly-once is refused with the reason.
        refused = server.psql(
            "CREATE SINK by_key_out FROM by_key WITH (connector='kafka', topic='by_key_out', "
            "properties.bootstrap.server='%s', key='k')" % bootstrap, check=False)
        check(refused.returncode != 0 and "aborted transactions" in refused.stderr,
              "exactly-once over the mock must be refused: " + refused.stderr)
        server.psql("CREATE SINK by_key_out FROM by_key WITH (connector='kafka', topic='by_key_out', "
                    "properties.bootstrap.server='%s', key='k', delivery='at_least_once')" % bootstrap)
        server.psql("CREATE SINK raw_out WITH (connector='kafka', topic='raw_out', "
                    "properties.bootstrap.server='%s', delivery='at_least_once') AS "
                    "SELECT id, k, v FROM events" % bootstrap)
        refused = server.psql("CREATE SINK bad_sink FROM by_key WITH (connector='kafka', "
                              "topic='by_key_out', properties.bootstrap.server='%s', "
                              "delivery='at_least_once')" % bootstrap, check=False)
        check(refused.returncode != 0 and "needs 'key'" in refused.stderr,
              "a retracting input without key: " + refused.stderr)

        producer = Producer(cluster, 0, args.records, args.seed)
        producer.start()
        kills = 0
        for failpoint in SOURCE_FAILPOINTS + SINK_FAILPOINTS:
            server.psql("SET stave.failpoints = '%s=crash'" % failpoint)
            wait_dead(server)
            kills += 1
            restart(server)
        for _ in range(args.random_kills):
            time.sleep(rng.uniform(0.1, 1.5))
            server.process.kill()
            wait_dead(server)
            kills += 1
            restart(server)
        producer.join(timeout=300)
        if producer.error:
            raise producer.error
        check(not producer.is_alive(), "the producer did not finish")

        # Faults in the cluster, without kills: the source and the sinks wait and retry.
        faults = Producer(cluster, args.records, 5000, args.seed + 1)
        faults.start()
        for command in ["request-errors Produce NOT_LEADER_FOR_PARTITION 5",
                        "request-errors EndTxn COORDINATOR_NOT_AVAILABLE 2",
                        "request-errors AddPartitionsToTxn CONCURRENT_TRANSACTIONS 3",
                        "request-errors Fetch REQUEST_TIMED_OUT 3",
                        "coordinator transaction stave.by_key_out 3",
                        "broker-down 2"]:
            cluster.command(command)
            time.sleep(0.5)
        time.sleep(2)
        cluster.command("broker-up 2")
        # A zombie with raw_out's transactional id: a real broker fences Stave's producer with
        # it, and Stave's next producer fences it back (the mock fences neither; the sink must
        # carry on all the same).
        import confluent_kafka
        zombie = confluent_kafka.Producer({"bootstrap.servers": bootstrap,
                                           "transactional.id": "stave.raw_out",
                                           "log_level": 0})
        zombie.init_transactions(30)
        faults.join(timeout=300)
        if faults.error:
            raise faults.error
        producer.good += faults.good
        producer.bad += faults.bad
        total_records = args.records + faults.records

        # After the last restart, the views catch up to the oracle exactly.
        expected = oracle(producer.good)
        # Each view reads the stream on its own: wait for both (CHECKPOINT cannot know how far
        # a Kafka topic goes).
        server.wait_for("SELECT n FROM overall", [str(len(producer.good))], timeout=CATCH_UP_SECONDS)
        server.wait_for("SELECT sum(n) FROM by_key", [str(len(producer.good))], timeout=CATCH_UP_SECONDS)
        got = sorted(server.rows("SELECT k, n, total FROM by_key"))
        want = sorted("%d|%d|%d" % (k, n, t) for k, (n, t) in expected.items())
        check(got == want, "by_key differs from the oracle: %r vs %r" % (got[:5], want[:5]))

        # Each bad record is dead-lettered once, and each reader counted it once.
        letters = server.rows("SELECT stream, partition, \"offset\", error FROM stave_catalog.bad_records")
        check(len(letters) == len(producer.bad),
              "%d dead letters for %d bad records" % (len(letters), len(producer.bad)))
        check(len(set(tuple(l.split("|")[1:3]) for l in letters)) == len(letters), "a duplicate dead letter")
        # The sink raw_out reads the stream on its own, maybe behind the views: wait for it.
        counts = server.wait_for(
            "SELECT reader, bad_records FROM stave_catalog.sources WHERE stream = 'events' "
            "ORDER BY reader",
            ["%s|%d" % (reader, len(producer.bad)) for reader in ("by_key", "overall", "raw_out")],
            timeout=CATCH_UP_SECONDS)
        check(len(counts) == 3, "sources: %r" % counts)  # by_key, overall, raw_out.

        # The sinks: every key's final value is the view's, in order per key; no row lost. A
        # sink FROM a view is a job of its own that reads the view's changes after the view
        # commits them, so its lag may read 0 a moment before it has them: poll the topic.
        deadline = time.time() + CATCH_UP_SECONDS
        while True:
            last, ordered = final_values(cluster.consume_all("by_key_out", timeout=60))
            differing = sorted(k for k in set(last) | set(expected)
                               if last.get(k) != expected.get(k))
            if not differing or not ordered or time.time() > deadline:
                break
            time.sleep(1)
        check(ordered, "by_key_out: a key's count went backwards")
        check(not differing, "by_key_out's final values differ from the oracle for %d keys, "
              "key: (sink, oracle) %r" % (len(differing), [(k, last.get(k), expected.get(k))
                                                        for k in differing[:10]]))
        # The sink's job reads the stream on its own, maybe behind the views: wait for it.
        wanted = set(range(total_records)) - set(producer.bad)
        deadline = time.time() + CATCH_UP_SECONDS
        while True:
            raw = cluster.consume_all("raw_out", timeout=60)
            ids = [json.loads(r.value)["id"] for r in raw]
            if set(ids) == wanted or time.time() > deadline:
                break
            time.sleep(1)
        check(set(ids) == wanted, "raw_out lost rows: %d missing" % len(wanted - set(ids)))
        states = server.rows("SELECT name, state FROM stave_catalog.sinks")
        check(all(row.endswith("|running") for row in states), "sink states: %r" % states)
        duplicated = len(ids) - len(set(ids))  # Allowed: the mock makes this at-least-once.

        # Tombstones: a table's deletes reach a keyed sink as null values.
        server.psql("CREATE TABLE accounts (id BIGINT PRIMARY KEY, balance BIGINT)")
        server.psql("CREATE SINK accounts_out FROM accounts WITH (connector='kafka', "
                    "topic='accounts_out', properties.bootstrap.server='%s', key='id', "
                    "delivery='at_least_once')" % bootstrap)
        server.psql("INSERT INTO accounts VALUES (1, 10), (2, 20), (3, 30)")
        server.psql("CHECKPOINT")
        server.psql("UPDATE accounts SET balance = 21 WHERE id = 2")
        server.psql("DELETE FROM accounts WHERE id = 3")
        server.psql("CHECKPOINT")
        server.wait_for("SELECT lag_epochs FROM stave_catalog.sinks WHERE name = 'accounts_out'", ["0"], timeout=CATCH_UP_SECONDS)
        final = {}
        for r in cluster.consume_all("accounts_out", timeout=60):
            final[json.loads(r.key)["id"]] = None if r.value is None else json.loads(r.value)
        check(final == {1: {"id": 1, "balance": 10}, 2: {"id": 2, "balance": 21}, 3: None},
              "accounts_out: %r" % final)

        code = server.stop()
        check(code == 0, "unclean exit %d" % code)
        print("kafka: %d records (%d bad), %d kills (%d failpoints, %d random), broker faults and "
              "a fenced producer; views equal the oracle, each bad record kept once, sinks "
              "complete (%d duplicates at-least-once), %.1fs" % (total_records, len(producer.bad), kills,
                         len(SOURCE_FAILPOINTS + SINK_FAILPOINTS), args.random_kills,
                         duplicated, time.time() - started))
        return 0
    except Exception:
        server.report_failure()
        raise
    finally:
        server.cleanup()
        cluster.cleanup()


if __name__ == "__main__":
    sys.exit(main())
