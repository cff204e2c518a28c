"""MULTI / EXEC / DISCARD / WATCH / UNWATCH (Redis 7.0 semantics)."""
import threading
import time

import pytest
import redis

from resp import RawConn

EXECABORT = "EXECABORT Transaction discarded because of previous errors."
NOT_INT = "ERR value is not an integer or out of range"


@pytest.fixture
def c(server, r):
    """Raw connection (replies with their RESP type) on a flushed server."""
    conn = RawConn(server.port)
    yield conn
    conn.close()


@pytest.fixture
def c2(server, r):
    conn = RawConn(server.port)
    yield conn
    conn.close()


OK = ("+", b"OK")
QUEUED = ("+", b"QUEUED")
NIL_ARRAY = ("*", None)


def test_multi_exec_basic(c):
    assert c.call("MULTI") == OK
    assert c.call("SET", "a", "1") == QUEUED
    assert c.call("INCR", "a") == QUEUED
    assert c.call("GET", "a") == QUEUED
    assert c.call("EXEC") == ("*", [OK, (":", 2), ("$", b"2")])
    assert c.call("GET", "a") == ("$", b"2")


def test_empty_transaction(c):
    assert c.call("MULTI") == OK
    assert c.call("EXEC") == ("*", [])


def test_commands_are_not_applied_before_exec(c, c2):
    c.call("MULTI")
    c.call("SET", "a", "1")
    assert c2.call("GET", "a") == ("$", None)
    c.call("EXEC")
    assert c2.call("GET", "a") == ("$", b"1")


def test_discard(c):
    assert c.call("MULTI") == OK
    assert c.call("SET", "a", "1") == QUEUED
    assert c.call("DISCARD") == OK
    assert c.call("GET", "a") == ("$", None)
    # the connection is back to normal mode
    assert c.call("SET", "a", "2") == OK


def test_exec_and_discard_without_multi(c):
    assert c.call("EXEC") == ("-", "ERR EXEC without MULTI")
    assert c.call("DISCARD") == ("-", "ERR DISCARD without MULTI")


def test_nested_multi_is_an_error_but_keeps_transaction(c):
    assert c.call("MULTI") == OK
    assert c.call("MULTI") == ("-", "ERR MULTI calls can not be nested")
    assert c.call("SET", "a", "1") == QUEUED
    # the nested MULTI error does not abort the transaction
    assert c.call("EXEC") == ("*", [OK])


def test_queue_time_errors_abort_exec(c):
    c.call("SET", "a", "old")
    assert c.call("MULTI") == OK
    assert c.call("SET", "a", "1") == QUEUED
    assert c.call("NOSUCHCMD", "x") == (
        "-", "ERR unknown command 'NOSUCHCMD', with args beginning with: 'x' ")
    assert c.call("GET") == ("-", "ERR wrong number of arguments for 'get' command")
    assert c.call("INCR", "a") == QUEUED
    assert c.call("EXEC") == ("-", EXECABORT)
    assert c.call("GET", "a") == ("$", b"old")
    # the transaction is gone
    assert c.call("EXEC") == ("-", "ERR EXEC without MULTI")


def test_queue_time_error_then_discard(c):
    c.call("MULTI")
    c.call("SET", "a")
    assert c.call("DISCARD") == OK
    assert c.call("GET", "a") == ("$", None)


def test_exec_with_arguments_aborts(c):
    c.call("MULTI")
    c.call("SET", "a", "1")
    assert c.call("EXEC", "x") == (
        "-", "EXECABORT Transaction discarded because of: "
             "wrong number of arguments for 'exec' command")
    assert c.call("GET", "a") == ("$", None)
    assert c.call("DISCARD") == ("-", "ERR DISCARD without MULTI")


def test_discard_with_arguments_is_queue_error(c):
    c.call("MULTI")
    assert c.call("DISCARD", "x") == (
        "-", "ERR wrong number of arguments for 'discard' command")
    assert c.call("EXEC") == ("-", EXECABORT)


