"""Connection and server commands: PING/ECHO/HELLO/AUTH/QUIT/RESET, CLIENT,
INFO, CONFIG, TIME, LASTSAVE, SLOWLOG, COMMAND, error texts, inline
commands, pipelining, RESP3."""
import os
import re
import time

import pytest
import redis

from helpers import arity, exact, parse_info, raises
from resp import RawConn, encode, plain

NOAUTH = "NOAUTH Authentication required."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
AUTH_NOPASS = ("ERR AUTH <password> called without any password configured for the "
               "default user. Are you sure your configuration is correct?")
HELLO_NOAUTH = ("NOAUTH HELLO must be called with the client already authenticated, "
                "otherwise the HELLO AUTH <user> <pass> option can be used to authenticate "
                "the client and select the RESP protocol version at the same time")


@pytest.fixture
def c(server, r):
    conn = RawConn(server.port)
    yield conn
    conn.close()


# --------------------------------------------------------------------------
# PING / ECHO
# --------------------------------------------------------------------------
def test_ping(c):
    assert c.call("PING") == ("+", b"PONG")
    assert c.call("PING", "hello") == ("$", b"hello")
    assert c.call("ping", "") == ("$", b"")
    assert c.call("PING", "a", "b") == ("-", arity("ping"))


def test_echo(c):
    assert c.call("ECHO", "x\r\ny") == ("$", b"x\r\ny")
    assert c.call("ECHO") == ("-", arity("echo"))
    assert c.call("ECHO", "a", "b") == ("-", arity("echo"))


# --------------------------------------------------------------------------
# HELLO
# --------------------------------------------------------------------------
HELLO_KEYS = ["server", "version", "proto", "id", "mode", "role", "modules"]


def _check_hello(d, proto, client_id):
    assert list(d) == HELLO_KEYS
    assert isinstance(d["server"], str) and d["server"]
    assert re.match(r"^\d+\.\d+\.\d+$", d["version"])
    assert d["proto"] == proto
    assert d["id"] == client_id
    assert d["mode"] == "standalone"
    assert d["role"] == "master"
    assert d["modules"] == []


def test_hello_2_is_flat_array(c):
    cid = plain(c.call("CLIENT", "ID"))
    t, v = c.call("HELLO", "2")
    assert t == "*" and len(v) == 14
    d = {plain(v[i]).decode(): plain(v[i + 1]) for i in range(0, 14, 2)}
    d = {k: (x.decode() if isinstance(x, bytes) else x) for k, x in d.items()}
    _check_hello(d, 2, cid)
    assert v[5] == (":", 2) and v[13] == ("*", [])
    t, v = c.call("HELLO")  # no argument: current protocol, same shape
    assert t == "*" and v[5] == (":", 2)


def test_hello_3_is_map_and_switches_protocol(c):
    cid = plain(c.call("CLIENT", "ID"))
    t, pairs = c.call("HELLO", "3")
    assert t == "%"
    d = {plain(k).decode(): plain(x) for k, x in pairs}
    d = {k: (x.decode() if isinstance(x, bytes) else x) for k, x in d.items()}
    _check_hello(d, 3, cid)
    # now speaking RESP3: CONFIG GET is a map, a missing key is the RESP3 null
    assert c.call("CONFIG", "GET", "databases") == ("%", [(("$", b"databases"), ("$", b"16"))])
    assert c.call("GET", "nokey") == ("_", None)
    assert c.call("HELLO", "2")[0] == "*"
    assert c.call("GET", "nokey") == ("$", None)


def test_hello_setname(c):
    assert c.call("HELLO", "2", "SETNAME", "myname")[0] == "*"
    assert c.call("CLIENT", "GETNAME") == ("$", b"myname")


def test_hello_errors(c):
    assert c.call("HELLO", "4") == ("-", "NOPROTO unsupported protocol version")
    assert c.call("HELLO", "1") == ("-", "NOPROTO unsupported protocol version")
    assert c.call("HELLO", "abc") == (
        "-", "ERR Protocol version is not an integer or out of range")
    assert c.call("HELLO", "2", "foo") == ("-", "ERR Syntax error in HELLO option 'foo'")
    assert c.call("HELLO", "2", "SETNAME") == (
        "-", "ERR Syntax error in HELLO option 'SETNAME'")
    assert c.call("HELLO", "2", "AUTH", "default") == (
        "-", "ERR Syntax error in HELLO option 'AUTH'")


# --------------------------------------------------------------------------
# AUTH
# --------------------------------------------------------------------------
def test_auth_without_password_configured(c):
    assert c.call("AUTH", "x") == ("-", AUTH_NOPASS)
    # the default user has 'nopass': any password works in the 2-arg form
    assert c.call("AUTH", "default", "whatever") == ("+", b"OK")
    assert c.call("AUTH", "nouser", "x") == ("-", WRONGPASS)
    assert c.call("AUTH", "a", "b", "c") == ("-", "ERR syntax error")
    assert c.call("AUTH") == ("-", arity("auth"))


@pytest.fixture(scope="module")
def auth_server(start_module_server):
    return start_module_server(args=[("requirepass", "s3cret")], name="auth")


