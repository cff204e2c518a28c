"""Hash commands (Redis 7.0 semantics): HSET family, reads, counters, HSCAN, HRANDFIELD.

Replies are checked through `rr` (no redis-py callbacks) so their exact shape is pinned;
RESP3 shapes through a raw connection after HELLO 3.
"""
import time

import pytest

from helpers import arity, raises

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX = "ERR syntax error"
NOT_INT = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
RANGE_LONG = ("ERR value is out of range, value must between -9223372036854775807 and "
              "9223372036854775807")


def pairs(flat):
    return dict(zip(flat[::2], flat[1::2]))


def hset_args(fields):
    args = []
    for k, v in fields.items():
        args += [k, v]
    return args


# --------------------------------------------------------------------------
# HSET / HMSET / HSETNX / HGET / HMGET
# --------------------------------------------------------------------------
def test_hset_counts_new_fields(rr):
    assert rr.execute_command("HSET", "h", "a", "1", "b", "2") == 2
    assert rr.execute_command("HSET", "h", "a", "10", "c", "3") == 1
    assert rr.execute_command("HSET", "h", "d", "4", "d", "5") == 1  # named twice: once
    assert rr.execute_command("HGET", "h", "a") == "10"
    assert rr.execute_command("HGET", "h", "d") == "5"
    assert rr.execute_command("HLEN", "h") == 4
    assert rr.execute_command("TYPE", "h") == "hash"


def test_hset_wrong_arity(rr):
    raises(rr, arity("hset"), "HSET", "h", "a", "1", "b")
    raises(rr, arity("hset"), "HSET", "h", "a")
    raises(rr, arity("hset"), "HSET", "h")
    raises(rr, arity("hmset"), "HMSET", "h", "a", "1", "b")
    raises(rr, arity("hmset"), "HMSET", "h", "a")
    raises(rr, arity("hsetnx"), "HSETNX", "h", "a")
    raises(rr, arity("hget"), "HGET", "h")
    raises(rr, arity("hmget"), "HMGET", "h")
    raises(rr, arity("hdel"), "HDEL", "h")
    assert rr.execute_command("EXISTS", "h") == 0


def test_hmset_replies_ok(rr):
    assert rr.execute_command("HMSET", "h", "a", "1", "b", "2") == "OK"
    assert rr.execute_command("HMGET", "h", "a", "b", "c") == ["1", "2", None]
    assert rr.execute_command("HMGET", "nokey", "a", "b") == [None, None]


def test_hsetnx(rr):
    assert rr.execute_command("HSETNX", "h", "a", "1") == 1
    assert rr.execute_command("HSETNX", "h", "a", "2") == 0
    assert rr.execute_command("HGET", "h", "a") == "1"
    assert rr.execute_command("HGET", "h", "nope") is None
    assert rr.execute_command("HGET", "nokey", "a") is None


def test_binary_and_empty_fields(rr):
    assert rr.execute_command("HSET", "h", "", "empty", "a\x00b", "", "\r\n", "x" * 5000) == 3
    assert rr.execute_command("HGET", "h", "") == "empty"
    assert rr.execute_command("HGET", "h", "a\x00b") == ""
    assert rr.execute_command("HSTRLEN", "h", "\r\n") == 5000
    assert rr.execute_command("HEXISTS", "h", "a\x00b") == 1
    assert rr.execute_command("HEXISTS", "h", "a") == 0


def test_hash_keys_do_not_leak_into_each_other(rr):
    # "h", "hh" and "h\x00" share prefixes at the byte level.
    rr.execute_command("HSET", "h", "f", "1")
    rr.execute_command("HSET", "hh", "f", "2")
    rr.execute_command("HSET", "h\x00", "g", "3")
    assert rr.execute_command("HGETALL", "h") == ["f", "1"]
    assert rr.execute_command("HGETALL", "hh") == ["f", "2"]
    assert rr.execute_command("HGETALL", "h\x00") == ["g", "3"]
    assert rr.execute_command("HLEN", "h") == 1


