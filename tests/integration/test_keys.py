"""Keyspace commands: DEL/EXISTS/TYPE, expiry, RENAME/COPY/MOVE/SWAPDB,
KEYS/SCAN, OBJECT ENCODING, DBSIZE/FLUSH*, SELECT, lazy/active expiry."""
import time

import pytest

from helpers import arity, raises, wait_until

SYNTAX = "ERR syntax error"
NOT_INT = "ERR value is not an integer or out of range"
DB_RANGE = "ERR DB index is out of range"
NO_KEY = "ERR no such key"
NX_XX = "ERR NX and XX, GT or LT options at the same time are not compatible"
GT_LT = "ERR GT and LT options at the same time are not compatible"
FAR_FUTURE = 4000000000  # seconds since the epoch, year 2096


# --------------------------------------------------------------------------
# DEL / UNLINK / EXISTS / TYPE / TOUCH
# --------------------------------------------------------------------------
@pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
def test_del_unlink(r, cmd):
    r.mset({"a": 1, "b": 2, "c": 3})
    assert r.execute_command(cmd, "a", "a", "nokey", "b") == 2
    assert r.execute_command(cmd, "a") == 0
    assert r.keys("*") == ["c"]
    raises(r, arity(cmd.lower()), cmd)


def test_exists_counts_duplicates(r):
    r.set("a", 1)
    assert r.exists("a") == 1
    assert r.exists("a", "a", "nokey", "a") == 3
    assert r.exists("nokey") == 0
    raises(r, arity("exists"), "EXISTS")


def test_type(r):
    r.set("s", "x")
    assert r.type("s") == "string"
    assert r.type("nokey") == "none"
    raises(r, arity("type"), "TYPE")


def test_touch(r):
    r.set("a", 1)
    assert r.touch("a", "a", "nokey") == 2
    raises(r, arity("touch"), "TOUCH")


# --------------------------------------------------------------------------
# EXPIRE family
# --------------------------------------------------------------------------
def test_ttl_pttl_missing_and_persistent(r):
    assert r.ttl("nokey") == -2
    assert r.pttl("nokey") == -2
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.pttl("k") == -1


def test_expire_and_pexpire(r):
    r.set("k", "v")
    assert r.expire("k", 100) is True
    assert r.ttl("k") in range(98, 101)
    assert r.pexpire("k", 50000) is True
    assert 49000 < r.pttl("k") <= 50000
    assert r.expire("nokey", 100) is False


def test_expireat_pexpireat(r):
    r.set("k", "v")
    assert r.execute_command("EXPIREAT", "k", FAR_FUTURE) == 1
    assert r.expiretime("k") == FAR_FUTURE
    assert r.pexpiretime("k") == FAR_FUTURE * 1000
    assert r.execute_command("PEXPIREAT", "k", FAR_FUTURE * 1000 + 123) == 1
    assert r.pexpiretime("k") == FAR_FUTURE * 1000 + 123
    assert r.expiretime("k") == FAR_FUTURE  # ms / 1000, truncated
    assert r.execute_command("EXPIREAT", "nokey", FAR_FUTURE) == 0


def test_ttl_and_expiretime_round_to_nearest_second(r):
    # Redis computes (ms + 500) / 1000, it does not truncate.
    r.execute_command("SET", "a", "v", "PX", 1800)
    r.execute_command("SET", "b", "v", "PX", 1300)
    r.execute_command("SET", "c", "v", "PX", 300)
    assert r.ttl("a") == 2
    assert r.ttl("b") == 1
    assert r.ttl("c") == 0
    r.execute_command("SET", "d", "v", "PXAT", FAR_FUTURE * 1000 + 999)
    assert r.expiretime("d") == FAR_FUTURE + 1
    r.execute_command("SET", "d", "v", "PXAT", FAR_FUTURE * 1000 + 499)
    assert r.expiretime("d") == FAR_FUTURE


def test_expiretime_missing_and_persistent(r):
    assert r.expiretime("nokey") == -2
    assert r.pexpiretime("nokey") == -2
    r.set("k", "v")
    assert r.expiretime("k") == -1
    assert r.pexpiretime("k") == -1


