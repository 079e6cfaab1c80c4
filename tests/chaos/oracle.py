"""The pipeline's expected output, computed from its input alone, and the comparison of each sink
(and view) with it in three figures: lost rows, duplicated rows and wrong rows.

The input is what the sources really hold at the end: every record of the Kafka topic as read
back from the cluster (so a record the producer's retries wrote twice is two orders, as it is
for the stream), and the table as the feeder knows it committed.
"""

import collections
import json

# The pipeline, as SQL. {bootstrap} and {url} are filled in by the runner.
STREAM = ("CREATE STREAM orders (id BIGINT, customer BIGINT, amount BIGINT, _partition INT, "
          "_offset BIGINT) WITH (connector = 'kafka', topic = 'orders', "
          "properties.bootstrap.server = '{bootstrap}') FORMAT JSON")
TABLE = "CREATE TABLE customers (id BIGINT PRIMARY KEY, region INT, rev BIGINT)"
VIEWS = {
    # A join of the stream with the table, grouped: a customer's region changing moves its row
    # to another group key (a delete and an insert downstream).
    "by_customer": "SELECT c.id AS customer, c.region, count(*) AS orders, sum(o.amount) AS total "
                   "FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.id, c.region",
    # The same join grouped coarser, with max(), which must forget retracted orders.
    "by_region": "SELECT c.region, count(*) AS orders, sum(o.amount) AS total, "
                 "max(o.amount) AS largest FROM orders o JOIN customers c ON o.customer = c.id "
                 "GROUP BY c.region",
}
SINKS = {
    # Exactly-once by two-phase commit: each epoch prepared at its barrier, committed after it.
    "pg_two_phase": "CREATE SINK pg_two_phase FROM by_customer WITH (connector = 'postgres', "
                    "url = '{url}', table = 'by_customer', primary_key = 'customer, region', "
                    "commit = 'two_phase', delivery = 'exactly_once')",
    # Exactly-once by a progress row committed with each epoch's rows; an append-only copy.
    "pg_progress": "CREATE SINK pg_progress WITH (connector = 'postgres', url = '{url}', "
                   "table = 'orders_copy', mode = 'append', commit = 'progress', "
                   "delivery = 'exactly_once') AS SELECT _partition AS part, _offset AS off, id, "
                   "customer, amount FROM orders",
    # One Kafka transaction per epoch after its checkpoint, keyed: deletes become tombstones.
    "kafka": "CREATE SINK kafka FROM by_customer WITH (connector = 'kafka', topic = 'by_customer', "
             "properties.bootstrap.server = '{bootstrap}', key = 'customer, region', "
             "delivery = '{kafka_delivery}')",
}


def order_of(value):
    """(id, customer, amount) of a record the stream decodes, or None for a bad record (which
    the stream dead-letters)."""
    try:
        row = json.loads(value)
    except (ValueError, TypeError):
        return None
    if not isinstance(row, dict):
        return None
    fields = [row.get(name) for name in ("id", "customer", "amount")]
    if not all(isinstance(f, int) and not isinstance(f, bool) for f in fields):
        return None
    return tuple(fields)


class Oracle:
    """What every sink and view must hold, from the topic's records and the final table."""

    def __init__(self, records, customers):
        # orders: (partition, offset) -> (id, customer, amount), good records only.
        self.orders = {}
        self.bad_records = 0
        for r in records:
            order = order_of(r.value)
            if order is None:
                self.bad_records += 1
            else:
                self.orders[(r.partition, r.offset)] = order
        self.customers = dict(customers)  # id -> region
        by_customer = collections.defaultdict(lambda: [0, 0])
        by_region = collections.defaultdict(lambda: [0, 0, None])
        for (_, customer, amount) in self.orders.values():
            region = self.customers.get(customer)
            if region is None:
                continue  # An inner join: orders of customers never inserted drop out.
            group = by_customer[(customer, region)]
            group[0] += 1
            group[1] += amount
            group = by_region[region]
            group[0] += 1
            group[1] += amount
            group[2] = amount if group[2] is None else max(group[2], amount)
        self.by_customer = {key: tuple(v) for key, v in by_customer.items()}
        self.by_region = {key: tuple(v) for key, v in by_region.items()}


