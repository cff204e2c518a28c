"""Shared helpers for the benchmark scripts: start and stop servers on free ports, talk RESP,
read INFO, record the machine's load.

Benchmarks are not tests: nothing here asserts on speed. Every server started here gets its own
temporary directory and is stopped (and its directory removed) when the `with` block ends.
"""

import contextlib
import json
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
def basalt_server(options=None, tmp_root=None, keep_dir=False, data_dir=None, cgroup=None):
    """basalt-server on a free port with its own data directory. `options` are config keys.
    With `data_dir` the server opens that directory (kept afterwards) instead of a new one;
    with `cgroup` (a MemoryCgroup) it runs in that cgroup."""
    workdir = tempfile.mkdtemp(prefix="bench-basalt-", dir=tmp_root)
    port = free_port()
    args = [str(BASALT), "--port", str(port), "--bind", "127.0.0.1", "--dir",
            data_dir or os.path.join(workdir, "data"), "--logfile",
            os.path.join(workdir, "basalt.log")]
    for k, v in (options or {}).items():
        args += ["--" + k, str(v)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if cgroup is not None:
            cgroup.add(proc.pid)
        wait_ready(port, proc, timeout=600)
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


def parse_size(s):
    """Bytes of a size such as 1.5g, 160m, 64k or 4096."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    s = s.strip().lower().rstrip("b")
    if s and s[-1] in units:
        return int(float(s[:-1]) * units[s[-1]])
    return int(s)


class MemoryCgroup:
    """A child of this process's cgroup v1 memory cgroup, limited to `limit` bytes (page cache
    included): a server in it holds no more of its data in memory than that. Needs root."""

    def __init__(self, limit, name="bench"):
        with open("/proc/self/cgroup") as f:
            lines = [line.strip().split(":", 2) for line in f]
        own = [path for _, controllers, path in lines if "memory" in controllers.split(",")]
        if not own:
            raise RuntimeError("no cgroup v1 memory controller in /proc/self/cgroup")
        self.path = Path("/sys/fs/cgroup/memory") / own[0].lstrip("/") / (
            "%s-%d" % (name, os.getpid()))
        self.path.mkdir()
        (self.path / "memory.limit_in_bytes").write_text(str(limit))

    def add(self, pid):
        (self.path / "cgroup.procs").write_text(str(pid))

    def usage(self):
        return int((self.path / "memory.usage_in_bytes").read_text())

    def drop_page_cache(self):
        """Reclaims the page cache the cgroup holds (it must have no process)."""
        (self.path / "memory.force_empty").write_text("0")

    def remove(self):
        # Empty once its processes are gone; the page cache it charged moves to the parent.
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def drop_cached_data(cgroup, data):
    """Evicts the files under `data` from the page cache, so that the next reader finds none of
    them there: neither what `cgroup` (which must have no process) charged nor what an earlier
    run charged to its parent."""
    cgroup.drop_page_cache()
    evict_from_page_cache(data)


def evict_from_page_cache(data):
    """Asks the kernel to drop the files under `data` from the page cache (clean pages go)."""
    for dirpath, _, files in os.walk(data):
        for name in files:
            try:
                fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def fio_random_reads(path, size, seconds, iodepth, block="4k"):
    """The disk's own limit: fio's random direct reads of `block` at queue depth `iodepth` from a
    file of `size` at `path` (removed afterwards). Returns (fio's JSON text, reads/s, p50 us,
    p99 us)."""
    cmd = ["fio", "--name=randread", "--filename=%s" % path, "--rw=randread", "--bs=%s" % block,
           "--direct=1", "--ioengine=libaio", "--iodepth=%d" % iodepth, "--size=%s" % size,
           "--runtime=%d" % seconds, "--time_based", "--group_reporting", "--output-format=json"]
    try:
        result = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=3600)
    finally:
        Path(path).unlink(missing_ok=True)
    read = json.loads(result.stdout)["jobs"][0]["read"]
    pct = read["clat_ns"]["percentile"]
    return result.stdout, read["iops"], pct["50.000000"] / 1000, pct["99.000000"] / 1000
