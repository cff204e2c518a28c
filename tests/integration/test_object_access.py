"""OBJECT IDLETIME and OBJECT FREQ over tracked accesses (types/key_access.h), as Redis 7.2's
tests/unit/dump.tcl ("RESTORE can set LRU", "RESTORE can set LFU") and
tests/unit/introspection-2.tcl (TTL/TYPE/EXISTS do not touch, TOUCH does, CLIENT NO-TOUCH):
each answers only under the matching maxmemory-policy, with Redis's error otherwise; reads and
writes are accesses, OBJECT, TTL, TYPE and EXISTS are not; RESTORE's IDLETIME and FREQ set the
record; the LFU counter starts at 5 and, with lfu-log-factor 0, grows by one per access.
Idle times are made large with RESTORE ... IDLETIME rather than waited for. All but the
CLIENT NO-TOUCH test (a 7.2 command) also pass with --target redis."""
import contextlib

import pytest

FREQ_ERROR = ("ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
              "Please note that when switching between policies at runtime LRU and LFU data "
              "will take some time to adjust.")
IDLETIME_ERROR = ("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note "
                  "that when switching between policies at runtime LRU and LFU data will take "
                  "some time to adjust.")


@contextlib.contextmanager
def policy(c, name, **extra):
    """Runs the block under maxmemory-policy `name` (and other keys), restoring the defaults."""
    defaults = {"maxmemory-policy": "noeviction", "lfu-log-factor": "10", "lfu-decay-time": "1"}
    try:
        assert c.call("CONFIG", "SET", "maxmemory-policy", name) == ("+", b"OK")
        for key, value in extra.items():
            assert c.call("CONFIG", "SET", key.replace("_", "-"), str(value)) == ("+", b"OK")
        yield
    finally:
        for key, value in defaults.items():
            c.call("CONFIG", "SET", key, value)


def idletime(c, key):
    kind, value = c.call("OBJECT", "IDLETIME", key)
    assert kind == ":", value
    return value


def freq(c, key):
    kind, value = c.call("OBJECT", "FREQ", key)
    assert kind == ":", value
    return value


def restore_idle(c, key, idle):
    """`key` holds "bar", last accessed `idle` seconds ago (under an LRU policy)."""
    assert c.call("SET", key, "bar") == ("+", b"OK")
    payload = c.call("DUMP", key)[1]
    assert c.call("RESTORE", key, "0", payload, "REPLACE", "IDLETIME", str(idle)) == ("+", b"OK")


def test_each_subcommand_answers_under_its_policy_only(conns):
    c = conns()
    assert c.call("SET", "foo", "bar") == ("+", b"OK")
    assert c.call("OBJECT", "FREQ", "foo") == ("-", FREQ_ERROR)
    assert idletime(c, "foo") < 100
    with policy(c, "allkeys-lfu"):
        assert c.call("OBJECT", "IDLETIME", "foo") == ("-", IDLETIME_ERROR)
        assert freq(c, "foo") >= 0
        assert c.call("OBJECT", "FREQ", "nokey") == ("$", None)
    with policy(c, "volatile-lfu"):
        assert c.call("OBJECT", "IDLETIME", "foo") == ("-", IDLETIME_ERROR)
    with policy(c, "allkeys-lru"):
        assert c.call("OBJECT", "FREQ", "foo") == ("-", FREQ_ERROR)
        assert c.call("OBJECT", "IDLETIME", "nokey") == ("$", None)


def test_restore_can_set_lru(conns):
    c = conns()
    assert c.call("SET", "foo", "bar") == ("+", b"OK")
    payload = c.call("DUMP", "foo")[1]
    assert c.call("DEL", "foo") == (":", 1)
    with policy(c, "allkeys-lru"):
        assert c.call("RESTORE", "foo", "0", payload, "IDLETIME", "1000") == ("+", b"OK")
        assert 1000 <= idletime(c, "foo") <= 1010
        assert c.call("GET", "foo") == ("$", b"bar")


def test_restore_can_set_lfu(conns):
    c = conns()
    assert c.call("SET", "foo", "bar") == ("+", b"OK")
    payload = c.call("DUMP", "foo")[1]
    assert c.call("DEL", "foo") == (":", 1)
    with policy(c, "allkeys-lfu"):
        assert c.call("RESTORE", "foo", "0", payload, "FREQ", "100") == ("+", b"OK")
        assert freq(c, "foo") == 100
        assert c.call("GET", "foo") == ("$", b"bar")


