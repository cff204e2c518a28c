"""MIGRATE: keys moved from the server under test to another one (the same kind of server, and a
real redis-server), and from a redis-server into the server under test: every type, TTLs, COPY,
REPLACE, KEYS, AUTH/AUTH2 with a requirepass target, NOKEY, the target's errors (BUSYKEY,
WRONGPASS, a bad database) forwarded, IOERR on a refused connection and on a target that never
answers, the `del` notifications and the deletes reaching a replica, the connection kept for the next
call (and replaced when it went stale)."""
import socket
import threading
import time

import pytest

from helpers import wait_until
from test_dump_restore import KINDS, fill, read_value

HOST = "127.0.0.1"


@pytest.fixture(scope="module")
def dest_servers(start_module_server):
    """Destinations: a second server of the target's kind, the same with requirepass, and a real
    redis-server (whatever --target says)."""
    from conftest import ServerProcess
    same = start_module_server(name="dest")
    auth = start_module_server(args={"requirepass": "s3cret"}, name="auth")
    redis_dest = ServerProcess("redis", name="redis-dest").start()
    yield {"same": same, "auth": auth, "redis": redis_dest}
    redis_dest.cleanup()


@pytest.fixture
def src(server):
    c = server.client(decode_responses=False)
    c.flushall()
    yield c
    c.close()


def flushed_client(s, **kw):
    c = s.client(decode_responses=False, **kw)
    c.flushall()
    return c


@pytest.fixture
def dest(dest_servers):
    c = flushed_client(dest_servers["same"])
    yield dest_servers["same"].port, c
    c.close()


@pytest.fixture(params=["same", "redis"])
def any_dest(request, dest_servers):
    s = dest_servers[request.param]
    c = flushed_client(s)
    yield s.port, c
    c.close()


@pytest.fixture
def auth_dest(dest_servers):
    s = dest_servers["auth"]
    c = flushed_client(s, password="s3cret")
    yield s.port, c
    c.close()


def migrate(c, port, key, *args, db=0, timeout=5000):
    return c.execute_command("MIGRATE", HOST, port, key, db, timeout, *args)


def error_of(c, *args, **kw):
    with pytest.raises(Exception) as e:
        migrate(c, *args, **kw)
    return str(e.value)


@pytest.mark.parametrize("kind", KINDS)
def test_every_type_moves_and_leaves_the_source(src, any_dest, kind):
    port, d = any_dest
    fill(src, kind, "k")
    expected = read_value(src, "k")
    assert migrate(src, port, "k") == b"OK"
    assert read_value(d, "k") == expected
    assert d.ttl("k") == -1
    assert src.exists("k") == 0


def test_ttl_is_carried(src, any_dest):
    port, d = any_dest
    src.set("s", "v", px=50000)
    assert migrate(src, port, "s") == b"OK"
    assert 45000 <= d.pttl("s") <= 50000


def test_copy_keeps_the_source_and_replace_overwrites(src, any_dest):
    port, d = any_dest
    src.rpush("l", "a", "b")
    assert migrate(src, port, "l", "COPY") == b"OK"
    assert src.lrange("l", 0, -1) == [b"a", b"b"]
    assert error_of(src, port, "l", "COPY") == \
        "ERR Target instance replied with error: BUSYKEY Target key name already exists."
    src.rpush("l", "c")
    assert migrate(src, port, "l", "COPY", "REPLACE") == b"OK"
    assert d.lrange("l", 0, -1) == [b"a", b"b", b"c"]
    assert src.exists("l") == 1
    assert migrate(src, port, "l", "REPLACE") == b"OK"
    assert src.exists("l") == 0


def test_busykey_leaves_both_sides_unchanged(src, any_dest):
    port, d = any_dest
    src.set("k", "mine")
    d.set("k", "theirs")
    assert error_of(src, port, "k") == \
        "ERR Target instance replied with error: BUSYKEY Target key name already exists."
    assert src.get("k") == b"mine"
    assert d.get("k") == b"theirs"


