"""Starts a real, throwaway PostgreSQL server for end-to-end tests of Stave's PostgreSQL sink.

The sink is tested against the real server (not a mock) because what matters is exactly what a
mock would get wrong: two-phase commit (PREPARE TRANSACTION / COMMIT PREPARED), reconnects after
the server restarts or crashes, and what survives in the tables afterwards. Each PostgresServer
owns a fresh data directory in a temporary directory, listens on 127.0.0.1 only, and trusts every
local connection, so tests need no passwords and cannot touch any other PostgreSQL on the machine.

Only the standard library and the PostgreSQL binaries are used; queries go through the psql
client, like stave_harness.Staved.psql, because psycopg2 may not be installed.
"""

import atexit
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

# Settings written to postgresql.conf, so restarts of the same data directory keep them.
# max_prepared_transactions > 0 enables two-phase commit (the default, 0, disables it). fsync
# and full_page_writes are off because a test's data only has to survive a restart or a SIGKILL
# of the server (both keep the OS page cache), not a power cut, and they make tests faster.
# synchronous_commit stays on: without it a commit is acknowledged while its WAL may still be in
# the server's shared memory, and a SIGKILL (kill(), stop(mode="immediate")) loses commits the
# client was told about -- a sink would then rightly find its rows gone.
SETTINGS = {
    "listen_addresses": "'127.0.0.1'",
    "max_prepared_transactions": "64",
    "fsync": "off",
    "synchronous_commit": "on",
    "full_page_writes": "off",
}


def _bin_dir():
    """The server binaries' directory, highest installed major version first. `pg_config
    --bindir` is not used: on Debian it may point at the client package's directory, which has no
    initdb or postgres."""
    candidates = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    candidates.sort(key=lambda p: [int(x) for x in re.findall(r"\d+", p.split("/")[-3])] or [0])
    for initdb in reversed(candidates):
        bin_dir = os.path.dirname(initdb)
        if all(os.access(os.path.join(bin_dir, b), os.X_OK) for b in ("initdb", "pg_ctl", "postgres")):
            return bin_dir
    for initdb in filter(None, [shutil.which("initdb")]):
        bin_dir = os.path.dirname(initdb)
        if all(os.access(os.path.join(bin_dir, b), os.X_OK) for b in ("pg_ctl", "postgres")):
            return bin_dir
    return None


def available():
    """(True, '') if a PostgreSQL server and psql can be started here, else (False, reason).
    Information only: sink tests are meant to fail, not skip, when PostgreSQL is missing."""
    if _bin_dir() is None:
        return False, ("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in "
                       "/usr/lib/postgresql/*/bin or on PATH; install the 'postgresql' package "
                       "(tools/install-deps.sh does)")
    if shutil.which("psql") is None:
        return False, "psql not found on PATH; install the 'postgresql-client' package"
    if os.geteuid() == 0:
        try:
            import pwd
            pwd.getpwnam("postgres")
        except KeyError:
            return False, "running as root but there is no 'postgres' OS user to run the server as"
    if shutil.which("runuser") is None and os.geteuid() == 0:
        return False, "running as root but runuser (util-linux) is missing"
    return True, ""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid):
    """True if pid is a running process; a zombie counts as dead (a killed postmaster is not our
    child, so nobody may reap it, yet kill(pid, 0) would still succeed on it)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _processes():
    """(pid, parent pid) of every process, from /proc."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    yield int(entry), int(f.read().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                continue


