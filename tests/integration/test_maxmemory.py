"""maxmemory under the noeviction policy (Redis 7.2 semantics): past it, commands that may grow
the data set are refused with Redis's OOM error, inside MULTI every command but EXEC, DISCARD,
QUIT and RESET is, and scripts and functions follow their flags (allow-oom, no-writes). The
servers here use megabytes, so maxmemory 1 is always exceeded. The eviction policies evict
nothing in Basalt (its data is on disk), so those tests are basalt_only; the rest also pass
with --target redis."""
import pytest

from resp import RawConn

OOM = "OOM command not allowed when used memory > 'maxmemory'."
OK = ("+", b"OK")


@pytest.fixture
def c(server, r):
    conn = RawConn(server.port)
    yield conn
    conn.call("CONFIG", "SET", "maxmemory", "0")
    conn.call("CONFIG", "SET", "maxmemory-policy", "noeviction")
    conn.close()


@pytest.fixture
def c2(server, r):
    conn = RawConn(server.port)
    yield conn
    conn.close()


def over_limit(conn):
    assert conn.call("CONFIG", "SET", "maxmemory", "1") == OK


def test_writes_that_grow_the_data_set_are_refused(c):
    c.call("SET", "k", "v")
    c.call("RPUSH", "l", "a", "b")
    over_limit(c)
    assert c.call("SET", "k", "w") == ("-", OOM)
    assert c.call("LPUSH", "l", "x") == ("-", OOM)
    assert c.call("GET", "k") == ("$", b"v")
    # Commands that only shrink the data set still run.
    assert c.call("LPOP", "l") == ("$", b"a")
    assert c.call("DEL", "k") == (":", 1)
    assert c.call("CONFIG", "SET", "maxmemory", "0") == OK
    assert c.call("SET", "k", "w") == OK


def test_a_limit_above_the_memory_in_use_refuses_nothing(c):
    assert c.call("CONFIG", "SET", "maxmemory", "100gb") == OK
    assert c.call("SET", "k", "v") == OK


def test_multi_refuses_queueing_and_discard_still_works(c):
    over_limit(c)
    assert c.call("MULTI") == OK
    assert c.call("GET", "k") == ("-", OOM)
    assert c.call("DISCARD") == OK
    assert c.call("MULTI") == OK
    assert c.call("SET", "k", "v") == ("-", OOM)
    assert c.call("CONFIG", "SET", "maxmemory", "0")[0] == "-"  # refused too: queueing takes memory
    assert c.call("EXEC") == ("-", "EXECABORT Transaction discarded because of previous errors.")


def test_exec_is_refused_when_it_queued_a_write(c, c2):
    c.call("SET", "x", "value")
    assert c.call("MULTI") == OK
    c.call("GET", "x")
    c.call("PING")
    over_limit(c2)
    assert c.call("EXEC") == ("*", [("$", b"value"), ("+", b"PONG")])
    assert c.call("MULTI") == OK
    assert c2.call("CONFIG", "SET", "maxmemory", "0") == OK
    c.call("SET", "x", "1")
    c.call("GET", "x")
    over_limit(c2)
    assert c.call("EXEC") == ("-", "EXECABORT Transaction discarded because of: " + OOM)
    assert c.call("GET", "x") == ("$", b"value")


def test_scripts_follow_their_flags(c):
    c.call("SET", "x", "123")
    over_limit(c)
    # No shebang: refused at its first call that may grow the data set.
    reply = c.call("EVAL", "redis.call('set', 'x', 1) return 1", "1", "x")
    assert reply[0] == "-" and reply[1].startswith(OOM), reply
    assert c.call("EVAL", "return redis.call('get', 'x')", "1", "x") == ("$", b"123")
    # A shebang without no-writes declares a write: refused whatever it does.
    assert c.call("EVAL", "#!lua\nreturn 1", "0") == ("-", OOM)
    assert c.call("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'x')", "1", "x") == \
        ("$", b"123")
    assert c.call("EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', 'x', 1)", "1", "x") \
        == OK
    assert c.call("GET", "x") == ("$", b"1")


def test_functions_follow_their_flags(c):
    c.call("FUNCTION", "FLUSH")
    lib = ("#!lua name=oomlib\n"
           "redis.register_function('w', function() return redis.call('set', 'x', 'w') end)\n"
           "redis.register_function{function_name='ro', callback=function() return 'hello' end,"
           " flags={'no-writes'}}\n"
           "redis.register_function{function_name='oom', flags={'allow-oom'},"
           " callback=function() return redis.call('set', 'x', 'oom') end}\n")
    assert c.call("FUNCTION", "LOAD", lib) == ("$", b"oomlib")
    dump = c.call("FUNCTION", "DUMP")[1]
    try:
        over_limit(c)
        assert c.call("FCALL", "w", "1", "x") == ("-", OOM)
        assert c.call("FCALL", "ro", "0") == ("$", b"hello")
        assert c.call("FCALL", "oom", "1", "x") == OK
        assert c.call("FUNCTION", "LOAD", "REPLACE", lib) == ("-", OOM)
        assert c.call("FUNCTION", "FLUSH") == OK
        assert c.call("FUNCTION", "RESTORE", dump) == ("-", OOM)
        assert c.call("FUNCTION", "LIST") == ("*", [])
    finally:
        c.call("CONFIG", "SET", "maxmemory", "0")
        c.call("FUNCTION", "FLUSH")


@pytest.mark.basalt_only(reason="Redis evicts keys under the other policies; Basalt's data is "
                                "on disk, so it evicts nothing and refuses nothing")
def test_eviction_policies_refuse_nothing(c):
    assert c.call("CONFIG", "SET", "maxmemory-policy", "allkeys-lru") == OK
    c.call("SET", "k", "v")
    over_limit(c)
    assert c.call("SET", "k2", "v2") == OK
    assert c.call("DBSIZE") == (":", 2)
