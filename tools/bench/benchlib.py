"""Shared helpers for the benchmark scripts: start and stop servers on free ports, talk RESP,
read INFO, record the machine's load.

Benchmarks are not tests: nothing here asserts on speed. Every server started here gets its own
temporary directory and is stopped (and its directory removed) when the `with` block ends.
"""

import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("BASALT_BUILD", ROOT / "build"))
BASALT = Path(os.environ.get("BASALT_SERVER", BUILD / "basalt-server"))
BENCH = Path(os.environ.get("BASALT_BENCH", BUILD / "basalt-bench"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load_average():
    """The 1-minute load average, noted with every result (the machine is shared)."""
    return os.getloadavg()[0]


def median(values):
    return statistics.median(values) if values else float("nan")


class Client:
    """A minimal blocking RESP2 client, enough for setup commands and INFO."""

    def __init__(self, port, timeout=600):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    @staticmethod
    def encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def call(self, *args):
        self.sock.sendall(self.encode(args))
        return self._read()

    def pipeline(self, commands):
        """Sends every command in one write, then reads their replies in order."""
        self.sock.sendall(b"".join(self.encode(c) for c in commands))
        return [self._read() for _ in commands]

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(max(65536, n))
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        raise RuntimeError("unexpected reply %r" % line)

    def info(self, section=""):
        text = self.call("INFO", section) if section else self.call("INFO")
        fields = {}
        for line in text.decode().splitlines():
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                fields[k] = v
        return fields


def wait_ready(port, proc, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("server exited with code %d at start-up" % proc.returncode)
        try:
            c = Client(port, timeout=2)
            try:
                if c.call("PING") == "PONG":
                    return
            finally:
                c.close()
        except (OSError, RuntimeError):
            pass
        time.sleep(0.05)
    raise RuntimeError("server on port %d not ready after %ds" % (port, timeout))


class Server:
    def __init__(self, name, port, proc, workdir):
        self.name, self.port, self.proc, self.dir = name, port, proc, workdir

    def client(self):
        return Client(self.port)

    def pid(self):
        return self.proc.pid

    def cpu_seconds(self):
        """User + system CPU the server process has used so far."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def redis_server(tmp_root=None):
    """The Debian redis-server with persistence off, on a free port."""
    workdir = tempfile.mkdtemp(prefix="bench-redis-", dir=tmp_root)
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", workdir, "--daemonize", "no", "--logfile",
         os.path.join(workdir, "redis.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, proc)
        yield Server("redis", port, proc, workdir)
    finally:
        _stop(proc)
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def basalt_server(options=None, tmp_root=None, keep_dir=False):
    """basalt-server on a free port with its own data directory. `options` are config keys."""
    workdir = tempfile.mkdtemp(prefix="bench-basalt-", dir=tmp_root)
    port = free_port()
    args = [str(BASALT), "--port", str(port), "--bind", "127.0.0.1", "--dir",
            os.path.join(workdir, "data"), "--logfile", os.path.join(workdir, "basalt.log")]
    for k, v in (options or {}).items():
        args += ["--" + k, str(v)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, proc)
        yield Server("basalt", port, proc, workdir)
    finally:
        _stop(proc)
        if not keep_dir:
            shutil.rmtree(workdir, ignore_errors=True)


def dir_bytes(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(dirpath, f)).st_blocks * 512
    return total


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)
