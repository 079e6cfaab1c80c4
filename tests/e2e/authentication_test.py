"""Authentication and TLS end to end, with the real psql and a raw protocol client.

Users made with CREATE/ALTER/DROP USER log in with SCRAM-SHA-256, MD5 and cleartext passwords
(the server's --local-auth, restarted over the same data directory, so the users are seen to
persist); wrong passwords and unknown users get 28P01, NOLOGIN roles 28000; the data directory
never holds a password in plain text; psql connects with sslmode=require to a server with a
self-signed certificate made here with the openssl command, and is refused TLS by one without.
"""

import argparse
import base64
import hashlib
import hmac
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stave_harness import Staved, check  # noqa: E402

BOOTSTRAP_PASSWORD = "boot-secret"


def psql(server, user, password, sql, sslmode=None):
    """Runs sql as `user` with `password` (None: none given); returns the CompletedProcess."""
    conninfo = "host=127.0.0.1 port=%d dbname=stave user=%s" % (server.pg_port, user)
    if sslmode:
        conninfo += " sslmode=" + sslmode
    env = dict(os.environ, PGCONNECT_TIMEOUT="5")
    env.pop("PGPASSWORD", None)
    if password is not None:
        env["PGPASSWORD"] = password
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-w", "-d", conninfo, "-c", sql],
                          capture_output=True, text=True, env=env, timeout=60)


def expect_login(server, user, password, sslmode=None):
    result = psql(server, user, password, "SELECT 41 + 1", sslmode)
    check(result.returncode == 0 and result.stdout.strip() == "42",
          "%s could not log in: %s" % (user, result.stderr))


def expect_refused(server, user, password, message):
    result = psql(server, user, password, "SELECT 1")
    check(result.returncode != 0 and message in result.stderr,
          "%s: expected %r, got rc %d: %s" % (user, message, result.returncode, result.stderr))


def expect_sql_error(server, sql, sqlstate, message):
    result = server.psql(sql, check=False, verbose=True)
    check(result.returncode != 0 and sqlstate in result.stderr and message in result.stderr,
          "%s: expected %s %r, got %s" % (sql, sqlstate, message, result.stderr))


def raw_cleartext_login(port, user, password):
    """Logs in by hand with a cleartext password; returns ('ok', None) or ('error', SQLSTATE)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        body = struct.pack("!i", 3 << 16) + b"user\0" + user.encode() + b"\0database\0stave\0\0"
        sock.sendall(struct.pack("!i", len(body) + 4) + body)
        stream = sock.makefile("rb")

        def message():
            kind = stream.read(1)
            length = struct.unpack("!i", stream.read(4))[0]
            return kind, stream.read(length - 4)

        kind, payload = message()
        if kind == b"E":
            return "error", error_code(payload)
        check(kind == b"R" and struct.unpack("!i", payload[:4])[0] == 3,
              "expected a cleartext password request, got %r %r" % (kind, payload))
        secret = password.encode() + b"\0"
        sock.sendall(b"p" + struct.pack("!i", len(secret) + 4) + secret)
        kind, payload = message()
        if kind == b"E":
            return "error", error_code(payload)
        check(kind == b"R" and struct.unpack("!i", payload[:4])[0] == 0, "expected AuthenticationOk")
        return "ok", None


def error_code(payload):
    for field in payload.split(b"\0"):
        if field.startswith(b"C"):
            return field[1:].decode()
    return None


def scram_verifier(password, salt=b"0123456789abcdef", iterations=4096):
    """PostgreSQL's pg_authid form of a SCRAM-SHA-256 verifier, computed as RFC 5802 says."""
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    stored_key = hashlib.sha256(hmac.new(salted, b"Client Key", "sha256").digest()).digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    b64 = lambda raw: base64.b64encode(raw).decode()  # noqa: E731
    return "SCRAM-SHA-256$%d:%s$%s:%s" % (iterations, b64(salt), b64(stored_key), b64(server_key))