def test_keys_option_moves_the_existing_keys(src, any_dest):
    port, d = any_dest
    src.set("a", "1")
    src.sadd("b", "x", "y")
    assert migrate(src, port, "", "KEYS", "a", "missing", "b") == b"OK"
    assert d.get("a") == b"1"
    assert d.smembers("b") == {b"x", b"y"}
    assert d.exists("missing") == 0
    assert src.exists("a", "b") == 0


def test_keys_option_partial_busykey(src, any_dest):
    """The keys the target took are deleted; the first error is the reply."""
    port, d = any_dest
    src.set("a", "1")
    src.set("b", "2")
    src.set("c", "3")
    d.set("b", "theirs")
    assert error_of(src, port, "", "KEYS", "a", "b", "c") == \
        "ERR Target instance replied with error: BUSYKEY Target key name already exists."
    assert src.exists("a") == 0 and src.exists("c") == 0
    assert src.get("b") == b"2"
    assert d.get("a") == b"1" and d.get("c") == b"3" and d.get("b") == b"theirs"


def test_destination_database(src, any_dest):
    port, d = any_dest
    src.set("k", "v")
    assert migrate(src, port, "k", db=5) == b"OK"
    d.execute_command("SELECT", 5)
    assert d.get("k") == b"v"
    assert d.execute_command("DBSIZE") == 1


def test_bad_database_is_the_targets_error(src, any_dest):
    port, _ = any_dest
    src.set("k", "v")
    assert error_of(src, port, "k", db=99) == \
        "ERR Target instance replied with error: ERR DB index is out of range"
    assert src.get("k") == b"v"


def test_nokey(src, any_dest):
    port, _ = any_dest
    assert migrate(src, port, "missing") == b"NOKEY"
    assert migrate(src, port, "", "KEYS", "x", "y") == b"NOKEY"
    # Nothing is sent when no key exists: not even an unreachable target is an error.
    assert migrate(src, 1, "missing") == b"NOKEY"


def test_auth_and_auth2(src, auth_dest):
    port, d = auth_dest
    src.set("a", "1")
    src.set("b", "2")
    src.set("c", "3")
    assert error_of(src, port, "a") == \
        "ERR Target instance replied with error: NOAUTH Authentication required."
    assert error_of(src, port, "a", "AUTH", "wrong") == "ERR Target instance replied with " \
        "error: WRONGPASS invalid username-password pair or user is disabled."
    assert error_of(src, port, "a", "AUTH2", "default", "wrong") == "ERR Target instance " \
        "replied with error: WRONGPASS invalid username-password pair or user is disabled."
    assert src.exists("a") == 1
    assert migrate(src, port, "a", "AUTH", "s3cret") == b"OK"
    assert migrate(src, port, "b", "AUTH2", "default", "s3cret") == b"OK"
    assert migrate(src, port, "", "COPY", "AUTH", "s3cret", "KEYS", "c") == b"OK"
    assert [d.get(k) for k in ("a", "b", "c")] == [b"1", b"2", b"3"]
    assert src.exists("a", "b", "c") == 1


def test_argument_errors(src, dest):
    port, _ = dest
    src.set("k", "v")
    assert error_of(src, port, "k", "KEYS", "k") == "ERR When using MIGRATE KEYS option, " \
        "the key argument must be set to the empty string"
    assert error_of(src, port, "k", "FOO") == "ERR syntax error"
    assert error_of(src, port, "k", "AUTH") == "ERR syntax error"
    assert error_of(src, port, "k", "AUTH2", "user") == "ERR syntax error"
    assert error_of(src, port, "k", db="x") == "ERR value is not an integer or out of range"
    assert error_of(src, port, "k", timeout="x") == "ERR value is not an integer or out of range"
    with pytest.raises(Exception) as e:
        src.execute_command("MIGRATE", HOST, port, "k", 0)
    assert str(e.value) == "ERR wrong number of arguments for 'migrate' command"
    assert src.get("k") == b"v"


