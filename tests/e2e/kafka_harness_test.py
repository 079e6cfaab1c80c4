"""Self-test of kafka_harness.py and stave-kafka-dev: the Kafka connector tests rely on a cluster
that starts, returns exactly what was produced, survives a broker outage and injected request
errors, answers bad commands with `error:`, and stops cleanly on SIGTERM. Fails (does not skip)
when confluent_kafka or the tool is missing.

    python3 tests/e2e/kafka_harness_test.py --tool build/release/tools/stave-kafka-dev
"""

import argparse
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from kafka_harness import KafkaCluster, KafkaCommandError  # noqa: E402


def expect(condition, message):
    """Prints what was checked; raises (exit code 1) if it does not hold."""
    if not condition:
        raise AssertionError("FAILED: " + message)
    print("ok   " + message, flush=True)


def expect_raises(exception, text, function, *args, **kwargs):
    """Calls function, which must raise `exception` with `text` in its message; returns it."""
    try:
        function(*args, **kwargs)
    except exception as e:
        expect(text in str(e), "raises %s with %r (%s)" % (exception.__name__, text,
                                                          str(e).splitlines()[0]))
        return e
    raise AssertionError("FAILED: %s did not raise %s" % (function.__name__, exception.__name__))


def check_command_line(tool):
    def run(*args):
        return subprocess.run([tool, *args], stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=30)

    result = run("--help")
    expect(result.returncode == 0 and "request-errors" in result.stdout,
           "--help exits 0, lists the commands")
    for bad in (["--brokers", "0"], ["--topic", "orders:x"], ["--topic", "bad name"],
                ["--frobnicate"]):
        result = run(*bad)
        expect(result.returncode == 2 and result.stderr and not result.stdout,
               "%s exits 2 with an error on stderr" % " ".join(bad))


