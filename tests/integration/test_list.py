"""List commands (non-blocking): pushes, pops, ranges, LINSERT/LREM/LTRIM/LPOS,
RPOPLPUSH/LMOVE/LMPOP (Redis 7.0 semantics, replies and error texts)."""
import random
import threading
import time

import pytest

from helpers import arity, raises
from resp import RawConn

SYNTAX = "ERR syntax error"
NOT_INT = "ERR value is not an integer or out of range"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
POSITIVE = "ERR value is out of range, must be positive"
RANK_ZERO = ("ERR RANK can't be zero: use 1 to start from the first match, 2 from the "
             "second ... or use negative to start from the end of the list")


def lrange(r, key):
    return r.execute_command("LRANGE", key, 0, -1)


# --------------------------------------------------------------------------
# push / len / range
# --------------------------------------------------------------------------
def test_push_order_and_length(rr):
    assert rr.execute_command("RPUSH", "l", "a", "b", "c") == 3
    assert rr.execute_command("LPUSH", "l", "x", "y") == 5
    assert lrange(rr, "l") == ["y", "x", "a", "b", "c"]
    assert rr.execute_command("LLEN", "l") == 5
    assert rr.execute_command("LLEN", "nokey") == 0
    assert rr.execute_command("TYPE", "l") == "list"


def test_pushx(rr):
    assert rr.execute_command("LPUSHX", "l", "a") == 0
    assert rr.execute_command("RPUSHX", "l", "a", "b") == 0
    assert rr.execute_command("EXISTS", "l") == 0
    rr.execute_command("RPUSH", "l", "m")
    assert rr.execute_command("LPUSHX", "l", "a", "b") == 3
    assert rr.execute_command("RPUSHX", "l", "y", "z") == 5
    assert lrange(rr, "l") == ["b", "a", "m", "y", "z"]


def test_binary_and_empty_elements(server, r):
    with RawConn(server.port) as c:
        assert c.call("RPUSH", "l", "", "a\x00b", "\r\n") == (":", 3)
        assert c.call("LRANGE", "l", 0, -1) == ("*", [("$", b""), ("$", b"a\x00b"),
                                                      ("$", b"\r\n")])
        assert c.call("LINDEX", "l", 1) == ("$", b"a\x00b")


@pytest.mark.parametrize("start,stop", [
    (0, -1), (0, 0), (1, 3), (-3, -1), (-100, 100), (5, 3), (10, 20), (-1, -1), (3, -3),
    (-9223372036854775808, 9223372036854775807), (2, 2), (0, -7), (-6, 0)])
def test_lrange_ranges(rr, start, stop):
    items = ["a", "b", "c", "d", "e", "f"]
    rr.execute_command("RPUSH", "l", *items)
    n = len(items)
    s = start + n if start < 0 else start
    e = stop + n if stop < 0 else stop
    s = max(s, 0)
    expected = [] if s > e or s >= n else items[s:min(e, n - 1) + 1]
    assert rr.execute_command("LRANGE", "l", start, stop) == expected


def test_ranges_read_across_flushed_newer_and_rewritten_elements(rr):
    """Basalt reads a range from the newest memtable when every element of it is there, and
    through RocksDB otherwise: ranges over elements flushed to files (SAVE), newer pushes in
    front of them, single elements set after the flush, pops, shifts by LREM and LINSERT, and
    a list made again under the same name after DEL and FLUSHALL."""
    def check(model):
        assert lrange(rr, "l") == model
        for start, stop in [(0, 49), (40, 60), (95, 105), (-20, -1), (120, 122)]:
            end = len(model) + stop if stop < 0 else stop
            first = len(model) + start if start < 0 else start
            assert rr.execute_command("LRANGE", "l", start, stop) == model[first:end + 1]

    model = ["e%d" % i for i in range(300)]
    rr.execute_command("RPUSH", "l", *model)
    rr.execute_command("SAVE")  # the elements are in files now
    check(model)
    rr.execute_command("LPUSH", "l", *["n%d" % i for i in range(50)])
    model = ["n%d" % i for i in reversed(range(50))] + model
    check(model)
    rr.execute_command("LSET", "l", 100, "changed")
    model[100] = "changed"
    check(model)
    rr.execute_command("LPOP", "l", 10)
    rr.execute_command("RPOP", "l", 10)
    model = model[10:-10]
    check(model)
    rr.execute_command("LREM", "l", 0, "e150")
    model.remove("e150")
    rr.execute_command("LINSERT", "l", "BEFORE", "e200", "inserted")
    model.insert(model.index("e200"), "inserted")
    check(model)
    rr.execute_command("SAVE")
    check(model)
    for drop in (["DEL", "l"], ["FLUSHALL"]):
        rr.execute_command(*drop)
        model = ["m%d" % i for i in range(130)]
        rr.execute_command("RPUSH", "l", *model)
        check(model)