def test_getkeys(server):
    src = server.client(callbacks=False, decode_responses=False)
    assert src.execute_command("COMMAND", "GETKEYS", "MIGRATE", HOST, 1, "k", 0, 10) == [b"k"]
    assert src.execute_command("COMMAND", "GETKEYS", "MIGRATE", HOST, 1, "", 0, 10, "COPY",
                               "AUTH2", "u", "keys", "KEYS", "a", "b") == [b"a", b"b"]
    info = src.execute_command("COMMAND", "INFO", "migrate")[0]
    assert info[1:3] == [-6, [b"write", b"movablekeys"]]
    assert info[3:6] == [3, 3, 1]


def test_refused_connection_is_a_write_error(src):
    s = socket.socket()
    s.bind((HOST, 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    src.set("k", "v")
    assert error_of(src, port, "k") == "IOERR error or timeout writing to target instance"
    assert error_of(src, port, "k", "AUTH", "pw") == \
        "IOERR error or timeout writing to target instance"
    assert src.get("k") == b"v"


def test_unresolvable_host_is_a_connect_error(src):
    src.set("k", "v")
    with pytest.raises(Exception) as e:
        src.execute_command("MIGRATE", "no-such-host.invalid", 6379, "k", 0, 500)
    assert str(e.value) == "IOERR error or timeout connecting to the client"
    assert src.get("k") == b"v"


@pytest.fixture
def silent_target():
    """A listener that accepts connections and never answers."""
    s = socket.socket()
    s.bind((HOST, 0))
    s.listen(8)
    yield s.getsockname()[1]
    s.close()


def test_target_that_never_answers_times_out(src, silent_target):
    src.set("k", "v")
    start = time.monotonic()
    assert error_of(src, silent_target, "k", timeout=600) == \
        "IOERR error or timeout reading to target instance"
    took = time.monotonic() - start
    assert 0.5 <= took < 3.0
    assert src.get("k") == b"v"


@pytest.mark.basalt_only
def test_waiting_migrate_does_not_hold_up_other_clients(start_server, silent_target):
    """With one worker, a client whose MIGRATE waits on a silent target does not stop another
    client of the same worker (Redis, single-threaded, would answer PING only afterwards)."""
    s = start_server(args={"workers": 1})
    c = s.client(decode_responses=False)
    c.set("k", "v")
    result = {}

    def run():
        try:
            migrate(c, silent_target, "k", timeout=2000)
        except Exception as e:  # the expected IOERR
            result["error"] = str(e)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.3)
    other = s.client()
    start = time.monotonic()
    assert other.ping()
    assert other.set("other", "1")
    assert time.monotonic() - start < 1.0
    t.join()
    assert result["error"] == "IOERR error or timeout reading to target instance"
    # The migrating client's later commands come after its reply, in order.
    assert c.get("k") == b"v"


@pytest.mark.basalt_only
def test_shutdown_does_not_wait_for_a_migrate(start_server, silent_target):
    s = start_server()
    c = s.client(decode_responses=False)
    c.set("k", "v")

    def run():
        try:
            migrate(c, silent_target, "k", timeout=60000)
        except Exception:  # the connection closes under it
            pass

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.3)
    start = time.monotonic()
    assert s.stop(timeout=20) == 0
    assert time.monotonic() - start < 5
    t.join()


def cached_sockets(c):
    return c.info("stats")["migrate_cached_sockets"]


def test_connection_is_kept_and_reused(server, start_server):
    """One connection serves consecutive calls; a target restart makes the kept connection
    stale, and the next call reconnects by itself."""
    src = server.client()
    src.flushall()
    target = start_server(name="kept")
    d = target.client()
    before = d.info("stats")["total_connections_received"]
    for i in range(3):
        src.set("k%d" % i, i)
        assert migrate(src, target.port, "k%d" % i, db=i % 2) == "OK"
    assert d.info("stats")["total_connections_received"] == before + 1
    assert cached_sockets(src) >= 1
    target.restart()
    d = target.client()
    d.flushall()
    src.set("after", "1")
    assert migrate(src, target.port, "after") == "OK"
    assert d.get("after") == "1"
    d.close()
    target.stop()


