"""Fixtures for the Basalt integration suite.

The same tests run against Basalt (default) or a real redis-server
(``--target redis``) so that every expectation can be proven against
Redis 7 itself.  Tests that only make sense on Basalt carry the
``basalt_only`` marker and are skipped with ``--target redis``.
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis
from redis.connection import DefaultParser

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
REDIS_SERVER = os.environ.get("REDIS_SERVER", "/usr/bin/redis-server")
START_TIMEOUT = 15.0
STOP_TIMEOUT = 30.0


class FullErrorTextParser(DefaultParser):
    """redis-py strips the error code of some errors ('ERR syntax error'
    becomes 'syntax error'); keep the exception class redis-py chooses but
    put the full server text back, so tests pin the code prefix too."""

    @classmethod
    def parse_error(cls, response):
        exc = super().parse_error(response)
        exc.args = (response,)
        return exc


def basalt_binary():
    return os.environ.get("BASALT_SERVER") or os.path.join(REPO, "build", "basalt-server")


# --------------------------------------------------------------------------
# command line / markers
# --------------------------------------------------------------------------
def pytest_addoption(parser):
    parser.addoption(
        "--target",
        choices=("basalt", "redis"),
        default="basalt",
        help="server under test: basalt (default, $BASALT_SERVER or "
        "build/basalt-server) or redis (/usr/bin/redis-server)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "basalt_only: Basalt-specific behaviour, skipped with --target redis")
    config.addinivalue_line("markers", "slow: takes several seconds")


def pytest_report_header(config):
    t = config.getoption("--target")
    binary = basalt_binary() if t == "basalt" else REDIS_SERVER
    return "integration target: %s (%s)" % (t, binary)


def pytest_collection_modifyitems(config, items):
    if config.getoption("--target") != "redis":
        return
    skip = pytest.mark.skip(
        reason="basalt_only: Basalt-specific behaviour, not applicable to --target redis")
    for item in items:
        if "basalt_only" in item.keywords:
            item.add_marker(skip)


# --------------------------------------------------------------------------
# server process helper
# --------------------------------------------------------------------------
_used_ports = set()


def free_port():
    """A port in 20000-32767 (below the ephemeral range) that binds now."""
    for _ in range(200):
        port = random.randint(20000, 32000)
        if port in _used_ports:
            continue
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        _used_ports.add(port)
        return port
    raise RuntimeError("no free port found")


def _normalize_args(args):
    """(name, value) pairs; a tuple value is a directive with several words
    (("rename-command", ("flushall", "")) gives --rename-command flushall "")."""
    if args is None:
        return []
    if isinstance(args, dict):
        args = args.items()
    return [(str(k), tuple(map(str, v)) if isinstance(v, tuple) else str(v)) for k, v in args]


def _option(name, value):
    return ["--" + name] + (list(value) if isinstance(value, tuple) else [value])


class ServerProcess:
    """One server process (Basalt or redis-server) on 127.0.0.1.

    ``args`` are extra ``--key value`` options expressed in Basalt terms;
    for redis-server they are translated (``durability sync`` becomes
    ``appendonly yes`` + ``appendfsync always``).  ``persistent=True``
    asks for data that survives restart/kill -9 (Basalt always persists;
    redis-server then runs with ``appendonly yes --appendfsync always``).
    ``config_file`` is given before the options (they override it) and
    ``env`` adds environment variables.
    """

    def __init__(self, kind, args=None, persistent=False, name="srv", config_file=None,
                 env=None):
        assert kind in ("basalt", "redis")
        self.kind = kind
        self.args = _normalize_args(args)
        self.persistent = persistent
        self.root = tempfile.mkdtemp(prefix="basalt-it-%s-%s-" % (kind, name))
        self.dir = os.path.join(self.root, "data")
        os.makedirs(self.dir)
        self.log_path = os.path.join(self.root, "server.log")
        self.port = free_port()
        self.proc = None
        self._log = None
        self.password = dict(self.args).get("requirepass")
        self.config_file = config_file
        self.env = env

    # ---- command line ----------------------------------------------------
    def command_line(self):
        first = [self.config_file] if self.config_file else []
        if self.kind == "basalt":
            cmd = [basalt_binary()] + first + ["--port", str(self.port), "--bind", "127.0.0.1",
                                               "--dir", self.dir]
            for k, v in self.args:
                cmd += _option(k, v)
            return cmd
        cmd = [REDIS_SERVER] + first + ["--port", str(self.port), "--bind", "127.0.0.1",
                                        "--dir", self.dir, "--save", ""]
        opts = {}
        directives = []
        persistent = self.persistent
        for k, v in self.args:
            if isinstance(v, tuple):
                directives += _option(k, v)
            elif k == "durability":
                # Basalt's durability maps onto the AOF fsync policy.
                persistent = True
                opts["appendfsync"] = {"sync": "always", "lazy": "everysec"}.get(v, v)
            else:
                opts[k] = v
        if persistent:
            opts.setdefault("appendfsync", "always")
            opts["appendonly"] = "yes"
        else:
            opts.setdefault("appendonly", "no")
        for k, v in opts.items():
            cmd += ["--" + k, v]
        return cmd + directives

    # ---- lifecycle ---------------------------------------------------------
    def log_tail(self, n=40):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode(errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(lines[-n:])

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self, retries=2):
        """Start and wait until PING answers; on a first start a port
        clash is retried with another port."""
        if self.kind == "basalt" and not os.path.exists(basalt_binary()):
            pytest.fail("Basalt binary not found at %s: build it, set $BASALT_SERVER, "
                        "or run with --target redis" % basalt_binary(), pytrace=False)
        for attempt in range(retries + 1):
            self._spawn()
            err = self._wait_ready()
            if err is None:
                return self
            if attempt < retries and self.proc.poll() is not None \
                    and "in use" in self.log_tail(10):
                self.port = free_port()
                continue
            self._force_kill()
            raise RuntimeError("%s server failed to start (%s): %s\n--- log tail (%s) ---\n%s"
                               % (self.kind, " ".join(self.command_line()), err,
                                  self.log_path, self.log_tail()))

    def _spawn(self):
        self._log = open(self.log_path, "ab")
        self._log.write(("\n=== start %s ===\n" % " ".join(self.command_line())).encode())
        self._log.flush()
        env = dict(os.environ, **self.env) if self.env else None
        self.proc = subprocess.Popen(self.command_line(), stdout=self._log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=self.root, env=env)

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        last = "no answer"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return "process exited with code %s" % self.proc.returncode
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1.0) as s:
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    data = s.recv(1024)
                    if data.startswith(b"+PONG") or data.startswith(b"-NOAUTH"):
                        return None
                    last = "PING answered %r" % data
            except OSError as e:
                last = str(e)
            time.sleep(0.05)
        return "not ready after %.0f s (%s)" % (START_TIMEOUT, last)

    def stop(self, timeout=STOP_TIMEOUT):
        """SIGTERM and wait for a clean exit; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._force_kill()
                raise RuntimeError("server did not stop within %s s after SIGTERM\n%s"
                                   % (timeout, self.log_tail()))
        return self._reap()

    def wait_exit(self, timeout=STOP_TIMEOUT):
        """Wait for the process to exit by itself (e.g. after SHUTDOWN)."""
        self.proc.wait(timeout)
        return self._reap()

    def kill9(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(STOP_TIMEOUT)
        return self._reap()

    def _force_kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(STOP_TIMEOUT)
        self._reap()

    def _reap(self):
        rc = self.proc.returncode if self.proc is not None else None
        if self._log is not None:
            self._log.close()
            self._log = None
        return rc

    def restart(self):
        """Stop (SIGTERM) if running, then start again on the same dir+port."""
        self.stop()
        return self.start(retries=0)

    def cleanup(self):
        try:
            self._force_kill()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    # ---- clients -----------------------------------------------------------
    def client(self, callbacks=True, **kw):
        """redis-py client; callbacks=False gives the server's replies as
        they are (no redis-py post-processing such as 'OK' -> True)."""
        kw.setdefault("host", "127.0.0.1")
        kw.setdefault("port", self.port)
        kw.setdefault("protocol", 2)
        kw.setdefault("decode_responses", True)
        kw.setdefault("socket_timeout", 30)
        c = redis.Redis(**kw)
        c.connection_pool.connection_kwargs["parser_class"] = FullErrorTextParser
        if not callbacks:
            c.response_callbacks.clear()
        return c

    def raw(self, **kw):
        from resp import RawConn
        return RawConn(self.port, **kw)

    def __repr__(self):
        return "<ServerProcess %s port=%s dir=%s>" % (self.kind, self.port, self.dir)


# --------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------
@pytest.fixture(scope="session")
def target(request):
    return request.config.getoption("--target")


def _server_factory(target, default_name):
    started = []

    def make(args=None, persistent=False, name=default_name, config_file=None, env=None):
        s = ServerProcess(target, args=args, persistent=persistent, name=name,
                          config_file=config_file, env=env)
        started.append(s)
        return s.start()

    return make, started


@pytest.fixture
def start_server(target):
    """Factory: start_server(args=None, persistent=False) -> running
    ServerProcess of the target kind; all are stopped after the test."""
    make, started = _server_factory(target, "fn")
    yield make
    for s in started:
        s.cleanup()


@pytest.fixture(scope="module")
def start_module_server(target):
    """Like start_server, but the servers live until the module ends."""
    make, started = _server_factory(target, "mod")
    yield make
    for s in started:
        s.cleanup()


@pytest.fixture(scope="module")
def server(target, request):
    s = ServerProcess(target, name=request.module.__name__.rsplit(".", 1)[-1])
    try:
        s.start()
        yield s
    finally:
        s.cleanup()


@pytest.fixture
def r(server):
    c = server.client()
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def rr(server, r):
    """Like r (same flushed server) but without redis-py reply callbacks:
    execute_command returns exactly what the server sent (decoded)."""
    c = server.client(callbacks=False)
    yield c
    c.close()


@pytest.fixture
def r3(server, r):
    c = server.client(protocol=3)
    yield c
    c.close()


@pytest.fixture(scope="session")
def oracle():
    """A real redis-server, whatever --target says (differential tests)."""
    s = ServerProcess("redis", name="oracle")
    try:
        s.start()
        yield s
    finally:
        s.cleanup()


@pytest.fixture
def diff_pair(server, oracle, r):
    """Factory of DiffPairs (diffpair.py, or a subclass given as cls=) between the server under
    test and the oracle, both flushed first; they are closed after the test."""
    from diffpair import DiffPair
    o = oracle.client()
    o.flushall()
    o.close()
    made = []

    def make(seed, cls=DiffPair, **kw):
        p = cls(server.port, oracle.port, seed, **kw)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


@pytest.fixture
def conns(server, r):
    """Factory of raw connections (resp.RawConn) to the module's flushed server, all closed
    after the test."""
    from resp import RawConn
    made = []

    def make():
        c = RawConn(server.port)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()