@pytest.mark.parametrize("cmd,arg", [
    ("EXPIRE", 0), ("EXPIRE", -5), ("PEXPIRE", 0), ("PEXPIRE", -9223372036854775808),
    ("EXPIREAT", 1), ("PEXPIREAT", 1), ("EXPIREAT", 0),
])
def test_expire_in_the_past_deletes(r, cmd, arg):
    r.set("k", "v")
    assert r.execute_command(cmd, "k", arg) == 1
    assert r.exists("k") == 0
    assert r.get("k") is None


def test_expire_nx_xx(r):
    r.set("k", "v")
    assert r.execute_command("EXPIRE", "k", 50, "XX") == 0  # no TTL yet
    assert r.ttl("k") == -1
    assert r.execute_command("EXPIRE", "k", 50, "NX") == 1
    assert r.execute_command("EXPIRE", "k", 60, "NX") == 0
    assert r.ttl("k") in range(48, 51)
    assert r.execute_command("EXPIRE", "k", 200, "XX") == 1
    assert r.ttl("k") in range(198, 201)


def test_expire_gt_lt(r):
    r.set("k", "v")
    # A key without TTL counts as an infinite TTL: GT fails, LT succeeds.
    assert r.execute_command("EXPIRE", "k", 100, "GT") == 0
    assert r.ttl("k") == -1
    assert r.execute_command("EXPIRE", "k", 100, "LT") == 1
    assert r.execute_command("EXPIRE", "k", 50, "GT") == 0
    assert r.execute_command("EXPIRE", "k", 200, "GT") == 1
    assert r.execute_command("EXPIRE", "k", 300, "LT") == 0
    assert r.execute_command("EXPIRE", "k", 50, "LT") == 1
    assert r.ttl("k") in range(48, 51)
    assert r.execute_command("PEXPIRE", "k", 10000, "LT") == 1
    assert r.execute_command("PEXPIREAT", "k", 1, "GT") == 0
    assert r.exists("k") == 1


def test_expire_gt_lt_on_negative_ttl(r):
    r.set("k", "v")
    assert r.execute_command("EXPIRE", "k", 0, "GT") == 0
    assert r.exists("k") == 1
    assert r.execute_command("EXPIRE", "k", -1, "LT") == 1
    assert r.exists("k") == 0
    r.execute_command("SET", "k", "v", "EX", 100)
    assert r.execute_command("EXPIRE", "k", 0, "XX") == 1
    assert r.exists("k") == 0


def test_expire_duplicate_flag_is_accepted(r):
    r.set("k", "v")
    assert r.execute_command("EXPIRE", "k", 10, "NX", "NX") == 1


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
def test_expire_option_errors(r, cmd):
    r.set("k", "v")
    raises(r, NX_XX, cmd, "k", 10, "NX", "XX")
    raises(r, NX_XX, cmd, "k", 10, "XX", "NX")
    raises(r, NX_XX, cmd, "k", 10, "NX", "GT")
    raises(r, NX_XX, cmd, "k", 10, "LT", "NX")
    raises(r, NX_XX, cmd, "k", 10, "GT", "LT", "NX")
    raises(r, GT_LT, cmd, "k", 10, "GT", "LT")
    raises(r, "ERR Unsupported option foo", cmd, "k", 10, "foo")
    raises(r, "ERR Unsupported option BAR", cmd, "k", 10, "NX", "BAR")
    raises(r, NOT_INT, cmd, "k", "abc")
    raises(r, NOT_INT, cmd, "k", "1.5")
    raises(r, arity(cmd.lower()), cmd, "k")
    assert r.ttl("k") == -1


def test_expire_options_are_checked_before_the_time(r):
    r.set("k", "v")
    raises(r, GT_LT, "EXPIRE", "k", "abc", "GT", "LT")
    raises(r, NX_XX, "PEXPIREAT", "k", "abc", "NX", "XX")
    raises(r, "ERR Unsupported option foo", "EXPIRE", "k", "abc", "foo")
    raises(r, GT_LT, "EXPIRE", "nokey", "abc", "GT", "LT")


@pytest.mark.parametrize("cmd,arg", [
    ("EXPIRE", 9223372036854775807), ("EXPIRE", 9223372036854775),
    ("EXPIRE", -9223372036854775808), ("PEXPIRE", 9223372036854775807),
    ("EXPIREAT", 9223372036854775807), ("EXPIREAT", 9223372036854775806),
    ("PEXPIRE", 9223372036850000000),
])
def test_expire_overflow_is_invalid_expire_time(r, cmd, arg):
    r.set("k", "v")
    raises(r, "ERR invalid expire time in '%s' command" % cmd.lower(), cmd, "k", arg)
    assert r.ttl("k") == -1