def test_runtime_errors_inside_exec(c):
    c.call("SET", "s", "notanumber")
    c.call("MULTI")
    c.call("SET", "a", "1")
    c.call("INCR", "s")
    c.call("INCR", "a")
    c.call("SET", "b", "v", "EX", "0")
    c.call("INCRBYFLOAT", "s", "1")
    c.call("SET", "c", "3")
    assert c.call("EXEC") == ("*", [
        OK,
        ("-", NOT_INT),
        (":", 2),
        ("-", "ERR invalid expire time in 'set' command"),
        ("-", "ERR value is not a valid float"),
        OK,
    ])
    assert c.call("MGET", "a", "b", "c", "s") == (
        "*", [("$", b"2"), ("$", None), ("$", b"3"), ("$", b"notanumber")])


def test_commands_inside_exec_see_earlier_writes(c):
    c.call("SET", "old", "1")
    c.call("MULTI")
    for cmd in (("SET", "new1", "1"), ("INCRBYFLOAT", "new2", "1.5"), ("DBSIZE",),
                ("EXISTS", "new1", "new2"), ("MSETNX", "new3", "x", "new1", "y"),
                ("GET", "new1"), ("DEL", "new1", "old"), ("DBSIZE",), ("KEYS", "*")):
        assert c.call(*cmd) == QUEUED
    assert c.call("EXEC") == ("*", [
        OK, ("$", b"1.5"), (":", 3), (":", 2), (":", 0), ("$", b"1"), (":", 2), (":", 1),
        ("*", [("$", b"new2")])])


def test_select_inside_transaction(c):
    c.call("MULTI")
    c.call("SELECT", "99")
    c.call("SELECT", "3")
    c.call("SET", "q", "1")
    assert c.call("EXEC") == ("*", [("-", "ERR DB index is out of range"), OK, OK])
    assert c.call("DBSIZE") == (":", 1)  # still in DB 3 after EXEC
    c.call("SELECT", "0")
    assert c.call("EXISTS", "q") == (":", 0)


# --------------------------------------------------------------------------
# WATCH
# --------------------------------------------------------------------------
def _exec_ping(c):
    assert c.call("MULTI") == OK
    assert c.call("PING") == QUEUED
    return c.call("EXEC")


def test_watch_untouched_key_executes(c, c2):
    c.call("SET", "w", "1")
    assert c.call("WATCH", "w") == OK
    c2.call("GET", "w")  # reads do not invalidate
    assert _exec_ping(c) == ("*", [("+", b"PONG")])


def test_watch_other_client_write_aborts(c, c2):
    c.call("SET", "w", "1")
    c.call("WATCH", "w")
    c2.call("SET", "w", "1")  # same value, still a modification
    c.call("MULTI")
    c.call("SET", "x", "1")
    assert c.call("EXEC") == NIL_ARRAY
    assert c.call("EXISTS", "x") == (":", 0)


def test_watch_own_write_aborts(c):
    c.call("SET", "w", "1")
    c.call("WATCH", "w")
    c.call("SET", "w", "2")
    assert _exec_ping(c) == NIL_ARRAY


def test_watch_missing_key_created_aborts(c, c2):
    c.call("WATCH", "w")
    c2.call("SET", "w", "1")
    assert _exec_ping(c) == NIL_ARRAY


@pytest.mark.parametrize("cmd", [
    ("EXPIRE", "w", "100"), ("DEL", "w"), ("APPEND", "w", "x"), ("INCR", "w"),
    ("RENAME", "w", "z"), ("PERSIST", "w"), ("GETDEL", "w"), ("SETRANGE", "w", "0", "x"),
])
def test_watch_aborted_by_modifying_commands(c, c2, cmd):
    c.call("SET", "w", "1", "EX", "1000")
    c.call("WATCH", "w")
    assert c2.call(*cmd)[0] != "-"
    assert _exec_ping(c) == NIL_ARRAY


@pytest.mark.parametrize("setup,cmd", [
    (("SET", "w", "1"), ("SET", "w", "1")),
    (("HSET", "w", "f", "v"), ("HSET", "w", "f", "v")),
    (("RPUSH", "w", "a"), ("LSET", "w", "0", "a")),
    (("SET", "w", "abc"), ("SETRANGE", "w", "0", "a")),
])
def test_watch_aborted_by_writes_that_leave_the_value_as_it_was(c, c2, setup, cmd):
    # Redis signals these keys modified all the same; Basalt writes no metadata for them.
    c.call(*setup)
    c.call("WATCH", "w")
    assert c2.call(*cmd)[0] != "-"
    assert _exec_ping(c) == NIL_ARRAY


