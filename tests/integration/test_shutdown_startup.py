"""Stopping with clients connected, and starting on a data dir of another
on-disk format version.

A stop (SIGTERM or SHUTDOWN) while clients are blocked in BLPOP, queued in
MULTI and in the middle of a long pipeline must end the process cleanly
(exit 0), close every client (no client left hanging), and keep every write
whose reply a client received."""
import os
import signal
import threading

import pytest

from helpers import parse_info, wait_until
from resp import ConnectionClosed, encode

PIPELINE = 20000


class PipelineClient:
    """Sends PIPELINE SETs in one stream and counts the +OK replies that
    arrive before the server closes the connection."""

    def __init__(self, server):
        self.conn = server.raw(timeout=60)
        self.acked = 0
        self.error = None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.writer = threading.Thread(target=self._write, daemon=True)

    def start(self):
        self.reader.start()
        self.writer.start()

    def _write(self):
        data = b"".join(encode("SET", "p%d" % i, "v%d" % i) for i in range(PIPELINE))
        try:
            self.conn.send_raw(data)
        except OSError:
            pass  # the server stopped reading: expected once it shuts down

    def _read(self):
        try:
            while self.acked < PIPELINE:
                reply = self.conn.read()
                if reply != ("+", b"OK"):
                    self.error = reply
                    return
                self.acked += 1
        except (ConnectionClosed, OSError):
            pass

    def join(self):
        self.reader.join(30)
        self.writer.join(30)
        self.conn.close()
        assert not self.reader.is_alive(), "pipeline client still waiting after the stop"


def blocked_clients(server):
    c = server.client(callbacks=False)
    try:
        return int(parse_info(c.execute_command("INFO", "clients"))["clients"]["blocked_clients"])
    finally:
        c.close()


@pytest.mark.parametrize("how", ["sigterm", "shutdown"])
def test_stop_with_blocked_pipelined_and_multi_clients(start_server, how):
    s = start_server(args={"durability": "sync"}, name="stop-" + how)
    blockers = []
    for i in range(3):
        conn = s.raw(timeout=30)
        conn.send("BLPOP", "queue%d" % i, "0")
        blockers.append(conn)
    assert wait_until(lambda: blocked_clients(s) == 3, timeout=10)
    in_multi = s.raw()
    assert in_multi.call("MULTI") == ("+", b"OK")
    assert in_multi.call("SET", "never-executed", "1") == ("+", b"QUEUED")
    idle = s.raw()

    pipeline = PipelineClient(s)
    pipeline.start()
    assert wait_until(lambda: pipeline.acked >= 500, timeout=30), "no pipeline progress"
    if how == "sigterm":
        s.proc.send_signal(signal.SIGTERM)
    else:
        with s.raw() as stopper:
            stopper.send("SHUTDOWN")
            assert stopper.is_closed(10)
    assert s.wait_exit(30) == 0

    pipeline.join()
    assert pipeline.error is None, pipeline.error
    for conn in blockers + [in_multi, idle]:
        assert conn.is_closed(10)
        conn.close()

    s.start(retries=0)
    c = s.client()
    try:
        acked = pipeline.acked
        # Every acknowledged SET is there; unacknowledged ones may or may not be.
        missing = [i for i in range(acked) if c.get("p%d" % i) != "v%d" % i]
        assert missing == []
        assert acked <= c.dbsize() <= PIPELINE
        assert c.exists("never-executed") == 0
    finally:
        c.close()


# --------------------------------------------------------------------------
# the on-disk format version marker
# --------------------------------------------------------------------------
MARKER = "BASALT_FORMAT"


def marker_path(server):
    return os.path.join(server.dir, MARKER)


def start_fails(server):
    with pytest.raises(RuntimeError):
        server.start(retries=0)
    assert server.proc.returncode == 1
    return server.log_tail(5)


@pytest.fixture
def stopped_server_with_data(start_server):
    s = start_server(name="format")
    c = s.client()
    c.set("survivor", "yes")
    c.close()
    assert s.stop() == 0
    with open(marker_path(s)) as f:
        assert f.read() == "basalt-format-version 1\n"
    return s


def restore_and_check(server):
    with open(marker_path(server), "w") as f:
        f.write("basalt-format-version 1\n")
    server.start(retries=0)
    c = server.client()
    try:
        assert c.get("survivor") == "yes"
    finally:
        c.close()


@pytest.mark.basalt_only
def test_refuses_data_from_a_newer_format(stopped_server_with_data):
    s = stopped_server_with_data
    with open(marker_path(s), "w") as f:
        f.write("basalt-format-version 7\n")
    log = start_fails(s)
    assert ("holds on-disk format version 7, but this basalt-server uses format version 1 "
            "(written by a newer basalt-server: run that version on it); refusing to start") in log
    restore_and_check(s)  # nothing was touched


@pytest.mark.basalt_only
def test_refuses_data_from_an_older_format(stopped_server_with_data):
    s = stopped_server_with_data
    with open(marker_path(s), "w") as f:
        f.write("basalt-format-version 0\n")
    log = start_fails(s)
    assert "holds on-disk format version 0, but this basalt-server uses format version 1" in log
    assert "no upgrade path" in log
    restore_and_check(s)


@pytest.mark.basalt_only
def test_refuses_an_unreadable_format_marker(stopped_server_with_data):
    s = stopped_server_with_data
    with open(marker_path(s), "w") as f:
        f.write("rocksdb please\n")
    log = start_fails(s)
    assert "has an unreadable BASALT_FORMAT file (expected 'basalt-format-version N')" in log
    restore_and_check(s)


@pytest.mark.basalt_only
def test_data_from_before_the_marker_is_format_1(stopped_server_with_data):
    s = stopped_server_with_data
    os.remove(marker_path(s))
    s.start(retries=0)
    c = s.client()
    try:
        assert c.get("survivor") == "yes"
    finally:
        c.close()
    with open(marker_path(s)) as f:
        assert f.read() == "basalt-format-version 1\n"