def test_pexpireat_int64_max_is_accepted(r):
    # Absolute ms times are not offset by "now", so no overflow check fires.
    r.set("k", "v")
    assert r.execute_command("PEXPIREAT", "k", 9223372036854775806) == 1
    assert r.pexpiretime("k") == 9223372036854775806
    assert r.execute_command("EXPIREAT", "k", 9223372036854775) == 1
    assert r.expiretime("k") == 9223372036854775


def test_persist(r):
    assert r.persist("nokey") is False
    r.set("k", "v")
    assert r.persist("k") is False
    r.expire("k", 100)
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.persist("k") is False


# --------------------------------------------------------------------------
# RENAME / RENAMENX / COPY / MOVE / SWAPDB
# --------------------------------------------------------------------------
def test_rename(r):
    r.set("a", "1")
    r.execute_command("SET", "b", "2", "EX", 100)
    assert r.rename("b", "c") is True
    assert r.get("c") == "2" and r.exists("b") == 0
    assert r.ttl("c") in range(98, 101)  # TTL travels with the value
    r.expire("a", 500)
    assert r.rename("c", "a") is True  # overwrites the destination and its TTL
    assert r.get("a") == "2" and r.ttl("a") in range(98, 101)
    r.set("p", "x")
    r.rename("a", "p")
    assert r.get("p") == "2" and r.ttl("p") in range(98, 101)


def test_rename_to_itself(r):
    r.execute_command("SET", "k", "v", "EX", 100)
    assert r.rename("k", "k") is True
    assert r.get("k") == "v" and r.ttl("k") in range(98, 101)


def test_rename_errors(r):
    raises(r, NO_KEY, "RENAME", "nokey", "x")
    raises(r, NO_KEY, "RENAME", "nokey", "nokey")
    raises(r, NO_KEY, "RENAMENX", "nokey", "x")
    raises(r, arity("rename"), "RENAME", "a")
    raises(r, arity("renamenx"), "RENAMENX", "a")


def test_renamenx(r):
    r.set("a", "1")
    r.set("b", "2")
    assert r.renamenx("a", "b") is False
    assert r.get("a") == "1" and r.get("b") == "2"
    assert r.renamenx("a", "a") is False
    assert r.renamenx("a", "c") is True
    assert r.get("c") == "1" and r.exists("a") == 0


def test_copy(r):
    r.execute_command("SET", "a", "1", "EX", 100)
    assert r.execute_command("COPY", "a", "b") == 1
    assert r.get("b") == "1" and r.ttl("b") in range(98, 101)
    assert r.get("a") == "1"
    r.set("b", "x")
    assert r.execute_command("COPY", "a", "b") == 0
    assert r.get("b") == "x"
    assert r.execute_command("COPY", "a", "b", "REPLACE") == 1
    assert r.get("b") == "1"
    assert r.execute_command("COPY", "nokey", "c") == 0
    assert r.exists("c") == 0
    assert r.execute_command("COPY", "a", "b", "REPLACE", "REPLACE") == 1


def test_copy_to_db(server, r):
    r.set("a", "1")
    assert r.execute_command("COPY", "a", "a", "DB", 3) == 1
    other = server.client(db=3)
    try:
        assert other.get("a") == "1"
        other.set("b", "x")
        assert r.execute_command("COPY", "a", "b", "DB", 3) == 0
        assert r.execute_command("COPY", "a", "b", "DB", 3, "REPLACE") == 1
        assert other.get("b") == "1"
    finally:
        other.close()
    assert r.exists("b") == 0


def test_copy_errors(r):
    r.set("k", "v")
    raises(r, "ERR source and destination objects are the same", "COPY", "k", "k")
    raises(r, "ERR source and destination objects are the same", "COPY", "k", "k", "DB", 0)
    raises(r, DB_RANGE, "COPY", "k", "x", "DB", 16)
    raises(r, DB_RANGE, "COPY", "k", "x", "DB", -1)
    raises(r, NOT_INT, "COPY", "k", "x", "DB", "abc")
    raises(r, SYNTAX, "COPY", "k", "x", "foo")
    raises(r, SYNTAX, "COPY", "k", "x", "DB")
    raises(r, arity("copy"), "COPY", "k")