def test_ttl_type_exists_and_object_do_not_touch(conns):
    c = conns()
    restore_idle(c, "foo", 1000)
    c.call("TTL", "foo")
    c.call("PTTL", "foo")
    c.call("TYPE", "foo")
    c.call("EXISTS", "foo")
    c.call("OBJECT", "ENCODING", "foo")
    assert idletime(c, "foo") >= 1000


def test_touch_reads_and_writes_touch(conns):
    c = conns()
    restore_idle(c, "foo", 1000)
    assert c.call("TOUCH", "foo", "missing") == (":", 1)
    assert idletime(c, "foo") < 100
    restore_idle(c, "foo", 1000)
    assert c.call("GET", "foo") == ("$", b"bar")
    assert idletime(c, "foo") < 100
    restore_idle(c, "foo", 1000)
    assert c.call("APPEND", "foo", "x") == (":", 4)
    assert idletime(c, "foo") < 100
    # A collection read inside a transaction and a script count too.
    assert c.call("RPUSH", "list", "a") == (":", 1)
    payload = c.call("DUMP", "list")[1]
    assert c.call("RESTORE", "list", "0", payload, "REPLACE", "IDLETIME", "1000") == \
        ("+", b"OK")
    assert c.call("MULTI") == ("+", b"OK")
    assert c.call("LLEN", "list") == ("+", b"QUEUED")
    assert c.call("EXEC") == ("*", [(":", 1)])
    assert idletime(c, "list") < 100
    restore_idle(c, "foo", 1000)
    assert c.call("EVAL", "return redis.call('get', KEYS[1])", "1", "foo") == ("$", b"bar")
    assert idletime(c, "foo") < 100


def test_lfu_counter_starts_at_five_and_counts_accesses(conns):
    c = conns()
    # lfu-log-factor 0 makes every access count; lfu-decay-time 0 keeps a minute boundary from
    # taking one off.
    with policy(c, "allkeys-lfu", lfu_log_factor=0, lfu_decay_time=0):
        assert c.call("SET", "hot", "v") == ("+", b"OK")
        assert freq(c, "hot") == 5
        for _ in range(10):
            assert c.call("GET", "hot") == ("$", b"v")
        assert freq(c, "hot") == 15
        # OBJECT FREQ itself, EXISTS and TYPE are no accesses.
        c.call("EXISTS", "hot")
        c.call("TYPE", "hot")
        assert freq(c, "hot") == 15
        # An overwrite is an access of the existing key.
        assert c.call("SET", "hot", "w") == ("+", b"OK")
        assert freq(c, "hot") == 16
        # A new key starts again at 5.
        assert c.call("DEL", "hot") == (":", 1)
        assert c.call("SET", "hot", "v") == ("+", b"OK")
        assert freq(c, "hot") == 5


def test_lfu_counter_saturates_at_255(conns):
    c = conns()
    with policy(c, "allkeys-lfu", lfu_log_factor=0, lfu_decay_time=0):
        assert c.call("SET", "foo", "bar") == ("+", b"OK")
        payload = c.call("DUMP", "foo")[1]
        assert c.call("RESTORE", "foo", "0", payload, "REPLACE", "FREQ", "254") == ("+", b"OK")
        c.call("GET", "foo")
        c.call("GET", "foo")
        assert freq(c, "foo") == 255


@pytest.mark.basalt_only(reason="CLIENT NO-TOUCH is a 7.2 command, oracle is 7.0")
def test_no_touch_clients_do_not_touch_but_touch_does(conns):
    c = conns()
    restore_idle(c, "foo", 1000)
    assert c.call("CLIENT", "NO-TOUCH", "ON") == ("+", b"OK")
    assert c.call("GET", "foo") == ("$", b"bar")
    assert c.call("MULTI") == ("+", b"OK")
    assert c.call("GET", "foo") == ("+", b"QUEUED")
    assert c.call("EXEC") == ("*", [("$", b"bar")])
    assert idletime(c, "foo") >= 1000
    assert c.call("TOUCH", "foo") == (":", 1)
    assert idletime(c, "foo") < 100
    restore_idle(c, "foo", 1000)
    assert c.call("CLIENT", "NO-TOUCH", "OFF") == ("+", b"OK")
    assert c.call("GET", "foo") == ("$", b"bar")
    assert idletime(c, "foo") < 100