class Tally:
    """Lost, duplicated and wrong rows of one sink or view, with a few examples of each."""

    def __init__(self, name):
        self.name = name
        self.checked = 0
        self.lost, self.duplicated, self.wrong = [], [], []
        self.lost_ranges = []

    @property
    def discrepancies(self):
        return len(self.lost) + len(self.duplicated) + len(self.wrong)

    def describe(self):
        parts = ["%s: %d rows checked" % (self.name, self.checked)]
        for what, rows in (("lost", self.lost), ("duplicated", self.duplicated),
                           ("wrong", self.wrong)):
            if rows:
                parts.append("%d %s, e.g. %s" % (len(rows), what, "; ".join(map(str, rows[:3]))))
        if self.lost_ranges:
            parts.append("lost: %s" % ", ".join(self.lost_ranges[:10]))
        return ", ".join(parts)


def compare_keyed(name, expected, got_rows):
    """expected: key -> values; got_rows: [(key, values)] as the target holds them. A key held
    twice is duplicated (whatever its values), a key with other values or not expected at all
    is wrong, an expected key that is absent is lost."""
    tally = Tally(name)
    tally.checked = len(expected)
    seen = collections.Counter(key for key, _ in got_rows)
    for key, values in got_rows:
        if seen[key] > 1:
            continue
        if key not in expected:
            tally.wrong.append("unexpected %r=%r" % (key, values))
        elif expected[key] != values:
            tally.wrong.append("%r=%r, expected %r" % (key, values, expected[key]))
    tally.duplicated = ["%r held %d times" % (key, n) for key, n in seen.items() if n > 1]
    tally.lost = ["%r=%r" % (key, values) for key, values in expected.items() if key not in seen]
    return tally


def compare_copy(name, expected, got_rows):
    """An append-only copy of the orders: expected: (partition, offset) -> order; got_rows:
    [((partition, offset), order)]. Every extra copy of a row is one duplicated row."""
    tally = Tally(name)
    tally.checked = len(expected)
    seen = collections.Counter(key for key, _ in got_rows)
    for key, order in got_rows:
        if key not in expected:
            tally.wrong.append("unexpected row at %r: %r" % (key, order))
        elif expected[key] != order:
            tally.wrong.append("row at %r is %r, expected %r" % (key, order, expected[key]))
    tally.duplicated = ["row at %r held %d times" % (key, n) for key, n in seen.items() if n > 1
                        for _ in range(n - 1)]
    lost = sorted(key for key in expected if key not in seen)
    tally.lost = ["row at %r" % (key,) for key in lost]
    tally.lost_ranges = offset_ranges(lost)
    return tally


def offset_ranges(keys):
    """Sorted (partition, offset) keys as 'partition p offsets a..b' runs, for messages."""
    runs = []
    for partition, offset in keys:
        if runs and runs[-1][0] == partition and runs[-1][2] == offset - 1:
            runs[-1][2] = offset
        else:
            runs.append([partition, offset, offset])
    return ["partition %d offsets %d..%d" % tuple(run) for run in runs]


def kafka_final_values(records):
    """The keyed sink's topic folded as a compacting reader does: per key, the last value
    (a tombstone removes the key). Also the number of records that repeat their key's previous
    value exactly: epochs published again (the test cluster shows aborted transactions)."""
    last, repeats = {}, 0
    for r in records:  # Sorted by (partition, offset), and a key stays in one partition.
        key = json.loads(r.key)
        key = (key["customer"], key["region"])
        value = None if r.value is None else json.loads(r.value)
        if value is not None:
            value = (value["orders"], value["total"])
            if last.get(key) == value:
                repeats += 1
            last[key] = value
        else:
            last.pop(key, None)
    return last, repeats