def test_move(server, r):
    r.execute_command("SET", "a", "1", "EX", 100)
    assert r.move("a", 1) is True
    assert r.exists("a") == 0
    other = server.client(db=1)
    try:
        assert other.get("a") == "1" and other.ttl("a") in range(98, 101)
        r.set("b", "mine")
        other.set("b", "theirs")
        assert r.move("b", 1) is False  # destination exists
        assert r.get("b") == "mine" and other.get("b") == "theirs"
        assert r.move("nokey", 1) is False
    finally:
        other.close()


def test_move_errors(r):
    r.set("k", "v")
    raises(r, "ERR source and destination objects are the same", "MOVE", "k", 0)
    raises(r, "ERR source and destination objects are the same", "MOVE", "nokey", 0)
    raises(r, DB_RANGE, "MOVE", "k", 16)
    raises(r, DB_RANGE, "MOVE", "k", -1)
    raises(r, NOT_INT, "MOVE", "k", "abc")
    raises(r, arity("move"), "MOVE", "k")


def test_swapdb(server, r):
    r.set("a", "db0")
    other = server.client(db=1)
    try:
        other.set("b", "db1")
        assert r.swapdb(0, 1) is True
        # Connections stay on their DB number and see the swapped data.
        assert r.keys("*") == ["b"] and r.get("b") == "db1"
        assert other.keys("*") == ["a"] and other.get("a") == "db0"
        assert r.swapdb(1, 1) is True
        assert r.swapdb(1, 0) is True
        assert r.get("a") == "db0"
    finally:
        other.close()


def test_swapdb_errors(r):
    raises(r, DB_RANGE, "SWAPDB", 0, 16)
    raises(r, DB_RANGE, "SWAPDB", -1, 0)
    raises(r, "ERR invalid first DB index", "SWAPDB", "a", 1)
    raises(r, "ERR invalid second DB index", "SWAPDB", 0, "a")
    raises(r, arity("swapdb"), "SWAPDB", 0)


# --------------------------------------------------------------------------
# KEYS / SCAN / RANDOMKEY
# --------------------------------------------------------------------------
GLOB_KEYS = ["hello", "hallo", "hxllo", "hllo", "heeeello", "a*b", "a?b", "a[b", "a\\b",
             "ab", "abc", "b1", "c1", "d1", "h", "h!llo"]


@pytest.mark.parametrize("pattern,expected", [
    ("*", GLOB_KEYS),
    ("h?llo", ["hallo", "hello", "hxllo", "h!llo"]),
    ("h*llo", ["hallo", "heeeello", "hello", "hllo", "hxllo", "h!llo"]),
    ("h[ae]llo", ["hallo", "hello"]),
    ("h[^e]llo", ["hallo", "hxllo", "h!llo"]),
    ("h[a-b]llo", ["hallo"]),
    ("h[!e]llo", ["hello", "h!llo"]),  # '!' is literal, only '^' negates
    ("[a-c]1", ["b1", "c1"]),
    ("[c-a]1", ["b1", "c1"]),  # reversed ranges are accepted
    ("[^a-c]1", ["d1"]),
    ("a\\*b", ["a*b"]),
    ("a\\?b", ["a?b"]),
    ("a\\[b", ["a[b"]),
    ("a\\\\b", ["a\\b"]),
    ("?", ["h"]),
    ("H*", []),  # case-sensitive
    ("*[1]", ["b1", "c1", "d1"]),
    ("nomatch*", []),
])
def test_keys_glob(r, pattern, expected):
    r.mset({k: "1" for k in GLOB_KEYS})
    assert sorted(r.keys(pattern)) == sorted(expected)


def test_keys_only_current_db_and_skips_expired(server, r):
    r.set("a", 1)
    r.execute_command("SET", "gone", 1, "PX", 1)
    other = server.client(db=5)
    other.set("b", 1)
    other.close()
    time.sleep(0.05)
    assert r.keys("*") == ["a"]
    raises(r, arity("keys"), "KEYS")


def _full_scan(r, **kw):
    cursor, seen, rounds = 0, [], 0
    while True:
        cursor, batch = r.scan(cursor, **kw)
        seen.extend(batch)
        rounds += 1
        assert rounds < 10000
        if cursor == 0:
            return seen


def test_scan_iterates_everything(r):
    keys = {"key:%d" % i for i in range(500)}
    r.mset({k: "v" for k in keys})
    seen = _full_scan(r, count=17)
    assert set(seen) == keys
    assert len(seen) >= len(keys)  # SCAN may repeat a key, never miss one


