"""Persistence across restarts: SIGTERM, SHUTDOWN and kill -9.

On --target redis these servers run with appendonly yes + appendfsync
always (see conftest), which gives the guarantees Basalt promises."""
import re
import time

from helpers import parse_info
from resp import RawConn

BINARY = b"\x00\r\n\xff" + bytes(range(256))


def fill(server):
    """Write a recognisable data set over all 16 DBs; return expectations."""
    expected = {}
    for db in range(16):
        c = server.client(db=db, decode_responses=False)
        try:
            keys = {b"db%d:k%d" % (db, i): b"v%d-%d" % (db, i) for i in range(db + 1)}
            c.mset(keys)
            c.set(b"db%d:ttl" % db, b"t", ex=1000)
            c.set(b"db%d:pttl" % db, b"p", px=500000)
            c.incrby(b"db%d:counter" % db, 1000 + db)
            keys[b"db%d:ttl" % db] = b"t"
            keys[b"db%d:pttl" % db] = b"p"
            keys[b"db%d:counter" % db] = b"%d" % (1000 + db)
            expected[db] = keys
        finally:
            c.close()
    c = server.client(decode_responses=False)
    try:
        c.set(b"bin\x00key", BINARY)
        c.set(b"big", b"B" * (1 << 20))
        c.set(b"deleted", b"x")
        c.delete(b"deleted")
        expected[0][b"bin\x00key"] = BINARY
        expected[0][b"big"] = b"B" * (1 << 20)
    finally:
        c.close()
    return expected


def verify(server, expected):
    for db, keys in expected.items():
        c = server.client(db=db, decode_responses=False)
        try:
            assert c.dbsize() == len(keys), "db%d" % db
            assert c.mget(list(keys)) == list(keys.values()), "db%d" % db
            assert 990 <= c.ttl(b"db%d:ttl" % db) <= 1000
            assert 490000 <= c.pttl(b"db%d:pttl" % db) <= 500000
            assert c.ttl(b"db%d:k0" % db) == -1
            assert c.incr(b"db%d:counter" % db) == 1001 + db
            c.decr(b"db%d:counter" % db)
            if db == 0:
                assert c.exists(b"deleted") == 0
        finally:
            c.close()


def test_restart_after_sigterm_keeps_everything(start_server):
    s = start_server(persistent=True, name="sigterm")
    expected = fill(s)
    assert s.stop() == 0
    s.start(retries=0)
    verify(s, expected)
    # and again, after a second restart cycle with more writes
    c = s.client(decode_responses=False)
    c.set(b"after-first-restart", b"yes")
    c.close()
    expected[0][b"after-first-restart"] = b"yes"
    s.restart()
    verify(s, expected)


def test_expired_keys_stay_expired_after_restart(start_server):
    s = start_server(persistent=True, name="expiry")
    c = s.client()
    c.set("short", "v", px=300)
    c.set("long", "v", ex=1000)
    c.set("plain", "v")
    c.close()
    s.stop()
    time.sleep(0.5)
    s.start(retries=0)
    c = s.client()
    try:
        assert c.get("short") is None
        assert c.exists("short") == 0
        assert c.get("long") == "v" and 990 <= c.ttl("long") <= 1000
        assert c.ttl("plain") == -1
    finally:
        c.close()


def test_persisted_deletes_flushes_and_swaps(start_server):
    s = start_server(persistent=True, name="flush")
    c = s.client()
    c.mset({"a": 1, "b": 2})
    c.execute_command("SELECT", 1)
    c.set("db1", "x")
    c.execute_command("SELECT", 2)
    c.set("db2", "y")
    c.execute_command("FLUSHDB")
    c.execute_command("SELECT", 0)
    c.delete("a")
    c.expire("b", 1000)
    c.persist("b")
    c.execute_command("SWAPDB", 0, 3)
    c.close()
    s.restart()
    c = s.client()
    try:
        assert c.dbsize() == 0
        c.execute_command("SELECT", 3)
        assert c.keys("*") == ["b"] and c.ttl("b") == -1
        c.execute_command("SELECT", 1)
        assert c.get("db1") == "x"
        c.execute_command("SELECT", 2)
        assert c.dbsize() == 0
    finally:
        c.close()


def test_shutdown_command(start_server):
    s = start_server(persistent=True, name="shutdown")
    c = s.client()
    c.set("k", "v")
    c.set("t", "v", ex=1000)
    c.close()
    with RawConn(s.port) as raw:
        raw.send("SHUTDOWN")
        # no reply on success: the connection just closes
        assert raw.is_closed(timeout=20)
        assert raw.buf == b""
    assert s.wait_exit(timeout=20) == 0
    s.start(retries=0)
    c = s.client()
    try:
        assert c.get("k") == "v"
        assert 990 <= c.ttl("t") <= 1000
    finally:
        c.close()


def test_kill9_in_sync_mode_loses_no_acknowledged_write(start_server):
    s = start_server(args=[("durability", "sync")], name="kill9")
    with RawConn(s.port) as c:
        for i in range(2000):
            assert c.call("SET", "key:%d" % i, "value:%d" % i) == ("+", b"OK")
        for i in range(100):
            assert c.call("SET", "exp:%d" % i, "v", "EX", "1000") == ("+", b"OK")
        for i in range(0, 50):
            assert c.call("DEL", "key:%d" % i) == (":", 1)
        assert c.call("SELECT", "5") == ("+", b"OK")
        for i in range(10):
            assert c.call("INCR", "counter") == (":", i + 1)
    assert s.kill9() == -9
    s.start(retries=0)
    c = s.client()
    try:
        assert c.dbsize() == 1950 + 100
        vals = c.mget(["key:%d" % i for i in range(2000)])
        assert vals[:50] == [None] * 50
        assert vals[50:] == ["value:%d" % i for i in range(50, 2000)]
        assert all(990 <= c.ttl("exp:%d" % i) <= 1000 for i in range(0, 100, 9))
        c5 = s.client(db=5)
        assert c5.get("counter") == "10" and c5.dbsize() == 1
        c5.close()
    finally:
        c.close()
    raw = s.client(callbacks=False)
    try:
        lines = raw.execute_command("INFO", "keyspace").split("\r\n")
    finally:
        raw.close()
    assert lines[0] == "# Keyspace"
    assert re.match(r"^db0:keys=2050,expires=100,avg_ttl=\d+$", lines[1]), lines
    assert lines[2] == "db5:keys=1,expires=0,avg_ttl=0", lines


def test_kill9_then_sigterm_cycle(start_server):
    s = start_server(args=[("durability", "sync")], name="cycle")
    for rnd in range(3):
        c = s.client()
        assert c.incr("rounds") == rnd + 1
        c.set("r%d" % rnd, rnd)
        c.close()
        if rnd % 2 == 0:
            s.kill9()
            s.start(retries=0)
        else:
            s.restart()
    c = s.client()
    raw = s.client(callbacks=False)
    try:
        assert c.get("rounds") == "3"
        assert c.mget("r0", "r1", "r2") == ["0", "1", "2"]
        persistence = parse_info(raw.execute_command("INFO", "persistence"))["persistence"]
        assert persistence["loading"] == "0"
    finally:
        c.close()
        raw.close()
