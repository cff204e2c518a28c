"""Blocking sorted-set pops: BZPOPMIN, BZPOPMAX, BZMPOP (Redis 7.0 semantics).

A blocked client is woken by a ZADD from any other connection, honours its timeout, and inside
MULTI answers at once as on timeout. Reply shapes are checked in RESP2 and RESP3 with the raw
client. The machinery itself (parking, pipelining, disconnects, worker isolation) is shared
with the list commands and tested in test_blocking.py.
"""
import time

import pytest

from helpers import arity, raises
from test_blocking import blocking_call, wait_blocked

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX = "ERR syntax error"


def test_pops_at_once_when_data_exists(rr):
    rr.execute_command("ZADD", "z", 1, "a", 2, "b", 3, "c")
    assert rr.execute_command("BZPOPMIN", "empty", "z", 1) == ["z", "a", "1"]
    assert rr.execute_command("BZPOPMAX", "z", 1) == ["z", "c", "3"]
    assert rr.execute_command("BZMPOP", 1, 2, "empty", "z", "MIN", "COUNT", 5) == [
        "z", [["b", "2"]]]
    assert rr.execute_command("EXISTS", "z") == 0  # the last member took the key with it


def test_first_non_empty_key_in_argument_order(rr):
    rr.execute_command("ZADD", "z1", 5, "x")
    rr.execute_command("ZADD", "z2", 1, "y")
    assert rr.execute_command("BZPOPMIN", "z2", "z1", 0) == ["z2", "y", "1"]
    assert rr.execute_command("BZMPOP", 0, 2, "z2", "z1", "MAX") == ["z1", [["x", "5"]]]


def test_times_out_with_a_null_array(server, rr):
    t0 = time.monotonic()
    assert rr.execute_command("BZPOPMIN", "none", 0.2) is None
    assert 0.15 <= time.monotonic() - t0 < 3
    assert rr.execute_command("BZMPOP", 0.1, 1, "none", "MAX") is None
    with server.raw() as c:
        assert c.call("BZPOPMAX", "none", "0.1") == ("*", None)
        c.call("HELLO", "3")
        assert c.call("BZPOPMAX", "none", "0.1") == ("_", None)
        assert c.call("BZMPOP", "0.1", "1", "none", "MIN") == ("_", None)


def test_bzpopmin_woken_by_zadd_from_another_client(server, r, rr):
    t, box = blocking_call(server, "BZPOPMIN", "q1", "q2", 0)
    wait_blocked(r)
    rr.execute_command("ZADD", "q2", 3, "c", 1, "a", 2, "b")
    t.join(5)
    assert box["reply"] == ("q2", "a", 1.0)
    assert rr.execute_command("ZRANGE", "q2", 0, -1) == ["b", "c"]
    assert r.info("clients")["blocked_clients"] == 0


def test_bzpopmax_and_bzmpop_woken(server, r, rr):
    t, box = blocking_call(server, "BZPOPMAX", "q", 5)
    wait_blocked(r)
    rr.execute_command("ZADD", "q", 1, "a", 9, "z")
    t.join(5)
    assert box["reply"] == ("q", "z", 9.0)
    t, box = blocking_call(server, "BZMPOP", 0, 2, "nothing", "q2", "MIN", "COUNT", 2)
    wait_blocked(r)
    rr.execute_command("ZADD", "q2", 3, "c", 1, "a", 2, "b")
    t.join(5)
    assert box["reply"] == ["q2", [["a", "1"], ["b", "2"]]]
    assert rr.execute_command("ZRANGE", "q2", 0, -1) == ["c"]


def test_woken_reply_in_resp3(server, r, rr):
    with server.raw() as c:
        c.call("HELLO", "3")
        c.send("BZPOPMIN", "q", "0")
        wait_blocked(r)
        rr.execute_command("ZADD", "q", 1.5, "m")
        assert c.read() == ("*", [("$", b"q"), ("$", b"m"), (",", "1.5")])
        c.send("BZMPOP", "0", "1", "q", "MAX")
        wait_blocked(r)
        rr.execute_command("ZADD", "q", 2, "n")
        assert c.read() == ("*", [("$", b"q"), ("*", [("*", [("$", b"n"), (",", "2")])])])


def test_waiters_are_served_one_member_each(server, r, rr):
    t1, b1 = blocking_call(server, "BZPOPMIN", "q", 0)
    wait_blocked(r, 1)
    t2, b2 = blocking_call(server, "BZPOPMIN", "q", 0)
    wait_blocked(r, 2)
    rr.execute_command("ZADD", "q", 1, "x")
    time.sleep(0.3)
    served = [b for b in (b1, b2) if "reply" in b]
    assert len(served) == 1 and served[0]["reply"] == ("q", "x", 1.0)
    rr.execute_command("ZADD", "q", 2, "y")
    t1.join(5)
    t2.join(5)
    assert sorted([b1["reply"][1], b2["reply"][1]]) == ["x", "y"]