def test_scan_match_and_type(r):
    r.mset({"user:%d" % i: "x" for i in range(50)})
    r.mset({"other:%d" % i: "x" for i in range(50)})
    assert set(_full_scan(r, match="user:*", count=10)) == {"user:%d" % i for i in range(50)}
    assert set(_full_scan(r, match="user:1?")) == {"user:%d" % i for i in range(10, 20)}
    assert len(set(_full_scan(r, _type="string"))) == 100
    assert _full_scan(r, _type="list") == []
    assert _full_scan(r, _type="nosuchtype") == []
    reply = r.execute_command("SCAN", 0, "MATCH", "*", "COUNT", 1000, "TYPE", "string")
    assert reply[0] == 0 and len(reply[1]) == 100


def test_scan_reply_shape_raw(server, r):
    from resp import RawConn
    r.set("a", 1)
    with RawConn(server.port) as c:
        assert c.call("SCAN", "0") == ("*", [("$", b"0"), ("*", [("$", b"a")])])


def test_scan_errors(r):
    raises(r, "ERR invalid cursor", "SCAN", "abc")
    raises(r, "ERR invalid cursor", "SCAN", "18446744073709551616")
    raises(r, SYNTAX, "SCAN", 0, "COUNT", 0)
    raises(r, SYNTAX, "SCAN", 0, "COUNT", -1)
    raises(r, NOT_INT, "SCAN", 0, "COUNT", "abc")
    raises(r, SYNTAX, "SCAN", 0, "foo")
    raises(r, SYNTAX, "SCAN", 0, "MATCH")
    raises(r, arity("scan"), "SCAN")


def test_randomkey(r):
    assert r.randomkey() is None
    r.set("only", 1)
    assert r.randomkey() == "only"
    r.mset({"k%d" % i: 1 for i in range(20)})
    keys = set(r.keys("*"))
    assert all(r.randomkey() in keys for _ in range(50))
    raises(r, arity("randomkey"), "RANDOMKEY", "x")


# --------------------------------------------------------------------------
# OBJECT ENCODING
# --------------------------------------------------------------------------
@pytest.mark.parametrize("value,encoding", [
    ("1", "int"), ("-5", "int"), ("9223372036854775807", "int"), ("0", "int"),
    ("abc", "embstr"), ("12345678901234567890", "embstr"), ("01", "embstr"),
    (" 1", "embstr"), ("x" * 44, "embstr"), ("x" * 45, "raw"), ("y" * 1000, "raw"),
])
def test_object_encoding(r, value, encoding):
    r.set("k", value)
    assert r.object("encoding", "k") == encoding


def test_object_encoding_after_modification(r):
    r.set("n", 10)
    r.incr("n")
    assert r.object("encoding", "n") == "int"
    r.setrange("w", 0, "5")
    assert r.object("encoding", "w") == "raw"  # SETRANGE/APPEND results are raw
    r.set("a", "abc")
    r.append("a", "d")
    assert r.object("encoding", "a") == "raw"


def test_object_refcount_shows_redis_shared_integers(r):
    """Redis holds the integers 0-9999 as shared objects (refcount INT_MAX) unless a maxmemory
    limit with an LRU or LFU policy is set; every other value is its key's alone."""
    shared = 2147483647
    r.set("zero", 0)
    r.set("small", 9999)
    r.incr("counter")
    r.set("large", 10000)
    r.set("negative", -1)
    r.set("text", "abc")
    r.rpush("list", "1")
    assert [r.object("refcount", k) for k in ("zero", "small", "counter")] == [shared] * 3
    assert [r.object("refcount", k) for k in ("large", "negative", "text", "list")] == [1] * 4
    policy = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        r.config_set("maxmemory", "1gb")
        r.config_set("maxmemory-policy", "allkeys-lru")
        r.set("under-lru", 5)
        assert r.object("refcount", "under-lru") == 1
        r.config_set("maxmemory-policy", "allkeys-random")
        r.set("under-random", 5)
        assert r.object("refcount", "under-random") == shared
    finally:
        r.config_set("maxmemory", "0")
        r.config_set("maxmemory-policy", policy)


