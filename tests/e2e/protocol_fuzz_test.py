"""The PostgreSQL protocol server under abuse: the real staved gets random bytes, truncated and
oversize messages, random extended-protocol sequences and clients that never read, from many
connections at once, while a well-behaved psycopg client keeps checking its answers. Then 500
connections at once each run a query, idle_session_timeout ends an idle session, and the server
must still be alive, serving, and stop cleanly.

    protocol_fuzz_test.py --staved build/release/server/staved [--seconds 15] [--seed 7]
"""

import argparse
import random
import socket
import struct
import sys
import threading
import time

from stave_harness import Staved, check

try:
    import psycopg
except ImportError:  # tools/install-deps.sh --tests installs python3-psycopg.
    print("SKIP: psycopg (python3-psycopg) is not installed")
    sys.exit(77)

ROWS = 1000
PROTOCOL_30 = 196608


# --- A minimal protocol v3 client on a raw socket -------------------------------------------

def startup_packet(user="fuzz", database="stave"):
    params = b"user\x00" + user.encode() + b"\x00database\x00" + database.encode() + b"\x00\x00"
    return struct.pack("!ii", 8 + len(params), PROTOCOL_30) + params


def message(kind, body=b""):
    return kind + struct.pack("!i", 4 + len(body)) + body


def cstring(text):
    return (text if isinstance(text, bytes) else text.encode()) + b"\x00"


class RawClient:
    """One connection speaking the protocol by hand; reads whole backend messages."""

    def __init__(self, port, timeout=10):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def send(self, data):
        self.sock.sendall(data)

    def read_message(self):
        """The next (type, body), or None at end of stream."""
        while True:
            if len(self.buffer) >= 5:
                length = struct.unpack("!i", self.buffer[1:5])[0]
                if len(self.buffer) >= 1 + length:
                    kind, body = self.buffer[:1], self.buffer[5:1 + length]
                    self.buffer = self.buffer[1 + length:]
                    return kind, body
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk

    def read_until_ready(self):
        """Messages up to and including ReadyForQuery; stops early at a FATAL or end of stream."""
        messages = []
        while True:
            msg = self.read_message()
            if msg is None:
                return messages
            messages.append(msg)
            if msg[0] == b"Z":
                return messages

    def start(self):
        self.send(startup_packet())
        messages = self.read_until_ready()
        check(messages and messages[-1][0] == b"Z", "startup did not end in ReadyForQuery: %r" % messages)

    def query(self, sql):
        self.send(message(b"Q", cstring(sql)))
        return self.read_until_ready()


def error_code(body):
    """The SQLSTATE field of an ErrorResponse body."""
    for field in body.split(b"\x00"):
        if field[:1] == b"C":
            return field[1:].decode()
    return None


def data_rows(messages):
    rows = []
    for kind, body in messages:
        if kind == b"D":
            count = struct.unpack("!h", body[:2])[0]
            pos, row = 2, []
            for _ in range(count):
                length = struct.unpack("!i", body[pos:pos + 4])[0]
                pos += 4
                row.append(None if length < 0 else body[pos:pos + length].decode())
                pos += max(length, 0)
            rows.append(row)
    return rows


# --- The abuse ----------------------------------------------------------------------------------

SQL_TEXTS = [
    "SELECT v FROM kv WHERE k = $1", "SELECT $1::int + 1", "SELECT k, v FROM kv_view WHERE k = $1",
    "SELECT count(*) FROM kv", "INSERT INTO scratch VALUES ($1)", "SELECT", "SELEC 1", "",
    "SELECT 1; SELECT 2", "SELECT * FROM nowhere", "SELECT $2", "SELECT 'x' || $1", "BEGIN", "COMMIT",
    "ROLLBACK", "SHOW TimeZone", "SELECT (((((((1)))))))", "SELECT 1/0",
]


def random_bytes(rng, low, high):
    return bytes(rng.getrandbits(8) for _ in range(rng.randint(low, high)))


def random_extended_message(rng):
    """One Parse, Bind, Describe, Execute, Close, Flush or Sync with random (often valid) contents."""
    choice = rng.randrange(8)
    name = rng.choice(["", "", "s1", "s2", "p1"])
    if choice == 0:
        sql = rng.choice(SQL_TEXTS) if rng.random() < 0.9 else random_bytes(rng, 0, 30).replace(b"\x00", b"")
        types = [rng.choice([0, 23, 20, 25, 16, rng.getrandbits(31)]) for _ in range(rng.randint(0, 3))]
        body = cstring(name) + cstring(sql) + struct.pack("!h", len(types)) + b"".join(struct.pack("!i", t) for t in types)
        return message(b"P", body)
    if choice == 1:
        values = []
        for _ in range(rng.randint(0, 3)):
            if rng.random() < 0.2:
                values.append(struct.pack("!i", -1))
            else:
                value = rng.choice([b"1", b"42", b"-7", b"abc", b"\x00\x00\x00\x05", random_bytes(rng, 0, 8)])
                values.append(struct.pack("!i", len(value)) + value)
        formats = [rng.choice([0, 1, 2]) for _ in range(rng.randint(0, 2))]
        result_formats = [rng.choice([0, 1]) for _ in range(rng.randint(0, 2))]
        body = (cstring(rng.choice(["", "p1"])) + cstring(name) + struct.pack("!h", len(formats))
                + b"".join(struct.pack("!h", f) for f in formats) + struct.pack("!h", len(values))
                + b"".join(values) + struct.pack("!h", len(result_formats))
                + b"".join(struct.pack("!h", f) for f in result_formats))
        if rng.random() < 0.1:  # A count that lies about what follows.
            body = body[:rng.randint(0, len(body))]
        return message(b"B", body)
    if choice == 2:
        return message(b"D", rng.choice([b"S", b"P", b"X"]) + cstring(name))
    if choice == 3:
        return message(b"E", cstring(rng.choice(["", "p1"])) + struct.pack("!i", rng.choice([0, 0, 1, 2, -1])))
    if choice == 4:
        return message(b"C", rng.choice([b"S", b"P"]) + cstring(name))
    if choice == 5:
        return message(b"H")
    return message(b"S")