def test_pipelined_pops_over_flushed_and_newer_elements(rr):
    """Pops in one pipeline read the next elements ahead, from the newest memtable when all of
    them are there and through RocksDB otherwise: both ends of a list whose middle was flushed
    to files, with elements set after the flush among them."""
    model = ["e%d" % i for i in range(200)]
    rr.execute_command("RPUSH", "l", *model)
    rr.execute_command("SAVE")
    rr.execute_command("RPUSH", "l", *["n%d" % i for i in range(50)])
    rr.execute_command("LPUSH", "l", *["m%d" % i for i in range(50)])
    model = ["m%d" % i for i in reversed(range(50))] + model + ["n%d" % i for i in range(50)]
    for index in (60, 70, 240):
        rr.execute_command("LSET", "l", index, "set%d" % index)
        model[index] = "set%d" % index
    p = rr.pipeline(transaction=False)
    for _ in range(120):
        p.execute_command("LPOP", "l")
        p.execute_command("RPOP", "l")
    popped = p.execute()
    expected = []
    for _ in range(120):
        expected += [model.pop(0), model.pop()]
    assert popped == expected
    assert lrange(rr, "l") == model


def test_pipelined_left_pops_step_through_flushed_elements(rr):
    """Left pops in one pipeline read elements in files one after another through one
    iterator: elements set after the flush are read as set, a trim in between
    makes the next pop skip ahead, and an element pushed in between is read from the batch."""
    model = ["e%d" % i for i in range(300)]
    rr.execute_command("RPUSH", "l", *model)
    rr.execute_command("SAVE")
    for index in (40, 41, 170):
        rr.execute_command("LSET", "l", index, "set%d" % index)
        model[index] = "set%d" % index
    p = rr.pipeline(transaction=False)
    expected = []
    for _ in range(100):
        p.execute_command("LPOP", "l")
        expected.append(model.pop(0))
    p.execute_command("LTRIM", "l", 10, -1)
    expected.append("OK")
    del model[:10]
    for _ in range(50):
        p.execute_command("LPOP", "l")
        expected.append(model.pop(0))
    p.execute_command("LPUSH", "l", "pushed")
    expected.append(len(model) + 1)
    for _ in range(20):
        p.execute_command("LPOP", "l")
    expected += ["pushed"] + model[:19]
    del model[:19]
    assert p.execute() == expected
    assert lrange(rr, "l") == model