def check_survives_stdin_end(tool):
    """A shell may start the tool in the background with stdin at /dev/null: it must stay up."""
    process = subprocess.Popen([tool, "--control", "--brokers", "1"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = process.stdout.readline()
        expect(line.startswith("bootstrap=127.0.0.1:"), "one bootstrap line: " + line.strip())
        time.sleep(0.5)
        expect(process.poll() is None, "still running after stdin's end")
        process.send_signal(signal.SIGINT)
        expect(process.wait(30) == 0, "SIGINT: exit code 0")
        expect(process.stdout.read() == "", "nothing else on stdout")
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()


def values_by_partition(records):
    by_partition = {}
    for record in records:
        by_partition.setdefault(record.partition, []).append(record)
    return by_partition


def check_round_trip(cluster):
    cluster.create_topic("events", 3)
    expect_raises(KafkaCommandError, "TOPIC_ALREADY_EXISTS", cluster.create_topic, "events", 3)
    expect(sorted(cluster.leaders("events")) == [0, 1, 2], "events has partitions 0, 1, 2")

    # Explicit partitions: each partition's records must come back in order, complete.
    produced = {p: ["p%d-%d" % (p, i) for i in range(20 + 5 * p)] for p in range(3)}
    for partition, values in produced.items():
        keys = ["key-%d" % (i % 4) for i in range(len(values))]
        offsets = cluster.produce("events", values, keys=keys, partition=partition)
        expect(offsets == [(partition, offset) for offset in range(len(values))],
               "produce() to partition %d reports offsets 0..%d" % (partition, len(values) - 1))
    records = cluster.consume_all("events")
    by_partition = values_by_partition(records)
    for partition, values in produced.items():
        got = by_partition.get(partition, [])
        expect([r.value.decode() for r in got] == values,
               "partition %d: the %d values, in order" % (partition, len(values)))
        expect([r.offset for r in got] == list(range(len(values))),
               "partition %d: offsets 0..%d" % (partition, len(values) - 1))
        expect([r.key.decode() for r in got] == ["key-%d" % (i % 4) for i in range(len(values))],
               "partition %d: keys" % partition)
        expect(all(r.timestamp[1] > 0 for r in got), "partition %d: timestamps" % partition)

    # The partitioner's choice: one key, one partition; bytes and None values pass unchanged.
    keyed = [("k%d" % (i % 5), b"\x00\xffbin%d" % i) for i in range(30)]
    offsets = cluster.produce("orders", [v for _, v in keyed], keys=[k for k, _ in keyed])
    partition_of = {}
    for (key, _), (partition, _) in zip(keyed, offsets):
        partition_of.setdefault(key, set()).add(partition)
    expect(all(len(p) == 1 for p in partition_of.values()), "each key lands in one partition")
    cluster.produce("orders", [None], keys=["tombstone"], partition=0)
    records = cluster.consume_all("orders")
    expect(len(records) == 31, "orders: 31 records back")
    expect(sorted(r.value for r in records if r.value is not None) == sorted(v for _, v in keyed),
           "binary values come back byte for byte")
    expect([r.key for r in records if r.value is None] == [b"tombstone"],
           "a None value comes back as None")
    cluster.create_topic("empty", 2)
    expect(cluster.consume_all("empty") == [], "an empty topic gives []")
    # The mock creates any topic a Metadata request names, with 4 partitions, whatever the client's
    # allow.auto.create.topics: a typo in a topic name gives an empty topic, not an error.
    expect(cluster.consume_all("never-created") == []
           and len(cluster.leaders("never-created")) == 4,
           "reading an unknown topic creates it, empty, with 4 partitions (the mock's default)")
    return produced


def check_broker_outage(cluster, produced):
    leader = cluster.leaders("events")[0]
    cluster.command("broker-down %d" % leader)
    outcome = {}

    def produce():
        try:
            outcome["offsets"] = cluster.produce(
                "events", ["during-outage-%d" % i for i in range(5)], partition=0)
        except Exception as e:  # Reported by the main thread.
            outcome["error"] = e

    producer = threading.Thread(target=produce)
    producer.start()
    time.sleep(2)
    expect(producer.is_alive(), "broker-down %d: records to partition 0 (led by it) wait" % leader)
    expect_raises(RuntimeError, "after 2s", cluster.consume_all, "events", timeout=2)
    cluster.command("broker-up %d" % leader)
    producer.join(90)
    expect(not producer.is_alive() and "error" not in outcome,
           "broker-up %d: they are delivered (%s)" % (leader, outcome.get("error", "no error")))
    produced[0] += ["during-outage-%d" % i for i in range(5)]
    got = values_by_partition(cluster.consume_all("events"))[0]
    expect([r.value.decode() for r in got] == produced[0],
           "partition 0 has them, once, after the old ones")


def check_request_errors(cluster, produced):
    # A non-retriable error reaches the producer: proof that the injection works.
    cluster.command("request-errors Produce TOPIC_AUTHORIZATION_FAILED 1")
    expect_raises(RuntimeError, "TOPIC_AUTHORIZATION_FAILED", cluster.produce, "events",
                  ["refused"], partition=1, timeout=20)
    # Retriable errors are retried by the producer; once they are used up, produce succeeds.
    cluster.command("request-errors Produce NOT_LEADER_FOR_PARTITION 3")
    cluster.produce("events", ["after-errors"], partition=1, timeout=60)
    expect(True, "produce succeeds after 3 NOT_LEADER_FOR_PARTITION errors")
    # Fetch, by key: the broker drops the connection of the next fetch; the consumer reconnects.
    cluster.command("request-errors 1 _TRANSPORT 1")
    produced[1].append("after-errors")
    got = values_by_partition(cluster.consume_all("events"))[1]
    expect([r.value.decode() for r in got] == produced[1],
           "partition 1: the refused record is absent, the retried one there once (read "
           "despite a dropped fetch)")


def check_commands(cluster):
    for bad, why in (("frobnicate", "unknown command"), ("broker-down 99", "bad broker id"),
                     ("request-errors Produce NO_SUCH_ERROR", "unknown error"),
                     ("request-errors DescribeConfigs 7", "does not serve"),
                     ("topic bad/name 1", "bad topic name"),
                     ("leader events 9 1", "UNKNOWN_TOPIC_OR_PART")):
        error = expect_raises(KafkaCommandError, why, cluster.command, bad)
        expect(str(error).startswith(bad + " -> error: "),
               "the reply to %r is one `error: ...` line" % bad)
    expect(cluster.command("rtt 1 0") == "ok",
           "after errors, commands still pair with their replies")
    cluster.command("leader events 1 3")
    expect(cluster.leaders("events")[1] == 3, "leader events 1 3 moves partition 1 to broker 3")
    expect(cluster.command("coordinator transaction stave-tx 2") == "ok",
           "coordinator transaction ... ok")
    expect(cluster.command("clear-request-errors Produce") == "ok", "clear-request-errors ok")


def check_transactions(cluster):
    """The transactional API flow works against the mock; what a read_committed consumer sees of
    an aborted transaction is printed, not checked (tests/README.md explains it)."""
    import confluent_kafka
    cluster.create_topic("tx", 1)
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap,
                                         "transactional.id": "harness-test"})
    producer.init_transactions(30)
    for value, commit in (("committed", True), ("aborted", False)):
        producer.begin_transaction()
        producer.produce("tx", value=value)
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)
    expect(True, "init, begin, produce, commit, abort succeed")
    records = cluster.consume_all("tx", config={"isolation.level": "read_committed"})
    seen = [r.value.decode() for r in records]
    print("note read_committed sees %s%s" % (
        seen, " (the mock writes no abort markers)" if "aborted" in seen else ""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True, help="the stave-kafka-dev executable")
    args = parser.parse_args()
    tool = os.path.abspath(args.tool)

    check_command_line(tool)
    check_survives_stdin_end(tool)

    began = time.monotonic()
    with KafkaCluster(tool, brokers=3, topics=["orders:3"]) as cluster:
        print("start() took %.2fs; bootstrap=%s" % (time.monotonic() - began, cluster.bootstrap))
        hosts = cluster.bootstrap.split(",")
        expect(len(hosts) == 3 and all(h.startswith("127.0.0.1:") for h in hosts),
               "3 brokers on loopback")
        expect(sorted(cluster.leaders("orders")) == [0, 1, 2], "--topic orders:3 made 3 partitions")
        produced = check_round_trip(cluster)
        check_broker_outage(cluster, produced)
        check_request_errors(cluster, produced)
        check_commands(cluster)
        check_transactions(cluster)
        temp_dir = cluster.temp_dir
        expect(cluster.stop() == 0, "SIGTERM: exit code 0")
        expect(not cluster.running(), "stopped")
        expect_raises(RuntimeError, "not running", cluster.command, "rtt 1 0")
    expect(not os.path.exists(temp_dir), "cleanup removes the temp dir")

    with KafkaCluster(tool, brokers=1) as cluster:
        expect(cluster.kill() == -signal.SIGKILL, "kill(): SIGKILL")

    print("kafka_harness ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