def test_requirepass_noauth(auth_server):
    with RawConn(auth_server.port) as c:
        assert c.call("PING") == ("-", NOAUTH)
        assert c.call("GET", "a") == ("-", NOAUTH)
        assert c.call("MULTI") == ("-", NOAUTH)
        assert c.call("CLIENT", "ID") == ("-", NOAUTH)
        assert c.call("HELLO") == ("-", HELLO_NOAUTH)
        assert c.call("HELLO", "3") == ("-", HELLO_NOAUTH)
        # unknown commands and arity errors are reported before NOAUTH
        assert c.call("FOO") == ("-", "ERR unknown command 'FOO', with args beginning with: ")
        assert c.call("GET") == ("-", arity("get"))


def test_requirepass_auth_flow(auth_server):
    with RawConn(auth_server.port) as c:
        assert c.call("AUTH", "bad") == ("-", WRONGPASS)
        assert c.call("AUTH", "default", "bad") == ("-", WRONGPASS)
        assert c.call("AUTH", "x", "y", "z") == ("-", "ERR syntax error")
        assert c.call("PING") == ("-", NOAUTH)
        assert c.call("AUTH", "s3cret") == ("+", b"OK")
        assert c.call("PING") == ("+", b"PONG")
        # a later failed AUTH does not log the connection out
        assert c.call("AUTH", "bad") == ("-", WRONGPASS)
        assert c.call("PING") == ("+", b"PONG")
        # RESET does
        assert c.call("RESET") == ("+", b"RESET")
        assert c.call("PING") == ("-", NOAUTH)
    with RawConn(auth_server.port) as c:
        assert c.call("AUTH", "default", "s3cret") == ("+", b"OK")
        assert c.call("SET", "k", "v") == ("+", b"OK")