def test_ranges_and_pops_while_memtables_flush(start_server, target):
    """Readers of two queues while writers push and pop them in pipelines, with 1 MiB
    memtables, so that the newest memtable a range or a pop's read-ahead reads is retired
    under it again and again: every range read is a run of consecutive numbers."""
    srv = start_server(args={"rocksdb.write-buffer-size": "1mb"} if target == "basalt" else None)
    stop = time.monotonic() + 3
    errors = []

    def write(key):
        c = srv.client()
        seq = 0
        while time.monotonic() < stop:
            p = c.pipeline(transaction=False)
            for _ in range(50):
                p.rpush(key, seq)
                seq += 1
            for _ in range(20):
                p.lpop(key)
            p.execute()

    def read():
        c = srv.client()
        ranges = 0
        while time.monotonic() < stop:
            for key in ("q0", "q1"):
                got = [int(x) for x in c.lrange(key, 0, random.choice([1, 10, 99, -1]))]
                if got != list(range(got[0], got[0] + len(got)) if got else []):
                    errors.append((key, got[:5]))
                    return
                ranges += 1
        if ranges == 0:
            errors.append("no range was read")

    threads = [threading.Thread(target=write, args=(k,)) for k in ("q0", "q1")]
    threads += [threading.Thread(target=read) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    c = srv.client()
    for key in ("q0", "q1"):
        got = [int(x) for x in c.lrange(key, 0, -1)]
        assert got == list(range(got[0], got[0] + len(got)))


def test_ranges_in_a_transaction_and_a_script_see_their_own_writes(rr):
    rr.execute_command("RPUSH", "l", "a", "b")
    rr.execute_command("MULTI")
    rr.execute_command("RPUSH", "l", "c", "d")
    rr.execute_command("LRANGE", "l", 0, -1)
    rr.execute_command("LSET", "l", 0, "z")
    rr.execute_command("LRANGE", "l", 0, 1)
    assert rr.execute_command("EXEC") == [4, ["a", "b", "c", "d"], "OK", ["z", "b"]]
    script = "redis.call('RPUSH', KEYS[1], 'x'); return redis.call('LRANGE', KEYS[1], 1, -1)"
    assert rr.execute_command("EVAL", script, 1, "l") == ["b", "c", "d", "x"]


def test_lrange_missing_and_errors(rr):
    assert rr.execute_command("LRANGE", "nokey", 0, -1) == []
    raises(rr, NOT_INT, "LRANGE", "nokey", "x", 1)
    raises(rr, NOT_INT, "LRANGE", "nokey", 0, "1.5")
    raises(rr, arity("lrange"), "LRANGE", "l", 0)


def test_long_list_range_reads(rr):
    rr.execute_command("RPUSH", "l", *range(1000))
    rr.execute_command("LPUSH", "l", *range(-1, -501, -1))
    assert rr.execute_command("LLEN", "l") == 1500
    assert rr.execute_command("LRANGE", "l", 498, 502) == ["-2", "-1", "0", "1", "2"]
    assert rr.execute_command("LINDEX", "l", -1) == "999"
    assert rr.execute_command("LINDEX", "l", 0) == "-500"
    assert len(rr.execute_command("LRANGE", "l", 0, -1)) == 1500


# --------------------------------------------------------------------------
# pops
# --------------------------------------------------------------------------
def test_pop_single(server, r):
    with RawConn(server.port) as c:
        c.call("RPUSH", "l", "a", "b", "c")
        assert c.call("LPOP", "l") == ("$", b"a")
        assert c.call("RPOP", "l") == ("$", b"c")
        assert c.call("LPOP", "l") == ("$", b"b")
        assert c.call("EXISTS", "l") == (":", 0)
        assert c.call("LPOP", "l") == ("$", None)
        assert c.call("RPOP", "l") == ("$", None)


def test_pop_count(server, r):
    with RawConn(server.port) as c:
        c.call("RPUSH", "l", "a", "b", "c", "d", "e")
        assert c.call("LPOP", "l", 2) == ("*", [("$", b"a"), ("$", b"b")])
        assert c.call("RPOP", "l", 2) == ("*", [("$", b"e"), ("$", b"d")])
        assert c.call("LPOP", "l", 0) == ("*", [])
        assert c.call("RPOP", "l", 10) == ("*", [("$", b"c")])
        assert c.call("EXISTS", "l") == (":", 0)
        assert c.call("LPOP", "l", 1) == ("*", None)
        assert c.call("RPOP", "l", 0) == ("*", None)
        assert c.call("LPOP", "l", -1) == ("-", POSITIVE)
        assert c.call("LPOP", "l", "x") == ("-", POSITIVE)
        assert c.call("LPOP", "l", 1, 2) == ("-", arity("lpop"))
        assert c.call("RPOP", "l", 1, 2) == ("-", arity("rpop"))


def test_pop_resp3_nulls(server, r):
    with RawConn(server.port) as c:
        c.call("HELLO", "3")
        assert c.call("LPOP", "l") == ("_", None)
        assert c.call("LPOP", "l", 2) == ("_", None)
        assert c.call("LMPOP", 1, "l", "LEFT") == ("_", None)


def test_queue_usage_pops_advance(rr):
    # A FIFO queue: push right, pop left, many times over (head and tail march on).
    model = []
    for i in range(300):
        rr.execute_command("RPUSH", "q", "a%d" % i, "b%d" % i)
        model += ["a%d" % i, "b%d" % i]
        assert rr.execute_command("LPOP", "q") == model.pop(0)
    assert rr.execute_command("LLEN", "q") == 300
    assert rr.execute_command("LINDEX", "q", 0) == model[0]
    assert rr.execute_command("LRANGE", "q", -2, -1) == ["a299", "b299"]


def test_wrong_count_then_wrongtype(rr):
    rr.execute_command("SET", "s", "x")
    raises(rr, WRONGTYPE, "LPOP", "s", 0)
    raises(rr, POSITIVE, "LPOP", "s", -1)


# --------------------------------------------------------------------------
# LINDEX / LSET
# --------------------------------------------------------------------------
def test_lindex(server, r):
    with RawConn(server.port) as c:
        c.call("RPUSH", "l", "a", "b", "c")
        assert c.call("LINDEX", "l", 0) == ("$", b"a")
        assert c.call("LINDEX", "l", -1) == ("$", b"c")
        assert c.call("LINDEX", "l", -3) == ("$", b"a")
        assert c.call("LINDEX", "l", 3) == ("$", None)
        assert c.call("LINDEX", "l", -4) == ("$", None)
        assert c.call("LINDEX", "l", "-9223372036854775808") == ("$", None)
        assert c.call("LINDEX", "l", "x") == ("-", NOT_INT)
        # the key is looked up first: a missing key with a bad index is nil
        assert c.call("LINDEX", "nokey", "x") == ("$", None)


def test_lset(rr):
    rr.execute_command("RPUSH", "l", "a", "b", "c")
    assert rr.execute_command("LSET", "l", 0, "A") == "OK"
    assert rr.execute_command("LSET", "l", -1, "C") == "OK"
    assert lrange(rr, "l") == ["A", "b", "C"]
    raises(rr, "ERR index out of range", "LSET", "l", 3, "x")
    raises(rr, "ERR index out of range", "LSET", "l", -4, "x")
    raises(rr, NOT_INT, "LSET", "l", "x", "x")
    raises(rr, "ERR no such key", "LSET", "nokey", 0, "x")
    raises(rr, "ERR no such key", "LSET", "nokey", "x", "x")


# --------------------------------------------------------------------------
# LINSERT
# --------------------------------------------------------------------------
def test_linsert_positions(rr):
    rr.execute_command("RPUSH", "l", "a", "b", "c", "d", "e")
    assert rr.execute_command("LINSERT", "l", "BEFORE", "a", "0") == 6
    assert rr.execute_command("LINSERT", "l", "after", "e", "9") == 7
    assert rr.execute_command("LINSERT", "l", "Before", "d", "x") == 8
    assert rr.execute_command("LINSERT", "l", "AFTER", "b", "y") == 9
    assert lrange(rr, "l") == ["0", "a", "b", "y", "c", "x", "d", "e", "9"]
    assert rr.execute_command("LINSERT", "l", "BEFORE", "zz", "q") == -1
    assert rr.execute_command("LLEN", "l") == 9


def test_linsert_first_pivot_only(rr):
    rr.execute_command("RPUSH", "l", "p", "x", "p")
    assert rr.execute_command("LINSERT", "l", "AFTER", "p", "n") == 4
    assert lrange(rr, "l") == ["p", "n", "x", "p"]


@pytest.mark.parametrize("pos", range(0, 8))
@pytest.mark.parametrize("where", ["BEFORE", "AFTER"])
def test_linsert_every_position(rr, pos, where):
    items = ["e%d" % i for i in range(8)]
    rr.execute_command("RPUSH", "l", *items)
    assert rr.execute_command("LINSERT", "l", where, items[pos], "N") == 9
    expect = list(items)
    expect.insert(pos if where == "BEFORE" else pos + 1, "N")
    assert lrange(rr, "l") == expect
    assert rr.execute_command("LINDEX", "l", 0) == expect[0]
    assert rr.execute_command("LINDEX", "l", -1) == expect[-1]


def test_linsert_missing_and_errors(rr):
    assert rr.execute_command("LINSERT", "nokey", "BEFORE", "a", "b") == 0
    assert rr.execute_command("EXISTS", "nokey") == 0
    raises(rr, SYNTAX, "LINSERT", "nokey", "middle", "a", "b")
    rr.execute_command("SET", "s", "x")
    raises(rr, WRONGTYPE, "LINSERT", "s", "BEFORE", "a", "b")
    raises(rr, SYNTAX, "LINSERT", "s", "middle", "a", "b")


# --------------------------------------------------------------------------
# LREM
# --------------------------------------------------------------------------
@pytest.mark.parametrize("count,expect_n,expect", [
    (0, 4, ["b", "c", "d"]),
    (1, 1, ["b", "a", "c", "a", "d", "a"]),
    (2, 2, ["b", "c", "a", "d", "a"]),
    (-1, 1, ["a", "b", "a", "c", "a", "d"]),
    (-3, 3, ["a", "b", "c", "d"]),
    (10, 4, ["b", "c", "d"]),
    (-10, 4, ["b", "c", "d"]),
    (-9223372036854775808, 4, ["b", "c", "d"]),
])
def test_lrem(rr, count, expect_n, expect):
    rr.execute_command("RPUSH", "l", "a", "b", "a", "c", "a", "d", "a")
    assert rr.execute_command("LREM", "l", count, "a") == expect_n
    assert lrange(rr, "l") == expect
    assert rr.execute_command("LLEN", "l") == len(expect)
    assert rr.execute_command("LINDEX", "l", -1) == expect[-1]


def test_lrem_removes_all_deletes_key(rr):
    rr.execute_command("RPUSH", "l", "a", "a")
    assert rr.execute_command("LREM", "l", 0, "a") == 2
    assert rr.execute_command("EXISTS", "l") == 0
    assert rr.execute_command("LREM", "l", 0, "a") == 0
    rr.execute_command("RPUSH", "l", "a")
    assert rr.execute_command("LREM", "l", 0, "b") == 0
    raises(rr, NOT_INT, "LREM", "l", "x", "a")


# --------------------------------------------------------------------------
# LTRIM
# --------------------------------------------------------------------------
@pytest.mark.parametrize("start,stop", [
    (0, -1), (1, -1), (0, 2), (2, 3), (-2, -1), (-100, 100), (3, 1), (10, 20), (0, 0),
    (5, 5), (-1, 0)])
def test_ltrim(rr, start, stop):
    items = ["a", "b", "c", "d", "e", "f"]
    rr.execute_command("RPUSH", "l", *items)
    assert rr.execute_command("LTRIM", "l", start, stop) == "OK"
    n = len(items)
    s = start + n if start < 0 else start
    e = stop + n if stop < 0 else stop
    s = max(s, 0)
    expect = [] if s > e or s >= n else items[s:min(e, n - 1) + 1]
    assert lrange(rr, "l") == expect
    assert rr.execute_command("EXISTS", "l") == (1 if expect else 0)
    # the list keeps working at both ends afterwards
    rr.execute_command("LPUSH", "l", "L")
    rr.execute_command("RPUSH", "l", "R")
    assert lrange(rr, "l") == ["L"] + expect + ["R"]


def test_ltrim_missing_and_errors(rr):
    assert rr.execute_command("LTRIM", "nokey", 0, 1) == "OK"
    raises(rr, NOT_INT, "LTRIM", "nokey", "x", 1)
    rr.execute_command("SET", "s", "x")
    raises(rr, WRONGTYPE, "LTRIM", "s", 0, 1)


# --------------------------------------------------------------------------
# LPOS
# --------------------------------------------------------------------------
def test_lpos(server, r):
    with RawConn(server.port) as c:
        c.call("RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c")
        assert c.call("LPOS", "l", "c") == (":", 2)
        assert c.call("LPOS", "l", "zz") == ("$", None)
        assert c.call("LPOS", "l", "c", "RANK", 2) == (":", 6)
        assert c.call("LPOS", "l", "c", "RANK", -1) == (":", 7)
        assert c.call("LPOS", "l", "c", "RANK", -3) == (":", 2)
        assert c.call("LPOS", "l", "c", "RANK", 4) == ("$", None)
        assert c.call("LPOS", "l", "c", "COUNT", 0) == ("*", [(":", 2), (":", 6), (":", 7)])
        assert c.call("LPOS", "l", "c", "COUNT", 2) == ("*", [(":", 2), (":", 6)])
        assert c.call("LPOS", "l", "c", "COUNT", 2, "RANK", -1) == ("*", [(":", 7), (":", 6)])
        assert c.call("LPOS", "l", "c", "COUNT", 0, "MAXLEN", 7) == ("*", [(":", 2), (":", 6)])
        assert c.call("LPOS", "l", "c", "RANK", -1, "MAXLEN", 1) == (":", 7)
        assert c.call("LPOS", "l", "c", "RANK", -1, "MAXLEN", 1, "COUNT", 0) == \
            ("*", [(":", 7)])
        assert c.call("LPOS", "l", "a", "RANK", -1, "MAXLEN", 7) == ("$", None)
        assert c.call("LPOS", "l", "zz", "COUNT", 3) == ("*", [])
        assert c.call("LPOS", "nokey", "a") == ("$", None)
        assert c.call("LPOS", "nokey", "a", "COUNT", 0) == ("*", [])


@pytest.mark.basalt_only(reason="Redis 7.2 refuses this rank; 7.0 takes it as -1")
def test_lpos_rank_that_cannot_be_negated(rr):
    rr.rpush("l", "a")
    raises(rr, "ERR value is out of range, value must between -9223372036854775807 and "
           "9223372036854775807", "LPOS", "l", "a", "RANK", "-9223372036854775808")
    assert rr.execute_command("LPOS", "l", "a", "RANK", "-9223372036854775807") is None
    assert rr.execute_command("LPOS", "l", "a", "RANK", "-1") == 0


def test_lpos_errors(rr):
    raises(rr, RANK_ZERO, "LPOS", "l", "a", "RANK", 0)
    raises(rr, NOT_INT, "LPOS", "l", "a", "RANK", "x")
    raises(rr, "ERR COUNT can't be negative", "LPOS", "l", "a", "COUNT", -1)
    raises(rr, "ERR COUNT can't be negative", "LPOS", "l", "a", "COUNT", "x")
    raises(rr, "ERR MAXLEN can't be negative", "LPOS", "l", "a", "MAXLEN", -1)
    raises(rr, SYNTAX, "LPOS", "l", "a", "RANK")
    raises(rr, SYNTAX, "LPOS", "l", "a", "FOO", 1)
    rr.execute_command("SET", "s", "x")
    raises(rr, WRONGTYPE, "LPOS", "s", "a")
    raises(rr, RANK_ZERO, "LPOS", "s", "a", "RANK", 0)


# --------------------------------------------------------------------------
# RPOPLPUSH / LMOVE
# --------------------------------------------------------------------------
def test_rpoplpush(rr):
    rr.execute_command("RPUSH", "src", "a", "b", "c")
    assert rr.execute_command("RPOPLPUSH", "src", "dst") == "c"
    assert rr.execute_command("RPOPLPUSH", "src", "dst") == "b"
    assert lrange(rr, "src") == ["a"]
    assert lrange(rr, "dst") == ["b", "c"]
    assert rr.execute_command("RPOPLPUSH", "src", "dst") == "a"
    assert rr.execute_command("EXISTS", "src") == 0
    assert rr.execute_command("RPOPLPUSH", "src", "dst") is None
    assert lrange(rr, "dst") == ["a", "b", "c"]


@pytest.mark.parametrize("wf,wt,src,dst", [
    ("LEFT", "LEFT", ["b", "c"], ["a", "x"]),
    ("LEFT", "RIGHT", ["b", "c"], ["x", "a"]),
    ("RIGHT", "LEFT", ["a", "b"], ["c", "x"]),
    ("right", "right", ["a", "b"], ["x", "c"]),
])
def test_lmove_directions(rr, wf, wt, src, dst):
    rr.execute_command("RPUSH", "src", "a", "b", "c")
    rr.execute_command("RPUSH", "dst", "x")
    rr.execute_command("LMOVE", "src", "dst", wf, wt)
    assert lrange(rr, "src") == src
    assert lrange(rr, "dst") == dst


def test_lmove_same_key_rotation(rr):
    rr.execute_command("RPUSH", "l", "a", "b", "c")
    assert rr.execute_command("LMOVE", "l", "l", "LEFT", "RIGHT") == "a"
    assert lrange(rr, "l") == ["b", "c", "a"]
    assert rr.execute_command("LMOVE", "l", "l", "RIGHT", "LEFT") == "a"
    assert lrange(rr, "l") == ["a", "b", "c"]
    assert rr.execute_command("RPOPLPUSH", "l", "l") == "c"
    assert lrange(rr, "l") == ["c", "a", "b"]
    assert rr.execute_command("LMOVE", "l", "l", "LEFT", "LEFT") == "c"
    assert lrange(rr, "l") == ["c", "a", "b"]


def test_lmove_single_element_same_key_keeps_ttl(rr):
    rr.execute_command("RPUSH", "l", "only")
    rr.execute_command("EXPIRE", "l", 1000)
    assert rr.execute_command("LMOVE", "l", "l", "LEFT", "RIGHT") == "only"
    assert lrange(rr, "l") == ["only"]
    assert 990 <= rr.execute_command("TTL", "l") <= 1000


def test_lmove_creates_destination_without_ttl(rr):
    rr.execute_command("RPUSH", "src", "a")
    rr.execute_command("EXPIRE", "src", 1000)
    assert rr.execute_command("LMOVE", "src", "dst", "LEFT", "LEFT") == "a"
    assert rr.execute_command("TTL", "dst") == -1
    assert rr.execute_command("EXISTS", "src") == 0


def test_move_wrongtype_and_errors(rr):
    rr.execute_command("SET", "s", "x")
    rr.execute_command("RPUSH", "l", "a")
    raises(rr, WRONGTYPE, "RPOPLPUSH", "s", "l")
    raises(rr, WRONGTYPE, "RPOPLPUSH", "l", "s")
    raises(rr, WRONGTYPE, "LMOVE", "l", "s", "LEFT", "LEFT")
    assert lrange(rr, "l") == ["a"]  # nothing popped when the destination is wrong
    # a missing source wins over a wrong destination
    assert rr.execute_command("RPOPLPUSH", "nokey", "s") is None
    assert rr.execute_command("LMOVE", "nokey", "s", "LEFT", "LEFT") is None
    raises(rr, SYNTAX, "LMOVE", "l", "l", "UP", "LEFT")
    raises(rr, SYNTAX, "LMOVE", "l", "l", "LEFT", "DOWN")
    raises(rr, arity("lmove"), "LMOVE", "l", "l", "LEFT")


# --------------------------------------------------------------------------
# LMPOP
# --------------------------------------------------------------------------
def test_lmpop(server, r):
    with RawConn(server.port) as c:
        c.call("RPUSH", "b", "1", "2", "3")
        c.call("RPUSH", "c", "x")
        assert c.call("LMPOP", 3, "a", "b", "c", "LEFT") == \
            ("*", [("$", b"b"), ("*", [("$", b"1")])])
        assert c.call("LMPOP", 2, "a", "b", "right", "COUNT", 5) == \
            ("*", [("$", b"b"), ("*", [("$", b"3"), ("$", b"2")])])
        assert c.call("EXISTS", "b") == (":", 0)
        assert c.call("LMPOP", 3, "a", "b", "c", "LEFT", "count", 1) == \
            ("*", [("$", b"c"), ("*", [("$", b"x")])])
        assert c.call("LMPOP", 2, "a", "b", "LEFT") == ("*", None)


def test_lmpop_errors(rr):
    raises(rr, "ERR numkeys should be greater than 0", "LMPOP", 0, "a", "LEFT")
    raises(rr, "ERR numkeys should be greater than 0", "LMPOP", -1, "a", "LEFT")
    raises(rr, "ERR numkeys should be greater than 0", "LMPOP", "x", "a", "LEFT")
    raises(rr, SYNTAX, "LMPOP", 3, "a", "LEFT")
    raises(rr, SYNTAX, "LMPOP", 1, "a", "MIDDLE")
    raises(rr, SYNTAX, "LMPOP", 1, "a", "LEFT", "COUNT")
    raises(rr, SYNTAX, "LMPOP", 1, "a", "LEFT", "COUNT", 1, "COUNT", 1)
    raises(rr, SYNTAX, "LMPOP", 1, "a", "LEFT", "FOO")
    raises(rr, "ERR count should be greater than 0", "LMPOP", 1, "a", "LEFT", "COUNT", 0)
    raises(rr, "ERR count should be greater than 0", "LMPOP", 1, "a", "LEFT", "COUNT", "x")
    raises(rr, arity("lmpop"), "LMPOP", 1, "a")
    rr.execute_command("SET", "s", "x")
    rr.execute_command("RPUSH", "l", "a")
    raises(rr, WRONGTYPE, "LMPOP", 2, "s", "l", "LEFT")
    raises(rr, WRONGTYPE, "LMPOP", 2, "nokey", "s", "LEFT")
    assert rr.execute_command("LMPOP", 2, "l", "s", "LEFT") == ["l", ["a"]]


def test_lmpop_getkeys(rr):
    assert rr.execute_command("COMMAND", "GETKEYS", "LMPOP", 2, "a", "b", "LEFT") == ["a", "b"]


# --------------------------------------------------------------------------
# WRONGTYPE, arity, interaction with other commands
# --------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["LPUSH", "s", "a"], ["RPUSH", "s", "a"], ["LPUSHX", "s", "a"], ["RPUSHX", "s", "a"],
    ["LPOP", "s"], ["RPOP", "s"], ["RPOP", "s", 2], ["LLEN", "s"], ["LINDEX", "s", 0],
    ["LRANGE", "s", 0, -1], ["LSET", "s", 0, "a"], ["LREM", "s", 0, "a"],
    ["LTRIM", "s", 0, 1], ["LPOS", "s", "a"], ["LMPOP", 1, "s", "LEFT"]])
