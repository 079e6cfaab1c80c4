#!/usr/bin/python3
"""The Nexmark benchmark: each query of queries/ into a blackhole sink, on a fresh staved with
checkpoints every second and exactly-once delivery, beside the generator alone.

  bench/nexmark/run.py --staved build/release/server/staved [--events 10000000] [--cores N]
                       [--queries q0,q1,...] [--latency-rate 100000] [--latency-seconds 5]
                       [--out nexmark-results] [--source nexmark|kafka]

For each query (and first for the generator alone: a blackhole sink FROM bid, source to sink
without operators) it runs two phases, each on a fresh staved pinned to --cores CPUs with as
many workers:

1. Throughput: the three streams hold --events events (all types) and are not throttled. The
   clock starts before CREATE SINK and stops when every source of the job has emitted its rows
   (the job's source nodes in /api/v1/jobs) and a CHECKPOINT after that has returned, so every
   event is processed and committed. events/s = events / that time; events/s per core =
   events / the CPU time staved used meanwhile (utime + stime of all its threads, from
   /proc/<pid>/stat, RocksDB's background threads included); cores used = CPU time / wall time.
   Checkpoint durations (barrier to synced commit) are those of /api/v1/checkpoints that
   started during the run; state size is the data directory's size on disk at the end; peak
   RSS is staved's VmHWM; fresh huge pages (JSON and CSV only) are the machine's
   thp_fault_alloc in /proc/vmstat over the run, the huge pages the kernel zeroed for a first
   write (all processes: read it on an otherwise idle machine).
2. Latency: the streams are throttled to --latency-rate events/s for --latency-seconds. The
   sources' emitted rows are sampled every 20 ms; a row emitted in a sample interval is visible
   once the first checkpoint whose barrier was injected after the interval has committed
   (barriers follow the rows through the dataflow, and readers see committed epochs only). Its
   latency is that commit time minus the interval's midpoint (so ±10 ms). This is emission by
   the source to visibility, not Nexmark's event time to visibility: a source that falls behind
   its schedule is not counted. p50 and p99 are over rows.

With --source kafka the streams read Kafka topics instead of the generator: a test Kafka cluster
(tools/kafka-dev's stave-kafka-dev, on loopback) is started once and filled by
tools/nexmark-to-kafka with the same events as JSON records, before the first query; each query's
streams then read them from the start (FORMAT JSON), and the "generator" row is a blackhole sink
FROM the bid topic's stream: the limit of the Kafka source. The test cluster keeps about 5 MB of
each partition, so the topics get enough partitions to keep every event. No latency phase runs
(the topics are filled ahead, not throttled).

Output: <out>/results.csv, results.json and results.png (events/s per core per query, the
generator's as a line), and a markdown table on stdout (RESULTS.md holds the latest one).
"""

import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))
import nexmark_sql as nx  # noqa: E402
from stave_harness import Staved  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
GENERATOR = "generator"

# Targets of issue "Nexmark" (events/s per core, exactly-once, checkpoints every 1 s).
TARGETS = {"q0": 650e3, "q1": 650e3, "q2": 650e3, "q3": 650e3, "q4": 400e3, "q5": 600e3,
           "q7": 300e3, "q8": 650e3, "q9": 90e3}


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime


