"""A full disk: writes are refused with a clear error, reads keep working,
INFO shows the state, and writes resume by themselves once space is freed,
with nothing acknowledged lost (also across a kill -9 afterwards).

The data directory is a small tmpfs of its own, so filling it touches
nothing else. Mounting needs root (or CAP_SYS_ADMIN); where the machine does
not allow it the test is skipped with the reason."""
import os
import subprocess

import pytest
import redis

from conftest import ServerProcess
from helpers import parse_info, wait_until
from resp import encode

pytestmark = pytest.mark.basalt_only

TMPFS_SIZE = "40m"
SPARE_BYTES = 512 * 1024  # what the filler file leaves free
VALUE = b"x" * 100_000


def mount_tmpfs(path):
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + TMPFS_SIZE, "tmpfs", path],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip("cannot mount a %s tmpfs as the data dir (mount says: %s); the disk-full "
                    "test needs a small filesystem of its own, which needs root or "
                    "CAP_SYS_ADMIN" % (TMPFS_SIZE, (proc.stderr or proc.stdout).strip()))


@pytest.fixture
def small_disk_server(target):
    s = ServerProcess(target, name="diskfull",
                      args={"durability": "sync", "rocksdb.write-buffer-size": "4mb"})
    mount_tmpfs(s.dir)
    try:
        yield s.start()
    finally:
        s._force_kill()
        subprocess.run(["umount", s.dir], check=False)
        s.cleanup()


def fill_disk(path):
    """Leaves about SPARE_BYTES free on the filesystem of `path`."""
    st = os.statvfs(path)
    free = st.f_bavail * st.f_frsize
    filler = os.path.join(path, "filler")
    with open(filler, "wb") as f:
        f.write(b"\0" * max(free - SPARE_BYTES, 0))
    return filler


def storage_info(server):
    c = server.client(callbacks=False)
    try:
        info = parse_info(c.execute_command("INFO", "persistence"))["persistence"]
    finally:
        c.close()
    return {k: v for k, v in info.items() if k.startswith("storage_")}


def verify(c, expected):
    assert c.dbsize() == len(expected)
    for key, value in expected.items():
        assert c.get(key) == value, key


def test_disk_full_refuses_writes_keeps_reads_and_recovers(small_disk_server):
    s = small_disk_server
    c = s.client(decode_responses=False)
    expected = {b"base%d" % i: b"v%d" % i for i in range(100)}
    c.mset(expected)
    assert storage_info(s)["storage_write_status"] == "ok"

    filler = fill_disk(s.dir)
    first_error = None
    for i in range(400):  # RocksDB preallocates WAL space, so some writes still fit
        key = b"big%d" % i
        try:
            c.set(key, VALUE)
        except redis.ResponseError as e:
            first_error = str(e)
            break
        expected[key] = VALUE
    assert first_error is not None, "the disk never filled up"
    assert "No space left on device" in first_error

    # Later writes are refused up front with the cause; nothing is half written.
    with pytest.raises(redis.ResponseError) as refused:
        c.hset(b"h", b"f", b"v")
    assert str(refused.value).startswith("MISCONF Basalt can't persist to disk: ")
    assert "No space left on device" in str(refused.value)
    assert c.exists(b"h") == 0
    # Inside MULTI the refused write aborts the transaction, as in Redis.
    with s.raw() as raw:
        assert raw.call("MULTI") == ("+", b"OK")
        kind, text = raw.call("SET", "in-tx", "1")
        assert kind == "-" and text.startswith("MISCONF ")
        assert raw.call("GET", "base1") == ("+", b"QUEUED")
        kind, text = raw.call("EXEC")
        assert kind == "-" and text.startswith("EXECABORT ")
    assert c.exists(b"in-tx") == 0

    # Reads keep working and INFO shows the state.
    verify(c, expected)
    info = storage_info(s)
    assert info["storage_write_status"] == "err"
    assert "No space left on device" in info["storage_last_error"]
    assert info["storage_errors"] == "1"

    os.remove(filler)

    def write_accepted():
        try:
            return c.set(b"after", b"resumed")
        except redis.ResponseError:
            return False

    assert wait_until(write_accepted, timeout=30, interval=0.2), storage_info(s)
    expected[b"after"] = b"resumed"
    info = storage_info(s)
    assert info["storage_write_status"] == "ok"
    assert info["storage_recoveries"] == "1"
    verify(c, expected)

    # Nothing acknowledged, before or after the episode, is lost in a crash.
    c.set(b"post", b"crash")
    expected[b"post"] = b"crash"
    c.close()
    s.kill9()
    s.start(retries=0)
    c = s.client(decode_responses=False)
    verify(c, expected)
    assert storage_info(s)["storage_write_status"] == "ok"
    c.close()


def test_pipelined_writes_on_a_full_disk_land_or_fail_together(small_disk_server):
    """Pipelined writes are committed in groups (one RocksDB batch per group): when that
    batch cannot be written, every command of the group gets the error and none of them
    lands, while the groups before it are all there."""
    s = small_disk_server
    filler = fill_disk(s.dir)
    acknowledged, failed = [], []
    with s.raw() as raw:
        for batch in range(5000):
            # 2.7 KB: one read of the socket (libevent reads up to 4 KB at a time), so one group.
            keys = ["p%d-%d" % (batch, j) for j in range(8)]
            raw.send_raw(b"".join(encode("SET", k, VALUE[:300]) for k in keys))
            for k in keys:
                kind, text = raw.read()
                if kind == "+":
                    acknowledged.append(k)
                else:
                    failed.append((k, text))
            if failed:
                break
    assert failed, "the disk never filled up"
    assert any("No space left on device" in text for _, text in failed), failed
    # The batch that failed was a group's: several commands got the commit's error at once.
    assert sum(text.startswith("ERR write failed") for _, text in failed) >= 2, failed
    os.remove(filler)
    c = s.client(decode_responses=False)
    assert c.exists(*acknowledged) == len(acknowledged)
    assert c.exists(*[k for k, _ in failed]) == 0
    assert c.dbsize() == len(acknowledged)
    c.close()


def test_writes_of_many_clients_on_a_full_disk_land_or_fail_together(small_disk_server):
    """Writes of different clients that one turn of a worker reads are committed as one batch:
    when that batch fails, each of those clients gets the error for its own command, and
    nothing that was refused lands while everything acknowledged does."""
    s = small_disk_server
    filler = fill_disk(s.dir)
    acknowledged, failed = [], []
    raws = [s.raw() for _ in range(6)]
    try:
        for batch in range(5000):
            keys = ["m%d-%d" % (batch, i) for i in range(len(raws))]
            for raw, key in zip(raws, keys):  # every client's write is out before any reply
                raw.send_raw(encode("SET", key, VALUE[:300]))
            for raw, key in zip(raws, keys):
                kind, text = raw.read()
                (acknowledged if kind == "+" else failed).append((key, text))
            if failed:
                break
    finally:
        for raw in raws:
            raw.close()
    assert failed, "the disk never filled up"
    assert any("No space left on device" in text for _, text in failed), failed
    os.remove(filler)
    c = s.client(decode_responses=False)
    assert c.exists(*[k for k, _ in acknowledged]) == len(acknowledged)
    assert c.exists(*[k for k, _ in failed]) == 0
    c.close()