def test_object_encoding_of_large_collections(r):
    """Collections past Redis's compact-encoding limits report its large encodings."""
    r.hset("h", mapping={"f%d" % i: "v" for i in range(600)})
    r.sadd("s", *["m%d" % i for i in range(600)])
    r.zadd("z", {"m%d" % i: i for i in range(600)})
    r.rpush("l", *["element-%06d" % i for i in range(600)])  # over one 8 KiB node
    assert [r.object("encoding", k) for k in ("h", "s", "z", "l")] == [
        "hashtable", "hashtable", "skiplist", "quicklist"]


def test_object_encoding_of_small_hashes_and_sorted_sets_follows_the_thresholds(r):
    r.hset("h", mapping={"f%d" % i: "v" for i in range(10)})
    r.zadd("z", {"m%d" % i: i for i in range(10)})
    assert [r.object("encoding", k) for k in ("h", "z")] == ["listpack", "listpack"]
    r.hset("h", "long", "x" * 65)  # over hash-max-listpack-value
    r.zadd("z", {"y" * 65: 1})  # over zset-max-listpack-value
    assert [r.object("encoding", k) for k in ("h", "z")] == ["hashtable", "skiplist"]
    r.config_set("hash-max-listpack-entries", 5)
    r.config_set("zset-max-listpack-entries", 5)
    r.hset("h2", mapping={"f%d" % i: "v" for i in range(6)})
    r.zadd("z2", {"m%d" % i: i for i in range(6)})
    try:
        assert [r.object("encoding", k) for k in ("h2", "z2")] == ["hashtable", "skiplist"]
    finally:
        r.config_set("hash-max-listpack-entries", 512)
        r.config_set("zset-max-listpack-entries", 128)


@pytest.mark.basalt_only(reason="Redis 7.2's encodings; 7.0 has no listpack sets or lists")
def test_object_encoding_of_small_sets_and_lists_follows_the_thresholds(r):
    r.sadd("ints", *range(10))
    r.sadd("words", "a", "b")
    r.sadd("long", "x" * 65)
    assert [r.object("encoding", k) for k in ("ints", "words", "long")] == [
        "intset", "listpack", "hashtable"]
    r.rpush("l", "a", "bb", 3)
    assert r.object("encoding", "l") == "listpack"
    r.rpush("l", "x" * 9000)  # past one 8 KiB node (list-max-listpack-size -2)
    assert r.object("encoding", "l") == "quicklist"
    r.config_set("list-max-listpack-size", 4)
    try:
        r.rpush("l4", 1, 2, 3, 4)
        assert r.object("encoding", "l4") == "listpack"
        r.rpush("l4", 5)
        assert r.object("encoding", "l4") == "quicklist"
    finally:
        r.config_set("list-max-listpack-size", -2)


def test_a_set_keeps_the_hashtable_encoding_when_it_shrinks(r):
    # Redis converts sets only upwards: once a hashtable, always a hashtable.
    r.sadd("words", *["w%d" % i for i in range(200)])  # over set-max-listpack-entries
    r.sadd("ints", *range(600))  # over set-max-intset-entries
    r.sadd("long", "x" * 65, "y")  # over set-max-listpack-value
    r.srem("words", *["w%d" % i for i in range(2, 200)])
    r.srem("ints", *range(3, 600))
    r.srem("long", "x" * 65)
    assert [r.object("encoding", k) for k in ("words", "ints", "long")] == ["hashtable"] * 3


@pytest.mark.basalt_only(reason="Redis 7.2's encodings; 7.0 has no listpack sets")
def test_a_set_given_a_non_integer_member_is_no_longer_an_intset(r):
    r.sadd("s", 1, 2, 3)
    r.sadd("s", "a")
    r.srem("s", "a")
    assert r.object("encoding", "s") == "listpack"
    r.sadd("src", "a", 1)
    r.sadd("dst", 2)
    r.smove("src", "dst", "a")
    r.srem("dst", "a")
    r.sadd("x", "b", 1, 2)
    r.sunionstore("stored", "x")
    r.srem("stored", "b")
    assert [r.object("encoding", k) for k in ("dst", "stored")] == ["listpack", "listpack"]
    # Only what was added counts: a set that was never more than integers stays an intset.
    r.sadd("plain", 5, 6)
    r.srem("plain", 5)
    assert r.object("encoding", "plain") == "intset"


