"""Blocking list commands: BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH.

A blocked client must be woken by a push from any other connection, honour its
timeout, keep its later pipelined commands waiting, and never hold up other
clients (the server runs with a single worker in the isolation test)."""
import socket
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


def test_pipelined_pushes_serve_the_waiter_between_them(server, r):
    # Redis serves blocked clients after each command: the waiter gets the first push.
    t, box = blocking_call(server, "BLPOP", "q", "5")
    wait_blocked(r)
    p = r.pipeline(transaction=False)
    p.lpush("q", "a")
    p.lpush("q", "b")
    p.lrange("q", 0, -1)
    assert p.execute() == [1, 1, ["b"]]
    t.join(6)
    assert list(box["reply"]) == ["q", "a"]


def test_pushes_serve_the_waiter_between_them_while_others_write_the_key(server, r):
    # Other connections keep writing the key's lock stripe (HDEL on a list is WRONGTYPE and
    # changes nothing), so the pushes often find it held by another worker's pending writes,
    # where they could otherwise be run as one batch without serving the waiter in between.
    stop = threading.Event()

    def writer():
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            burst = b"HDEL q f\r\n" * 200
            while not stop.is_set():
                s.sendall(burst)
                replies = b""
                while replies.count(b"\r\n") < 200:
                    replies += s.recv(65536)

    writers = [threading.Thread(target=writer, daemon=True) for _ in range(2)]
    for w in writers:
        w.start()
    clients = [server.client() for _ in range(4)]
    outcomes = []
    try:
        for i in range(240):
            waiter, pusher = clients[i % 4], clients[(i // 4) % 4]
            if waiter is pusher:
                continue
            r.delete("q")
            box = {}
            t = threading.Thread(target=lambda: box.update(reply=waiter.blpop("q", 5)))
            t.start()
            wait_blocked(r)
            p = pusher.pipeline(transaction=False)
            p.lpush("q", "a").lpush("q", "b").lrange("q", 0, -1)
            pushed = p.execute()
            t.join(6)
            outcomes.append((pushed, box.get("reply")))
    finally:
        stop.set()
        for w in writers:
            w.join(5)
        for c in clients:
            c.close()
    wrong = [o for o in outcomes if o != ([1, 1, ["b"]], ("q", "a"))]
    assert wrong == [], "%d of %d rounds, e.g. %r" % (len(wrong), len(outcomes), wrong[0])


def test_waiters_are_served_in_the_order_they_blocked(server, r):
    threads = []
    for i in range(4):
        threads.append(blocking_call(server, "BLPOP", "q", "5"))
        wait_blocked(r, i + 1)
    r.rpush("q", "e0", "e1", "e2", "e3", "e4")
    for t, _ in threads:
        t.join(6)
    assert [box["reply"][1] for _, box in threads] == ["e0", "e1", "e2", "e3"]
    assert r.lrange("q", 0, -1) == ["e4"]


def test_a_chain_of_waiters_is_served_before_the_writer_goes_on(server, r):
    # Redis serves the chain a push starts (each BRPOPLPUSH feeding the next) before the
    # pushing client's next command runs.
    t1, b1 = blocking_call(server, "BRPOPLPUSH", "l1", "l2", "5")
    wait_blocked(r, 1)
    t2, b2 = blocking_call(server, "BRPOPLPUSH", "l2", "l1", "5")
    wait_blocked(r, 2)
    r.rpush("l1", "foo")
    assert r.lrange("l1", 0, -1) == ["foo"]
    assert r.lrange("l2", 0, -1) == []
    t1.join(6)
    t2.join(6)
    assert b1["reply"] == "foo" and b2["reply"] == "foo"


def test_a_push_that_serves_a_waiter_replies_after_it_was_served(server, r):
    # The waiter's move reaches dstlist before the push's reply, so a transaction watching
    # dstlist and executed after that reply aborts.
    t, box = blocking_call(server, "BRPOPLPUSH", "src", "dst", "5")
    wait_blocked(r)
    watcher = server.client()
    p = watcher.pipeline(transaction=True)
    p.watch("dst")
    p.multi()
    p.get("somekey")
    r.lpush("src", "element")
    with pytest.raises(redis.WatchError):
        p.execute()
    t.join(6)
    assert box["reply"] == "element"


def test_client_list_flags_a_parked_client_b(server, r):
    t, box = blocking_call(server, "BLPOP", "q", "5")
    wait_blocked(r)
    lines = [line for line in r.execute_command("CLIENT", "LIST").splitlines() if "cmd=blpop" in line]
    assert len(lines) == 1 and " flags=b " in lines[0]
    r.rpush("q", "x")
    t.join(6)
    assert " flags=N " in r.execute_command("CLIENT", "INFO")


def test_swapdb_serves_a_client_blocked_in_either_database(server, r):
    other = server.client(db=1)
    other.rpush("k", "hello")
    t, box = blocking_call(server, "BRPOP", "k", "5")  # in db 0, where k does not exist
    wait_blocked(r)
    r.swapdb(0, 1)
    t.join(6)
    assert list(box["reply"]) == ["k", "hello"]
    assert r.exists("k") == 0 and other.exists("k") == 0


def test_failed_blmove_passes_the_element_to_the_next_waiter(server, r):
    srv = server
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