def test_wrongtype(rr, args):
    rr.execute_command("SET", "s", "x")
    raises(rr, WRONGTYPE, *args)


def test_string_commands_on_list(rr):
    rr.execute_command("RPUSH", "l", "a")
    raises(rr, WRONGTYPE, "GET", "l")
    raises(rr, WRONGTYPE, "APPEND", "l", "x")


@pytest.mark.parametrize("cmd,args", [
    ("lpush", ["k"]), ("rpush", ["k"]), ("lpushx", ["k"]), ("rpushx", ["k"]), ("lpop", []),
    ("rpop", []), ("llen", []), ("lindex", ["k"]), ("lrange", ["k", 0]),
    ("lset", ["k", 0]), ("linsert", ["k", "BEFORE", "a"]), ("lrem", ["k", 0]),
    ("ltrim", ["k", 0]), ("lpos", ["k"]), ("rpoplpush", ["k"]), ("lmove", ["k", "k", "LEFT"]),
    ("lmpop", [1, "k"])])
def test_arity(rr, cmd, args):
    raises(rr, arity(cmd), cmd.upper(), *args)


def test_set_overwrites_list_and_recreate(rr):
    rr.execute_command("RPUSH", "l", "a", "b")
    rr.execute_command("SET", "l", "str")
    assert rr.execute_command("GET", "l") == "str"
    rr.execute_command("DEL", "l")
    assert rr.execute_command("RPUSH", "l", "z") == 1
    assert lrange(rr, "l") == ["z"]  # no elements of the old incarnation


