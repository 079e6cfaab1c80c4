#!/usr/bin/env python3
"""Stave's sqllogictest runner, with a real PostgreSQL as the differential oracle.

Runs `.slt` files against a staved it starts itself (one fresh server over a fresh data directory
per file, tests/e2e/stave_harness.py's Staved) and, with --postgres, against a real PostgreSQL
(tests/e2e/postgres_harness.py's PostgresServer, one server for the run, a fresh database per
file). It speaks the PostgreSQL protocol itself (simple query, trust authentication), so it needs
only the standard library.

    python3 tests/sql/slt_runner.py --staved build/release/server/staved --postgres tests/sql
    python3 tests/sql/slt_runner.py --staved build/release/server/staved --postgres tests/sql \
        --filter aggregates/grouped            # only files whose path contains this

The format is sqllogictest's (https://www.sqlite.org/sqllogictest/doc/trunk/about.wiki) as
DuckDB and RisingWave use it. Records are separated by blank lines; a line starting with `#` is
a comment.

    statement ok                      the SQL (one or more lines, up to a blank line) succeeds
    statement error                   it fails with any error
    statement error 42P01             ... with this SQLSTATE (five characters: digits, capitals)
    statement error does not exist    ... with a message containing this text (case-insensitive)
    statement count 3                 it succeeds and its last command affected 3 rows
                                      ("INSERT 0 3", "UPDATE 3", "DELETE 3", "SELECT 3")

    query ITRB [nosort|rowsort|valuesort] [retry <seconds>]
    SELECT ...
    ----
    1 abc 2.500 true

`query` takes one letter per column: I integer, R floating point (printed with three decimals, so
a double and a numeric compare equal),
T text (any type, as the server prints it), B boolean (printed true/false). The column types are
checked too: I must be an integer type (or a numeric holding integers: sum of bigint), R a float
(or numeric), B boolean. Each expected row is one line, its values separated by spaces or tabs
(runs of whitespace are one separator, also inside values); NULL is `NULL`, the empty string
`(empty)`. `nosort` (the default) compares rows in order, `rowsort` sorts the rows of both sides
first, `valuesort` sorts all values and expects one value per line.

    skipif stave | skipif postgres    the next record does not run on that engine
    onlyif stave | onlyif postgres    ... runs only on that engine
    connection <name>                 the next record runs on this connection (opened on first
                                      use; the default one is `default`), e.g. to check that
                                      another session does not see an open transaction's writes
    halt                              stop reading the file (onlyif/skipif apply)
    hash-threshold <n>                accepted and ignored

Extensions:

    control kill                      SIGKILL staved and start it again on the same data directory
                                      (what was checkpointed and every acknowledged table write
                                      must survive; connections are reopened)
    control checkpoint                run CHECKPOINT on Stave (returns once views over tables
                                      reflect every acknowledged write)
    control sleep <milliseconds>      wait
    query ... retry <seconds>         rerun the query on Stave until it gives the expected answer
                                      or the time is up (views update asynchronously: views over
                                      streams, and views right after a restart, may need it)

Differential mode. A file containing the comment line `# differential` (alone on its line)
runs, when --postgres is given, every record on both engines (unless skipif/onlyif say
otherwise): a statement must meet its expectation on both, and every query's answer on Stave
must equal PostgreSQL's answer row for row (in the same sorting mode) and, if the record has an
expected block, that block as well; a mismatch prints both answers. Stave-only SQL is
translated for PostgreSQL, statement by statement:

    CREATE MATERIALIZED VIEW [IF NOT EXISTS] v AS q   ->  CREATE VIEW v AS q   (a plain view: q
                                                          runs as a batch query at each read)
    DROP MATERIALIZED VIEW ...                        ->  DROP VIEW ...
    CREATE TABLE ... APPEND ONLY                      ->  CREATE TABLE ...
    CHECKPOINT, SET/RESET streaming_parallelism,
    SET checkpoint_interval                           ->  nothing
    SHOW MATERIALIZED VIEWS etc., CREATE STREAM, CREATE SINK, EXPLAIN: mark them `skipif postgres`.

A query in a differential file may leave out its `----` block: PostgreSQL's answer is then the
only expectation. `--complete` writes PostgreSQL's answer into such records (the files are
rewritten in place), so that they can be read, and run without --postgres.

The exit code is non-zero if any record failed. The last line is a summary: files, cases
(statement, query and control records), passed, failed, skipped (not run on Stave), and how many
queries were compared with PostgreSQL.
"""

