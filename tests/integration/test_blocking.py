"""Blocking list commands: BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH.

A blocked client must be woken by a push from any other connection, honour its
timeout, keep its later pipelined commands waiting, and never hold up other
clients (the server runs with a single worker in the isolation test)."""
import threading
import time

import pytest
import redis

from helpers import raises


def blocking_call(server, *args):
    """Runs a command on a fresh connection in a thread; returns (thread, box)
    where box holds 'reply' (or 'error', an error reply's text) and 'elapsed'
    once the thread ends."""
    box = {}

    def run():
        c = server.client()
        t0 = time.monotonic()
        try:
            box["reply"] = c.execute_command(*args)
        except redis.ResponseError as e:
            box["error"] = str(e)
        box["elapsed"] = time.monotonic() - t0
        c.close()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


def wait_blocked(r, n=1, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if int(r.info("clients")["blocked_clients"]) >= n:
            return
        time.sleep(0.01)
    raise AssertionError("no client got blocked")


def test_blpop_returns_at_once_when_data_exists(r):
    r.rpush("q", "a", "b")
    assert r.blpop(["empty", "q"], timeout=1) == ("q", "a")
    assert r.brpop(["q"], timeout=1) == ("q", "b")
    assert r.exists("q") == 0


def test_blpop_times_out_with_nil(r):
    t0 = time.monotonic()
    assert r.blpop(["nothing"], timeout=0.2) is None
    elapsed = time.monotonic() - t0
    assert 0.15 <= elapsed < 3


def test_blpop_woken_by_push_from_other_client(server, r):
    t, box = blocking_call(server, "BLPOP", "q1", "q2", "0")
    wait_blocked(r)
    r.rpush("q2", "hello")
    t.join(5)
    assert list(box["reply"]) == ["q2", "hello"]
    assert r.llen("q2") == 0
    assert int(r.info("clients")["blocked_clients"]) == 0


def test_waiters_are_served_one_element_each(server, r):
    t1, b1 = blocking_call(server, "BLPOP", "q", "0")
    wait_blocked(r, 1)
    t2, b2 = blocking_call(server, "BLPOP", "q", "0")
    wait_blocked(r, 2)
    r.rpush("q", "x")
    time.sleep(0.3)
    served = [b for b in (b1, b2) if "reply" in b]
    assert len(served) == 1
    assert list(served[0]["reply"]) == ["q", "x"]
    r.rpush("q", "y")
    t1.join(5)
    t2.join(5)
    assert sorted([b1["reply"][1], b2["reply"][1]]) == ["x", "y"]


def test_blmove_and_brpoplpush_wake(server, r):
    t, box = blocking_call(server, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
    wait_blocked(r)
    r.rpush("src", "1", "2")
    t.join(5)
    assert box["reply"] == "2"
    assert r.lrange("dst", 0, -1) == ["2"]
    assert r.brpoplpush("src", "dst", timeout=1) == "1"
    assert r.lrange("dst", 0, -1) == ["1", "2"]


def test_blmpop_count(server, r):
    t, box = blocking_call(server, "BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "3")
    wait_blocked(r)
    r.rpush("b", "1", "2")
    t.join(5)
    assert box["reply"] == ["b", ["1", "2"]]


def test_blocking_inside_multi_does_not_block(r):
    p = r.pipeline(transaction=True)
    p.blpop(["none"], timeout=0)
    p.execute_command("BLMOVE", "none", "d", "LEFT", "LEFT", "0")
    assert p.execute() == [None, None]


def test_pipelined_commands_wait_behind_blocked_command(server, r):
    with server.raw() as c:
        c.send_raw(b"BLPOP pq 0\r\nPING\r\n")
        wait_blocked(r)
        r.rpush("pq", "v")
        assert c.read() == ("*", [("$", b"pq"), ("$", b"v")])
        assert c.read() == ("+", b"PONG")


def test_disconnected_waiter_does_not_swallow_data(server, r):
    c = server.raw()
    c.send_raw(b"BLPOP gone 0\r\n")
    wait_blocked(r)
    c.close()
    deadline = time.monotonic() + 5
    while int(r.info("clients")["blocked_clients"]) and time.monotonic() < deadline:
        time.sleep(0.01)
    r.rpush("gone", "kept")
    assert r.lrange("gone", 0, -1) == ["kept"]


def test_blocked_client_does_not_hold_up_its_worker(start_server, target):
    srv = start_server(args={"workers": "1"} if target == "basalt" else None)
    r = srv.client()
    t, box = blocking_call(srv, "BLPOP", "slow", "2")
    wait_blocked(r)
    t0 = time.monotonic()
    for _ in range(50):
        assert r.ping()
    assert time.monotonic() - t0 < 1.5
    t.join(5)
    assert box["reply"] is None


def test_transaction_that_pushes_deletes_and_sets_the_key_wakes_nobody(server, r):
    t, box = blocking_call(server, "BLPOP", "q", "1")
    wait_blocked(r)
    p = r.pipeline(transaction=True)
    p.lpush("q", "x").delete("q").set("q", "s")
    p.execute()
    t.join(5)
    assert box["reply"] is None
    assert r.get("q") == "s"


def test_waiter_stays_blocked_when_its_key_changes_type(server, r):
    t, box = blocking_call(server, "BLMOVE", "q", "dst", "LEFT", "LEFT", "5")
    wait_blocked(r)
    p = r.pipeline(transaction=True)
    p.rpush("q", "x").delete("q").sadd("q", "m")
    p.execute()
    time.sleep(0.2)
    assert int(r.info("clients")["blocked_clients"]) == 1
    r.delete("q")
    r.rpush("q", "y")
    t.join(5)
    assert box["reply"] == "y"
    assert r.lrange("dst", 0, -1) == ["y"]


def test_zset_waiter_stays_blocked_when_its_key_becomes_a_list(server, r):
    t, box = blocking_call(server, "BZPOPMIN", "z", "5")
    wait_blocked(r)
    p = r.pipeline(transaction=True)
    p.zadd("z", {"a": 1}).delete("z").rpush("z", "e")
    p.execute()
    time.sleep(0.2)
    assert int(r.info("clients")["blocked_clients"]) == 1
    r.delete("z")
    r.zadd("z", {"b": 2})
    t.join(5)
    assert list(box["reply"]) == ["z", "b", 2.0]


def test_failed_blmove_passes_the_element_to_the_next_waiter(start_server, target):
    # One worker, so that the waiters are woken in the order they blocked; across workers
    # Basalt's wake-ups race (the first to run takes the element).
    srv = start_server(args={"workers": "1"} if target == "basalt" else None)
    r = srv.client()
    r.set("dst", "not a list")
    first, first_box = blocking_call(srv, "BLMOVE", "q", "dst", "LEFT", "LEFT", "5")
    wait_blocked(r, 1)
    second, second_box = blocking_call(srv, "BLPOP", "q", "5")
    wait_blocked(r, 2)
    r.rpush("q", "x")
    first.join(6)
    second.join(6)
    assert first_box.get("error", repr(first_box)).startswith("WRONGTYPE")
    assert list(second_box["reply"]) == ["q", "x"]


def test_blocking_errors(r):
    r.set("s", "x")
    raises(r, "ERR timeout is negative", "BLPOP", "q", "-1")
    raises(r, "ERR timeout is not a float or out of range", "BLPOP", "q", "abc")
    raises(r, "WRONGTYPE Operation against a key holding the wrong kind of value",
           "BLPOP", "s", "0.1")
    raises(r, "ERR numkeys should be greater than 0", "BLMPOP", "0.1", "0", "a", "LEFT")
    raises(r, "ERR syntax error", "BLMPOP", "0.1", "1", "a", "MIDDLE")
    # the other arguments are checked before the timeout, as in Redis
    raises(r, "ERR syntax error", "BLMPOP", "abc", "1", "a", "MIDDLE")
    raises(r, "ERR timeout is not a float or out of range", "BLMPOP", "abc", "1", "a", "LEFT")
    raises(r, "ERR count should be greater than 0", "BLMPOP", "0.1", "1", "a", "LEFT", "COUNT", "0")
    raises(r, "ERR syntax error", "BLMOVE", "a", "b", "UP", "LEFT", "0")