def test_requirepass_hello_auth(auth_server):
    with RawConn(auth_server.port) as c:
        assert c.call("HELLO", "2", "AUTH", "default", "bad") == ("-", WRONGPASS)
        assert c.call("HELLO", "2", "AUTH", "nouser", "s3cret") == ("-", WRONGPASS)
        t, pairs = c.call("HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "n1")
        assert t == "%" and plain(pairs[2][1]) == 3
        assert c.call("CLIENT", "GETNAME") == ("$", b"n1")
        assert c.call("PING") == ("+", b"PONG")


def test_requirepass_redis_py_client(auth_server):
    cl = auth_server.client(password="s3cret")
    try:
        assert cl.ping() is True
        assert cl.set("x", 1) and cl.get("x") == "1"
    finally:
        cl.close()
    bad = auth_server.client(password="nope")
    with pytest.raises(redis.AuthenticationError, match=exact(WRONGPASS)):
        bad.ping()
    bad.close()


# --------------------------------------------------------------------------
# QUIT / RESET
# --------------------------------------------------------------------------
def test_quit_closes_connection(server, c):
    assert c.call("QUIT") == ("+", b"OK")
    assert c.is_closed(timeout=5)
    with RawConn(server.port) as other:
        assert other.call("PING") == ("+", b"PONG")


def test_reset(c):
    c.call("HELLO", "3")
    c.call("SELECT", "3")
    c.call("SET", "k", "db3")
    c.call("CLIENT", "SETNAME", "x")
    c.call("WATCH", "k")
    c.call("MULTI")
    c.call("SET", "q", "1")
    assert c.call("RESET") == ("+", b"RESET")
    assert c.call("EXEC") == ("-", "ERR EXEC without MULTI")
    assert c.call("CLIENT", "GETNAME") == ("$", None)  # RESP2 again: $-1
    assert c.call("GET", "k") == ("$", None)  # back on DB 0
    assert c.call("CONFIG", "GET", "databases")[0] == "*"
    c.call("SELECT", "3")
    assert c.call("EXISTS", "q") == (":", 0)


# --------------------------------------------------------------------------
# CLIENT
# --------------------------------------------------------------------------
def _client_fields(line):
    return dict(f.split("=", 1) for f in line.strip().split(" "))


def test_client_id_unique_and_increasing(server, c):
    a = plain(c.call("CLIENT", "ID"))
    with RawConn(server.port) as c2:
        b = plain(c2.call("CLIENT", "ID"))
    assert isinstance(a, int) and a > 0 and b > a


def test_client_setname_getname(c):
    assert c.call("CLIENT", "GETNAME") == ("$", None)
    assert c.call("CLIENT", "SETNAME", "worker-1") == ("+", b"OK")
    assert c.call("CLIENT", "GETNAME") == ("$", b"worker-1")
    assert c.call("CLIENT", "SETNAME", "") == ("+", b"OK")  # clears the name
    assert c.call("CLIENT", "GETNAME") == ("$", None)
    bad = "ERR Client names cannot contain spaces, newlines or special characters."
    assert c.call("CLIENT", "SETNAME", "a b") == ("-", bad)
    assert c.call("CLIENT", "SETNAME", "a\nb") == ("-", bad)
    assert c.call("CLIENT", "SETNAME") == ("-", arity("client|setname"))
    assert c.call("CLIENT", "SETNAME", "a", "b") == ("-", arity("client|setname"))
    assert c.call("CLIENT", "FOO") == ("-", "ERR unknown subcommand 'FOO'. Try CLIENT HELP.")


def test_client_info_and_list(server, c):
    c.call("CLIENT", "SETNAME", "me")
    c.call("SELECT", "2")
    t, info = c.call("CLIENT", "INFO")
    assert t == "$" and info.endswith(b"\n") and info.count(b"\n") == 1
    f = _client_fields(info.decode())
    cid = plain(c.call("CLIENT", "ID"))
    assert f["id"] == str(cid) and f["name"] == "me" and f["db"] == "2"
    assert f["resp"] == "2" and f["cmd"] == "client|info"
    assert f["laddr"] == "127.0.0.1:%d" % server.port
    assert f["addr"].startswith("127.0.0.1:")
    with RawConn(server.port) as c2:
        c2.call("PING")
        t, lst = c.call("CLIENT", "LIST")
        lines = lst.decode().strip().split("\n")
        ids = [_client_fields(line)["id"] for line in lines]
        assert str(cid) in ids and len(lines) >= 2
        t, one = c.call("CLIENT", "LIST", "ID", str(cid))
        assert _client_fields(one.decode())["name"] == "me"
        assert c.call("CLIENT", "LIST", "ID", "999999") == ("$", b"")
        assert c.call("CLIENT", "LIST", "TYPE", "normal")[0] == "$"
    assert c.call("CLIENT", "LIST", "ID", "abc") == ("-", "ERR Invalid client ID")
    assert c.call("CLIENT", "LIST", "TYPE", "bad") == ("-", "ERR Unknown client type 'bad'")
    assert c.call("CLIENT", "LIST", "foo") == ("-", "ERR syntax error")
    assert c.call("CLIENT", "INFO", "x") == ("-", arity("client|info"))


def test_client_list_names_each_clients_last_command(server, c):
    """cmd= follows a client through repeated, changing and container commands, as in Redis 7
    (a pipeline of one command names it once; a subcommand is always named afresh)."""
    cid = str(plain(c.call("CLIENT", "ID")))

    def last_command():
        with RawConn(server.port) as other:
            t, one = other.call("CLIENT", "LIST", "ID", cid)
        return _client_fields(one.decode())["cmd"]

    steps = [(["SET", "k", "v"], "set"), (["SET", "k", "w"], "set"), (["GET", "k"], "get"),
             (["CONFIG", "GET", "maxclients"], "config|get"),
             (["CONFIG", "GET", "timeout"], "config|get"), (["GET", "k"], "get"),
             (["CLIENT", "GETNAME"], "client|getname"), (["CLIENT", "ID"], "client|id"),
             (["SET", "k", "x"], "set")]
    for argv, expected in steps:
        c.call(*argv)
        assert last_command() == expected, argv
    c.sock.sendall(b"".join(encode(*a) for a in (["GET", "k"], ["GET", "k"], ["PING"])))
    for _ in range(3):
        c.read()
    assert last_command() == "ping"


def _addr(conn):
    return _client_fields(plain(conn.call("CLIENT", "INFO")).decode())["addr"]


def test_client_kill_by_id(server, c):
    with RawConn(server.port) as victim:
        vid = plain(victim.call("CLIENT", "ID"))
        assert c.call("CLIENT", "KILL", "ID", str(vid)) == (":", 1)
        assert victim.is_closed(timeout=5)
    assert c.call("CLIENT", "KILL", "ID", str(vid)) == (":", 0)
    # SKIPME defaults to yes: killing yourself by filter is a no-op
    own = plain(c.call("CLIENT", "ID"))
    assert c.call("CLIENT", "KILL", "ID", str(own)) == (":", 0)
    assert c.call("PING") == ("+", b"PONG")


def test_client_kill_by_addr(server, c):
    with RawConn(server.port) as victim:
        addr = _addr(victim)
        assert c.call("CLIENT", "KILL", "ADDR", addr) == (":", 1)
        assert victim.is_closed(timeout=5)
    assert c.call("CLIENT", "KILL", "ADDR", addr) == (":", 0)
    with RawConn(server.port) as victim:
        addr = _addr(victim)
        # old form: CLIENT KILL ip:port replies +OK
        assert c.call("CLIENT", "KILL", addr) == ("+", b"OK")
        assert victim.is_closed(timeout=5)
    assert c.call("CLIENT", "KILL", addr) == ("-", "ERR No such client")


def test_a_killed_client_is_gone_from_client_list_when_client_kill_replies(server, conns):
    # Redis frees the client inside CLIENT KILL; the victims here sit on either worker.
    killer = conns()
    for _ in range(60):
        victims = [conns() for _ in range(2)]
        for v in victims:
            v.call("CLIENT", "SETNAME", "victim")
        for v in victims:
            assert killer.call("CLIENT", "KILL", "ID", str(plain(v.call("CLIENT", "ID")))) == (
                ":", 1)
        listed = plain(killer.call("CLIENT", "LIST")).decode()
        assert "name=victim " not in listed


def test_client_kill_errors(c):
    assert c.call("CLIENT", "KILL", "ID", "abc") == (
        "-", "ERR client-id should be greater than 0")
    assert c.call("CLIENT", "KILL", "ID", "0") == (
        "-", "ERR client-id should be greater than 0")
    assert c.call("CLIENT", "KILL", "foo", "bar") == ("-", "ERR syntax error")
    assert c.call("CLIENT", "KILL", "ID", "1", "SKIPME", "maybe") == ("-", "ERR syntax error")
    assert c.call("CLIENT", "KILL") == ("-", arity("client|kill"))


# --------------------------------------------------------------------------
# INFO
# --------------------------------------------------------------------------
REQUIRED_SECTIONS = ["server", "clients", "memory", "persistence", "stats",
                     "replication", "cpu", "keyspace"]


def test_info_sections(server, r):
    raw = server.client(callbacks=False)
    try:
        text = raw.execute_command("INFO")
    finally:
        raw.close()
    secs = parse_info(text)
    order = [s for s in secs if s in REQUIRED_SECTIONS]
    assert order == REQUIRED_SECTIONS
    assert secs["server"]["tcp_port"] == str(server.port)
    assert "redis_version" in secs["server"]
    assert int(secs["server"]["uptime_in_seconds"]) >= 0
    assert int(secs["clients"]["connected_clients"]) >= 1
    assert int(secs["memory"]["used_memory"]) > 0
    assert secs["persistence"]["loading"] == "0"
    assert int(secs["stats"]["total_commands_processed"]) > 0
    assert secs["replication"]["role"] == "master"
    assert "used_cpu_sys" in secs["cpu"]


def test_info_names_the_allocator_the_server_runs_with(server, r):
    """mem_allocator is jemalloc-<version>, as Redis reports it, exactly when the server process
    has jemalloc loaded (release builds), and libc otherwise (sanitizer builds)."""
    with open("/proc/%d/maps" % server.proc.pid) as f:
        jemalloc_loaded = "libjemalloc" in f.read()
    allocator = r.info("memory")["mem_allocator"]
    if jemalloc_loaded:
        assert re.fullmatch(r"jemalloc-\d+\.\d+\.\d+", allocator), allocator
    else:
        assert allocator == "libc"


def test_info_single_section_and_unknown(server, r):
    raw = server.client(callbacks=False)
    try:
        text = raw.execute_command("INFO", "keyspace")
        assert text.startswith("# Keyspace\r\n")
        assert raw.execute_command("INFO", "nosuchsection") == ""
        both = parse_info(raw.execute_command("INFO", "server", "clients"))
        assert list(both) == ["server", "clients"]
    finally:
        raw.close()


def test_info_keyspace_lines(server, r):
    raw = server.client(callbacks=False)
    try:
        assert raw.execute_command("INFO", "keyspace") == "# Keyspace\r\n"
        r.set("a", 1)
        r.execute_command("SET", "b", 1, "EX", 1000)
        other = server.client(db=7)
        other.set("c", 1)
        other.close()
        lines = raw.execute_command("INFO", "keyspace").split("\r\n")
        assert lines[0] == "# Keyspace"
        assert re.match(r"^db0:keys=2,expires=1,avg_ttl=\d+$", lines[1]), lines
        assert re.match(r"^db7:keys=1,expires=0,avg_ttl=0$", lines[2]), lines
        assert lines[3:] == [""]
    finally:
        raw.close()


def test_connected_clients_counts_connections(server, r):
    before = int(r.info("clients")["connected_clients"])
    conns = [RawConn(server.port) for _ in range(3)]
    for x in conns:
        x.call("PING")
    after = int(r.info("clients")["connected_clients"])
    for x in conns:
        x.close()
    assert after >= before + 3


# --------------------------------------------------------------------------
# CONFIG
# --------------------------------------------------------------------------
# Only parameters Basalt has to support anyway are used here: port,
# databases, slowlog-*, proto-max-bulk-len (a "memory" typed value).
def test_config_get(server, r):
    assert r.config_get("port") == {"port": str(server.port)}
    assert r.config_get("databases") == {"databases": "16"}
    assert r.execute_command("CONFIG GET", "databases", "port") == {
        "databases": "16", "port": str(server.port)}
    assert r.config_get("slowlog*") == {"slowlog-log-slower-than": "10000",
                                        "slowlog-max-len": "128"}
    assert r.config_get("proto-max-bulk-len") == {"proto-max-bulk-len": "536870912"}
    assert r.config_get("nosuchparam") == {}
    raises(r, arity("config|get"), "CONFIG", "GET")


def test_config_get_raw_shape(c):
    # RESP2: a flat array; a repeated name is reported once
    assert c.call("CONFIG", "GET", "databases", "databases") == (
        "*", [("$", b"databases"), ("$", b"16")])
    assert c.call("CONFIG", "GET", "nosuch") == ("*", [])


def test_config_set(r):
    try:
        assert r.config_set("slowlog-max-len", 64) is True
        assert r.config_get("slowlog-max-len") == {"slowlog-max-len": "64"}
        assert r.config_set("proto-max-bulk-len", "2mb") is True
        assert r.config_get("proto-max-bulk-len") == {"proto-max-bulk-len": "2097152"}
        assert r.execute_command("CONFIG SET", "slowlog-max-len", 32,
                                 "slowlog-log-slower-than", 5000) is True
        assert r.config_get("slowlog*") == {"slowlog-log-slower-than": "5000",
                                            "slowlog-max-len": "32"}
    finally:
        r.config_set("slowlog-max-len", 128)
        r.config_set("slowlog-log-slower-than", 10000)
        r.config_set("proto-max-bulk-len", "512mb")


def failed(param, why):
    return "ERR CONFIG SET failed (possibly related to argument '%s') - %s" % (param, why)


def test_config_set_errors(r):
    raises(r, "ERR Unknown option or number of arguments for CONFIG SET - 'xyz'",
           "CONFIG", "SET", "xyz", "1")
    raises(r, failed("proto-max-bulk-len", "argument must be a memory value"),
           "CONFIG", "SET", "proto-max-bulk-len", "abc")
    raises(r, failed("proto-max-bulk-len",
                     "argument must be between 1048576 and 9223372036854775807 inclusive"),
           "CONFIG", "SET", "proto-max-bulk-len", "1000")
    raises(r, failed("slowlog-log-slower-than", "argument couldn't be parsed into an integer"),
           "CONFIG", "SET", "slowlog-log-slower-than", "abc")
    raises(r, failed("slowlog-max-len",
                     "argument must be between 0 and 9223372036854775807 inclusive"),
           "CONFIG", "SET", "slowlog-max-len", "-1")
    raises(r, failed("slowlog-max-len", "duplicate parameter"),
           "CONFIG", "SET", "slowlog-max-len", "1", "slowlog-max-len", "2")
    raises(r, failed("databases", "can't set immutable config"),
           "CONFIG", "SET", "databases", "2")
    raises(r, arity("config|set"), "CONFIG", "SET", "slowlog-max-len")
    # a failing CONFIG SET with several parameters changes nothing
    raises(r, failed("proto-max-bulk-len", "argument must be a memory value"),
           "CONFIG", "SET", "slowlog-max-len", "7", "proto-max-bulk-len", "bad")
    assert r.config_get("slowlog-max-len") == {"slowlog-max-len": "128"}
    raises(r, "ERR unknown subcommand 'foo'. Try CONFIG HELP.", "CONFIG", "foo")


def test_config_resetstat(r):
    for _ in range(20):
        r.ping()
    assert r.config_resetstat() is True
    stats = r.info("stats")
    assert stats["total_commands_processed"] <= 2
    raises(r, arity("config|resetstat"), "CONFIG", "RESETSTAT", "x")


# --------------------------------------------------------------------------
# TIME / LASTSAVE / DBSIZE
# --------------------------------------------------------------------------
def test_time(c):
    t, v = c.call("TIME")
    assert t == "*" and [x[0] for x in v] == ["$", "$"]
    secs, usecs = int(v[0][1]), int(v[1][1])
    assert abs(secs + usecs / 1e6 - time.time()) < 5
    assert 0 <= usecs < 1000000
    assert c.call("TIME", "x") == ("-", arity("time"))


def test_lastsave(c):
    t, v = c.call("LASTSAVE")
    assert t == ":" and 0 < v <= time.time() + 5


def test_dbsize(c):
    assert c.call("DBSIZE") == (":", 0)
    c.call("SET", "a", "1")
    assert c.call("DBSIZE") == (":", 1)
    assert c.call("DBSIZE", "x") == ("-", arity("dbsize"))


# --------------------------------------------------------------------------
# SLOWLOG
# --------------------------------------------------------------------------
def test_slowlog(server, r, c):
    try:
        r.config_set("slowlog-log-slower-than", 0)
        assert c.call("SLOWLOG", "RESET") == ("+", b"OK")
        c.call("CLIENT", "SETNAME", "slowpoke")
        c.call("SET", "slowkey", "slowvalue")
        t, entries = c.call("SLOWLOG", "GET", "100")
        assert t == "*" and entries
        mine = [e for e in entries if plain(e)[3] == [b"SET", b"slowkey", b"slowvalue"]]
        assert len(mine) == 1
        types = [x[0] for x in mine[0][1]]
        assert types == [":", ":", ":", "*", "$", "$"]
        eid, ts, dur, args, addr, name = plain(mine[0])
        assert eid >= 0 and abs(ts - time.time()) < 10 and dur >= 0
        assert addr.startswith(b"127.0.0.1:") and name == b"slowpoke"
        assert plain(c.call("SLOWLOG", "LEN")) >= 1
        assert c.call("SLOWLOG", "GET", "0") == ("*", [])
        assert len(plain(c.call("SLOWLOG", "GET", "1"))) == 1
        assert c.call("SLOWLOG", "GET", "-1")[0] == "*"
        err = "ERR count should be greater than or equal to -1"
        assert c.call("SLOWLOG", "GET", "-2") == ("-", err)
        assert c.call("SLOWLOG", "GET", "abc") == ("-", err)
        assert c.call("SLOWLOG", "FOO") == (
            "-", "ERR unknown subcommand 'FOO'. Try SLOWLOG HELP.")
        r.config_set("slowlog-log-slower-than", 10000000)
        c.call("SLOWLOG", "RESET")
        assert c.call("SLOWLOG", "LEN") == (":", 0)
    finally:
        r.config_set("slowlog-log-slower-than", 10000)


def test_slowlog_keeps_no_secrets(server, r):
    """The arguments Redis 7.2 redacts: ACL SETUSER's name and rules, the values of sensitive
    config keys, MIGRATE's credentials."""
    try:
        r.config_set("slowlog-log-slower-than", 0)
        r.slowlog_reset()
        r.execute_command("ACL", "SETUSER", "slowlog-test-user", "+get", "+set")
        r.config_set("masterauth", "")
        r.execute_command("MIGRATE", "127.0.0.1", server.port, "nokey", 0, 1000, "AUTH2", "u", "p")
        r.config_set("slowlog-log-slower-than", -1)
        logged = [e["command"].decode() for e in r.slowlog_get(10)]
    finally:
        r.config_set("slowlog-log-slower-than", 10000)
        r.execute_command("ACL", "DELUSER", "slowlog-test-user")
    assert "ACL SETUSER (redacted) (redacted) (redacted)" in logged
    assert "CONFIG SET masterauth (redacted)" in logged
    assert "MIGRATE 127.0.0.1 %d nokey 0 1000 AUTH2 (redacted) (redacted)" % server.port in logged


def test_slowlog_and_commandstats_time_a_slow_command(r):
    # A script that runs for a while: its time as SLOWLOG and INFO commandstats report it must
    # lie within what the client waited, and be most of it (a clock read at the wrong rate is
    # off by orders of magnitude). Redis 7 logs EVAL itself, as it does the commands it calls.
    loop = "local i = 0 while i < 5000000 do i = i + 1 end return i"
    try:
        r.config_set("slowlog-log-slower-than", 1000)
        r.slowlog_reset()
        r.config_resetstat()
        began = time.monotonic()
        assert r.eval(loop, 0) == 5000000
        waited_us = (time.monotonic() - began) * 1e6
        logged = [e for e in r.slowlog_get(10) if e["command"].startswith(b"EVAL")]
        assert len(logged) == 1
        assert waited_us / 2 <= logged[0]["duration"] <= waited_us
        stats = r.info("commandstats")["cmdstat_eval"]
        assert stats["calls"] == 1
        assert waited_us / 2 <= stats["usec"] <= waited_us
    finally:
        r.config_set("slowlog-log-slower-than", 10000)


def test_slowlog_logs_a_scripts_commands_under_the_script_client(r):
    # Redis logs the commands a script calls as its Lua client's, with no address or name of
    # the caller's, and the EVAL itself as the caller's.
    try:
        r.config_set("slowlog-log-slower-than", 0)
        r.client_setname("caller")
        r.slowlog_reset()
        assert r.eval("redis.call('set', 'slowlog-inner', 'v') return 1", 0) == 1
        entries = r.slowlog_get(10)
        inner = [e for e in entries if e["command"] == b"set slowlog-inner v"]
        assert len(inner) == 1
        assert (inner[0]["client_address"], inner[0]["client_name"]) == (b"?:0", b"")
        outer = [e for e in entries if e["command"].startswith(b"EVAL")]
        assert len(outer) == 1
        assert outer[0]["client_address"].startswith(b"127.0.0.1:")
        assert outer[0]["client_name"] == b"caller"
    finally:
        r.config_set("slowlog-log-slower-than", 10000)
        r.client_setname("")


# --------------------------------------------------------------------------
# COMMAND
# --------------------------------------------------------------------------
def test_command_count(c):
    t, n = c.call("COMMAND", "COUNT")
    assert t == ":" and n > 30
    assert c.call("COMMAND", "COUNT", "x") == ("-", arity("command|count"))


@pytest.mark.parametrize("name,arity_,first,last,step,flags", [
    ("get", 2, 1, 1, 1, [b"readonly", b"fast"]),
    ("set", -3, 1, 1, 1, [b"write", b"denyoom"]),
    ("mget", -2, 1, -1, 1, [b"readonly", b"fast"]),
    ("mset", -3, 1, -1, 2, [b"write", b"denyoom"]),
    ("ping", -1, 0, 0, 0, [b"fast"]),
])
def test_command_info(c, name, arity_, first, last, step, flags):
    t, v = c.call("COMMAND", "INFO", name)
    assert t == "*" and len(v) == 1
    entry = v[0][1]
    assert entry[0] == ("$", name.encode())
    assert entry[1] == (":", arity_)
    assert entry[2][0] == "*" and all(x[0] == "+" for x in entry[2][1])
    assert set(flags) <= set(plain(entry[2]))
    assert entry[3:6] == [(":", first), (":", last), (":", step)]


MOVABLE_KEYS = ["zunion", "zinter", "zdiff", "zintercard", "zunionstore", "zinterstore",
                "zdiffstore", "sintercard", "lmpop", "blmpop", "zmpop", "bzmpop", "eval",
                "evalsha", "eval_ro", "evalsha_ro", "georadius", "georadiusbymember"]
BLOCKING = ["blpop", "brpop", "brpoplpush", "blmove", "blmpop", "bzpopmin", "bzpopmax", "bzmpop"]


@pytest.mark.parametrize("name", sorted(set(MOVABLE_KEYS + BLOCKING + ["get", "lpop", "copy"])))
def test_command_info_movablekeys_and_blocking_flags(c, name):
    # Cluster-aware clients route by these: movablekeys says "ask COMMAND GETKEYS", and
    # blocking marks commands that may hold the connection.
    t, v = c.call("COMMAND", "INFO", name)
    flags = set(plain(v[0][1][2]))
    assert (b"movablekeys" in flags) == (name in MOVABLE_KEYS)
    assert (b"blocking" in flags) == (name in BLOCKING)


@pytest.mark.parametrize("name,flags,keys", [
    # Containers that run only through a subcommand show no flags or keys of their own.
    ("config", [], [0, 0, 0]),
    ("object", [], [0, 0, 0]),
    ("client", [], [0, 0, 0]),
    ("blmpop", [b"write", b"blocking", b"movablekeys"], [0, 0, 0]),
    ("echo", [b"loading", b"stale", b"fast"], [0, 0, 0]),
    ("save", [b"admin", b"noscript", b"no_async_loading", b"no_multi"], [0, 0, 0]),
])
def test_command_info_flags_and_keys_as_redis_shows_them(c, name, flags, keys):
    t, v = c.call("COMMAND", "INFO", name)
    entry = v[0][1]
    # no_async_loading is a Redis state Basalt does not have (it never loads asynchronously).
    assert set(plain(entry[2])) - {b"no_async_loading"} == set(flags) - {b"no_async_loading"}
    assert [entry[i][1] for i in (3, 4, 5)] == keys


@pytest.mark.parametrize("name,flags", [
    # A subcommand shows its own flags (Redis 7.2's src/commands/*.json), not its container's.
    ("cluster|reset", [b"admin", b"noscript", b"stale"]),
    ("cluster|meet", [b"admin", b"stale", b"no_async_loading"]),
    ("function|load", [b"write", b"denyoom", b"noscript"]),
    ("function|stats", [b"noscript", b"allow_busy"]),
    ("function|list", [b"noscript"]),
    ("script|kill", [b"noscript", b"allow_busy"]),
    ("script|load", [b"noscript", b"stale"]),
    ("pubsub|channels", [b"pubsub", b"loading", b"stale"]),
    ("memory|stats", []),
    ("memory|usage", [b"readonly"]),
    ("xgroup|create", [b"write", b"denyoom"]),
    ("xgroup|destroy", [b"write"]),
    ("client|help", [b"loading", b"stale"]),
    ("module|load", [b"admin", b"noscript", b"no_async_loading"]),
])
def test_command_info_subcommand_flags_as_redis_shows_them(c, name, flags):
    t, v = c.call("COMMAND", "INFO", name)
    assert set(plain(v[0][1][2])) == set(flags)


def test_save_is_refused_inside_multi(c):
    assert c.call("MULTI") == ("+", b"OK")
    assert c.call("SAVE") == ("-", "ERR Command not allowed inside a transaction")
    assert c.call("EXEC") == ("-", "EXECABORT Transaction discarded because of previous errors.")


def test_command_info_unknown_is_nil(c):
    assert c.call("COMMAND", "INFO", "nosuchcmd") == ("*", [("$", None)])
    t, v = c.call("COMMAND", "INFO", "get", "nosuchcmd", "set")
    assert [plain(x) and plain(x)[0] for x in v] == [b"get", None, b"set"]


def test_command_getkeys(rr):
    r = rr
    assert r.execute_command("COMMAND", "GETKEYS", "GET", "k") == ["k"]
    assert r.execute_command("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2") == ["a", "b"]
    assert r.execute_command("COMMAND", "GETKEYS", "SET", "a", "b", "EX", "10") == ["a"]
    raises(r, "ERR The command has no key arguments", "COMMAND", "GETKEYS", "PING", "x")
    raises(r, "ERR Invalid command specified", "COMMAND", "GETKEYS", "nosuch", "x")
    raises(r, "ERR Invalid number of arguments specified for command",
           "COMMAND", "GETKEYS", "GET", "a", "b")
    raises(r, arity("command|getkeys"), "COMMAND", "GETKEYS", "GET")
    # No keys found: an empty list for EVAL's optional keys, an error for mandatory ones.
    assert r.execute_command("COMMAND", "GETKEYS", "EVAL", "return 1", "0") == []
    assert r.execute_command("COMMAND", "GETKEYS", "FCALL", "f", "0") == []
    assert r.execute_command("COMMAND", "GETKEYS", "EVAL", "return 1", "1", "k") == ["k"]
    raises(r, "ERR Invalid arguments specified for command",
           "COMMAND", "GETKEYS", "ZUNION", "0", "x")
    # A command without keys is refused before its arity is checked.
    raises(r, "ERR The command has no key arguments", "COMMAND", "GETKEYS", "PING", "x", "y")
    raises(r, "ERR unknown subcommand 'FOO'. Try COMMAND HELP.", "COMMAND", "FOO")


def test_command_docs(c):
    t, v = c.call("COMMAND", "DOCS", "get")
    assert t == "*" and v[0] == ("$", b"get") and v[1][0] == "*"
    doc = plain(v[1])
    docmap = dict(zip(doc[0::2], doc[1::2]))
    assert docmap[b"group"] == b"string" and docmap[b"summary"]


def test_command_docs_resp3_map(server, r):
    r3 = server.client(protocol=3, callbacks=False)
    try:
        docs = r3.execute_command("COMMAND", "DOCS", "get")
    finally:
        r3.close()
    assert isinstance(docs, dict) and list(docs) == ["get"]
    assert isinstance(docs["get"], dict) and docs["get"]["group"] == "string"


# --------------------------------------------------------------------------
# error texts
# --------------------------------------------------------------------------
def test_unknown_command_text(c):
    assert c.call("foo", "a", "b") == (
        "-", "ERR unknown command 'foo', with args beginning with: 'a' 'b' ")
    assert c.call("foo") == ("-", "ERR unknown command 'foo', with args beginning with: ")
    assert c.call("FOO", "x") == ("-", "ERR unknown command 'FOO', with args beginning with: 'x' ")
    # each argument is cut at 128 bytes and the list stops after 128 bytes
    assert c.call("foo", "a" * 200, "b") == (
        "-", "ERR unknown command 'foo', with args beginning with: '%s' " % ("a" * 128))


def test_wrong_arity_text_uses_lowercase_name(c):
    assert c.call("GET") == ("-", arity("get"))
    assert c.call("Get", "a", "b") == ("-", arity("get"))
    assert c.call("CONFIG", "GET") == ("-", arity("config|get"))


# --------------------------------------------------------------------------
# pipelining (inline commands: see test_protocol.py)
# --------------------------------------------------------------------------
def test_pipelining_1000_commands_in_one_write(server, r):
    with RawConn(server.port) as c:
        c.send_raw(b"".join(encode("SET", "k%d" % i, "v%d" % i) for i in range(500))
                   + b"".join(encode("GET", "k%d" % i) for i in range(499))
                   + encode("DBSIZE"))
        for i in range(500):
            assert c.read() == ("+", b"OK")
        for i in range(499):
            assert c.read() == ("$", b"v%d" % i)
        assert c.read() == (":", 500)


def test_redis_py_pipeline_without_transaction(r):
    p = r.pipeline(transaction=False)
    for i in range(1000):
        p.incr("n")
    res = p.execute()
    assert res == list(range(1, 1001))


# --------------------------------------------------------------------------
# RESP3 via redis-py
# --------------------------------------------------------------------------
def test_resp3_client(r3, server):
    assert r3.ping() is True
    hello = r3.execute_command("HELLO", 3)
    assert hello["proto"] == 3 and hello["mode"] == "standalone"
    assert r3.config_get("databases") == {"databases": "16"}
    assert r3.set("k", "v") and r3.get("k") == "v"
    assert r3.get("nokey") is None
    with pytest.raises(redis.ResponseError, match=exact("ERR syntax error")):
        r3.execute_command("SET", "k", "v", "NX", "XX")


# --------------------------------------------------------------------------
# Basalt specifics
# --------------------------------------------------------------------------
@pytest.mark.basalt_only
def test_info_has_rocksdb_section(server, r):
    raw = server.client(callbacks=False)
    try:
        assert "rocksdb" in parse_info(raw.execute_command("INFO"))
        assert raw.execute_command("INFO", "rocksdb").startswith("# RocksDB\r\n")
    finally:
        raw.close()


@pytest.mark.basalt_only
def test_config_get_durability_default_lazy(r):
    assert r.config_get("durability") == {"durability": "lazy"}


@pytest.mark.basalt_only
def test_config_set_durability_sync_live_keeps_serving(r):
    # Switching to sync syncs the WAL first (not observable here without a power cut): a SET of
    # the value a key already has puts nothing, so its reply stands on the earlier, lazy write.
    try:
        r.set("k", "v")
        assert r.config_set("durability", "sync")
        assert r.config_get("durability") == {"durability": "sync"}
        assert r.set("k", "v") and r.set("k2", "w")
        assert r.mget("k", "k2") == ["v", "w"]
    finally:
        r.config_set("durability", "lazy")


def cpu_seconds(pid):
    """User plus system CPU time of a process so far."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.basalt_only
@pytest.mark.parametrize("polls", ["0", "1000"])
def test_workers_serve_and_then_sleep_whatever_their_idle_polls(start_server, polls):
    """worker-idle-polls only decides how often a worker polls its sockets again before it
    sleeps: clients on both workers are served either way, and once they stop sending the
    server uses no CPU (a worker that kept polling would spend its whole core)."""
    srv = start_server(args={"worker-idle-polls": polls})
    clients = [srv.client() for _ in range(6)]  # consecutive connections alternate workers
    for c in clients:
        p = c.pipeline(transaction=False)
        for _ in range(100):
            p.incr("n")
        p.execute()
        assert c.incr("n") > 0
    assert clients[0].get("n") == "606"
    before = cpu_seconds(srv.proc.pid)
    time.sleep(2)
    assert cpu_seconds(srv.proc.pid) - before < 0.5
    assert all(c.ping() for c in clients)


@pytest.mark.basalt_only
def test_worker_idle_polls_is_set_live(r):
    try:
        assert r.config_set("worker-idle-polls", 0) is True
        assert r.config_get("worker-idle-polls") == {"worker-idle-polls": "0"}
        assert [r.incr("k") for _ in range(3)] == [1, 2, 3]
        raises(r, failed("worker-idle-polls", "argument must be between 0 and 1000 inclusive"),
               "CONFIG", "SET", "worker-idle-polls", "1001")
    finally:
        r.config_set("worker-idle-polls", 3)
    assert r.config_get("worker-idle-polls") == {"worker-idle-polls": "3"}
