"""Progress of long work: the backfill of a new view over a table's existing rows, and the
recovery at start, as the admin API (/api/v1/jobs, /readyz), stave_catalog.progress and the
log report them.

A table with enough rows for the backfill to be seen (and counted), a view over it and a view
over that view; then the final state of each backfill ('done', with the rows read); a restart,
after which recovery reports its objects, and readers recovered past their backfill report it
done without reading again. The restarted server logs JSON (--log-format json).

  progress_test.py --staved PATH
"""

import argparse
import json
import re
import urllib.request

from stave_harness import Staved, check

ROWS = 50000


def get_json(server, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (server.http_port, path), timeout=30) as r:
        return json.loads(r.read().decode())


def jobs_by_name(server):
    return {job["name"]: job for job in get_json(server, "/api/v1/jobs")["jobs"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    server = Staved(args.staved)
    server.start()
    try:
        server.psql("CREATE TABLE items (id BIGINT PRIMARY KEY, label VARCHAR)")
        server.psql("INSERT INTO items SELECT i, 'item ' || i::varchar FROM generate_series(1, %d) AS i" % ROWS)
        server.psql("CHECKPOINT")
        # A view over the table's existing rows backfills them; a view over that view
        # backfills the view's rows.
        server.psql("CREATE MATERIALIZED VIEW by_tens AS SELECT id % 10 AS tens, count(*) AS n "
                    "FROM items GROUP BY id % 10")
        server.wait_for("SELECT sum(n) FROM by_tens", [str(ROWS)])
        server.psql("CHECKPOINT")
        server.psql("CREATE MATERIALIZED VIEW big_tens AS SELECT tens FROM by_tens WHERE n > 1")
        server.wait_for("SELECT count(*) FROM big_tens", ["10"])

        jobs = jobs_by_name(server)
        source = jobs["by_tens"]["nodes"][0]
        check(source["label"] == "table items", repr(source))
        backfill = source["backfill"]
        check(backfill["state"] == "done", "backfill of items: %r" % backfill)
        check(backfill["rows_done"] == ROWS and backfill["rows_total"] == ROWS, repr(backfill))
        check(backfill["seconds"] >= 0, repr(backfill))
        check(jobs["by_tens"]["backfill"]["rows_done"] == ROWS, repr(jobs["by_tens"]["backfill"]))
        check(jobs["big_tens"]["backfill"]["state"] == "done", repr(jobs["big_tens"]))
        recovery = get_json(server, "/api/v1/jobs")["recovery"]
        check(recovery["state"] == "done" and recovery["objects_total"] == 0, repr(recovery))

        rows = server.rows("SELECT kind, job, source, state, done, total, unit FROM "
                           "stave_catalog.progress ORDER BY kind, job")
        check(rows == ["backfill|big_tens|materialized view by_tens|done|10|10|rows",
                       "backfill|by_tens|table items|done|%d|%d|rows" % (ROWS, ROWS),
                       "recovery|||done|0|0|objects"], "stave_catalog.progress: %r" % rows)

        log = server.read_log()
        check(re.search(r"backfill of table items for materialized view by_tens started", log),
              "no start of the backfill in the log")
        check(re.search(r"backfill of table items for materialized view by_tens done: %d rows" % ROWS,
                        log), "no end of the backfill in the log:\n" + log)

        # After a restart: recovery reports its objects; the readers recovered past their
        # backfill report it done, reading nothing again.
        server.psql("CHECKPOINT")
        server.stop()
        # The restarted server logs JSON, one object per line.
        text_log_size = len(server.read_log())
        server.extra_args += ["--log-format", "json"]
        server.start()
        server.wait_for("SELECT sum(n) FROM by_tens", [str(ROWS)])
        recovery = get_json(server, "/api/v1/jobs")["recovery"]
        check(recovery["state"] == "done" and recovery["objects_done"] == 3 and
              recovery["objects_total"] == 3 and recovery["epoch"] > 0, repr(recovery))
        with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % server.http_port, timeout=10) as r:
            check(r.read().decode() == "ready\n", "/readyz after recovery")
        backfill = jobs_by_name(server)["by_tens"]["nodes"][0]["backfill"]
        check(backfill["state"] == "done" and backfill["rows_done"] == 0, repr(backfill))
        rows = server.rows("SELECT state, done, total FROM stave_catalog.progress WHERE kind = 'recovery'")
        check(rows == ["done|3|3"], "recovery row: %r" % rows)
        entries = [json.loads(line) for line in server.read_log()[text_log_size:].splitlines()
                   if line.strip()]
        check(entries and all(set(e) == {"time", "level", "thread", "message"} for e in entries),
              "JSON log lines: %r" % entries[:3])
        check(any(e["level"] == "info" and re.match(r"recovered 3 objects at epoch \d+ in [0-9.]+ s$",
                                                    e["message"]) for e in entries),
              "no end of recovery in the JSON log: %r" % entries)
    finally:
        server.cleanup()
    print("progress test passed")


if __name__ == "__main__":
    main()
