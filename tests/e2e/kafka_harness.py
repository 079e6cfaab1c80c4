"""Starts a throwaway Kafka cluster for end-to-end tests of Stave's Kafka connectors.

No Kafka broker is installable on our machines, so the cluster is tools/kafka-dev's
stave-kafka-dev: librdkafka's mock cluster, a real Kafka protocol server on 127.0.0.1 (a fresh
free port per broker), with fault injection (brokers down, request errors, leader moves, delays)
driven over the tool's stdin. Every KafkaCluster is a new, empty cluster: nothing survives stop()
or kill(), and a second start() gets new ports.

What the mock does not do (librdkafka 2.0.2; see tests/README.md): it writes no transaction
commit/abort markers, so a read_committed consumer also sees aborted records; it drops offsets
sent in a transaction; it serves only some APIs (no CreateTopics: create topics with
create_topic() or `topics`). And it creates any topic a Metadata request names (4 partitions),
so reading a misspelt topic gives an empty topic, not an error.

Clients go through confluent_kafka (Debian package python3-confluent-kafka), which wraps the same
librdkafka as Stave. Nothing here needs root or refuses it.
"""

import atexit
import collections
import ctypes
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

# One record read back by consume_all(). key and value are bytes (or None); timestamp is
# (timestamp type, milliseconds) as confluent_kafka's Message.timestamp() gives it.
Record = collections.namedtuple("Record", "partition offset key value timestamp")


class KafkaCommandError(RuntimeError):
    """The tool answered a control command with `error: <why>`."""


def _kafka():
    """confluent_kafka, imported on first use so that the error names the missing package."""
    try:
        import confluent_kafka
        import confluent_kafka.admin  # noqa: F401 (a submodule, for AdminClient)
    except ImportError as e:
        raise RuntimeError(
            "%s cannot import confluent_kafka: install python3-confluent-kafka "
            "(tools/install-deps.sh --tests does), which serves the system's python3, not a "
            "pyenv or virtualenv one" % sys.executable) from e
    return confluent_kafka


def _as_bytes(value):
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise TypeError("values and keys must be bytes, str or None, not %r" % type(value).__name__)


try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl  # Looked up here, not in the forked child.
except (OSError, AttributeError):
    _prctl = None