# --------------------------------------------------------------------------
# HDEL / HLEN / HSTRLEN / HEXISTS
# --------------------------------------------------------------------------
def test_hdel(rr):
    rr.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert rr.execute_command("HDEL", "h", "a", "zz", "a") == 1
    assert rr.execute_command("HLEN", "h") == 2
    assert rr.execute_command("HDEL", "nokey", "a") == 0
    assert rr.execute_command("HDEL", "h", "b", "c") == 2
    assert rr.execute_command("EXISTS", "h") == 0  # empty hash is deleted
    assert rr.execute_command("HLEN", "h") == 0


def test_hstrlen_hexists_missing(rr):
    assert rr.execute_command("HSTRLEN", "nokey", "a") == 0
    assert rr.execute_command("HEXISTS", "nokey", "a") == 0
    rr.execute_command("HSET", "h", "a", "hello")
    assert rr.execute_command("HSTRLEN", "h", "a") == 5
    assert rr.execute_command("HSTRLEN", "h", "b") == 0


def test_recreated_hash_has_no_old_fields(rr):
    rr.execute_command("HSET", "h", "a", "1", "b", "2")
    rr.execute_command("DEL", "h")
    rr.execute_command("HSET", "h", "c", "3")
    assert rr.execute_command("HGETALL", "h") == ["c", "3"]
    rr.execute_command("SET", "h", "str")
    raises(rr, WRONGTYPE, "HGET", "h", "c")
    rr.execute_command("DEL", "h")
    assert rr.execute_command("HSET", "h", "d", "4") == 1
    assert rr.execute_command("HKEYS", "h") == ["d"]


# --------------------------------------------------------------------------
# WRONGTYPE
# --------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ("HSET", "s", "a", "1"), ("HMSET", "s", "a", "1"), ("HSETNX", "s", "a", "1"),
    ("HGET", "s", "a"), ("HMGET", "s", "a"), ("HDEL", "s", "a"), ("HLEN", "s"),
    ("HSTRLEN", "s", "a"), ("HEXISTS", "s", "a"), ("HINCRBY", "s", "a", "1"),
    ("HINCRBYFLOAT", "s", "a", "1"), ("HKEYS", "s"), ("HVALS", "s"), ("HGETALL", "s"),
    ("HSCAN", "s", "0"), ("HRANDFIELD", "s"), ("HRANDFIELD", "s", "2"),
    ("HRANDFIELD", "s", "-2", "WITHVALUES"),
])
def test_wrongtype(rr, args):
    rr.execute_command("SET", "s", "v")
    raises(rr, WRONGTYPE, *args)
    assert rr.execute_command("GET", "s") == "v"


def test_string_commands_on_hash(rr):
    rr.execute_command("HSET", "h", "a", "1")
    raises(rr, WRONGTYPE, "GET", "h")
    raises(rr, WRONGTYPE, "INCR", "h")
    raises(rr, WRONGTYPE, "SADD", "h", "x")
    assert rr.execute_command("SET", "h", "v") == "OK"  # SET overwrites any type
    assert rr.execute_command("GET", "h") == "v"


# --------------------------------------------------------------------------
# HINCRBY / HINCRBYFLOAT
# --------------------------------------------------------------------------
def test_hincrby(rr):
    assert rr.execute_command("HINCRBY", "h", "n", "5") == 5
    assert rr.execute_command("HINCRBY", "h", "n", "-7") == -2
    assert rr.execute_command("HGET", "h", "n") == "-2"
    rr.execute_command("HSET", "h", "s", "abc", "sp", " 1", "z", "007")
    raises(rr, "ERR hash value is not an integer", "HINCRBY", "h", "s", "1")
    raises(rr, "ERR hash value is not an integer", "HINCRBY", "h", "sp", "1")
    raises(rr, "ERR hash value is not an integer", "HINCRBY", "h", "z", "1")
    raises(rr, NOT_INT, "HINCRBY", "h", "n", "x")
    raises(rr, NOT_INT, "HINCRBY", "h", "n", "1.5")
    raises(rr, NOT_INT, "HINCRBY", "nokey", "n", "x")
    assert rr.execute_command("EXISTS", "nokey") == 0