def test_watch_rename_into_watched_key_aborts(c, c2):
    c.call("SET", "src", "1")
    c.call("WATCH", "w")
    c2.call("RENAME", "src", "w")
    assert _exec_ping(c) == NIL_ARRAY


def test_watch_other_db_does_not_abort(c, c2):
    c.call("WATCH", "w")
    c2.call("SELECT", "1")
    c2.call("SET", "w", "1")
    assert _exec_ping(c) == ("*", [("+", b"PONG")])


def test_watch_noop_write_does_not_abort(c, c2):
    c.call("WATCH", "w")
    c2.call("DEL", "w")  # nothing deleted
    c2.call("SET", "w", "1", "XX")  # not set
    assert _exec_ping(c) == ("*", [("+", b"PONG")])


def test_watched_key_expiring_aborts(c):
    c.call("SET", "e", "1", "PX", "100")
    assert c.call("WATCH", "e") == OK
    time.sleep(0.3)
    c.call("MULTI")
    c.call("SET", "z", "1")
    assert c.call("EXEC") == NIL_ARRAY
    assert c.call("EXISTS", "z") == (":", 0)


def test_flushdb_invalidates_watch(c, c2):
    c.call("SET", "w", "1")
    c.call("WATCH", "w")
    c2.call("FLUSHDB")
    assert _exec_ping(c) == NIL_ARRAY


def test_flushall_invalidates_watch(c, c2):
    c.call("SET", "w", "1")
    c.call("WATCH", "w")
    c2.call("FLUSHALL")
    assert _exec_ping(c) == NIL_ARRAY


def test_swapdb_invalidates_watch(c, c2):
    c.call("SET", "w", "1")
    c.call("WATCH", "w")
    c2.call("SWAPDB", "0", "1")
    assert _exec_ping(c) == NIL_ARRAY


def test_flush_keeps_the_watch_of_a_key_that_did_not_exist(c, c2):
    c2.call("SET", "other", "1")
    c.call("WATCH", "w")
    c2.call("FLUSHDB")
    assert _exec_ping(c) == ("*", [("+", b"PONG")])
    c.call("WATCH", "w")
    c2.call("FLUSHALL")
    assert _exec_ping(c) == ("*", [("+", b"PONG")])


def test_flushdb_of_another_database_keeps_the_watch(c, c2):
    c.call("SET", "w", "1")
    c.call("WATCH", "w")
    c2.call("SELECT", "1")
    c2.call("SET", "w", "1")
    c2.call("FLUSHDB")
    assert _exec_ping(c) == ("*", [("+", b"PONG")])


def test_swapdb_invalidates_a_watched_key_that_exists_only_in_the_other_database(c, c2):
    c2.call("SELECT", "1")
    c2.call("SET", "w", "1")
    c.call("WATCH", "w")
    c2.call("SWAPDB", "0", "1")
    assert _exec_ping(c) == NIL_ARRAY


def test_swapdb_keeps_the_watch_of_a_key_absent_from_both_databases(c, c2):
    c2.call("SET", "other", "1")
    c.call("WATCH", "w")
    c2.call("SWAPDB", "0", "1")
    assert _exec_ping(c) == ("*", [("+", b"PONG")])


def test_unwatch(c, c2):
    c.call("SET", "w", "1")
    c.call("WATCH", "w")
    assert c.call("UNWATCH") == OK
    c2.call("SET", "w", "2")
    assert _exec_ping(c) == ("*", [("+", b"PONG")])


def test_exec_clears_watches(c, c2):
    c.call("WATCH", "w")
    c2.call("SET", "w", "1")
    assert _exec_ping(c) == NIL_ARRAY
    c2.call("SET", "w", "2")  # no longer watched
    assert _exec_ping(c) == ("*", [("+", b"PONG")])


def test_discard_clears_watches(c, c2):
    c.call("WATCH", "w")
    c.call("MULTI")
    c.call("DISCARD")
    c2.call("SET", "w", "1")
    assert _exec_ping(c) == ("*", [("+", b"PONG")])