def test_list_ttl_rename_copy(rr):
    rr.execute_command("RPUSH", "l", "a", "b", "c")
    rr.execute_command("LPOP", "l")
    assert rr.execute_command("EXPIRE", "l", 100) == 1
    assert rr.execute_command("RPUSH", "l", "d") == 3
    assert 95 <= rr.execute_command("TTL", "l") <= 100  # pushes keep the TTL
    assert rr.execute_command("RENAME", "l", "m") == "OK"
    assert lrange(rr, "m") == ["b", "c", "d"]
    assert rr.execute_command("COPY", "m", "n") == 1
    rr.execute_command("LPUSH", "n", "x")
    rr.execute_command("RPOP", "m")
    assert lrange(rr, "m") == ["b", "c"]
    assert lrange(rr, "n") == ["x", "b", "c", "d"]


def test_expired_list_is_gone(rr):
    rr.execute_command("RPUSH", "l", "a", "b")
    rr.execute_command("PEXPIRE", "l", 1)
    time.sleep(0.05)
    assert rr.execute_command("LLEN", "l") == 0
    assert rr.execute_command("LPUSHX", "l", "x") == 0
    assert rr.execute_command("RPUSH", "l", "n") == 1
    assert lrange(rr, "l") == ["n"]
    assert rr.execute_command("TTL", "l") == -1