def test_hincrby_overflow(rr):
    assert rr.execute_command("HINCRBY", "h", "n", "9223372036854775807") == 9223372036854775807
    raises(rr, "ERR increment or decrement would overflow", "HINCRBY", "h", "n", "1")
    rr.execute_command("HSET", "h", "m", "-9223372036854775808")
    raises(rr, "ERR increment or decrement would overflow", "HINCRBY", "h", "m", "-1")
    assert rr.execute_command("HINCRBY", "h", "m", "0") == -9223372036854775808


def test_hincrbyfloat(rr):
    assert rr.execute_command("HINCRBYFLOAT", "h", "f", "10.5") == "10.5"
    assert rr.execute_command("HINCRBYFLOAT", "h", "f", "0.1") == "10.6"
    assert rr.execute_command("HINCRBYFLOAT", "h", "f", "-5") == "5.6"
    assert rr.execute_command("HINCRBYFLOAT", "h", "g", "5.0e3") == "5000"
    assert rr.execute_command("HINCRBYFLOAT", "h", "g", "1e-3") == "5000.00099999999999989"
    rr.execute_command("HSET", "h", "i", "3")
    assert rr.execute_command("HINCRBYFLOAT", "h", "i", "1.5") == "4.5"
    rr.execute_command("HSET", "h", "s", "abc")
    raises(rr, "ERR hash value is not a float", "HINCRBYFLOAT", "h", "s", "1")
    raises(rr, NOT_FLOAT, "HINCRBYFLOAT", "h", "f", "abc")
    raises(rr, "ERR value is NaN or Infinity", "HINCRBYFLOAT", "h", "f", "inf")
    rr.execute_command("HSET", "h", "big", "1e4932")
    raises(rr, "ERR increment would produce NaN or Infinity", "HINCRBYFLOAT", "h", "big",
           "1e4932")
    assert rr.execute_command("HGET", "h", "big") == "1e4932"


# --------------------------------------------------------------------------
# HKEYS / HVALS / HGETALL
# --------------------------------------------------------------------------
def test_whole_hash_reads(rr):
    assert rr.execute_command("HKEYS", "nokey") == []
    assert rr.execute_command("HVALS", "nokey") == []
    assert rr.execute_command("HGETALL", "nokey") == []
    fields = {"f%d" % i: "v%d" % i for i in range(300)}
    assert rr.execute_command("HSET", "h", *hset_args(fields)) == 300
    assert sorted(rr.execute_command("HKEYS", "h")) == sorted(fields)
    assert sorted(rr.execute_command("HVALS", "h")) == sorted(fields.values())
    flat = rr.execute_command("HGETALL", "h")
    assert len(flat) == 600 and pairs(flat) == fields
    keys, vals = rr.execute_command("HKEYS", "h"), rr.execute_command("HVALS", "h")
    assert dict(zip(keys, vals)) == fields  # same order in both


def test_hgetall_resp3_is_a_map(server, r):
    r.execute_command("HSET", "h", "a", "1", "b", "2")
    with server.raw() as c:
        c.call("HELLO", "3")
        t, v = c.call("HGETALL", "h")
        assert t == "%"
        assert sorted(v) == [(("$", b"a"), ("$", b"1")), (("$", b"b"), ("$", b"2"))]
        assert c.call("HGETALL", "nokey") == ("%", [])
        assert c.call("HKEYS", "nokey") == ("*", [])
        assert c.call("HMGET", "nokey", "a") == ("*", [("_", None)])
        assert c.call("HGET", "h", "zz") == ("_", None)