def test_watch_multiple_keys(c, c2):
    assert c.call("WATCH", "a", "b", "c") == OK
    c2.call("SET", "c", "1")
    assert _exec_ping(c) == NIL_ARRAY


def test_watch_inside_multi_is_an_error_but_keeps_transaction(c):
    c.call("WATCH", "x")
    c.call("MULTI")
    assert c.call("WATCH", "y") == ("-", "ERR WATCH inside MULTI is not allowed")
    assert c.call("SET", "x", "1") == QUEUED
    assert c.call("EXEC") == ("*", [OK])


def test_watch_arity(c):
    assert c.call("WATCH") == ("-", "ERR wrong number of arguments for 'watch' command")


def test_unwatch_inside_multi_is_queued(c):
    c.call("MULTI")
    assert c.call("UNWATCH") == QUEUED
    assert c.call("EXEC") == ("*", [OK])


# --------------------------------------------------------------------------
# redis-py helpers
# --------------------------------------------------------------------------
def test_redis_py_pipeline_transaction(r):
    p = r.pipeline(transaction=True)
    p.set("a", 1).incr("a").get("a").incrby("a", 5)
    assert p.execute() == [True, 2, "2", 7]


def test_redis_py_pipeline_runtime_error(r):
    r.set("s", "x")
    p = r.pipeline(transaction=True)
    p.set("a", 1).incr("s").incr("a")
    res = p.execute(raise_on_error=False)
    assert res[0] is True and res[2] == 2
    assert isinstance(res[1], redis.ResponseError)
    assert str(res[1]).endswith(NOT_INT)


def test_redis_py_pipeline_queue_error_raises(r):
    p = r.pipeline(transaction=True)
    p.set("a", 1).execute_command("GET")
    with pytest.raises(redis.ResponseError,
                       match="wrong number of arguments for 'get' command"):
        p.execute()
    assert r.exists("a") == 0


def test_redis_py_transaction_helper_retries_on_conflict(server, r):
    r.set("counter", 0)
    other = server.client()
    attempts = []

    def body(pipe):
        attempts.append(1)
        v = int(pipe.get("counter"))
        if len(attempts) == 1:
            other.incr("counter")  # conflicting write -> EXEC returns nil
        pipe.multi()
        pipe.set("counter", v + 10)

    try:
        res = r.transaction(body, "counter")
    finally:
        other.close()
    assert res == [True]
    assert len(attempts) == 2
    assert r.get("counter") == "11"


def test_redis_py_watch_error(server, r):
    other = server.client()
    try:
        with r.pipeline() as p:
            p.watch("k")
            other.set("k", "changed")
            p.multi()
            p.set("k", "mine")
            with pytest.raises(redis.WatchError):
                p.execute()
    finally:
        other.close()
    assert r.get("k") == "changed"


# --------------------------------------------------------------------------
# atomicity
# --------------------------------------------------------------------------
def test_exec_is_atomic_for_concurrent_readers(server, r):
    r.mset({"a": 0, "b": 0})
    stop = threading.Event()
    errors = []
    writes = []

    def writer():
        w = server.client()
        try:
            n = 0
            while not stop.is_set() and n < 3000:
                p = w.pipeline(transaction=True)
                p.incr("a").incr("b")
                res = p.execute()
                assert res[0] == res[1]
                n += 1
            writes.append(n)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            w.close()

    t = threading.Thread(target=writer)
    t.start()
    reader = server.client()
    seen = 0
    try:
        deadline = time.monotonic() + 20
        while t.is_alive() and time.monotonic() < deadline:
            a, b = reader.mget("a", "b")
            assert a == b, "MGET saw a half-applied transaction: a=%s b=%s" % (a, b)
            seen += 1
    finally:
        stop.set()
        t.join(30)
        reader.close()
    assert not errors, errors
    assert writes and writes[0] > 0
    assert seen > 0
    assert r.mget("a", "b") == [str(writes[0])] * 2


# --------------------------------------------------------------------------------------
# Refusals that doom a transaction, as Redis 7.2's rejectCommand: a busy script, too few
# replicas, a stale replica, a server that became a replica since the commands were queued.
# --------------------------------------------------------------------------------------
BUSY = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."