class PostgresServer:
    """One postmaster over a temporary data directory that outlives stops, restarts and kills."""

    def __init__(self, port=None):
        self.port = port or _free_port()
        self.bin_dir = _bin_dir()
        self.temp_dir = None
        self.data_dir = None
        self.log_path = None
        self._run_as_postgres = os.geteuid() == 0  # postgres refuses to run as root.
        atexit.register(self.cleanup)

    # Lifecycle.

    def start(self, timeout=60):
        """Creates a fresh data directory (initdb) and starts the server on it."""
        ok, reason = available()
        if not ok:
            raise RuntimeError(reason)
        if self.temp_dir is not None:
            raise RuntimeError("start() already called; use start_existing() or restart()")
        self.temp_dir = tempfile.mkdtemp(prefix="stave-pg-")
        if self._run_as_postgres:
            # The whole temp dir (data, socket, log) belongs to the server's user.
            shutil.chown(self.temp_dir, "postgres", "postgres")
        self.data_dir = os.path.join(self.temp_dir, "data")
        self.log_path = os.path.join(self.temp_dir, "postgres.log")
        # --locale=C: deterministic sorting and works with UTF8 whatever the machine's locale is.
        self._run(["initdb", "-D", self.data_dir, "-A", "trust", "-U", "postgres", "--no-sync",
                   "-E", "UTF8", "--locale=C"], timeout=timeout)
        settings = dict(SETTINGS, port=str(self.port),
                        unix_socket_directories="'%s'" % self.temp_dir.replace("'", "''"))
        with open(os.path.join(self.data_dir, "postgresql.conf"), "a") as conf:
            conf.write("\n# Added by tests/e2e/postgres_harness.py.\n")
            conf.writelines("%s = %s\n" % item for item in settings.items())
        self.start_existing(timeout)

    def start_existing(self, timeout=60):
        """Starts the server on the data directory start() created (after stop() or kill())."""
        if self.data_dir is None:
            raise RuntimeError("no data directory yet; call start() first")
        if self.running():
            raise RuntimeError("PostgreSQL is already running (pid %d)" % self.pid())
        # After kill() the lock files name a postmaster that may still be an unreaped zombie
        # (here PID 1 reaps orphans only now and then), which postgres takes for a live
        # postmaster and refuses to start. Nothing of ours is running (checked above), so they
        # are stale.
        for stale in (os.path.join(self.data_dir, "postmaster.pid"),
                      os.path.join(self.temp_dir, ".s.PGSQL.%d.lock" % self.port)):
            if os.path.exists(stale):
                os.remove(stale)
        result = self._run(["pg_ctl", "start", "-D", self.data_dir, "-l", self.log_path,
                            "-w", "-t", str(int(timeout))], check=False, timeout=timeout + 10)
        if result.returncode != 0:
            raise RuntimeError("PostgreSQL did not start (pg_ctl exit %d): %s%s\nserver log:\n%s" % (
                result.returncode, result.stdout, result.stderr, self.read_log()))
        self._wait_ready(timeout)

    def stop(self, mode="fast", timeout=60):
        """Stops the server ('smart', 'fast' or 'immediate', as pg_ctl -m); keeps the data.
        A no-op if it is not running."""
        if not self.running():
            return
        self._run(["pg_ctl", "stop", "-D", self.data_dir, "-m", mode, "-w", "-t", str(int(timeout))],
                  timeout=timeout + 10)

    def restart(self, mode="fast", timeout=60):
        """stop() then start_existing(): same data directory, same port, so URLs stay valid."""
        self.stop(mode, timeout)
        self.start_existing(timeout)

    def kill(self, timeout=30):
        """SIGKILLs the postmaster, as a crash would; start_existing() then runs crash recovery.

        Its children (backends, checkpointer, ...) are SIGKILLed too: alone they would linger
        until they notice the postmaster is gone, and while they hold its shared memory a new
        postmaster refuses to start. Each child is in its own session, so they are found by
        parent pid, with the postmaster stopped (SIGSTOP) so that it cannot fork meanwhile."""
        pid = self.pid()
        if pid is None or not _alive(pid):
            raise RuntimeError("PostgreSQL is not running")
        os.kill(pid, signal.SIGSTOP)
        children = [child for child, parent in _processes() if parent == pid]
        for victim in [pid] + children:
            try:
                os.kill(victim, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.time() + timeout
        while any(_alive(victim) for victim in [pid] + children):
            if time.time() > deadline:
                raise RuntimeError("PostgreSQL processes survived SIGKILL for %ss" % timeout)
            time.sleep(0.02)

    def cleanup(self):
        """Stops the server if it runs and removes the temp dir. Registered with atexit so a
        failing test leaves no server behind; safe to call more than once."""
        if self.temp_dir is None:
            return
        try:
            self.stop(mode="immediate")
        except Exception:
            if self.running():
                self.kill()
        shutil.rmtree(self.temp_dir, ignore_errors=True)
        self.temp_dir = self.data_dir = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.cleanup()
        return False

    # State.

    def pid(self):
        """The postmaster's pid from postmaster.pid, or None if there is no such file."""
        try:
            with open(os.path.join(self.data_dir, "postmaster.pid")) as f:
                return int(f.readline())
        except (TypeError, FileNotFoundError, ValueError):
            return None

    def running(self):
        pid = self.pid()
        return pid is not None and _alive(pid)

    def read_log(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except (TypeError, FileNotFoundError):
            return "(no log)"

    # Clients.

    def url(self, dbname="postgres", user="postgres", password=None):
        """A libpq URL for the sink's connection options, e.g. postgresql://postgres@127.0.0.1:5432/db.
        Passwords are accepted and ignored by the server (trust authentication)."""
        auth = user if password is None else "%s:%s" % (user, password)
        return "postgresql://%s@127.0.0.1:%d/%s" % (auth, self.port, dbname)

    def create_database(self, name):
        self.psql('CREATE DATABASE "%s"' % name.replace('"', '""'))

    def psql(self, sql, db="postgres", check=True, timeout=60):
        """Runs sql with psql over TCP; returns the CompletedProcess (stdout: unaligned, tuples
        only, '|' separated, like stave_harness.Staved.psql). sql is fed as a script, so each
        statement runs on its own (COMMIT PREPARED cannot run inside a multi-statement string)
        and ON_ERROR_STOP makes the first error stop it with a non-zero exit code."""
        result = subprocess.run(self._psql_args(db, "|", "\n"), input=sql, capture_output=True,
                                text=True, env=self._client_env(), timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError("psql failed for %r: %s" % (sql, result.stderr))
        return result

    def query(self, sql, db="postgres", null=""):
        """The rows of sql's result, each a list of strings; NULL becomes `null` (pass None to
        tell NULLs from empty strings). Uses ASCII unit/record separators, not '|' and newlines,
        so values containing those come back intact. Only the last statement of sql may return
        rows (earlier ones may be SET, INSERT, ...)."""
        null_marker = "\x1a"
        args = self._psql_args(db, "\x1f", "\x1e") + ["-P", "null=" + null_marker]
        result = subprocess.run(args, input=sql, capture_output=True, text=True,
                                env=self._client_env(), timeout=60)
        if result.returncode != 0:
            raise AssertionError("psql failed for %r: %s" % (sql, result.stderr))
        # psql prints nothing for no rows, else the records joined by the record separator and
        # one newline; so a single row with one empty string is "\n", not "".
        if result.stdout == "":
            return []
        records = result.stdout[:-1].split("\x1e")
        return [[null if v == null_marker else v for v in record.split("\x1f")] for record in records]

    # Internals.

    def _psql_args(self, db, field_sep, record_sep):
        return ["psql", "-X", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", db,
                "-v", "ON_ERROR_STOP=1", "-q", "-A", "-t", "-F", field_sep, "-R", record_sep, "-f", "-"]

    @staticmethod
    def _client_env():
        # Drop PG* variables of the caller's environment (PGSERVICE, PGOPTIONS, ...) that could
        # redirect or alter the connection.
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["PGCONNECT_TIMEOUT"] = "5"
        return env

    def _run(self, args, check=True, timeout=60):
        """Runs a server binary, as the postgres OS user when we are root."""
        args = [os.path.join(self.bin_dir, args[0])] + args[1:]
        if self._run_as_postgres:
            args = ["runuser", "-u", "postgres", "--"] + args
        # cwd: the caller's directory may be unreadable to the postgres user.
        result = subprocess.run(args, capture_output=True, text=True, cwd=self.temp_dir,
                                env=self._client_env(), timeout=timeout)
        if check and result.returncode != 0:
            raise RuntimeError("%s failed (exit %d): %s%s\nserver log:\n%s" % (
                " ".join(args), result.returncode, result.stdout, result.stderr, self.read_log()))
        return result

    def _wait_ready(self, timeout):
        """pg_ctl -w already waits, but over the unix socket; tests connect over TCP."""
        deadline = time.time() + timeout
        while True:
            result = self.psql("SELECT 1", check=False, timeout=10)
            if result.returncode == 0:
                return
            if time.time() > deadline or not self.running():
                raise RuntimeError("PostgreSQL does not accept connections on 127.0.0.1:%d: %s\n"
                                   "server log:\n%s" % (self.port, result.stderr, self.read_log()))
            time.sleep(0.05)
