"""Real PostgreSQL drivers against a real staved over the extended query protocol: psycopg 3,
node-postgres, pgJDBC and libpqxx each run a client program (tests/e2e/clients/) that checks
server-side parameters, prepared statements, binary formats, batches, cursors and errors.

A client whose driver is not installed (tools/install-deps.sh --tests installs them) is skipped
with exit code 77, which CTest reports as skipped rather than passed."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from stave_harness import Staved

SKIP = 77
CLIENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients")
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JDBC_JAR = "/usr/share/java/postgresql.jar"


def skip(message):
    print("SKIPPED: " + message)
    sys.exit(SKIP)


def command_for(client, args, work_dir):
    """The command that runs `client` against a port appended later, or skips."""
    if client == "psycopg":
        try:
            import psycopg  # noqa: F401
        except ImportError:
            skip("psycopg 3 is not installed (Debian package python3-psycopg)")
        return [sys.executable, os.path.join(CLIENTS, "psycopg_client.py")]
    if client == "node":
        if shutil.which("node") is None:
            skip("node is not installed")
        if not os.path.isdir(os.path.join(TESTS, "node_modules", "pg")):
            skip("the npm package pg is not installed (npm ci in tests/)")
        return ["node", os.path.join(CLIENTS, "node_pg_client.js")]
    if client == "jdbc":
        if shutil.which("javac") is None or shutil.which("java") is None:
            skip("no JDK (Debian package default-jdk-headless)")
        if not os.path.exists(JDBC_JAR):
            skip("pgJDBC is not installed (Debian package libpostgresql-jdbc-java)")
        subprocess.run(["javac", "-cp", JDBC_JAR, "-d", work_dir, os.path.join(CLIENTS, "PgJdbcClient.java")],
                       check=True)
        return ["java", "-cp", work_dir + os.pathsep + JDBC_JAR, "PgJdbcClient"]
    if client == "libpqxx":
        return [os.path.abspath(args.libpqxx_client)]
    raise ValueError("unknown client " + client)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--staved", required=True)
    parser.add_argument("--client", required=True, choices=["psycopg", "node", "jdbc", "libpqxx"])
    parser.add_argument("--libpqxx-client", help="the built libpqxx_client program")
    parser.add_argument("--auth", default="trust",
                        help="how the client logs in over loopback (staved's --local-auth); with a "
                             "password method the client also checks that a wrong one gets 28P01")
    args = parser.parse_args()
    work_dir = tempfile.mkdtemp(prefix="stave-clients-")
    password = None if args.auth == "trust" else "driver-secret"
    server = Staved(args.staved, extra_args=["--local-auth", args.auth], password=password)
    try:
        command = command_for(args.client, args, work_dir)
        server.start()
        result = subprocess.run(command + [str(server.pg_port)] + ([password] if password else []),
                                capture_output=True, text=True,
                                timeout=300, cwd=TESTS)
        sys.stdout.write(result.stdout)
        if result.returncode != 0:
            sys.stderr.write(result.stderr)
            sys.stderr.write("--- staved log ---\n" + server.read_log()[-5000:])
            sys.exit(1)
    finally:
        server.cleanup()
        shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