def test_timeouts_round_up_to_whole_milliseconds(server, r, rr):
    assert rr.execute_command("BZPOPMIN", "q", "0.0001") is None  # 1 ms
    # -0.0001 s rounds up to 0 ms, which means no timeout at all.
    t, box = blocking_call(server, "BZPOPMIN", "q", "-0.0001")
    wait_blocked(r)
    time.sleep(0.1)
    assert "reply" not in box
    rr.execute_command("ZADD", "q", 1, "late")
    t.join(5)
    assert box["reply"] == ("q", "late", 1.0)


def test_inside_multi_nothing_blocks(server, rr):
    p = rr.pipeline(transaction=True)
    p.execute_command("BZPOPMIN", "none", 0)
    p.execute_command("BZMPOP", 0, 1, "none", "MIN")
    assert p.execute() == [None, None]
    with server.raw() as c:
        c.call("HELLO", "3")
        c.call("MULTI")
        c.call("BZPOPMAX", "none", "0")
        assert c.call("EXEC") == ("*", [("_", None)])


@pytest.mark.basalt_only  # Redis 7.2's texts; Debian's 7.0 calls these timeouts negative
def test_timeouts_beyond_a_long_long_are_out_of_range(rr):
    raises(rr, "ERR timeout is out of range", "BZPOPMIN", "q", "inf")
    raises(rr, "ERR timeout is out of range", "BZPOPMAX", "q", "1e400")
    raises(rr, "ERR timeout is out of range", "BLPOP", "q", "0x7FFFFFFFFFFFFF")  # ms overflow
    raises(rr, "ERR timeout is out of range", "BLPOP", "q", "9223372036854775")  # now + timeout


def test_errors(rr):
    rr.execute_command("SET", "s", "x")
    rr.execute_command("ZADD", "z", 1, "a")
    raises(rr, "ERR timeout is negative", "BZPOPMIN", "q", -1)
    raises(rr, "ERR timeout is not a float or out of range", "BZPOPMIN", "q", "abc")
    raises(rr, WRONGTYPE, "BZPOPMIN", "nokey", "s", 0.1)
    assert rr.execute_command("BZPOPMIN", "z", "s", 0) == ["z", "a", "1"]  # served before "s"
    raises(rr, arity("bzpopmin"), "BZPOPMIN", "q")
    raises(rr, arity("bzmpop"), "BZMPOP", 0, 1, "q")
    raises(rr, "ERR numkeys should be greater than 0", "BZMPOP", 0, 0, "q", "MIN")
    raises(rr, "ERR numkeys should be greater than 0", "BZMPOP", 0, "x", "q", "MIN")
    raises(rr, SYNTAX, "BZMPOP", 0, 2, "q", "MIN")
    raises(rr, SYNTAX, "BZMPOP", 0, 1, "q", "MIDDLE")
    raises(rr, SYNTAX, "BZMPOP", 0, 1, "q", "MIN", "COUNT")
    raises(rr, SYNTAX, "BZMPOP", 0, 1, "q", "MIN", "COUNT", 1, "COUNT", 1)
    raises(rr, "ERR count should be greater than 0", "BZMPOP", 0, 1, "q", "MIN", "COUNT", 0)
    raises(rr, "ERR count should be greater than 0", "BZMPOP", 0, 1, "q", "MIN", "COUNT", "x")
    raises(rr, WRONGTYPE, "BZMPOP", 0.1, 2, "nokey", "s", "MIN")
    # BZMPOP checks all its other arguments before the timeout
    raises(rr, SYNTAX, "BZMPOP", "abc", 1, "q", "MIDDLE")
    raises(rr, "ERR count should be greater than 0", "BZMPOP", -1, 1, "q", "MIN", "COUNT", 0)
    raises(rr, "ERR timeout is not a float or out of range", "BZMPOP", "abc", 1, "q", "MIN")


def test_zmpop_errors_match_bzmpop(rr):
    raises(rr, "ERR numkeys should be greater than 0", "ZMPOP", "x", "q", "MIN")
    raises(rr, SYNTAX, "ZMPOP", 5, "q", "MIN")
    raises(rr, "ERR count should be greater than 0", "ZMPOP", 1, "q", "MIN", "COUNT", "x")


def test_getkeys(rr):
    assert rr.execute_command("COMMAND", "GETKEYS", "BZMPOP", 0, 2, "a", "b", "MIN") == ["a", "b"]
    assert rr.execute_command("COMMAND", "GETKEYS", "BZPOPMIN", "a", "b", 0) == ["a", "b"]