def fuzz_connection(port, rng, stats):
    """One abusive connection, chosen at random. Only a crash or a hang of the server fails it."""
    scenario = rng.randrange(10)
    stats[scenario] = stats.get(scenario, 0) + 1
    client = RawClient(port, timeout=10)
    try:
        if scenario == 0:  # Random bytes instead of a startup packet.
            client.send(random_bytes(rng, 1, 3000))
        elif scenario == 1:  # A truncated startup packet, then the client goes away.
            packet = startup_packet()
            client.send(packet[:rng.randint(1, len(packet) - 1)])
        elif scenario == 2:  # A startup packet that claims too much.
            client.send(struct.pack("!ii", rng.choice([10001, 2**31 - 1, 3]), PROTOCOL_30))
        elif scenario == 3:  # A valid startup, then random bytes.
            client.start()
            client.send(random_bytes(rng, 1, 3000))
        elif scenario == 4:  # A valid startup, then a truncated message.
            client.start()
            full = message(b"Q", cstring("SELECT v FROM kv WHERE k = 1"))
            client.send(full[:rng.randint(1, len(full) - 1)])
        elif scenario == 5:  # An oversize length word: refused at once, with no body sent.
            client.start()
            client.send(b"Q" + struct.pack("!I", rng.choice([(64 << 20) + 5, 2**31 - 1, 2**32 - 1])))
            reply = client.read_message()
            check(reply is not None and reply[0] == b"E" and error_code(reply[1]) == "08P01",
                  "an oversize message must get FATAL 08P01, got %r" % (reply,))
            check(client.read_message() is None, "the connection must close after an oversize message")
        elif scenario in (6, 7):  # Random extended-protocol sequences, ended by Sync.
            client.start()
            batch = [random_extended_message(rng) for _ in range(rng.randint(1, 12))] + [message(b"S")]
            client.send(b"".join(batch))
            messages = []
            for _ in range(sum(1 for m in batch if m[:1] == b"S")):  # Each Sync answers ReadyForQuery.
                messages += client.read_until_ready()
                if not messages or messages[-1][0] != b"Z":
                    break
            fatal = any(kind == b"E" and b"SFATAL\x00" in body for kind, body in messages)
            check(fatal or (messages and messages[-1][0] == b"Z"),
                  "a Sync must be answered with ReadyForQuery unless the protocol was broken: %r" % messages[-3:])
            if not fatal:  # The connection still works after whatever came before.
                client.query("ROLLBACK")  # The batch may have left a transaction block open.
                answer = client.query("SELECT v FROM kv WHERE k = 3")
                check(data_rows(answer) == [["9"]], "query after fuzz: %r" % answer)
        elif scenario == 8:  # A client that asks for a big result and never reads it.
            client.start()
            client.send(message(b"Q", cstring("SELECT k, repeat('x', 10000) FROM kv")))
            time.sleep(rng.uniform(0.5, 2.0))
        else:  # SSLRequest, then a cancel request with a made-up key on another connection.
            client.send(struct.pack("!ii", 8, 80877103))
            check(client.sock.recv(1) == b"N", "SSLRequest must be declined with N")
            client.start()
            other = RawClient(port)
            other.send(struct.pack("!iiii", 16, 80877102, rng.getrandbits(31), rng.getrandbits(31)))
            other.close()
            check(data_rows(client.query("SELECT 1")) == [["1"]], "query after a cancel request")
    except (ConnectionError, socket.timeout) as error:
        if scenario in (5, 6, 7, 9):  # The server answers these: no reset, no silence.
            raise AssertionError("scenario %d: %r" % (scenario, error))
    finally:
        client.close()


def well_behaved_client(port, deadline, rng, failures, counts):
    """psycopg over the extended protocol and simple queries; every answer must be right."""
    try:
        with psycopg.connect(host="127.0.0.1", port=port, dbname="stave", user="good",
                             autocommit=True, connect_timeout=10) as conn:
            while time.time() < deadline:
                k = rng.randint(1, ROWS)
                row = conn.execute("SELECT v FROM kv WHERE k = %s", (k,)).fetchone()
                check(row == (k * k,), "kv[%d] gave %r" % (k, row))
                row = conn.execute("SELECT k, v FROM kv_view WHERE k = %d" % k, prepare=False).fetchone()
                check(row == (k, k * k), "kv_view[%d] gave %r" % (k, row))
                counts[0] += 2
    except Exception as error:  # noqa: BLE001 - reported by the main thread.
        failures.append("well-behaved client: %r" % error)