def _die_with_parent():
    """Runs in the tool's process before exec: the kernel sends it SIGTERM when the thread that
    started it ends, even by SIGKILL (a CTest timeout), so that no cluster outlives its test. So
    call start() from a thread that lives as long as the cluster (the main thread does). Linux
    only; elsewhere atexit's cleanup is all there is."""
    if _prctl is not None:
        PR_SET_PDEATHSIG = 1
        _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _watermarks(consumer, topic, partitions, timeout):
    """{partition: (low, high)} from the brokers (not the consumer's cache), or None if they did
    not answer within `timeout` seconds.

    librdkafka before 2.3.0 can block in get_watermark_offsets past its timeout while the
    partition's leader is down (librdkafka issue 2588), so the queries run on a daemon thread
    that is waited for `timeout` seconds only. After None, that thread may still be using the
    consumer: the caller must not close it."""
    kafka = _kafka()
    result = {}

    def query():
        try:
            for partition in partitions:
                result[partition] = consumer.get_watermark_offsets(
                    kafka.TopicPartition(topic, partition), timeout=timeout, cached=False)
        except Exception as e:  # Re-raised on the caller's thread.
            result["error"] = e

    worker = threading.Thread(target=query, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return None
    if "error" in result:
        raise RuntimeError("end offsets of %r: %s" % (topic, result["error"]))
    return result


class KafkaCluster:
    """One stave-kafka-dev process: `brokers` brokers, and `topics` created at start, each a
    string "name[:partitions[:replication]]" or a tuple (name, partitions[, replication])."""

    def __init__(self, tool_path, brokers=3, topics=(), debug=None):
        self.tool_path = tool_path
        self.brokers = brokers
        self.topics = list(topics)
        self.debug = debug  # librdkafka debug contexts for the tool's log, e.g. "mock".
        self.bootstrap = None  # "127.0.0.1:port,..." once started.
        self.process = None
        self.temp_dir = None
        self.log_path = None
        self._replies = None  # Lines the tool printed after the bootstrap line; None at its end.
        self._command_lock = threading.Lock()
        atexit.register(self.cleanup)

    # Lifecycle.

    def start(self, timeout=30):
        """Starts the tool and waits for its bootstrap line; raises RuntimeError with the tool's
        log if it exits or stays silent for `timeout` seconds."""
        if self.running():
            raise RuntimeError("the Kafka cluster is already running (pid %d)" % self.process.pid)
        if not os.access(self.tool_path, os.X_OK):
            raise RuntimeError("stave-kafka-dev not found or not executable at %r (build the "
                               "stave-kafka-dev target)" % self.tool_path)
        if self.temp_dir is None:
            self.temp_dir = tempfile.mkdtemp(prefix="stave-kafka-")
        self.log_path = os.path.join(self.temp_dir, "stave-kafka-dev.log")
        args = [self.tool_path, "--control", "--brokers", str(self.brokers)]
        for topic in self.topics:
            args += ["--topic", topic if isinstance(topic, str) else ":".join(map(str, topic))]
        if self.debug:
            args += ["--debug", self.debug]
        # stderr goes to a file, not a pipe nobody reads, which would fill and block the tool.
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=log, preexec_fn=_die_with_parent)
        self._replies = queue.Queue()
        threading.Thread(target=self._read_stdout, args=(self.process, self._replies),
                         daemon=True).start()
        line = self._next_line(timeout, "the bootstrap line")
        if not line.startswith("bootstrap="):
            self.kill()
            raise RuntimeError("stave-kafka-dev printed %r instead of the bootstrap line; log:\n%s"
                               % (line, self.read_log()))
        self.bootstrap = line[len("bootstrap="):]

    def stop(self, timeout=30):
        """SIGTERM, then waits; returns the tool's exit code (0 when it stopped cleanly). A no-op
        returning None if it is not running."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise RuntimeError("stave-kafka-dev did not stop within %ss of SIGTERM; log:\n%s"
                                   % (timeout, self.read_log()))
        return self._forget_process()

    def kill(self):
        """SIGKILL, as a crash would; returns the exit code (-9). The cluster's data is gone."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        return self._forget_process()

    def cleanup(self):
        """Stops the tool if it runs and removes the temp dir with its log. Registered with atexit
        so a failing test leaves no cluster behind; safe to call more than once."""
        try:
            self.stop()
        except Exception:
            self.kill()
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = self.log_path = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False

    # State.

    def running(self):
        return self.process is not None and self.process.poll() is None

    def read_log(self):
        """The tool's stderr so far: its own lines and librdkafka's."""
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except (TypeError, FileNotFoundError):
            return "(no log)"

    # Fault injection and topics: the tool's control commands (stave-kafka-dev --help).

    def command(self, text, timeout=30):
        """Sends one control command, e.g. "broker-down 2"; returns the reply ("ok"), raises
        KafkaCommandError on `error: ...`."""
        text = text.strip()
        if not text or "\n" in text or text.startswith("#"):
            raise ValueError("one command, on one line, please: %r" % text)
        if not self.running():
            raise RuntimeError("the Kafka cluster is not running")
        with self._command_lock:  # Replies come in order; one command at a time keeps them paired.
            self.process.stdin.write(text.encode() + b"\n")
            self.process.stdin.flush()
            reply = self._next_line(timeout, "the reply to %r" % text)
        if reply.startswith("error:"):
            raise KafkaCommandError("%s -> %s" % (text, reply))
        return reply

    def create_topic(self, name, partitions=1, replication=None):
        self.command("topic %s %d%s" % (name, partitions,
                                        "" if replication is None else " %d" % replication))

    def leaders(self, topic, timeout=10):
        """{partition: leader broker id}, from the cluster's metadata."""
        admin = _kafka().admin.AdminClient({"bootstrap.servers": self.bootstrap})
        metadata = admin.list_topics(topic, timeout=timeout).topics.get(topic)
        if metadata is None or metadata.error is not None:
            raise RuntimeError("no topic %r: %s" % (topic, metadata and metadata.error))
        return {p.id: p.leader for p in metadata.partitions.values()}

    # Clients.

    def produce(self, topic, values, keys=None, partition=None, timeout=60, config=None):
        """Produces values (bytes or str; None for a null value) with optional keys, to
        `partition` or to the partitioner's choice; flushes. Returns [(partition, offset)] in the
        order of values; raises RuntimeError if any record was not delivered within timeout."""
        values = [_as_bytes(v) for v in values]
        keys = [None] * len(values) if keys is None else [_as_bytes(k) for k in keys]
        if len(keys) != len(values):
            raise ValueError("%d keys for %d values" % (len(keys), len(values)))
        settings = {"bootstrap.servers": self.bootstrap,
                    # Undeliverable records fail before flush() gives up, so the error says why.
                    "message.timeout.ms": int(timeout * 1000 * 0.9)}
        settings.update(config or {})
        producer = _kafka().Producer(settings)
        delivered = [None] * len(values)
        errors = []

        def on_delivery(index):
            def report(error, message):
                if error is not None:
                    errors.append("record %d: %s" % (index, error))
                else:
                    delivered[index] = (message.partition(), message.offset())
            return report

        for index, (key, value) in enumerate(zip(keys, values)):
            args = {"key": key, "value": value, "on_delivery": on_delivery(index)}
            if partition is not None:
                args["partition"] = partition
            while True:
                try:
                    producer.produce(topic, **args)
                    break
                except BufferError:  # The local queue is full: let deliveries drain it.
                    producer.poll(0.1)
        remaining = producer.flush(timeout)
        if remaining or errors:
            raise RuntimeError("produce to %r: %d of %d records not delivered: %s" % (
                topic, remaining + len(errors), len(values), "; ".join(errors[:5]) or "timeout"))
        return delivered

    def consume_all(self, topic, timeout=30, config=None):
        """Every record of `topic` from the beginning up to the end offsets (high watermarks)
        known when called, as Records sorted by (partition, offset). Uses assign(), not a
        consumer group, so it commits nothing. Raises RuntimeError if the records do not all
        arrive within timeout (as when a broker is down).

        The default isolation level is librdkafka's, read_committed; pass
        config={"isolation.level": "read_uncommitted"} to see open transactions' records."""
        kafka = _kafka()
        settings = {"bootstrap.servers": self.bootstrap,
                    "group.id": "kafka-harness-" + uuid.uuid4().hex,  # Required, never joined.
                    "enable.auto.commit": False,
                    "auto.offset.reset": "earliest"}
        settings.update(config or {})
        consumer = kafka.Consumer(settings)
        closable = True
        try:
            deadline = time.monotonic() + timeout
            metadata = consumer.list_topics(topic, timeout=timeout).topics.get(topic)
            if metadata is None or metadata.error is not None:
                raise RuntimeError("no topic %r: %s" % (topic, metadata and metadata.error))
            watermarks = _watermarks(consumer, topic, sorted(metadata.partitions),
                                     max(0.1, deadline - time.monotonic()))
            if watermarks is None:
                closable = False  # A thread still waits in it; dropped, not closed.
                raise RuntimeError("consume_all(%r): no end offsets after %ss (is a partition's "
                                   "leader down?)" % (topic, timeout))
            ends = {p: high for p, (low, high) in watermarks.items() if high > low}
            next_offsets = {p: watermarks[p][0] for p in ends}
            records = []
            if ends:
                consumer.assign([kafka.TopicPartition(topic, partition, offset)
                                 for partition, offset in next_offsets.items()])
            while any(next_offsets[p] < end for p, end in ends.items()):
                if time.monotonic() > deadline:
                    raise RuntimeError("consume_all(%r): only up to offsets %s of %s after %ss" % (
                        topic, next_offsets, ends, timeout))
                message = consumer.poll(0.2)
                if message is None:
                    # Offsets that hold no record for us (a real broker's transaction markers,
                    # aborted records under read_committed) move the position, not the messages.
                    for tp in consumer.position([kafka.TopicPartition(topic, p) for p in ends]):
                        next_offsets[tp.partition] = max(next_offsets[tp.partition], tp.offset)
                    continue
                if message.error() is not None:
                    if message.error().code() == kafka.KafkaError._PARTITION_EOF:
                        continue
                    raise RuntimeError("consume_all(%r): %s" % (topic, message.error()))
                partition, offset = message.partition(), message.offset()
                if offset >= ends[partition]:
                    continue  # Produced after the call: not ours to return.
                records.append(Record(partition, offset, message.key(), message.value(),
                                      message.timestamp()))
                next_offsets[partition] = offset + 1
            records.sort(key=lambda r: (r.partition, r.offset))
            return records
        finally:
            if closable:
                consumer.close()

    # Internals.

    @staticmethod
    def _read_stdout(process, lines):
        """The tool's stdout, line by line, into `lines`; None at its end (the tool exited)."""
        with process.stdout:
            for raw in process.stdout:
                lines.put(raw.decode(errors="replace").rstrip("\n"))
        lines.put(None)

    def _next_line(self, timeout, what):
        try:
            line = self._replies.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError("stave-kafka-dev: no %s within %ss; log:\n%s" % (
                what, timeout, self.read_log())) from None
        if line is None:
            self._replies.put(None)  # Later calls see the end too.
            code = self.process.wait(10)
            raise RuntimeError("stave-kafka-dev exited (code %s) before %s; log:\n%s" % (
                code, what, self.read_log()))
        return line

    def _forget_process(self):
        code = self.process.returncode
        try:
            self.process.stdin.close()  # stdout is the reader thread's to close, at its end.
        except OSError:
            pass  # Unflushed bytes to a dead process.
        self.process = None
        self.bootstrap = None
        return code