import argparse
import hashlib
import os
import re
import signal
import socket
import struct
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

from stave_harness import Staved  # noqa: E402

ENGINES = ("stave", "postgres")
SQLSTATE_RE = re.compile(r"^[0-9A-Z]{5}$")

INT_OIDS = {20, 21, 23}
FLOAT_OIDS = {700, 701}
NUMERIC_OID = 1700
BOOL_OID = 16


# ---------------------------------------------------------------------------------------------
# A minimal PostgreSQL protocol client: startup with trust authentication, simple query.


class DbError(Exception):
    def __init__(self, fields):
        self.fields = fields
        self.sqlstate = fields.get("C", "")
        self.message = fields.get("M", "")
        super().__init__("%s: %s" % (self.sqlstate, self.message))


class ConnectionLost(Exception):
    pass


class Result:
    def __init__(self):
        self.columns = []    # (name, type oid) of the last result set
        self.rows = []       # lists of str or None
        self.tag = ""        # the last CommandComplete tag
        self.has_rows = False


class PgConnection:
    def __init__(self, port, user, database, timeout=60):
        try:
            self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        except OSError as e:
            raise ConnectionLost("cannot connect to port %d: %s" % (port, e))
        self.sock.settimeout(timeout)
        self.buffer = b""
        params = b"".join(k.encode() + b"\0" + v.encode() + b"\0" for k, v in
                          (("user", user), ("database", database), ("client_encoding", "UTF8")))
        params += b"\0"
        try:
            self.sock.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
        except OSError as e:
            raise ConnectionLost(str(e))
        while True:
            kind, body = self._read()
            if kind == b"R":
                (code,) = struct.unpack("!i", body[:4])
                if code != 0:
                    raise RuntimeError("authentication method %d is not supported" % code)
            elif kind == b"E":
                raise DbError(self._fields(body))
            elif kind == b"Z":
                return

    def close(self):
        try:
            self.sock.sendall(b"X\0\0\0\4")
        except OSError:
            pass
        self.sock.close()

    def _recv_exact(self, n):
        while len(self.buffer) < n:
            try:
                chunk = self.sock.recv(65536)
            except OSError as e:
                raise ConnectionLost(str(e))
            if not chunk:
                raise ConnectionLost("server closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def _read(self):
        header = self._recv_exact(5)
        kind = header[:1]
        (length,) = struct.unpack("!i", header[1:])
        return kind, self._recv_exact(length - 4)

    @staticmethod
    def _fields(body):
        fields = {}
        for part in body.split(b"\0"):
            if part:
                fields[chr(part[0])] = part[1:].decode(errors="replace")
        return fields

    def execute(self, sql):
        """Runs sql (one or more statements) with the simple query protocol; returns the last
        result, or raises DbError with the first error."""
        data = sql.encode() + b"\0"
        try:
            self.sock.sendall(b"Q" + struct.pack("!i", 4 + len(data)) + data)
        except OSError as e:
            raise ConnectionLost(str(e))
        result = Result()
        error = None
        while True:
            kind, body = self._read()
            if kind == b"T":
                (count,) = struct.unpack("!h", body[:2])
                pos = 2
                result = Result()
                result.has_rows = True
                for _ in range(count):
                    end = body.index(b"\0", pos)
                    name = body[pos:end].decode(errors="replace")
                    pos = end + 1
                    _table, _attr, oid, _len, _mod, _fmt = struct.unpack("!ihihih", body[pos:pos + 18])
                    pos += 18
                    result.columns.append((name, oid))
            elif kind == b"D":
                (count,) = struct.unpack("!h", body[:2])
                pos = 2
                row = []
                for _ in range(count):
                    (length,) = struct.unpack("!i", body[pos:pos + 4])
                    pos += 4
                    if length < 0:
                        row.append(None)
                    else:
                        row.append(body[pos:pos + length].decode(errors="replace"))
                        pos += length
                result.rows.append(row)
            elif kind == b"C":
                result.tag = body.rstrip(b"\0").decode(errors="replace")
            elif kind == b"E":
                if error is None:
                    error = DbError(self._fields(body))
            elif kind == b"Z":
                if error is not None:
                    raise error
                return result
            # N (notice), S (parameter status), I (empty query), A (notification): ignored.


# ---------------------------------------------------------------------------------------------
# Parsing .slt files.


class Record:
    def __init__(self, kind, line, conditions, connection):
        self.kind = kind              # statement, query, control, halt
        self.line = line              # 1-based line of the record's first line
        self.conditions = conditions  # [(onlyif|skipif, engine)]
        self.connection = connection
        self.sql = ""
        self.sql_end = line           # index (0-based) of the line after the SQL
        self.expect = "ok"            # statement: ok | error | count
        self.error = None             # statement error: SQLSTATE or message part, or None
        self.count = None
        self.types = ""
        self.sort = "nosort"
        self.retry = 0.0
        self.expected = None          # query: list of expected lines, or None if no ---- block
        self.command = None           # control: kill | checkpoint | sleep
        self.argument = None

    def runs_on(self, engine):
        for condition, target in self.conditions:
            if condition == "onlyif" and target != engine:
                return False
            if condition == "skipif" and target == engine:
                return False
        return True


class ParseError(Exception):
    pass


def parse_file(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    records = []
    differential = False
    conditions = []
    connection = "default"
    i = 0
    n = len(lines)

    def block(start):
        """Lines from start up to a blank line (or the end); returns (lines, index after)."""
        out = []
        j = start
        while j < n and lines[j].strip() != "":
            out.append(lines[j])
            j += 1
        return out, j

    while i < n:
        stripped = lines[i].strip()
        if stripped == "":
            if conditions or connection != "default":
                raise ParseError("%s:%d: skipif/onlyif/connection must be followed by a record"
                                 % (path, i))
            i += 1
            continue
        if stripped.startswith("#"):
            if re.match(r"^#\s*differential\s*$", stripped):
                differential = True
            i += 1
            continue
        tokens = stripped.split()
        word = tokens[0]
        where = "%s:%d" % (path, i + 1)
        if word in ("skipif", "onlyif"):
            if len(tokens) < 2 or tokens[1] not in ENGINES:
                raise ParseError("%s: %s needs an engine: %s" % (where, word, " | ".join(ENGINES)))
            conditions.append((word, tokens[1]))
            i += 1
            continue
        if word == "connection":
            if len(tokens) != 2:
                raise ParseError("%s: connection needs a name" % where)
            connection = tokens[1]
            i += 1
            continue
        if word == "hash-threshold":
            i += 1
            continue
        record = Record(word, i + 1, conditions, connection)
        conditions = []
        connection = "default"
        if word == "halt":
            records.append(record)
            i += 1
            continue
        if word == "control":
            if len(tokens) < 2 or tokens[1] not in ("kill", "checkpoint", "sleep"):
                raise ParseError("%s: control kill | checkpoint | sleep <ms>" % where)
            record.command = tokens[1]
            if record.command == "sleep":
                if len(tokens) != 3 or not tokens[2].isdigit():
                    raise ParseError("%s: control sleep <milliseconds>" % where)
                record.argument = int(tokens[2])
            records.append(record)
            i += 1
            continue
        if word == "statement":
            if len(tokens) < 2 or tokens[1] not in ("ok", "error", "count"):
                raise ParseError("%s: statement ok | error [sqlstate or text] | count <n>" % where)
            record.expect = tokens[1]
            if record.expect == "error":
                rest = stripped.split(None, 2)
                record.error = rest[2].strip() if len(rest) > 2 else None
            elif record.expect == "count":
                if len(tokens) != 3 or not tokens[2].isdigit():
                    raise ParseError("%s: statement count <n>" % where)
                record.count = int(tokens[2])
            sql, j = block(i + 1)
            if not sql:
                raise ParseError("%s: statement without SQL" % where)
            record.sql = "\n".join(sql)
            record.sql_end = j
            records.append(record)
            i = j
            continue
        if word == "query":
            if len(tokens) < 2 or not re.match(r"^[ITRB]+$", tokens[1]):
                raise ParseError("%s: query <types: I T R B> [nosort|rowsort|valuesort] "
                                 "[retry <seconds>]" % where)
            record.types = tokens[1]
            k = 2
            while k < len(tokens):
                if tokens[k] in ("nosort", "rowsort", "valuesort"):
                    record.sort = tokens[k]
                elif tokens[k] == "retry" and k + 1 < len(tokens):
                    try:
                        record.retry = float(tokens[k + 1])
                    except ValueError:
                        raise ParseError("%s: retry <seconds>" % where)
                    k += 1
                else:
                    raise ParseError("%s: unknown query option %r" % (where, tokens[k]))
                k += 1
            sql = []
            j = i + 1
            while j < n and lines[j].strip() != "" and lines[j].strip() != "----":
                sql.append(lines[j])
                j += 1
            if not sql:
                raise ParseError("%s: query without SQL" % where)
            record.sql = "\n".join(sql)
            record.sql_end = j
            if j < n and lines[j].strip() == "----":
                expected, j = block(j + 1)
                record.expected = expected
            records.append(record)
            i = j
            continue
        raise ParseError("%s: unknown record %r" % (where, word))
    if conditions:
        raise ParseError("%s: skipif/onlyif at the end of the file" % path)
    return records, differential


# ---------------------------------------------------------------------------------------------
# Rendering and comparing results.


def normalize(text):
    return " ".join(text.split())


def render_value(value, letter):
    if value is None:
        return "NULL"
    if letter == "R":
        try:
            number = float(value)
        except ValueError:
            return value
        if number != number or number in (float("inf"), float("-inf")):
            return value
        text = "%.3f" % number
        return "0.000" if text == "-0.000" else text
    if letter == "B":
        lowered = value.lower()
        if lowered in ("t", "true"):
            return "true"
        if lowered in ("f", "false"):
            return "false"
        return value
    if value == "":
        return "(empty)"
    return normalize(value)


def render(result, types, sort):
    """The result's rows as lines of text, in the record's sorting mode."""
    rows = [[render_value(v, types[c] if c < len(types) else "T") for c, v in enumerate(row)]
            for row in result.rows]
    if sort == "valuesort":
        return sorted(v for row in rows for v in row)
    lines = [" ".join(row) for row in rows]
    if sort == "rowsort":
        lines.sort()
    return lines


def normalize_expected(expected, sort):
    if sort == "valuesort":
        return sorted(normalize(line) for line in expected)
    lines = [normalize(line) for line in expected]
    if sort == "rowsort":
        lines.sort()
    return lines


def check_types(result, types, engine):
    """None if the result's columns fit the record's type letters, else why not."""
    if len(result.columns) != len(types):
        return "%d columns, but the record declares %d (%s)" % (len(result.columns), len(types), types)
    for index, ((name, oid), letter) in enumerate(zip(result.columns, types)):
        allowed = {"I": INT_OIDS | {NUMERIC_OID},
                   "R": FLOAT_OIDS | {NUMERIC_OID},
                   "B": {BOOL_OID}}.get(letter)
        if allowed is not None and oid not in allowed:
            return "column %d (%s) has type oid %d, which does not fit %s" % (index + 1, name, oid, letter)
        if letter == "I" and oid == NUMERIC_OID:
            for row in result.rows:
                if row[index] is not None and not re.match(r"^-?\d+$", row[index]):
                    return "column %d (%s) holds %r, not an integer" % (index + 1, name, row[index])
    return None


def count_of(tag):
    parts = tag.split()
    return int(parts[-1]) if parts and parts[-1].isdigit() else None


# ---------------------------------------------------------------------------------------------
# Translating Stave's SQL for PostgreSQL.


def split_statements(sql):
    """Splits on ';' outside quotes and comments; keeps each statement's text."""
    statements, current, i, n = [], [], 0, len(sql)
    while i < n:
        c = sql[i]
        if c in ("'", '"'):
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            current.append(sql[i:j + 1])
            i = j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
            current.append(sql[i:j])
            i = j
        elif c == ";":
            statements.append("".join(current))
            current = []
            i += 1
        else:
            current.append(c)
            i += 1
    statements.append("".join(current))
    return [s for s in statements if s.strip() and not all(
        line.strip().startswith("--") or not line.strip() for line in s.split("\n"))]


def translate_statement(statement):
    text = statement.strip()
    upper = " ".join(text.upper().split())
    if upper == "CHECKPOINT":
        return ""
    if re.match(r"^(SET|RESET)\s+(SESSION\s+|LOCAL\s+)?(STREAMING_PARALLELISM|CHECKPOINT_INTERVAL)\b",
                upper):
        return ""
    text = re.sub(r"^CREATE\s+MATERIALIZED\s+VIEW\s+(IF\s+NOT\s+EXISTS\s+)?", "CREATE VIEW ", text,
                  flags=re.I)
    text = re.sub(r"^DROP\s+MATERIALIZED\s+VIEW\b", "DROP VIEW", text, flags=re.I)
    if re.match(r"^CREATE\s+TABLE\b", text, flags=re.I):
        text = re.sub(r"\)\s*APPEND\s+ONLY\s*$", ")", text, flags=re.I)
    return text


def translate(sql):
    return ";\n".join(filter(None, (translate_statement(s) for s in split_statements(sql))))


# ---------------------------------------------------------------------------------------------
# Engines.


class StaveEngine:
    name = "stave"

    def __init__(self, binary, checkpoint_interval):
        self.server = Staved(binary, checkpoint_interval=checkpoint_interval)
        self.connections = {}

    def start(self):
        self.server.start()

    def connection(self, name):
        if name not in self.connections:
            self.connections[name] = PgConnection(self.server.pg_port, "stave", "stave")
        return self.connections[name]

    def drop_connections(self):
        for conn in self.connections.values():
            try:
                conn.sock.close()
            except OSError:
                pass
        self.connections = {}

    def alive(self):
        return self.server.process is not None and self.server.process.poll() is None

    def crashed(self, wait=3.0):
        """True if staved exited (waiting a little: a lost connection may come just before)."""
        deadline = time.time() + wait
        while self.alive() and time.time() < deadline:
            time.sleep(0.05)
        return not self.alive()

    def kill_and_restart(self):
        self.drop_connections()
        if self.alive():
            self.server.kill()
        else:
            self.server.log.close()
        self.server.start()

    def log_tail(self, lines=40):
        return "\n".join(self.server.read_log().splitlines()[-lines:])

    def close(self):
        """Stops staved with SIGTERM; returns its exit code (None if it was not running) and
        the end of its log."""
        self.drop_connections()
        code, log = None, ""
        if self.alive():
            code = self.server.stop()
            log = self.log_tail()
        self.server.cleanup()
        return code, log


class PostgresEngine:
    name = "postgres"

    def __init__(self, server, database):
        self.server = server
        self.database = database
        self.connections = {}

    def connection(self, name):
        if name not in self.connections:
            self.connections[name] = PgConnection(self.server.port, "postgres", self.database)
        return self.connections[name]

    def close(self):
        for conn in self.connections.values():
            conn.close()
        self.connections = {}


# ---------------------------------------------------------------------------------------------
# Running files.


class Stats:
    def __init__(self):
        self.files = self.cases = self.passed = self.failed = self.skipped = self.compared = 0
        self.failures = []


class FileRunner:
    def __init__(self, path, display, records, differential, args, stats, pg_server):
        self.path = path
        self.display = display
        self.records = records
        self.differential = differential and pg_server is not None
        self.args = args
        self.stats = stats
        self.pg_server = pg_server
        self.stave = None
        self.pg = None
        self.completions = []   # (record, lines) for --complete

    # Reporting.

    def fail(self, record, message):
        self.stats.failed += 1
        text = "FAIL %s:%d\n%s" % (self.display, record.line, message)
        if record.sql:
            text = "FAIL %s:%d: %s\n%s" % (self.display, record.line, record.sql.strip().split("\n")[0][:100],
                                           message)
            text += "\n  SQL:\n" + "\n".join(
                "    " + (l if len(l) <= 200 else l[:200] + "... (%d characters)" % len(l))
                for l in record.sql.split("\n"))
        if self.stave is not None and self.stave.server.process is not None and not self.stave.alive():
            text += "\n  staved exited with %s; its log ends with:\n%s" % (
                self.stave.server.process.returncode, self.stave.log_tail())
        self.stats.failures.append(text)
        print(text, flush=True)

    # Executing.

    def run_sql(self, engine, record, sql):
        """(result, error) of sql on engine; error is a DbError or None."""
        conn = engine.connection(record.connection)
        try:
            return conn.execute(sql), None
        except DbError as e:
            return None, e
        except (ConnectionLost, socket.timeout) as e:
            engine.connections.pop(record.connection, None)
            raise ConnectionLost("%s: %s" % (engine.name, e))

    def check_statement(self, engine, record, result, error):
        """None if the outcome meets the record's expectation, else why not."""
        if record.expect == "error":
            if error is None:
                return "%s: expected an error%s, but the statement succeeded" % (
                    engine, " (%s)" % record.error if record.error else "")
            if record.error is None:
                return None
            if SQLSTATE_RE.match(record.error):
                if error.sqlstate != record.error:
                    return "%s: expected SQLSTATE %s, got %s: %s" % (
                        engine, record.error, error.sqlstate, error.message)
                return None
            if record.error.lower() not in error.message.lower():
                return "%s: expected an error containing %r, got %s: %s" % (
                    engine, record.error, error.sqlstate, error.message)
            return None
        if error is not None:
            return "%s: expected success, got %s: %s" % (engine, error.sqlstate, error.message)
        if record.expect == "count":
            got = count_of(result.tag)
            if got != record.count:
                return "%s: expected %d rows affected, got %r (tag %r)" % (engine, record.count, got, result.tag)
        return None

    def run_statement(self, record):
        problems = []
        ran = False
        if record.runs_on("stave"):
            ran = True
            result, error = self.run_sql(self.stave, record, record.sql)
            problem = self.check_statement("stave", record, result, error)
            if problem:
                problems.append(problem)
        if self.differential and record.runs_on("postgres"):
            sql = translate(record.sql)
            if sql:
                result, error = self.run_sql(self.pg, record, sql)
                problem = self.check_statement("postgres", record, result, error)
                if problem:
                    problems.append(problem + ("\n  (translated SQL: %s)" % sql if sql != record.sql else ""))
        return ran, problems

    def run_query(self, record):
        want = None
        want_source = None
        problems = []
        pg_lines = None
        if self.differential and record.runs_on("postgres"):
            result, error = self.run_sql(self.pg, record, translate(record.sql))
            if error is not None:
                problems.append("postgres: the query failed: %s: %s" % (error.sqlstate, error.message))
            else:
                problem = check_types(result, record.types, "postgres")
                if problem:
                    problems.append("postgres: " + problem)
                pg_lines = render(result, record.types, record.sort)
                want, want_source = pg_lines, "postgres"
                if record.expected is not None:
                    expected = normalize_expected(record.expected, record.sort)
                    if expected != pg_lines:
                        problems.append("postgres's answer differs from the expected block\n" +
                                        side_by_side("expected", expected, "postgres", pg_lines))
                elif self.args.complete:
                    self.completions.append((record, render_for_file(result, record)))
        if want is None and record.expected is not None:
            want, want_source = normalize_expected(record.expected, record.sort), "expected"
        if not record.runs_on("stave"):
            return False, problems
        if want is None:
            return False, problems  # nothing to compare with: counted as skipped
        deadline = time.time() + record.retry
        while True:
            result, error = self.run_sql(self.stave, record, record.sql)
            problem = None
            got = None
            if error is not None:
                problem = "stave: the query failed: %s: %s" % (error.sqlstate, error.message)
            else:
                problem = check_types(result, record.types, "stave")
                got = render(result, record.types, record.sort)
                if problem:
                    problem = "stave: " + problem
                elif got != want:
                    problem = "stave's answer differs from %s's\n%s" % (
                        want_source, side_by_side(want_source, want, "stave", got))
                elif (record.expected is not None and want_source == "postgres" and
                      normalize_expected(record.expected, record.sort) != got):
                    problem = "stave's answer differs from the expected block\n" + side_by_side(
                        "expected", normalize_expected(record.expected, record.sort), "stave", got)
            if problem is None or time.time() >= deadline:
                break
            time.sleep(0.1)
        if problem:
            problems.append(problem + ("\n  (after retrying for %gs)" % record.retry if record.retry else ""))
        if pg_lines is not None and not problems:
            self.stats.compared += 1
        return True, problems

    def run_control(self, record):
        if not record.runs_on("stave"):
            return False, []
        if record.command == "kill":
            self.stave.kill_and_restart()
        elif record.command == "checkpoint":
            conn = self.stave.connection("__control")
            conn.execute("CHECKPOINT")
        elif record.command == "sleep":
            time.sleep(record.argument / 1000.0)
        return True, []

    def run(self):
        self.stats.files += 1
        self.stave = StaveEngine(self.args.staved, self.args.checkpoint_interval)
        database = None
        try:
            self.stave.start()
            if self.differential:
                database = "slt_" + hashlib.sha1(self.display.encode()).hexdigest()[:12]
                admin = PgConnection(self.pg_server.port, "postgres", "postgres")
                admin.execute('DROP DATABASE IF EXISTS "%s"' % database)
                admin.execute('CREATE DATABASE "%s"' % database)
                admin.close()
                self.pg = PostgresEngine(self.pg_server, database)
            for record in self.records:
                if record.kind == "halt":
                    if record.runs_on("stave"):
                        break
                    continue
                self.stats.cases += 1
                if self.args.verbose:
                    print("  %s:%d %s" % (self.display, record.line, record.kind), flush=True)
                try:
                    if record.kind == "statement":
                        ran, problems = self.run_statement(record)
                    elif record.kind == "query":
                        ran, problems = self.run_query(record)
                    else:
                        ran, problems = self.run_control(record)
                except ConnectionLost as e:
                    ran, problems = True, ["connection lost: %s" % e]
                    if self.stave.crashed():
                        # A crash: report it, then carry on with the rest of the file on a
                        # restarted server.
                        self.fail(record, "  " + problems[0])
                        self.stave.kill_and_restart()
                        continue
                if problems:
                    self.fail(record, "\n".join("  " + p.replace("\n", "\n  ") for p in problems))
                elif ran:
                    self.stats.passed += 1
                else:
                    self.stats.skipped += 1
        finally:
            code, log = self.stave.close()
            if code not in (None, 0):
                self.stats.failed += 1
                message = "FAIL %s: staved exited with %s on SIGTERM; its log ends with:\n%s" % (
                    self.display, code, log)
                self.stats.failures.append(message)
                print(message, flush=True)
            if self.pg is not None:
                self.pg.close()
            if database is not None:
                try:
                    admin = PgConnection(self.pg_server.port, "postgres", "postgres")
                    admin.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % database)
                    admin.close()
                except Exception:
                    pass
        if self.completions:
            self.write_completions()

    def write_completions(self):
        with open(self.path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for record, rows in sorted(self.completions, key=lambda c: -c[0].sql_end):
            lines[record.sql_end:record.sql_end] = ["----"] + rows
        with open(self.path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        print("completed %d queries in %s" % (len(self.completions), self.display), flush=True)


def render_for_file(result, record):
    """PostgreSQL's answer as an expected block: tab-separated values, in the sorting mode."""
    rows = [[render_value(v, record.types[c]) for c, v in enumerate(row)] for row in result.rows]
    if record.sort == "valuesort":
        return sorted(v for row in rows for v in row)
    lines = ["\t".join(row) for row in rows]
    if record.sort == "rowsort":
        lines.sort(key=normalize)
    return lines


def side_by_side(left_name, left, right_name, right):
    out = ["  %s (%d rows):" % (left_name, len(left))]
    out += ["    " + l for l in left[:50]] + (["    ..."] if len(left) > 50 else [])
    out.append("  %s (%d rows):" % (right_name, len(right)))
    out += ["    " + l for l in right[:50]] + (["    ..."] if len(right) > 50 else [])
    return "\n".join(out)


def collect(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    if name.endswith(".slt"):
                        full = os.path.join(root, name)
                        files.append((full, os.path.relpath(full, path)))
        else:
            files.append((path, path))
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", help=".slt files or directories (searched recursively)")
    parser.add_argument("--staved", required=True, help="the staved binary")
    parser.add_argument("--postgres", action="store_true",
                        help="start a PostgreSQL server and run differential files on it too")
    parser.add_argument("--filter", action="append", default=[],
                        help="run only files whose path contains this (may be repeated)")
    parser.add_argument("--complete", action="store_true",
                        help="write PostgreSQL's answer into differential queries without one")
    parser.add_argument("--checkpoint-interval", default="200ms")
    parser.add_argument("--verbose", action="store_true", help="print each record as it runs")
    args = parser.parse_args()
    if args.complete and not args.postgres:
        parser.error("--complete needs --postgres")

    started = time.time()
    files = collect(args.paths)
    if args.filter:
        files = [f for f in files if any(part in f[1] for part in args.filter)]
    if not files:
        print("no .slt files found", file=sys.stderr)
        return 2
    parsed = []
    for path, display in files:
        try:
            parsed.append((path, display) + parse_file(path))
        except (ParseError, OSError) as e:
            print("error: %s" % e, file=sys.stderr)
            return 2

    # A SIGTERM (ctest's timeout, Ctrl-C in a parent) unwinds like an exception, so that the
    # finally blocks stop staved and PostgreSQL.
    def terminate(signum, _frame):
        raise SystemExit("slt: stopped by signal %d" % signum)
    signal.signal(signal.SIGTERM, terminate)

    pg_server = None
    if args.postgres:
        from postgres_harness import PostgresServer
        pg_server = PostgresServer()
        pg_server.start()
    stats = Stats()
    try:
        for path, display, records, differential in parsed:
            file_started = time.time()
            failed_before = stats.failed
            try:
                FileRunner(path, display, records, differential, args, stats, pg_server).run()
            except Exception:
                stats.failed += 1
                message = "FAIL %s: the runner failed:\n%s" % (display, traceback.format_exc())
                stats.failures.append(message)
                print(message, flush=True)
            print("%s %s (%.1fs%s)" % ("ok  " if stats.failed == failed_before else "FAIL", display,
                                       time.time() - file_started,
                                       ", differential" if differential and pg_server else ""),
                  flush=True)
    finally:
        if pg_server is not None:
            pg_server.cleanup()
    print("slt: %d files, %d cases, %d passed, %d failed, %d skipped; %d queries compared with "
          "PostgreSQL; %.1fs" % (stats.files, stats.cases, stats.passed, stats.failed, stats.skipped,
                                 stats.compared, time.time() - started))
    return 1 if stats.failed else 0


if __name__ == "__main__":
    sys.exit(main())