def peak_rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def fresh_huge_pages():
    """Huge pages the kernel has zeroed for a first write, machine-wide (None if unknown)."""
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                if line.startswith("thp_fault_alloc "):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def percentile(values, p):
    """The p-th percentile (0..100) of values, nearest rank; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100.0 * len(ordered) + 0.5)) - 1))]


def weighted_percentile(pairs, p):
    """pairs: (value, weight). The value below which p % of the weight lies."""
    pairs = sorted(pairs)
    total = sum(w for _, w in pairs)
    if total == 0:
        return None
    running = 0
    for value, weight in pairs:
        running += weight
        if running >= p / 100.0 * total:
            return value
    return pairs[-1][0]


class Server:
    """A fresh staved pinned to the first `cores` CPUs, with checkpoints every second."""

    def __init__(self, binary, cores):
        wrapper = tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False)
        wrapper.write("#!/bin/sh\nexec taskset -c 0-%d %s \"$@\" --workers %d\n"
                      % (cores - 1, binary, cores))
        wrapper.close()
        os.chmod(wrapper.name, 0o755)
        self.wrapper = wrapper.name
        self.staved = Staved(self.wrapper, checkpoint_interval="1s")

    def __enter__(self):
        self.staved.start(timeout=60)
        return self.staved

    def __exit__(self, *exc):
        self.staved.cleanup()
        os.remove(self.wrapper)
        return False


def api(server, path):
    return json.loads(server.http(path)[1])


def source_nodes(server, job):
    for entry in api(server, "/api/v1/jobs")["jobs"]:
        if entry["name"] == job:
            return [n for n in entry["nodes"] if n["kind"] == "source"]
    return []


def expected_rows(label, events):
    """Rows a source node labelled 'stream <type>' emits for `events` events."""
    table = label.split()[-1]
    share = {"person": (1, range(0, 1)), "auction": (3, range(1, 4)), "bid": (46, range(4, 50))}
    per50, offsets = share[table]
    full, rest = divmod(events, 50)
    return full * per50 + sum(1 for i in range(rest) if i in offsets)


def create_sql(query):
    if query == GENERATOR:
        return "CREATE SINK nexmark_generator FROM bid WITH (connector = 'blackhole')"
    return nx.blackhole_sink(query)


def job_name(query):
    return "nexmark_" + query


def checkpoint(server, timeout):
    """CHECKPOINT, waiting up to `timeout` s (a slow query's backlog takes long to commit)."""
    env = dict(os.environ, PGCONNECT_TIMEOUT="5")
    subprocess.run(["psql", "-X", "-h", "127.0.0.1", "-p", str(server.pg_port), "-U", "stave",
                    "-d", "stave", "-q", "-c", "CHECKPOINT"], check=True, capture_output=True,
                   env=env, timeout=timeout)


def create_streams(server, events, rate=None, kafka=None):
    for table in nx.TABLES:
        if kafka is not None:
            server.psql(nx.kafka_stream(table, kafka.bootstrap))
        else:
            server.psql(nx.create_stream(table, events, seed=0, events_per_second=rate))


# Bytes of a JSON record of each table type, rounded up (the generator's averages plus the
# JSON syntax), and what a partition is filled to: the test cluster keeps about 5 MB of each,
# and deletes the oldest records beyond that.
RECORD_BYTES = {"person": 350, "auction": 700, "bid": 300}
PARTITION_BYTES = 2 << 20


def start_kafka(args):
    """A test Kafka cluster holding --events events in the person, auction and bid topics."""
    from kafka_harness import KafkaCluster
    share = {"person": 1, "auction": 3, "bid": 46}
    topics = []
    for table in nx.TABLES:
        size = args.events * share[table] // 50 * RECORD_BYTES[table]
        topics.append("%s:%d" % (table, max(1, -(-size // PARTITION_BYTES))))
    cluster = KafkaCluster(args.kafka_tool, brokers=1, topics=topics)
    cluster.start()
    started = time.time()
    subprocess.run([args.kafka_filler, "--bootstrap-servers", cluster.bootstrap, "--events",
                    str(args.events), "--seed", "0"], check=True)
    print("kafka: %s filled with %d events in %.1f s" % (", ".join(topics), args.events,
                                                          time.time() - started), file=sys.stderr)
    return cluster


def throughput(args, query):
    with Server(args.staved, args.cores) as server:
        create_streams(server, args.events, kafka=args.kafka)
        pid = server.process.pid
        cpu0, t0, pages0 = cpu_seconds(pid), time.time(), fresh_huge_pages()
        server.psql(create_sql(query))
        deadline = t0 + args.timeout
        finished = True
        while True:
            nodes = source_nodes(server, job_name(query))
            if nodes and all(n["rows_out"] >= expected_rows(n["label"], args.events) for n in nodes):
                break
            if time.time() > deadline:
                # Too slow to finish: the rate so far, from the share of rows emitted.
                finished = False
                break
            time.sleep(0.05)
        if finished:
            try:
                checkpoint(server, max(10, deadline - time.time()))
            except subprocess.TimeoutExpired:
                finished = False
        t1, cpu1, pages1 = time.time(), cpu_seconds(pid), fresh_huge_pages()
        done = args.events
        if not finished:
            emitted = sum(n["rows_out"] for n in nodes)
            expected = sum(expected_rows(n["label"], args.events) for n in nodes)
            done = int(args.events * emitted / expected) if expected else 0
            print("  %s: timed out after %d s at %d of %d events" % (
                query, args.timeout, done, args.events), file=sys.stderr)
        checkpoints = [c for c in api(server, "/api/v1/checkpoints")["checkpoints"]
                       if c["state"] == "committed" and t0 * 1000 <= c["started_ms"] <= t1 * 1000]
        durations = [c["duration_ms"] for c in checkpoints]
        wall, cpu = t1 - t0, cpu1 - cpu0
        return {
            "finished": finished,
            "events_per_second": done / wall,
            "events_per_core_second": done / cpu if cpu > 0 else None,
            "cores_used": cpu / wall,
            "seconds": wall,
            "cpu_seconds": cpu,
            "checkpoints": len(durations),
            "checkpoint_p50_ms": percentile(durations, 50),
            "checkpoint_p99_ms": percentile(durations, 99),
            "state_bytes": dir_bytes(server.data_dir),
            "peak_rss_bytes": peak_rss_bytes(pid),
            "fresh_huge_pages": pages1 - pages0 if pages0 is not None and pages1 is not None
            else None,
        }


def latency(args, query):
    events = int(args.latency_rate * args.latency_seconds)
    with Server(args.staved, args.cores) as server:
        create_streams(server, events, rate=args.latency_rate)
        server.psql(create_sql(query))
        samples = []  # (time, rows emitted by all sources)
        deadline = time.time() + min(args.timeout, args.latency_seconds * 3 + 30)
        kept_up = False
        while time.time() < deadline:
            nodes = source_nodes(server, job_name(query))
            now = time.time()
            samples.append((now, sum(n["rows_out"] for n in nodes)))
            if nodes and all(n["rows_out"] >= expected_rows(n["label"], events) for n in nodes):
                kept_up = True
                break
            time.sleep(0.02)
        if not kept_up:
            return {"latency_p50_ms": None, "latency_p99_ms": None}
        checkpoint(server, args.timeout)
        commits = sorted((c["started_ms"] / 1000.0, (c["started_ms"] + c["duration_ms"]) / 1000.0)
                         for c in api(server, "/api/v1/checkpoints")["checkpoints"]
                         if c["state"] == "committed")
    pairs = []
    for (ta, ra), (tb, rb) in zip(samples, samples[1:]):
        if rb <= ra:
            continue
        visible = next((end for start, end in commits if start >= tb), None)
        if visible is not None:
            pairs.append((visible - (ta + tb) / 2, rb - ra))
    p50, p99 = weighted_percentile(pairs, 50), weighted_percentile(pairs, 99)
    return {"latency_p50_ms": p50 * 1000 if p50 is not None else None,
            "latency_p99_ms": p99 * 1000 if p99 is not None else None}


def fmt(value, scale=1.0, digits=0):
    if value is None:
        return "-"
    return "{:,.{d}f}".format(value / scale, d=digits)


def markdown(rows):
    lines = ["| query | events/s | events/s per core | cores used | × generator | target per core "
             "| latency p50 / p99 ms | checkpoint p50 / p99 ms | state MB | peak RSS MB |",
             "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in rows:
        name = r["query"] if r.get("finished") else r["query"] + " (did not finish)"
        if r.get("error"):
            lines.append("| %s | failed: %s |" % (r["query"], r["error"]))
            continue
        lines.append("| %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s |" % (
            name, fmt(r["events_per_second"]), fmt(r["events_per_core_second"]),
            fmt(r["cores_used"], digits=2), fmt(r.get("ratio_to_generator"), digits=2),
            fmt(TARGETS.get(r["query"])), fmt(r.get("latency_p50_ms")),
            fmt(r.get("latency_p99_ms")), fmt(r["checkpoint_p50_ms"], digits=1),
            fmt(r["checkpoint_p99_ms"], digits=1), fmt(r["state_bytes"], 1e6, 1),
            fmt(r["peak_rss_bytes"], 1e6)))
    return "\n".join(lines)


def chart(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib (python3-matplotlib): no chart", file=sys.stderr)
        return
    queries = [r for r in rows if r["query"] != GENERATOR]
    generator = next((r for r in rows if r["query"] == GENERATOR), None)
    fig, ax = plt.subplots(figsize=(10, 5))
    names = [r["query"] for r in queries]
    ax.bar(names, [(r["events_per_core_second"] or 0) / 1e3 for r in queries], label="Stave")
    targets = [(i, TARGETS[n] / 1e3) for i, n in enumerate(names) if n in TARGETS]
    if targets:
        ax.scatter([i for i, _ in targets], [t for _, t in targets], marker="_", s=400,
                   color="red", label="target", zorder=3)
    if generator and generator["events_per_core_second"]:
        ax.axhline(generator["events_per_core_second"] / 1e3, color="gray", linestyle="--",
                   label="generator alone")
    ax.set_ylabel("thousand events/s per core")
    ax.set_title("Nexmark, exactly-once, checkpoints every 1 s")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--staved", default=os.path.join(HERE, "..", "..", "build", "release",
                                                         "server", "staved"))
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--cores", type=int, default=os.cpu_count())
    parser.add_argument("--queries", default=",".join(nx.QUERIES))
    parser.add_argument("--latency-rate", type=int, default=100_000,
                        help="events/s of the throttled latency run (0: no latency run)")
    parser.add_argument("--latency-seconds", type=float, default=5)
    parser.add_argument("--timeout", type=int, default=600,
                        help="seconds per query; a query still running then is reported with "
                             "its rate so far, marked as not finished")
    parser.add_argument("--out", default="nexmark-results")
    parser.add_argument("--source", choices=["nexmark", "kafka"], default="nexmark",
                        help="the streams' connector: the generator, or Kafka topics it filled")
    tools = os.path.join(HERE, "..", "..", "build", "release", "tools")
    parser.add_argument("--kafka-tool", default=os.path.join(tools, "stave-kafka-dev"))
    parser.add_argument("--kafka-filler", default=os.path.join(tools, "nexmark-to-kafka"))
    args = parser.parse_args()
    args.kafka = start_kafka(args) if args.source == "kafka" else None
    if args.kafka is not None:
        args.latency_rate = 0
    args.staved = os.path.abspath(args.staved)
    if shutil.which("taskset") is None:
        sys.exit("taskset (util-linux) is needed to pin staved to --cores CPUs")

    rows = []
    for query in [GENERATOR] + args.queries.split(","):
        print("%s: %d events on %d cores..." % (query, args.events, args.cores), file=sys.stderr)
        row = {"query": query}
        try:
            row.update(throughput(args, query))
            # A query that cannot finish the throughput run cannot keep up with a throttled
            # one either: its latency would be its backlog's.
            if args.latency_rate > 0 and row["finished"]:
                row.update(latency(args, query))
        except Exception as error:  # noqa: BLE001 -- reported, and the other queries go on
            row["error"] = "%s: %s" % (type(error).__name__, str(error)[:300])
        print("  %s" % json.dumps(row), file=sys.stderr)
        rows.append(row)
    keys = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    for row in rows:
        for key in keys:
            row.setdefault(key, None)
    generator = rows[0]["events_per_second"]
    for row in rows:
        if generator and row["events_per_second"]:
            row["ratio_to_generator"] = row["events_per_second"] / generator
        else:
            row["ratio_to_generator"] = None

    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    cpu_model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                      if line.startswith("model name")), platform.processor())
    meta = {"commit": commit, "command": " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:]),
            "machine": "%s, %d CPUs, %s" % (cpu_model, os.cpu_count(), platform.platform()),
            "load_average": os.getloadavg(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "events": args.events, "cores": args.cores, "source": args.source}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=1)
    with open(os.path.join(args.out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)
    chart(rows, os.path.join(args.out, "results.png"))
    print("commit %s, %s; load average at the end %.1f %.1f %.1f\n" % (
        commit, meta["machine"], *meta["load_average"]))
    print("    " + meta["command"] + "\n")
    print(markdown(rows))


if __name__ == "__main__":
    main()
