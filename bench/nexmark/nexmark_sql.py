"""The Nexmark streams and queries as SQL, shared by the benchmark (run.py) and the
differential test (tests/e2e/nexmark_test.py).

Each query lives in queries/qN.sql as the blackhole sink Flink's and RisingWave's nexmark
suites run:

    CREATE SINK nexmark_qN WITH (connector = 'blackhole') AS
    SELECT ...;

query_body() takes the SELECT out of it, so that the same query can also be created as a view,
as an exactly-once PostgreSQL sink, or translated for PostgreSQL's batch engine.
"""

import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
QUERY_DIR = os.path.join(HERE, "queries")

# The order queries run in; every queries/qN.sql is one of them.
QUERIES = ["q0", "q1", "q2", "q3", "q4", "q5", "q7", "q8", "q9", "q10", "q14", "q15", "q16", "q17",
           "q18", "q19", "q20", "q21", "q22"]

# Columns of each table type, as docs/nexmark.md names them; times are TIMESTAMP.
COLUMNS = {
    "person": [("id", "BIGINT"), ("name", "VARCHAR"), ("email_address", "VARCHAR"),
               ("credit_card", "VARCHAR"), ("city", "VARCHAR"), ("state", "VARCHAR"),
               ("date_time", "TIMESTAMP"), ("extra", "VARCHAR")],
    "auction": [("id", "BIGINT"), ("item_name", "VARCHAR"), ("description", "VARCHAR"),
                ("initial_bid", "BIGINT"), ("reserve", "BIGINT"), ("date_time", "TIMESTAMP"),
                ("expires", "TIMESTAMP"), ("seller", "BIGINT"), ("category", "BIGINT"),
                ("extra", "VARCHAR")],
    "bid": [("auction", "BIGINT"), ("bidder", "BIGINT"), ("price", "BIGINT"),
            ("channel", "VARCHAR"), ("url", "VARCHAR"), ("date_time", "TIMESTAMP"),
            ("extra", "VARCHAR")],
}
TABLES = ["person", "auction", "bid"]


def create_stream(table, events, seed=0, events_per_second=None, first_event_rate=None, name=None):
    """CREATE STREAM for one table type (named `name`, else as the type), with Flink's
    watermark: 4 s behind date_time."""
    columns = ", ".join("%s %s" % column for column in COLUMNS[table])
    options = ["connector = 'nexmark'", "'nexmark.table.type' = '%s'" % table,
               "'nexmark.seed' = '%d'" % seed]
    if events is not None:
        options.append("'nexmark.event.num' = '%d'" % events)
    if events_per_second is not None:
        options.append("'nexmark.events-per-second' = '%d'" % events_per_second)
    if first_event_rate is not None:
        options.append("'nexmark.first-event-rate' = '%d'" % first_event_rate)
    return ("CREATE STREAM %s (%s, WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) "
            "WITH (%s)" % (name or table, columns, ", ".join(options)))


def kafka_stream(table, bootstrap, topic_prefix="", name=None):
    """CREATE STREAM for one table type over the Kafka topic tools/nexmark-to-kafka fills
    (JSON records, the same rows as create_stream's of the same seed and event count)."""
    columns = ", ".join("%s %s" % column for column in COLUMNS[table])
    return ("CREATE STREAM %s (%s, WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) "
            "WITH (connector = 'kafka', topic = '%s%s', properties.bootstrap.server = '%s') "
            "FORMAT JSON" % (name or table, columns, topic_prefix, table, bootstrap))


def postgres_table(table):
    """CREATE TABLE for one table type in PostgreSQL."""
    types = {"BIGINT": "bigint", "VARCHAR": "text", "TIMESTAMP": "timestamp"}
    return "CREATE TABLE %s (%s)" % (
        table, ", ".join("%s %s" % (name, types[t]) for name, t in COLUMNS[table]))


def query_file(query):
    return os.path.join(QUERY_DIR, query + ".sql")


def query_body(query):
    """The SELECT of queries/<query>.sql, without its comments, sink clause and semicolon."""
    with open(query_file(query)) as f:
        text = "\n".join(line for line in f.read().splitlines() if not line.startswith("--"))
    match = re.match(r"\s*CREATE SINK \w+ WITH \(connector = 'blackhole'\) AS\s+(.*?);?\s*$",
                     text, re.S)
    if not match:
        raise ValueError("%s is not a CREATE SINK ... WITH (connector = 'blackhole') AS SELECT"
                         % query_file(query))
    return match.group(1)


def blackhole_sink(query):
    return "CREATE SINK nexmark_%s WITH (connector = 'blackhole') AS %s" % (query, query_body(query))


def view(query, name=None):
    return "CREATE MATERIALIZED VIEW %s AS %s" % (name or "nexmark_" + query, query_body(query))


# The columns that identify a row of each query's result, for an upsert into PostgreSQL. A query
# not listed is append-only: its sink appends (COPY). q5's result (auction, num) has no key, as
# in Flink and RisingWave, and it updates: it has no PostgreSQL variant.
POSTGRES_KEYS = {"q4": "category", "q7": "date_time", "q8": "id, starttime", "q9": "id",
                 "q15": "day", "q16": "channel, day", "q17": "auction, day", "q18": "bidder, auction",
                 "q19": "auction, rank_number"}
NO_POSTGRES_VARIANT = {"q5"}


def postgres_sink(query, url, name=None, table=None):
    """The exactly-once PostgreSQL variant: each epoch's rows are prepared at its barrier and
    committed (two-phase) after the checkpoint."""
    name = name or "nexmark_%s_pg" % query
    options = ["connector = 'postgres'", "url = '%s'" % url, "table = '%s'" % (table or name),
               "commit = 'two_phase'", "delivery = 'exactly_once'"]
    if query in POSTGRES_KEYS:
        options.append("primary_key = '%s'" % POSTGRES_KEYS[query])
    return "CREATE SINK %s WITH (%s) AS %s" % (name, ", ".join(options), query_body(query))


_TUMBLE = re.compile(r"TUMBLE\((\w+), (\w+), (INTERVAL '\d+' SECOND)\)")
_HOP = re.compile(r"HOP\((\w+), (\w+), (INTERVAL '\d+' SECOND), (INTERVAL '\d+' SECOND)\)")


def postgres_query(query):
    """The query for PostgreSQL's batch engine: TUMBLE and HOP, which PostgreSQL lacks, become
    subqueries that compute the same windows (aligned to multiples of the slide since 1970;
    Stave's are too) under the relation's own name."""

    def tumble(m):
        rel, col, size = m.groups()
        start = "date_bin(%s, %s.%s, TIMESTAMP '1970-01-01')" % (size, rel, col)
        return ("(SELECT %s.*, %s AS window_start, %s + %s AS window_end FROM %s) AS %s"
                % (rel, start, start, size, rel, rel))

    def hop(m):
        rel, col, slide, size = m.groups()
        last = "date_bin(%s, %s.%s, TIMESTAMP '1970-01-01')" % (slide, rel, col)
        return ("(SELECT %s.*, w.window_start, w.window_start + %s AS window_end FROM %s, "
                "generate_series(%s - %s + %s, %s, %s) AS w(window_start)) AS %s"
                % (rel, size, rel, last, size, slide, last, slide, rel))

    return _HOP.sub(hop, _TUMBLE.sub(tumble, query_body(query)))