def test_object_errors(r):
    assert r.object("encoding", "nokey") is None
    raises(r, "ERR unknown subcommand 'foo'. Try OBJECT HELP.", "OBJECT", "foo", "k")
    raises(r, "ERR wrong number of arguments for 'object|encoding' command",
           "OBJECT", "ENCODING")
    raises(r, arity("object"), "OBJECT")


# --------------------------------------------------------------------------
# DBSIZE / FLUSHDB / FLUSHALL / SELECT
# --------------------------------------------------------------------------
def test_dbsize(r):
    assert r.dbsize() == 0
    r.mset({"a": 1, "b": 2})
    assert r.dbsize() == 2
    r.delete("a")
    assert r.dbsize() == 1


def test_flushdb_only_current_db(server, r):
    r.set("a", 1)
    other = server.client(db=2)
    try:
        other.set("b", 1)
        assert r.flushdb() is True
        assert r.dbsize() == 0 and other.dbsize() == 1
        assert r.execute_command("FLUSHDB", "ASYNC") is True
        assert r.execute_command("FLUSHDB", "SYNC") is True
        raises(r, SYNTAX, "FLUSHDB", "foo")
        raises(r, SYNTAX, "FLUSHDB", "ASYNC", "SYNC")
    finally:
        other.close()


def test_flushall_every_db(server, r):
    clients = [server.client(db=i) for i in range(16)]
    try:
        for i, c in enumerate(clients):
            c.set("k%d" % i, i)
        assert r.flushall() is True
        assert all(c.dbsize() == 0 for c in clients)
        assert r.execute_command("FLUSHALL", "SYNC") is True
        raises(r, SYNTAX, "FLUSHALL", "x")
    finally:
        for c in clients:
            c.close()


def test_select(r):
    r.set("k", "db0")
    assert r.execute_command("SELECT", 15) is True
    assert r.get("k") is None
    r.set("k", "db15")
    r.execute_command("SELECT", 0)
    assert r.get("k") == "db0"


@pytest.mark.parametrize("arg,err", [(16, DB_RANGE), (-1, DB_RANGE), (100, DB_RANGE),
                                     ("abc", NOT_INT), ("1.5", NOT_INT)])
def test_select_errors(r, arg, err):
    raises(r, err, "SELECT", arg)


# --------------------------------------------------------------------------
# expiry in action
# --------------------------------------------------------------------------
def test_lazy_expiry_get_exists(r):
    # A second of life, so that a slow machine still reads the key before it expires.
    r.execute_command("SET", "k", "v", "PX", 1000)
    r.execute_command("SET", "keep", "v")
    assert r.get("k") == "v"
    time.sleep(1.1)
    assert r.get("k") is None
    assert r.exists("k") == 0
    assert r.ttl("k") == -2
    assert r.type("k") == "none"


def test_lazy_expiry_dbsize_eventually(r):
    r.mset({"keep%d" % i: 1 for i in range(3)})
    for i in range(5):
        r.execute_command("SET", "tmp%d" % i, "v", "PX", 100)
    assert r.dbsize() == 8
    time.sleep(0.2)
    # DBSIZE may still count expired keys until they are reclaimed by
    # active expiry; it must converge within ~2 s without touching them.
    assert wait_until(lambda: r.dbsize() == 3, timeout=2.0)


def test_expired_key_not_in_scan_or_randomkey(r):
    r.execute_command("SET", "k", "v", "PX", 50)
    time.sleep(0.15)
    assert _full_scan(r) == []
    assert r.randomkey() is None


def test_expired_key_can_be_recreated(r):
    r.execute_command("SET", "k", "v", "PX", 50)
    time.sleep(0.15)
    assert r.execute_command("SET", "k", "w", "NX") is True
    assert r.ttl("k") == -1
    assert r.incr("n") == 1
    r.execute_command("SET", "c", "5", "PX", 50)
    time.sleep(0.15)
    assert r.incr("c") == 1


def test_randomkey_of_a_small_database_returns_each_key(r):
    """Uniform over a few keys: 200 draws of two keys miss one with probability 2**-199."""
    r.set("foo", "x")
    r.set("bar", "y")
    seen = {r.randomkey() for _ in range(200)}
    assert seen == {"foo", "bar"}