def test_multi_exec_list(rr):
    rr.execute_command("MULTI")
    rr.execute_command("RPUSH", "l", "a", "b", "c")
    rr.execute_command("LPOP", "l")
    rr.execute_command("LINSERT", "l", "BEFORE", "c", "x")
    rr.execute_command("LMOVE", "l", "m", "RIGHT", "LEFT")
    rr.execute_command("LRANGE", "l", 0, -1)
    res = rr.execute_command("EXEC")
    assert res == [3, "a", 3, "c", ["b", "x"]]
    assert lrange(rr, "m") == ["c"]


def test_watch_broken_by_list_write(server, r):
    other = server.client()
    try:
        r.rpush("l", "a", "b")
        for cmd in (["LSET", "l", 0, "z"], ["LTRIM", "l", 0, -1], ["RPUSH", "l", "c"],
                    ["LPOP", "l"]):
            r.execute_command("WATCH", "l")
            other.execute_command(*cmd)
            r.execute_command("MULTI")
            r.execute_command("LLEN", "l")
            assert r.execute_command("EXEC") is None, cmd
    finally:
        other.close()


@pytest.mark.basalt_only(reason="Redis 7.2 refuses RANK LLONG_MIN; the 7.0 oracle treats it as -1")
def test_lpos_rank_llong_min_is_out_of_range(r):
    r.rpush("l", "a", "b", "a")
    raises(r, "ERR value is out of range, value must between -9223372036854775807 and "
           "9223372036854775807", "LPOS", "l", "a", "RANK", -(2**63))
    assert r.execute_command("LPOS", "l", "a", "RANK", -(2**63 - 1)) is None