def fuzz_phase(server, seconds, seed, workers):
    deadline = time.time() + seconds
    failures, counts, stats = [], [0], {}

    def worker(index):
        rng = random.Random(seed * 1000 + index)
        while time.time() < deadline and not failures:
            try:
                fuzz_connection(server.pg_port, rng, stats)
            except Exception as error:  # noqa: BLE001
                failures.append("fuzz worker %d: %r" % (index, error))

    good = threading.Thread(target=well_behaved_client,
                            args=(server.pg_port, deadline, random.Random(seed), failures, counts))
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(workers)]
    good.start()
    for t in threads:
        t.start()
    for t in threads + [good]:
        t.join(seconds + 60)
        check(not t.is_alive(), "a client hung: the server stopped answering")
    check(not failures, "failures:\n" + "\n".join(failures[:10]))
    check(counts[0] > 0, "the well-behaved client ran no query")
    check(server.process.poll() is None, "staved died during the fuzzing")
    print("fuzz: %d connections by scenario %s; well-behaved queries: %d"
          % (sum(stats.values()), dict(sorted(stats.items())), counts[0]))


def many_connections(server, count):
    """`count` connections open at once, each with a real startup; then each runs a query."""
    clients = []
    try:
        for _ in range(count):
            client = RawClient(server.pg_port, timeout=30)
            client.send(startup_packet())
            clients.append(client)
        for i, client in enumerate(clients):
            messages = client.read_until_ready()
            check(messages and messages[-1][0] == b"Z", "connection %d: startup failed: %r" % (i, messages[-1:]))
        for i, client in enumerate(clients):
            client.send(message(b"Q", cstring("SELECT v FROM kv WHERE k = %d" % (i % ROWS + 1))))
        for i, client in enumerate(clients):
            k = i % ROWS + 1
            rows = data_rows(client.read_until_ready())
            check(rows == [[str(k * k)]], "connection %d: got %r" % (i, rows))
    finally:
        for client in clients:
            client.close()
    print("%d connections at once: all answered" % count)


def idle_session_timeout(server):
    client = RawClient(server.pg_port)
    try:
        client.start()
        client.query("BEGIN")
        client.query("SET idle_session_timeout = 200")
        time.sleep(0.6)  # Inside a transaction block the timeout does not apply.
        check(data_rows(client.query("SELECT 1")) == [["1"]], "the timeout must not end a transaction")
        client.query("COMMIT")
        started = time.time()
        reply = client.read_message()
        check(reply is not None and reply[0] == b"E" and error_code(reply[1]) == "57P05",
              "expected FATAL 57P05, got %r" % (reply,))
        check(time.time() - started < 5, "the idle session was not ended in time")
        check(client.read_message() is None, "the connection must close after the idle timeout")
    finally:
        client.close()
    result = server.psql("SET idle_session_timeout = 'soon'", check=False)
    check("22023" in result.stderr or "invalid value" in result.stderr, result.stderr)
    check(server.rows("SET idle_session_timeout = '2s'; SHOW idle_session_timeout") == ["2s"], "SHOW")
    print("idle_session_timeout: ends idle sessions, spares transactions")


def log(text):
    print("[%6.1fs] %s" % (time.time() - START, text), flush=True)


START = time.time()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--seconds", type=float, default=15, help="how long the fuzzing runs")
    parser.add_argument("--workers", type=int, default=16, help="abusive connections at a time")
    parser.add_argument("--connections", type=int, default=500, help="connections opened at once")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    print("seed %d" % args.seed)
    server = Staved(args.staved)
    try:
        server.start()
        server.psql("CREATE TABLE kv (k INT PRIMARY KEY, v BIGINT)")
        server.psql("CREATE TABLE scratch (x INT)")
        server.psql("INSERT INTO kv VALUES " + ", ".join("(%d, %d)" % (k, k * k) for k in range(1, ROWS + 1)))
        server.psql("CREATE MATERIALIZED VIEW kv_view AS SELECT k, v FROM kv")
        server.wait_for("SELECT count(*) FROM kv_view", [str(ROWS)])

        log("loaded")
        fuzz_phase(server, args.seconds, args.seed, args.workers)
        log("fuzzed")
        many_connections(server, args.connections)
        log("many connections")
        idle_session_timeout(server)

        check(server.rows("SELECT v FROM kv_view WHERE k = 12") == ["144"], "serving after the abuse")
        code = server.stop()
        check(code == 0, "staved must stop cleanly, exited with %d; log tail:\n%s" % (code, server.read_log()[-3000:]))
        print("PASS")
    except Exception:
        if server.process is not None:
            print("staved log tail:\n" + server.read_log()[-5000:], file=sys.stderr)
        raise
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