# --------------------------------------------------------------------------
# Changes since the last save, counted as Redis counts them
# --------------------------------------------------------------------------
COUNTED_CHANGES = [
    (("RPUSH", "l", "a", "b", "c"), 3), (("LPUSH", "l", "x", "y"), 2),
    (("RPUSHX", "l", "z", "w"), 2), (("LPUSHX", "absent", "a"), 0), (("LPOP", "l", "2"), 2),
    (("RPOP", "l"), 1), (("RPUSH", "l", "a", "a", "a"), 3), (("LREM", "l", "0", "a"), 4),
    (("LREM", "l", "0", "nothing"), 0), (("LTRIM", "l", "0", "0"), 2),
    (("LTRIM", "l", "0", "-1"), 0), (("RPUSH", "l2", "p", "q"), 2),
    (("LMOVE", "l2", "l3", "LEFT", "RIGHT"), 1), (("RPOPLPUSH", "l2", "l2"), 1),
    (("SADD", "s", "a", "b", "c"), 3), (("SADD", "s", "a"), 0), (("SADD", "s", "a", "d"), 1),
    (("SREM", "s", "a", "b", "zz"), 2), (("SMOVE", "s", "s2", "c"), 2),
    (("SADD", "s", "e", "f"), 2), (("SPOP", "s", "2"), 2),
    (("HSET", "h", "f1", "v", "f2", "v"), 2), (("HSET", "h", "f1", "v"), 1),
    (("HDEL", "h", "f1", "f2", "nof"), 2), (("HDEL", "h", "nof"), 0),
    (("ZADD", "z", "1", "a", "2", "b"), 2), (("ZADD", "z", "1", "a"), 0),
    (("ZADD", "z", "3", "a", "4", "c"), 2), (("ZREM", "z", "a", "b", "no"), 2),
    (("ZADD", "z", "1", "a", "2", "b", "3", "d"), 3), (("ZPOPMIN", "z", "2"), 2),
    (("GEOADD", "g", "13.36", "38.11", "p", "15.08", "37.50", "q"), 2),
    (("MSET", "k1", "1", "k2", "2"), 2), (("DEL", "k1", "k2", "k3"), 2),
    (("SET", "a", "1"), 1), (("RENAME", "a", "b"), 1), (("SET", "a", "2"), 1),
    (("RENAME", "a", "b"), 1), (("XADD", "x", "1-1", "f", "v"), 1),
    (("XADD", "x", "2-1", "f", "v"), 1), (("XDEL", "x", "1-1", "2-1"), 2),
    (("ZADD", "zr", "1", "a", "2", "b", "3", "c", "4", "d"), 4),
    (("ZREMRANGEBYSCORE", "zr", "1", "2"), 2), (("ZREMRANGEBYRANK", "zr", "0", "0"), 1),
    (("ZREMRANGEBYLEX", "zr", "-", "+"), 1), (("ZREMRANGEBYLEX", "zr", "-", "+"), 0),
    (("XADD", "x", "3-1", "f", "v"), 1), (("XADD", "x", "4-1", "f", "v"), 1),
    (("XADD", "x", "5-1", "f", "v"), 1), (("XTRIM", "x", "MAXLEN", "1"), 2),
    (("XADD", "x", "MAXLEN", "1", "6-1", "f", "v"), 1),
    (("XGROUP", "CREATE", "x", "g", "0"), 1), (("XGROUP", "SETID", "x", "g", "0"), 1),
    (("XGROUP", "CREATECONSUMER", "x", "g", "c"), 1),
    (("XGROUP", "CREATECONSUMER", "x", "g", "c"), 0),
    (("XGROUP", "DELCONSUMER", "x", "g", "c"), 1),
    (("RPUSH", "sl", "3", "1", "2"), 3), (("SORT", "sl", "STORE", "sd"), 3),
    (("GEOSEARCHSTORE", "gd", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"), 2),
    (("GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gd"), 2),
    (("PFADD", "hll", "a", "b"), 3), (("PFADD", "hll", "a"), 0), (("PFADD", "hll2"), 1),
    (("SELECT", "9"), 0), (("MSET", "f1", "1", "f2", "2"), 2), (("FLUSHDB",), 2),
]


def test_changes_since_the_last_save_count_as_redis_counts_them(r):
    """rdb_changes_since_last_save (and so the save points) grows by Redis's count for each
    command: one per element pushed, popped, added, removed or stored, one for a move or rename,
    one per key a flush removes."""
    def changes():
        return r.info("persistence")["rdb_changes_since_last_save"]

    for command, expected in COUNTED_CHANGES:
        before = changes()
        r.execute_command(*command)
        assert (command, changes() - before) == (command, expected)