# --------------------------------------------------------------------------
# HSCAN
# --------------------------------------------------------------------------
def full_hscan(rr, key, *opts):
    cursor, out, calls = "0", {}, 0
    while True:
        cursor, flat = rr.execute_command("HSCAN", key, cursor, *opts)
        out.update(pairs(flat))
        calls += 1
        assert calls < 10000
        if cursor == "0":
            return out


def test_hscan_small_and_missing(rr):
    assert rr.execute_command("HSCAN", "nokey", "0") == ["0", []]
    # a missing key is answered before the options are parsed
    assert rr.execute_command("HSCAN", "nokey", "0", "COUNT", "0") == ["0", []]
    rr.execute_command("HSET", "h", "a", "1", "b", "2")
    assert full_hscan(rr, "h") == {"a": "1", "b": "2"}
    assert full_hscan(rr, "h", "MATCH", "a*") == {"a": "1"}


def test_hscan_large_with_count_and_match(rr):
    fields = {"field:%d" % i: str(i) for i in range(500)}
    rr.execute_command("HSET", "h", *hset_args(fields))
    assert full_hscan(rr, "h") == fields
    assert full_hscan(rr, "h", "COUNT", "7") == fields
    assert full_hscan(rr, "h", "COUNT", "1000") == fields
    want = {k: v for k, v in fields.items() if k.startswith("field:1")}
    assert full_hscan(rr, "h", "MATCH", "field:1*", "COUNT", "50") == want


def test_hscan_errors(rr):
    rr.execute_command("HSET", "h", "a", "1")
    raises(rr, "ERR invalid cursor", "HSCAN", "h", "abc")
    raises(rr, "ERR invalid cursor", "HSCAN", "h", " 1")
    raises(rr, "ERR invalid cursor", "HSCAN", "h", "18446744073709551616")
    raises(rr, SYNTAX, "HSCAN", "h", "0", "COUNT", "0")
    raises(rr, NOT_INT, "HSCAN", "h", "0", "COUNT", "x")
    raises(rr, SYNTAX, "HSCAN", "h", "0", "MATCH")
    raises(rr, SYNTAX, "HSCAN", "h", "0", "FOO", "bar")
    raises(rr, arity("hscan"), "HSCAN", "h")


# --------------------------------------------------------------------------
# HRANDFIELD
# --------------------------------------------------------------------------
def test_hrandfield_single(rr):
    assert rr.execute_command("HRANDFIELD", "nokey") is None
    rr.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3")
    seen = {rr.execute_command("HRANDFIELD", "h") for _ in range(60)}
    assert seen <= {"a", "b", "c"} and len(seen) >= 2


@pytest.mark.parametrize("size", [3, 1000])
def test_hrandfield_counts(rr, size):
    fields = {"f%d" % i: "v%d" % i for i in range(size)}
    rr.execute_command("HSET", "h", *hset_args(fields))
    assert rr.execute_command("HRANDFIELD", "h", "0") == []
    got = rr.execute_command("HRANDFIELD", "h", "2")
    assert len(got) == 2 and len(set(got)) == 2 and set(got) <= set(fields)
    got = rr.execute_command("HRANDFIELD", "h", size + 5)
    assert sorted(got) == sorted(fields)
    got = rr.execute_command("HRANDFIELD", "h", "-10")
    assert len(got) == 10 and set(got) <= set(fields)
    flat = rr.execute_command("HRANDFIELD", "h", "-6", "WITHVALUES")
    assert len(flat) == 12
    for k, v in zip(flat[::2], flat[1::2]):
        assert fields[k] == v
    flat = rr.execute_command("HRANDFIELD", "h", "2", "withvalues")
    assert len(flat) == 4 and len(set(flat[::2])) == 2
    for k, v in zip(flat[::2], flat[1::2]):
        assert fields[k] == v
    assert rr.execute_command("HLEN", "h") == size


def test_hrandfield_large_sample_is_spread(rr):
    args = []
    for i in range(2000):
        args += ["m%05d" % i, "1"]
    rr.execute_command("HSET", "h", *args)
    seen = set()
    for _ in range(40):
        seen.update(rr.execute_command("HRANDFIELD", "h", "5"))
    assert len(seen) > 100  # not always the same few members