@pytest.mark.slow
def test_kept_connection_is_closed_after_ten_idle_seconds(server, start_server):
    src = server.client()
    src.flushall()
    target = start_server(name="idle")
    src.set("k", "v")
    assert migrate(src, target.port, "k") == "OK"
    time.sleep(3)
    count = cached_sockets(src)
    assert count >= 1
    time.sleep(10)
    assert cached_sockets(src) < count


def test_del_notifications(server, src, dest):
    port, _ = dest
    src.config_set("notify-keyspace-events", "KEA")
    try:
        p = server.client(decode_responses=False).pubsub()
        p.psubscribe("__keyevent@0__:*")
        wait_until(lambda: p.get_message(timeout=0.1) is not None)
        src.set("a", "1")
        src.set("b", "2")
        src.set("c", "3")
        assert migrate(src, port, "", "KEYS", "a", "b") == b"OK"
        assert migrate(src, port, "c", "COPY") == b"OK"
        events = []
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and len(events) < 5:
            m = p.get_message(timeout=0.1)
            if m and m["type"] == "pmessage":
                events.append((m["channel"].decode().split(":")[-1], m["data"]))
        assert events == [("set", b"a"), ("set", b"b"), ("set", b"c"), ("del", b"a"),
                          ("del", b"b")]
        p.close()
    finally:
        src.config_set("notify-keyspace-events", "")


def test_deletes_reach_a_replica(start_server, dest):
    port, d = dest
    master = start_server(name="master")
    replica = start_server(name="replica")
    m = master.client(decode_responses=False)
    rep = replica.client(decode_responses=False)
    rep.execute_command("REPLICAOF", HOST, master.port)
    m.set("gone", "1")
    m.set("kept", "2")
    wait_until(lambda: rep.get("gone") == b"1" and rep.get("kept") == b"2", timeout=10)
    assert migrate(m, port, "gone") == b"OK"
    assert migrate(m, port, "kept", "COPY") == b"OK"
    wait_until(lambda: rep.exists("gone") == 0, timeout=10)
    assert rep.get("kept") == b"2"
    assert d.get("gone") == b"1"


def test_migrate_inside_multi(src, any_dest):
    port, d = any_dest
    src.set("k", "v")
    p = src.pipeline(transaction=True)
    p.execute_command("MIGRATE", HOST, port, "k", 0, 5000)
    p.get("k")
    assert p.execute() == [b"OK", None]
    assert d.get("k") == b"v"


def test_redis_migrates_into_this_server(server, src, dest_servers):
    """A real redis-server's MIGRATE (SELECT, RESTORE ... REPLACE, AUTH) lands here."""
    from conftest import ServerProcess
    origin = ServerProcess("redis", name="origin").start()
    try:
        o = origin.client(decode_responses=False)
        for i, kind in enumerate(KINDS):
            fill(o, kind, "k%d" % i)
        o.set("ttl", "x", px=60000)
        expected = {("k%d" % i): read_value(o, "k%d" % i) for i in range(len(KINDS))}
        keys = list(expected) + ["ttl"]
        assert migrate(o, server.port, "", "KEYS", *keys, db=3) == b"OK"
        src.execute_command("SELECT", 3)
        for key, value in expected.items():
            assert read_value(src, key) == value
        assert 50000 <= src.pttl("ttl") <= 60000
        assert o.dbsize() == 0
        o.set("k0", "again")
        assert migrate(o, server.port, "k0", "REPLACE", db=3) == b"OK"
        assert src.get("k0") == b"again"
        auth = flushed_client(dest_servers["auth"], password="s3cret")
        o.set("a", "1")
        assert migrate(o, dest_servers["auth"].port, "a", "AUTH", "s3cret") == b"OK"
        assert auth.get("a") == b"1"
    finally:
        origin.cleanup()