def data_directory_bytes(directory):
    content = b""
    for root, _, files in os.walk(directory):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                content += f.read()
    return content


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    args = parser.parse_args()
    if shutil.which("openssl") is None:
        print("SKIPPED: the openssl command is not installed")
        sys.exit(77)
    work = tempfile.mkdtemp(prefix="stave-auth-")
    cert, key = os.path.join(work, "server.crt"), os.path.join(work, "server.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True)
    data_dir = os.path.join(work, "data")
    # Bad flags are refused before anything starts.
    bad = subprocess.run([args.staved, "--data-dir", data_dir, "--pg-port", "0", "--http-port", "0",
                          "--auth", "kerberos"], capture_output=True, text=True, timeout=30)
    check(bad.returncode == 2 and 'unknown method "kerberos"' in bad.stderr, bad.stderr)
    bad = subprocess.run([args.staved, "--data-dir", data_dir, "--pg-port", "0", "--http-port", "0",
                          "--tls-cert", os.path.join(work, "missing.crt"), "--tls-key", key],
                         capture_output=True, text=True, timeout=30)
    check(bad.returncode == 1 and "could not load server certificate file" in bad.stdout + bad.stderr,
          bad.stdout + bad.stderr)
    tls = ["--tls-cert", cert, "--tls-key", key]
    server = Staved(args.staved, data_dir=data_dir, password=BOOTSTRAP_PASSWORD,
                    extra_args=["--local-auth", "scram-sha-256"] + tls)
    try:
        server.start()
        # SCRAM-SHA-256: the bootstrap user, then users made in SQL.
        expect_login(server, "stave", BOOTSTRAP_PASSWORD)
        expect_refused(server, "stave", "nope", 'password authentication failed for user "stave"')
        expect_refused(server, "stave", None, "no password supplied")
        server.psql("CREATE USER alice WITH PASSWORD 'wonderland'")
        server.psql("CREATE ROLE bob LOGIN PASSWORD 'builder'")
        server.psql("CREATE ROLE carol PASSWORD 'hidden'")  # A ROLE cannot log in by default.
        server.psql("CREATE USER dave")  # No password: only trust lets dave in.
        expect_login(server, "alice", "wonderland")
        expect_login(server, "bob", "builder")
        # A verifier made elsewhere (as pg_dumpall writes them) is kept as it is.
        server.psql("CREATE USER erin PASSWORD '%s'" % scram_verifier("elsewhere"))
        expect_login(server, "erin", "elsewhere")
        expect_refused(server, "erin", "Elsewhere", 'password authentication failed for user "erin"')
        expect_refused(server, "alice", "Wonderland", 'password authentication failed for user "alice"')
        expect_refused(server, "mallory", "x", 'password authentication failed for user "mallory"')
        expect_refused(server, "dave", "x", 'password authentication failed for user "dave"')
        expect_refused(server, "carol", "hidden", 'role "carol" is not permitted to log in')
        expect_sql_error(server, "CREATE USER alice PASSWORD 'x'", "42710", 'role "alice" already exists')
        expect_sql_error(server, "CREATE USER stave", "42710", 'role "stave" already exists')
        expect_sql_error(server, "ALTER USER nobody PASSWORD 'x'", "42704", 'role "nobody" does not exist')
        expect_sql_error(server, "DROP USER nobody", "42704", 'role "nobody" does not exist')
        expect_sql_error(server, "DROP USER stave", "55006", "required by the database system")
        server.psql("DROP USER IF EXISTS nobody")
        # ALTER USER changes the password at once.
        server.psql("ALTER USER bob WITH PASSWORD 'rebuilt'")
        expect_refused(server, "bob", "builder", 'password authentication failed for user "bob"')
        expect_login(server, "bob", "rebuilt")
        server.psql("ALTER ROLE carol LOGIN")
        expect_login(server, "carol", "hidden")

        # TLS with a self-signed certificate; \conninfo says the session is encrypted.
        expect_login(server, "alice", "wonderland", sslmode="require")
        info = psql(server, "alice", "wonderland", "\\conninfo", sslmode="require")
        check("SSL connection" in info.stdout, "not encrypted: " + info.stdout + info.stderr)

        # Passwords are kept as verifiers: no plain text in the data directory.
        server.stop()
        stored = data_directory_bytes(data_dir)
        check(b"SCRAM-SHA-256$4096:" in stored, "no SCRAM verifier stored")
        for secret in (b"wonderland", b"rebuilt", b"hidden", BOOTSTRAP_PASSWORD.encode()):
            check(secret not in stored, "a password is stored in plain text: %r" % secret)

        # MD5, after a restart: the users persist.
        server.extra_args = ["--local-auth", "md5"]
        server.start()
        expect_login(server, "alice", "wonderland")
        expect_refused(server, "alice", "wrong", 'password authentication failed for user "alice"')
        # Without a certificate TLS is declined.
        result = psql(server, "alice", "wonderland", "SELECT 1", sslmode="require")
        check(result.returncode != 0 and "server does not support SSL" in result.stderr, result.stderr)
        expect_login(server, "alice", "wonderland", sslmode="prefer")
        server.stop()

        # Cleartext passwords, checked against the SCRAM verifier; SQLSTATEs as sent.
        server.extra_args = ["--local-auth", "password"]
        server.start()
        expect_login(server, "alice", "wonderland")
        check(raw_cleartext_login(server.pg_port, "alice", "wonderland") == ("ok", None), "raw login")
        check(raw_cleartext_login(server.pg_port, "alice", "bad") == ("error", "28P01"), "wrong password")
        check(raw_cleartext_login(server.pg_port, "nobody", "bad") == ("error", "28P01"), "unknown user")
        server.psql("ALTER USER carol NOLOGIN")
        check(raw_cleartext_login(server.pg_port, "carol", "hidden") == ("error", "28000"), "NOLOGIN")
        server.psql("DROP USER alice, bob")
        expect_refused(server, "alice", "wonderland", 'password authentication failed for user "alice"')
        server.stop()

        # Trust (the default for loopback): any user name, no password asked.
        server.extra_args = []
        server.password = None
        server.start()
        expect_login(server, "whoever", None)
        result = psql(server, "carol", None, "SELECT 1")  # NOLOGIN is refused even under trust.
        check(result.returncode != 0 and 'role "carol" is not permitted to log in' in result.stderr,
              result.stderr)
        server.stop()
        print("authentication test passed")
    except Exception:
        server.report_failure()
        raise
    finally:
        server.cleanup()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