def test_hrandfield_errors_and_missing(rr):
    assert rr.execute_command("HRANDFIELD", "nokey", "5") == []
    assert rr.execute_command("HRANDFIELD", "nokey", "-5", "WITHVALUES") == []
    rr.execute_command("HSET", "h", "a", "1")
    raises(rr, SYNTAX, "HRANDFIELD", "h", "1", "foo")
    raises(rr, SYNTAX, "HRANDFIELD", "h", "1", "WITHVALUES", "x")
    raises(rr, NOT_INT, "HRANDFIELD", "h", "x")
    raises(rr, RANGE_LONG, "HRANDFIELD", "h", "-9223372036854775808")
    raises(rr, "ERR value is out of range", "HRANDFIELD", "h", "9223372036854775807", "WITHVALUES")
    raises(rr, "ERR value is out of range", "HRANDFIELD", "h", "-4611686018427387904",
           "WITHVALUES")


def test_hrandfield_resp3_withvalues_pairs(server, r):
    r.execute_command("HSET", "h", "a", "1", "b", "2")
    with server.raw() as c:
        c.call("HELLO", "3")
        t, v = c.call("HRANDFIELD", "h", "5", "WITHVALUES")
        assert t == "*" and sorted(v) == [("*", [("$", b"a"), ("$", b"1")]),
                                           ("*", [("$", b"b"), ("$", b"2")])]
        t, v = c.call("HRANDFIELD", "h", "-3", "WITHVALUES")
        assert t == "*" and len(v) == 3 and all(x[0] == "*" and len(x[1]) == 2 for x in v)
        assert c.call("HRANDFIELD", "nokey") == ("_", None)


# --------------------------------------------------------------------------
# TTL, transactions, keyspace
# --------------------------------------------------------------------------
def test_hash_keeps_ttl_on_update(rr):
    rr.execute_command("HSET", "h", "a", "1")
    rr.execute_command("EXPIRE", "h", 1000)
    rr.execute_command("HSET", "h", "b", "2")
    rr.execute_command("HINCRBY", "h", "c", "1")
    rr.execute_command("HDEL", "h", "a")
    assert 990 <= rr.execute_command("TTL", "h") <= 1000
    rr.execute_command("HDEL", "h", "b", "c")
    assert rr.execute_command("TTL", "h") == -2


def test_expired_hash_is_gone(rr):
    rr.execute_command("HSET", "h", "a", "1")
    rr.execute_command("PEXPIRE", "h", 1)
    time.sleep(0.05)
    assert rr.execute_command("HGET", "h", "a") is None
    assert rr.execute_command("HSET", "h", "b", "2") == 1
    assert rr.execute_command("HGETALL", "h") == ["b", "2"]


def test_hash_in_multi_sees_own_writes(rr):
    rr.execute_command("MULTI")
    rr.execute_command("HSET", "h", "a", "1")
    rr.execute_command("HINCRBY", "h", "a", "5")
    rr.execute_command("HGET", "h", "a")
    rr.execute_command("HLEN", "h")
    rr.execute_command("HDEL", "h", "a")
    rr.execute_command("EXISTS", "h")
    assert rr.execute_command("EXEC") == [1, 6, "6", 1, 1, 0]


def test_hash_rename_copy_dbsize(rr):
    rr.execute_command("HSET", "h", "a", "1", "b", "2")
    assert rr.execute_command("DBSIZE") == 1
    rr.execute_command("RENAME", "h", "h2")
    assert rr.execute_command("HGETALL", "h2") == ["a", "1", "b", "2"]
    assert rr.execute_command("COPY", "h2", "h3") == 1
    rr.execute_command("HSET", "h3", "c", "3")
    assert rr.execute_command("HLEN", "h2") == 2
    assert rr.execute_command("HLEN", "h3") == 3
    assert rr.execute_command("DBSIZE") == 2
