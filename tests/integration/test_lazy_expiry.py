"""Lazy expiry as in Redis 7.2 (tests/unit/expire.tcl, pause.tcl): with the active expirer off
(DEBUG SET-ACTIVE-EXPIRE 0), a command that looks up an expired key (GET, MGET, TYPE, EXISTS,
TTL) or a SCAN/RANDOMKEY that passes over one deletes it at once: DBSIZE and INFO keyspace stop
counting it, expired_keys counts it, an `expired` notification goes out; KEYS only skips it.
During CLIENT PAUSE WRITE nothing is deleted, and the first lookup after UNPAUSE deletes. A
replica deletes nothing itself: its master's lazy deletion reaches it. Every test also passes
with --target redis."""
import contextlib
import time

import pytest

from helpers import parse_info, wait_until
from resp import RawConn


@pytest.fixture(scope="module")
def dbg(start_module_server):
    return start_module_server(args={"enable-debug-command": "yes"})


@pytest.fixture
def c(dbg):
    conn = RawConn(dbg.port)
    assert conn.call("FLUSHALL") == ("+", b"OK")
    assert conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == ("+", b"OK")
    yield conn
    conn.call("CLIENT", "UNPAUSE")
    conn.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    conn.close()


def expired_keys(c):
    kind, text = c.call("INFO", "stats")
    return int(parse_info(text.decode())["stats"]["expired_keys"])


def set_expired(c, *keys):
    """Each key holds a value whose 1 ms TTL has passed (nothing deleted it yet)."""
    for key in keys:
        assert c.call("SET", key, "v", "PX", "1") == ("+", b"OK")
    time.sleep(0.05)


def test_reads_delete_the_expired_keys_they_find(c):
    for key in ("key1{t}", "key2{t}", "key3{t}"):
        assert c.call("PSETEX", key, "100", "a") == ("+", b"OK")
    assert c.call("DBSIZE") == (":", 3)
    time.sleep(0.3)
    assert c.call("DBSIZE") == (":", 3)
    before = expired_keys(c)
    assert c.call("MGET", "key1{t}", "key2{t}", "key3{t}") == ("*", [("$", None)] * 3)
    assert c.call("DBSIZE") == (":", 0)
    assert expired_keys(c) == before + 3


@pytest.mark.parametrize("command", [("GET",), ("TYPE",), ("EXISTS",), ("TTL",), ("STRLEN",),
                                     ("OBJECT", "ENCODING")])
def test_each_lookup_deletes(c, command):
    set_expired(c, "k")
    assert c.call("DBSIZE") == (":", 1)
    c.call(*command[:1], *command[1:], "k")
    assert c.call("DBSIZE") == (":", 0)


def test_scan_and_randomkey_delete_keys_only_skips(c):
    set_expired(c, "foo1", "foo2")
    assert c.call("KEYS", "*") == ("*", [])
    assert c.call("DBSIZE") == (":", 2)
    assert c.call("SCAN", "0") == ("*", [("$", b"0"), ("*", [])])
    assert c.call("DBSIZE") == (":", 0)
    set_expired(c, "bar")
    assert c.call("RANDOMKEY") == ("$", None)
    assert c.call("DBSIZE") == (":", 0)


def test_a_lazy_deletion_is_notified(c, dbg):
    sub = RawConn(dbg.port)
    try:
        assert c.call("CONFIG", "SET", "notify-keyspace-events", "Ex") == ("+", b"OK")
        sub.call("SUBSCRIBE", "__keyevent@0__:expired")
        set_expired(c, "gone")
        assert c.call("GET", "gone") == ("$", None)
        assert sub.read() == ("*", [("$", b"message"), ("$", b"__keyevent@0__:expired"),
                                    ("$", b"gone")])
    finally:
        c.call("CONFIG", "SET", "notify-keyspace-events", "")
        sub.close()


def test_nothing_is_deleted_during_a_pause_and_lookups_delete_after(c):
    before = expired_keys(c)
    assert c.call("MULTI") == ("+", b"OK")
    c.call("SET", "foo{t}", "bar", "PX", "10")
    c.call("SET", "bar{t}", "foo", "PX", "10")
    c.call("CLIENT", "PAUSE", "50000", "WRITE")
    assert c.call("EXEC") == ("*", [("+", b"OK")] * 3)
    assert wait_until(lambda: c.call("GET", "foo{t}") == ("$", None) and
                      c.call("GET", "bar{t}") == ("$", None), timeout=5)
    assert expired_keys(c) == before
    assert c.call("DBSIZE") == (":", 2)
    assert c.call("CLIENT", "UNPAUSE") == ("+", b"OK")
    assert c.call("GET", "foo{t}") == ("$", None)
    assert c.call("GET", "bar{t}") == ("$", None)
    assert expired_keys(c) == before + 2
    assert c.call("DBSIZE") == (":", 0)


def test_a_replica_waits_for_its_masters_deletion(c, dbg, start_server):
    replica = start_server(args={"replicaof": ("127.0.0.1", str(dbg.port))})
    with contextlib.closing(RawConn(replica.port)) as r:
        assert wait_until(lambda: b"master_link_status:up" in r.call("INFO", "replication")[1],
                          timeout=20)
        assert c.call("SET", "k", "v", "PX", "300") == ("+", b"OK")
        assert wait_until(lambda: r.call("DBSIZE") == (":", 1), timeout=10)
        time.sleep(0.4)
        # Expired on the replica too, but only the master deletes.
        assert r.call("GET", "k") == ("$", None)
        assert r.call("DBSIZE") == (":", 1)
        assert c.call("GET", "k") == ("$", None)
        assert wait_until(lambda: r.call("DBSIZE") == (":", 0), timeout=10)


def test_watching_a_stale_key_does_not_fail_exec(c):
    set_expired(c, "x")
    assert c.call("WATCH", "x") == ("+", b"OK")
    assert c.call("MULTI") == ("+", b"OK")
    assert c.call("PING") == ("+", b"QUEUED")
    assert c.call("EXEC") == ("*", [("+", b"PONG")])


def test_deleting_a_watched_stale_key_does_not_fail_exec(c):
    set_expired(c, "x")
    assert c.call("WATCH", "x") == ("+", b"OK")
    # EXISTS deletes the expired key: no change for the transaction.
    assert c.call("EXISTS", "x") == (":", 0)
    assert c.call("DBSIZE") == (":", 0)
    assert c.call("MULTI") == ("+", b"OK")
    assert c.call("PING") == ("+", b"QUEUED")
    assert c.call("EXEC") == ("*", [("+", b"PONG")])


def test_a_key_watched_live_and_expired_since_fails_exec(c, dbg):
    other = RawConn(dbg.port)
    try:
        assert c.call("SET", "x", "v", "PX", "100") == ("+", b"OK")
        assert c.call("WATCH", "x") == ("+", b"OK")
        time.sleep(0.3)
        # Deleted by another client's lookup, or still there expired: either way a change.
        assert other.call("GET", "x") == ("$", None)
        assert c.call("MULTI") == ("+", b"OK")
        assert c.call("PING") == ("+", b"QUEUED")
        assert c.call("EXEC") == ("*", None)
    finally:
        other.close()