def busy_script(server):
    """Starts an endless script on a connection of its own; returns it once others get BUSY."""
    runner = RawConn(server.port)
    runner.send("EVAL", "while true do end", "0")
    deadline = time.monotonic() + 5
    with RawConn(server.port) as probe:
        while time.monotonic() < deadline and probe.call("PING") != ("-", BUSY):
            time.sleep(0.02)
    return runner


def kill_script(server, runner):
    with RawConn(server.port) as killer:
        assert killer.call("SCRIPT", "KILL") == OK
    assert runner.read()[0] == "-"
    runner.close()


def test_multi_passes_a_busy_script_and_a_refused_command_dooms_it(server, r, c):
    r.config_set("busy-reply-threshold", 50)
    try:
        r.set("xx", 1)
        runner = busy_script(server)
        assert c.call("MULTI") == OK
        assert c.call("INCR", "xx") == ("-", BUSY)
        kill_script(server, runner)
        assert c.call("INCR", "xx") == QUEUED
        assert c.call("EXEC") == ("-", EXECABORT)
        assert r.get("xx") == "1"
    finally:
        r.config_set("busy-reply-threshold", 5000)


def test_exec_during_a_busy_script_discards_the_transaction(server, r, c):
    r.config_set("busy-reply-threshold", 50)
    try:
        r.set("xx", 1)
        assert c.call("MULTI") == OK
        assert c.call("INCR", "xx") == QUEUED
        runner = busy_script(server)
        assert c.call("EXEC") == ("-", "EXECABORT Transaction discarded because of: " + BUSY)
        kill_script(server, runner)
        assert r.get("xx") == "1"
        assert c.call("EXEC") == ("-", "ERR EXEC without MULTI")
    finally:
        r.config_set("busy-reply-threshold", 5000)


def test_min_replicas_to_write_refuses_writes_and_transactions_that_write(server, r, c):
    r.set("xx", 1)
    assert c.call("MULTI") == OK
    assert c.call("INCR", "xx") == QUEUED
    r.config_set("min-replicas-to-write", 2)
    try:
        assert c.call("EXEC") == ("-", "EXECABORT Transaction discarded because of: NOREPLICAS "
                                       "Not enough good replicas to write.")
        assert c.call("SET", "k", "v") == ("-", "NOREPLICAS Not enough good replicas to write.")
        assert c.call("GET", "xx") == ("$", b"1")
        assert c.call("MULTI") == OK
        assert c.call("GET", "xx") == QUEUED
        assert c.call("EXEC") == ("*", [("$", b"1")])
    finally:
        r.config_set("min-replicas-to-write", 0)


def test_stale_replica_refuses_what_needs_fresh_data(server, r, c):
    r.set("xx", 1)
    r.config_set("replica-serve-stale-data", "no")
    try:
        assert c.call("MULTI") == OK
        assert c.call("GET", "xx") == QUEUED
        r.replicaof("127.0.0.1", 1)  # nothing listens there: the link stays down
        masterdown = ("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set "
                      "to 'no'.")
        assert c.call("EXEC") == ("-", "EXECABORT Transaction discarded because of: " + masterdown)
        assert c.call("GET", "xx") == ("-", masterdown)
        assert c.call("PING") == ("-", masterdown)
        assert c.call("INFO", "replication")[0] == "$"  # allowed on stale data
    finally:
        r.replicaof("no", "one")
        r.config_set("replica-serve-stale-data", "yes")
    assert c.call("GET", "xx") == ("$", b"1")


def test_replicaof_inside_multi_does_not_stop_the_commands_after_it(server, r, c):
    r.set("foo", "bar")
    assert c.call("MULTI") == OK
    assert c.call("SET", "foo2", "bar") == QUEUED
    assert c.call("REPLICAOF", "127.0.0.1", "1") == QUEUED
    assert c.call("SET", "foo3", "bar") == QUEUED
    try:
        assert c.call("EXEC") == ("*", [OK, OK, OK])
        assert c.call("SET", "foo4", "bar") == ("-", "READONLY You can't write against a read "
                                                     "only replica.")
    finally:
        r.replicaof("no", "one")
