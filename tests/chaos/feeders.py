"""The two inputs of the chaos pipeline, fed while staved is killed and restarted.

OrderProducer writes orders to the Kafka topic, paced over the run; Kafka keeps them whatever
happens to staved. TableFeeder inserts customers into the table and moves them between regions,
one statement at a time; a statement whose reply a kill lost is in doubt, and is resolved
after the restart by reading the table (a statement is all there or not at all), so the feeder
always knows exactly what the table holds.
"""

import json
import os
import random
import subprocess
import threading
import time

REGIONS = 12


def order_record(i, rng, customers):
    """Order i as (key, value): a JSON object, or, one in 97, a record the stream cannot decode."""
    customer = rng.randrange(customers)
    if i % 97 == 96:
        return str(customer), b"{\"id\": %d, \"customer\": " % i  # Truncated JSON.
    amount = rng.randrange(1, 10000)
    return str(customer), json.dumps({"id": i, "customer": customer, "amount": amount}).encode()


class OrderProducer(threading.Thread):
    """Produces `count` orders in batches spread over `seconds`."""

    def __init__(self, cluster, count, customers, seconds, seed):
        super().__init__(daemon=True, name="orders")
        self.cluster, self.count, self.customers = cluster, count, customers
        self.seconds, self.seed = seconds, seed
        self.produced = 0
        self.error = None

    def run(self):
        try:
            rng = random.Random(self.seed)
            batch = 100
            batches = max(1, (self.count + batch - 1) // batch)
            started = time.monotonic()
            for n, first in enumerate(range(0, self.count, batch)):
                records = [order_record(i, rng, self.customers)
                           for i in range(first, min(first + batch, self.count))]
                self.cluster.produce("orders", [v for _, v in records], keys=[k for k, _ in records])
                self.produced += len(records)
                # Keep to the schedule: batch n+1 is due at (n+1)/batches of the run.
                due = started + self.seconds * (n + 1) / batches
                time.sleep(max(0.0, due - time.monotonic()))
        except Exception as e:  # Reported by the main thread.
            self.error = e


class Target:
    """The staved that is up now: its port and process change at every restart. The runner
    calls down() before it kills it and up() once the new one answers."""

    def __init__(self):
        self._lock = threading.Condition()
        self._server = None
        self.generation = 0

    def up(self, server):
        with self._lock:
            self._server = server
            self.generation += 1
            self._lock.notify_all()

    def down(self):
        with self._lock:
            self._server = None

    def wait_up(self, after_generation=-1, timeout=300):
        """(generation, port, process) of a server that is up, newer than after_generation."""
        with self._lock:
            if not self._lock.wait_for(lambda: self._server is not None
                                       and self.generation > after_generation, timeout):
                raise AssertionError("staved did not come back within %ss" % timeout)
            return self.generation, self._server.pg_port, self._server.process


def psql(port, sql, timeout=60):
    args = ["psql", "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "stave", "-d", "stave",
            "-q", "-A", "-t", "-F", "|", "-c", sql]
    env = dict(os.environ, PGCONNECT_TIMEOUT="5")
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=timeout)


class TableFeeder(threading.Thread):
    """Inserts customers 0..count-1 in batches and, until stopped, moves ranges of them to
    other regions; each statement tags the rows it writes with a revision of its own, by which
    a statement in doubt is found (or not) after a restart."""

    def __init__(self, target, count, seed, pause=0.05):
        super().__init__(daemon=True, name="customers")
        self.target, self.count, self.pause = target, count, pause
        self.rng = random.Random(seed)
        self.customers = {}  # id -> (region, rev): what the table holds.
        self.revision = 0
        self.statements = 0  # Committed.
        self.in_doubt = 0  # Statements whose reply was lost to a kill.
        self.stop = threading.Event()
        self.error = None

    def run(self):
        try:
            while not (self.stop.is_set() and len(self.customers) == self.count):
                self.step()
                time.sleep(self.rng.uniform(0, 2 * self.pause))
        except Exception as e:  # Reported by the main thread.
            self.error = e

    def next_statement(self):
        """(sql, rows it writes {id: (region, rev)})."""
        self.revision += 1
        rev = self.revision
        inserted = len(self.customers)
        if inserted < self.count and (inserted == 0 or self.rng.random() < 0.5):
            ids = range(inserted, min(inserted + 10, self.count))
            rows = {i: (self.rng.randrange(REGIONS), rev) for i in ids}
            values = ",".join("(%d,%d,%d)" % (i, region, rev) for i, (region, rev) in rows.items())
            return "INSERT INTO customers VALUES " + values, rows
        first = self.rng.randrange(inserted)
        last = min(first + self.rng.randrange(1, 8), inserted - 1)
        region = self.rng.randrange(REGIONS)
        rows = {i: (region, rev) for i in range(first, last + 1)}
        return ("UPDATE customers SET region = %d, rev = %d WHERE id BETWEEN %d AND %d"
                % (region, rev, first, last)), rows

    def step(self):
        sql, rows = self.next_statement()
        generation, port, process = self.target.wait_up()
        result = psql(port, sql)
        if result.returncode == 0:
            self.customers.update(rows)
            self.statements += 1
            return
        # Failed: fine if staved died under it (the statement is in doubt), else a bug. A
        # SIGKILL may reach the client's socket before the process is gone: give it a moment.
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            raise AssertionError("%s failed, and staved is alive: %s" % (sql[:60], result.stderr))
        self.in_doubt += 1
        generation, port, _ = self.target.wait_up(after_generation=generation)
        while True:
            result = psql(port, "SELECT count(*) FROM customers WHERE rev = %d" % rows[min(rows)][1])
            if result.returncode == 0:
                break
            # Killed again before it answered: ask the next one.
            generation, port, _ = self.target.wait_up(after_generation=generation)
        present = int(result.stdout.strip())
        if present not in (0, len(rows)):
            raise AssertionError("statement %r is partly in the table: %d of %d rows"
                                 % (sql[:60], present, len(rows)))
        if present:
            self.customers.update(rows)
            self.statements += 1
