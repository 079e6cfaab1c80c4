"""Kafka records into bytea, jsonb and array columns: FORMAT BYTES puts each record's value,
whatever its bytes, unchanged into the stream's one bytea column (and refuses any other column
list); FORMAT JSON gives a jsonb column the field's JSON value (normalized as jsonb is) and an
array column a JSON array of scalars. Views over both are checked after a SIGKILL, which
they must survive without losing or repeating a record.

  kafka_types_test.py --staved PATH --tool PATH
"""

import argparse
import json
import sys
import time

from kafka_harness import KafkaCluster
from stave_harness import Staved, check

CATCH_UP_SECONDS = 180


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    started = time.time()
    cluster = KafkaCluster(args.tool, brokers=1, topics=["blobs_in:2", "docs_in:1"])
    cluster.start()
    server = Staved(args.staved, checkpoint_interval="200ms")
    bootstrap = cluster.bootstrap
    try:
        server.start()
        # FORMAT BYTES needs exactly one bytea column (the metadata columns aside).
        for columns in ["payload VARCHAR", "a BYTEA, b BYTEA"]:
            bad = server.psql("CREATE STREAM nope (%s) WITH (connector='kafka', topic='blobs_in', "
                              "properties.bootstrap.server='%s') FORMAT BYTES" % (columns, bootstrap),
                              check=False)
            check(bad.returncode != 0 and "FORMAT BYTES needs exactly one column" in bad.stderr,
                  "bad BYTES columns: " + bad.stderr)

        values = [b"\x00\xff\x10", b"", b"not json, not csv", "caf\u00e9".encode(), b"{\"a\": 1}"]
        cluster.produce("blobs_in", values[:3], partition=0)
        cluster.produce("blobs_in", values[3:], partition=1)
        server.psql("CREATE STREAM blobs (payload BYTEA, _partition INT) WITH (connector='kafka', "
                    "topic='blobs_in', properties.bootstrap.server='%s') FORMAT BYTES" % bootstrap)
        server.psql("CREATE MATERIALIZED VIEW blobs_v AS SELECT encode(payload, 'hex') AS hex, "
                    "length(payload) AS len, count(*) AS n FROM blobs GROUP BY payload")
        expected = sorted("%s|%d|1" % (v.hex(), len(v)) for v in values)
        server.wait_for("SELECT count(*) FROM blobs_v", [str(len(values))],
                        timeout=CATCH_UP_SECONDS)
        got = sorted(server.rows("SELECT hex, len, n FROM blobs_v"))
        check(got == expected, "blobs_v: %r, expected %r" % (got, expected))

        # Written by hand: the number 2.50 keeps its scale, as in PostgreSQL's jsonb.
        docs = ['{"id": 1, "body": {"b": [1, 2.50], "a": null}, "tags": ["x", "y z"]}',
                json.dumps({"id": 2, "body": [1, "two"], "tags": []}),
                json.dumps({"id": 3, "body": "text", "tags": None}),
                json.dumps({"id": 4, "body": None, "tags": [1, None]}),
                '{"id": 5, "body": {"a": }}']
        cluster.produce("docs_in", docs)
        server.psql("CREATE STREAM docs (id INT, body JSONB, tags TEXT[]) WITH (connector='kafka', "
                    "topic='docs_in', properties.bootstrap.server='%s', on_error='skip') "
                    "FORMAT JSON" % bootstrap)
        server.psql("CREATE MATERIALIZED VIEW docs_v AS SELECT id, body, body ->> 'a' IS NULL AS "
                    "no_a, tags, cardinality(tags) AS n FROM docs")
        server.wait_for("SELECT count(*) FROM docs_v", ["4"], timeout=CATCH_UP_SECONDS)
        expected_docs = ['1|{"a": null, "b": [1, 2.50]}|t|{x,"y z"}|2',
                         '2|[1, "two"]|t|{}|0',
                         '3|"text"|t||',
                         '4||t|{1,NULL}|2']
        got = sorted(server.rows("SELECT * FROM docs_v"))
        check(got == expected_docs, "docs_v: %r" % got)
        server.wait_for("SELECT bad_records FROM stave_catalog.sources WHERE stream = 'docs'",
                        ["1"], timeout=CATCH_UP_SECONDS)

        # A kill: both views come back from their last checkpoint without loss or repeats.
        server.psql("CHECKPOINT")
        server.kill()
        server.start()
        cluster.produce("blobs_in", [b"\x01"], partition=0)
        expected = sorted(expected + ["01|1|1"])
        server.wait_for("SELECT count(*) FROM blobs_v", [str(len(expected))],
                        timeout=CATCH_UP_SECONDS)
        got = sorted(server.rows("SELECT hex, len, n FROM blobs_v"))
        check(got == expected, "blobs_v after the kill: %r" % got)
        got = sorted(server.rows("SELECT * FROM docs_v"))
        check(got == expected_docs, "docs_v after the kill: %r" % got)

        code = server.stop()
        check(code == 0, "unclean exit %d" % code)
        print("kafka types: FORMAT BYTES and jsonb/array columns from FORMAT JSON, through a kill, "
              "%.1fs" % (time.time() - started))
        return 0
    except Exception:
        server.report_failure()
        raise
    finally:
        server.cleanup()
        cluster.cleanup()


if __name__ == "__main__":
    sys.exit(main())
