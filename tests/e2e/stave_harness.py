"""Starts a real staved and talks to it with the real psql client. Shared by end-to-end tests."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Staved:
    """One staved process over a data directory that outlives restarts of the process."""

    def __init__(self, binary, checkpoint_interval="200ms", data_dir=None, extra_args=(), password=None):
        self.binary = binary
        # The password of the user stave (STAVE_PASSWORD), which psql() then logs in with.
        self.password = password
        self.extra_args = list(extra_args)
        self.checkpoint_interval = checkpoint_interval
        self.owns_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="stave-e2e-")
        self.process = None
        self.log_path = os.path.join(self.data_dir + ".log")

    def start(self, timeout=30, attempts=3):
        # A port free_port() found may be taken before staved binds it (Kafka clients and
        # brokers on loopback take ephemeral ports all the time): then try other ports.
        for attempt in range(attempts):
            if self._start(timeout, last=attempt == attempts - 1):
                return

    def _start(self, timeout, last):
        self.pg_port = free_port()
        self.http_port = free_port()
        self.log = open(self.log_path, "ab")
        log_start = os.path.getsize(self.log_path)
        self.process = subprocess.Popen(
            [self.binary, "--data-dir", self.data_dir, "--pg-port", str(self.pg_port),
             "--http-port", str(self.http_port), "--checkpoint-interval", self.checkpoint_interval]
            + self.extra_args,
            stdout=self.log, stderr=subprocess.STDOUT, env=self.server_env())
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                self.log.close()
                with open(self.log_path, "rb") as f:
                    f.seek(log_start)
                    if b"Address already in use" in f.read() and not last:
                        return False
                raise RuntimeError("staved exited with %d; log:\n%s" % (self.process.returncode, self.read_log()))
            result = self.psql("SELECT 1", check=False)
            if result.returncode == 0:
                return True
            time.sleep(0.1)
        raise RuntimeError("staved did not accept connections in time; log:\n" + self.read_log())

    def server_env(self):
        env = dict(os.environ)
        env.pop("STAVE_PASSWORD", None)
        if self.password is not None:
            env["STAVE_PASSWORD"] = self.password
        return env

    def stop(self, sig=signal.SIGTERM, timeout=30):
        self.process.send_signal(sig)
        code = self.process.wait(timeout=timeout)
        self.log.close()
        return code

    def kill(self):
        return self.stop(signal.SIGKILL)

    def read_log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def report_failure(self, tail=5000):
        """Prints why the test failed, then the log's serious lines and its tail, then the
        reason again: a long failure's output may be cut in the middle, so the reason stands
        at both ends. Call it from an except block."""
        reason = traceback.format_exc(limit=4)
        log = self.read_log()
        serious = [line for line in log.splitlines()
                   if "[error]" in line or "[critical]" in line or "Sanitizer" in line
                   or "runtime error" in line][:40]
        sys.stderr.write("FAILED: %s\n--- staved log: errors (%d shown) ---\n%s\n"
                         "--- staved log: last %d characters ---\n%s\n--- end of log ---\n"
                         "FAILED: %s\n" % (reason.strip().splitlines()[-1], len(serious),
                                            "\n".join(serious), tail, log[-tail:], reason))

    def cleanup(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.owns_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            if os.path.exists(self.log_path):
                os.remove(self.log_path)

    def psql(self, sql, check=True, verbose=False):
        """Runs sql through psql; returns the CompletedProcess (stdout: unaligned, '|' separated)."""
        args = ["psql", "-X", "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "stave", "-d", "stave",
                "-q", "-A", "-t", "-F", "|", "-c", sql]
        if verbose:
            args[1:1] = ["-v", "VERBOSITY=verbose"]
        env = dict(os.environ, PGCONNECT_TIMEOUT="5")
        if self.password is not None:
            env["PGPASSWORD"] = self.password
        result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
        if check and result.returncode != 0:
            raise AssertionError("psql failed for %r: %s" % (sql, result.stderr))
        return result

    def rows(self, sql):
        out = self.psql(sql).stdout
        return [line for line in out.splitlines() if line != ""]

    def wait_for(self, sql, expected, timeout=30):
        deadline = time.time() + timeout
        rows = None
        while time.time() < deadline:
            rows = self.rows(sql)
            if rows == expected:
                return rows
            time.sleep(0.1)
        raise AssertionError("%r gave %r, expected %r" % (sql, rows, expected))

    def http(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.http_port, path), timeout=10) as r:
            return r.status, r.read().decode()
