"""DEBUG (SLEEP, OBJECT, SET-ACTIVE-EXPIRE, PAUSE-CRON, SET-DISABLE-DENY-SCRIPTS, LOADAOF,
CHANGE-REPL-ID, DIGEST, DIGEST-VALUE, PROTOCOL, STRINGMATCH-TEST, QUICKLIST-PACKED-THRESHOLD,
LISTPACK, ERROR, HELP) behind
enable-debug-command, BGREWRITEAOF, LOLWUT, and MODULE (LIST empty, LOAD/UNLOAD behind
enable-module-command and failing). PROTOCOL's replies are compared byte for byte in RESP2
and RESP3. Every test also passes with --target redis except the ones marked basalt_only
(Basalt's own figures and name)."""
import re
import threading
import time

import pytest

from helpers import parse_info, wait_until
from resp import RawConn

NOT_ALLOWED = ('ERR %s command not allowed. If the %s option is set to "local", you can run it '
               'from a local connection, otherwise you need to set this option in the '
               'configuration file, and then restart the server.')
ZEROS = b"0" * 40


@pytest.fixture(scope="module")
def dbg(start_module_server):
    return start_module_server(args={"enable-debug-command": "yes",
                                     "enable-module-command": "local"})


@pytest.fixture
def c(dbg):
    conn = RawConn(dbg.port)
    assert conn.call("FLUSHALL") == ("+", b"OK")
    yield conn
    conn.close()


def raw_reply(conn, *args):
    """The exact bytes of one reply (the socket is drained after a short pause)."""
    conn.send(*args)
    time.sleep(0.05)
    conn.sock.settimeout(0.3)
    data = conn.buf
    conn.buf = b""
    try:
        while True:
            chunk = conn.sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    conn.sock.settimeout(10)
    return data


def test_debug_and_module_load_are_refused_by_default(server, r):
    conn = RawConn(server.port)
    try:
        assert conn.call("DEBUG", "SLEEP", "0") == \
            ("-", NOT_ALLOWED % ("DEBUG", "enable-debug-command"))
        assert conn.call("MODULE", "LOAD", "/nonexistent.so") == \
            ("-", NOT_ALLOWED % ("MODULE", "enable-module-command"))
        assert conn.call("MODULE", "LIST") == ("*", [])
    finally:
        conn.close()


def test_module_commands_with_local_allowed(c):
    assert c.call("MODULE", "LIST") == ("*", [])
    assert c.call("MODULE", "LOAD", "/nonexistent/module.so") == \
        ("-", "ERR Error loading the extension. Please check the server logs.")
    assert c.call("MODULE", "UNLOAD", "nosuchmodule") == \
        ("-", "ERR Error unloading module: no such module with that name")
    kind, lines = c.call("MODULE", "HELP")
    assert ("+", b"LIST") in lines


PROTOCOL = {
    "string": (b"$11\r\nHello World\r\n", b"$11\r\nHello World\r\n"),
    "integer": (b":12345\r\n", b":12345\r\n"),
    "double": (b"$5\r\n3.141\r\n", b",3.141\r\n"),
    "bignum": (b"$37\r\n1234567999999999999999999999999999999\r\n",
               b"(1234567999999999999999999999999999999\r\n"),
    "null": (b"$-1\r\n", b"_\r\n"),
    "array": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"*3\r\n:0\r\n:1\r\n:2\r\n"),
    "set": (b"*3\r\n:0\r\n:1\r\n:2\r\n", b"~3\r\n:0\r\n:1\r\n:2\r\n"),
    "map": (b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n",
            b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"),
    "attrib": (b"$39\r\nSome real reply following the attribute\r\n",
               b"|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
               b"$39\r\nSome real reply following the attribute\r\n"),
    "push": (b"-ERR RESP2 is not supported by this command\r\n",
             b">2\r\n$16\r\nserver-cpu-usage\r\n:42\r\n"
             b"$40\r\nSome real reply following the push reply\r\n"),
    "verbatim": (b"$25\r\nThis is a verbatim\nstring\r\n",
                 b"=29\r\ntxt:This is a verbatim\nstring\r\n"),
    "true": (b":1\r\n", b"#t\r\n"),
    "false": (b":0\r\n", b"#f\r\n"),
}


@pytest.mark.parametrize("proto", [2, 3])
def test_debug_protocol_every_type(c, proto):
    if proto == 3:
        c.call("HELLO", "3")
    for name, replies in PROTOCOL.items():
        assert raw_reply(c, "DEBUG", "PROTOCOL", name) == replies[proto - 2], name
    assert c.call("DEBUG", "PROTOCOL", "nosuch") == (
        "-", "ERR Wrong protocol type name. Please use one of the following: "
        "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")


def test_debug_object_line(c):
    assert c.call("DEBUG", "OBJECT", "missing") == ("-", "ERR no such key")
    c.call("SET", "s", "hello")
    c.call("RPUSH", "l", *["element-%04d" % i for i in range(1000)])  # over one 8 KiB node
    line = c.call("DEBUG", "OBJECT", "s")
    assert line[0] == "+"
    assert re.fullmatch(rb"Value at:0x[0-9a-f]+ refcount:1 encoding:embstr serializedlength:\d+ "
                        rb"lru:\d+ lru_seconds_idle:\d+", line[1]), line
    assert b"encoding:quicklist" in c.call("DEBUG", "OBJECT", "l")[1]


def test_debug_object_finds_a_key_past_its_ttl_until_it_is_deleted(c):
    assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == ("+", b"OK")
    try:
        c.call("SET", "k", "v", "PX", "1")
        time.sleep(0.05)
        assert c.call("DEBUG", "OBJECT", "k")[1].startswith(b"Value at:")
        assert c.call("EXISTS", "k") == (":", 0)
    finally:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")


def test_debug_pause_cron_stops_the_active_expiry_rounds(c):
    def expired():
        info = c.call("INFO", "stats")[1]
        return int(re.search(rb"expired_keys:(\d+)", info).group(1))

    before = expired()
    assert c.call("DEBUG", "PAUSE-CRON", "1") == ("+", b"OK")
    try:
        c.call("SET", "k", "v", "PX", "1")
        time.sleep(0.6)  # several rounds at hz 10
        assert expired() == before
        assert c.call("DBSIZE") == (":", 1)  # still stored: only a lookup would delete it
    finally:
        assert c.call("DEBUG", "PAUSE-CRON", "0") == ("+", b"OK")
    deadline = time.monotonic() + 5
    while expired() == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert expired() == before + 1


def test_debug_set_disable_deny_scripts(c):
    script = "redis.setresp(3) return redis.call('debug', 'protocol', 'attrib')"
    assert c.call("EVAL", script, "0")[1].startswith("ERR This Redis command is not allowed")
    assert c.call("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1") == ("+", b"OK")
    try:
        # The attribute is not shown to the script, only the reply after it.
        assert c.call("EVAL", script, "0") == ("$", b"Some real reply following the attribute")
    finally:
        assert c.call("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0") == ("+", b"OK")
    assert c.call("EVAL", script, "0")[1].startswith("ERR This Redis command is not allowed")


@pytest.mark.basalt_only(reason="Redis lets the script nest EVAL and aborts on it")
def test_debug_set_disable_deny_scripts_never_nests_scripts(c):
    c.call("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1")
    try:
        for call in ("'eval', 'return 1', '0'", "'multi'", "'script', 'flush'", "'shutdown'"):
            reply = c.call("EVAL", "return redis.pcall(%s)" % call, "0")
            assert reply[0] == "-" and "not allowed from script" in reply[1], call
    finally:
        c.call("DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0")


@pytest.mark.basalt_only(reason="Basalt's own figures: values on disk, no address")
def test_debug_object_basalt_figures(c):
    c.call("SET", "s", "hello")
    c.call("HSET", "h", "f", "vv")
    kind, line = c.call("DEBUG", "OBJECT", "s")
    assert kind == "+"
    assert re.fullmatch(rb"Value at:0x0 refcount:1 encoding:embstr serializedlength:5 "
                        rb"lru:\d+ lru_seconds_idle:[01]", line), line
    assert c.call("DEBUG", "OBJECT", "h")[1].split(b" ")[3:5] == [b"encoding:listpack",
                                                                  b"serializedlength:3"]


def fill(c, order):
    c.call("SET", "str", "value")
    c.call("SELECT", "2")
    c.call("SET", "in-db-2", "x")
    c.call("SELECT", "0")
    for i in order:
        c.call("HSET", "hash", "f%d" % i, "v%d" % i)
        c.call("SADD", "set", "m%d" % i)
        c.call("ZADD", "zset", str(i), "z%d" % i)
    c.call("RPUSH", "list", "a", "b", "c")
    c.call("EXPIREAT", "str", "4000000000")


def test_debug_digest_is_equal_for_equal_data_and_differs_otherwise(c):
    assert c.call("DEBUG", "DIGEST") == ("+", ZEROS)
    fill(c, range(20))
    first = c.call("DEBUG", "DIGEST")
    assert first[0] == "+" and re.fullmatch(rb"[0-9a-f]{40}", first[1]) and first[1] != ZEROS
    c.call("FLUSHALL")
    fill(c, reversed(range(20)))
    assert c.call("DEBUG", "DIGEST") == first
    c.call("HSET", "hash", "f3", "changed")
    assert c.call("DEBUG", "DIGEST") != first
    c.call("HSET", "hash", "f3", "v3")
    assert c.call("DEBUG", "DIGEST") == first
    # As in Redis, whether a key expires counts, not when.
    c.call("EXPIREAT", "str", "4000000001")
    assert c.call("DEBUG", "DIGEST") == first
    c.call("PERSIST", "str")
    assert c.call("DEBUG", "DIGEST") != first
    c.call("FLUSHALL")
    assert c.call("DEBUG", "DIGEST") == ("+", ZEROS)


def test_debug_digest_value(c):
    c.call("SADD", "a", "x", "y", "z")
    c.call("SADD", "b", "z", "y", "x")
    c.call("SADD", "c", "x", "y")
    c.call("SET", "s", "x")
    kind, digests = c.call("DEBUG", "DIGEST-VALUE", "a", "b", "c", "s", "missing")
    assert kind == "*" and all(d[0] == "+" for d in digests)
    a, b, cc, s, missing = [d[1] for d in digests]
    assert a == b and a != cc and a != s and missing == ZEROS
    assert c.call("DEBUG", "DIGEST-VALUE") == ("*", [])


def test_debug_sleep_stops_other_clients(dbg, c):
    other = RawConn(dbg.port)  # another connection, on another worker
    try:
        assert other.call("PING") == ("+", b"PONG")
        waited = []

        def ping():
            time.sleep(0.1)
            start = time.time()
            assert other.call("PING") == ("+", b"PONG")
            waited.append(time.time() - start)

        t = threading.Thread(target=ping)
        t.start()
        start = time.time()
        assert c.call("DEBUG", "SLEEP", "0.6") == ("+", b"OK")
        assert time.time() - start >= 0.6
        t.join()
        assert waited[0] >= 0.3
        assert c.call("DEBUG", "SLEEP", "0") == ("+", b"OK")
    finally:
        other.close()


def test_debug_set_active_expire(c):
    assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == ("+", b"OK")
    try:
        c.call("SET", "k", "v", "PX", "20")
        time.sleep(0.5)
        # Expired but not deleted: nothing deletes it in the background.
        assert c.call("DBSIZE") == (":", 1)
    finally:
        assert c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1") == ("+", b"OK")
    assert wait_until(lambda: c.call("DBSIZE") == (":", 0), timeout=5)


def test_debug_change_repl_id(c):
    def replid():
        return parse_info(c.call("INFO", "replication")[1].decode())["replication"]["master_replid"]
    before = replid()
    assert c.call("DEBUG", "CHANGE-REPL-ID") == ("+", b"OK")
    after = replid()
    assert after != before and re.fullmatch(r"[0-9a-f]{40}", after)


def test_debug_small_subcommands(c):
    assert c.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1mb") == ("+", b"OK")
    assert c.call("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "lots") == \
        ("-", "ERR argument must be a memory value bigger than 1 and smaller than 4gb")
    assert c.call("DEBUG", "LISTPACK", "missing") == ("-", "ERR no such key")
    c.call("SET", "s", "x")
    assert c.call("DEBUG", "ERROR", "WRONGTYPE made up") == ("-", "WRONGTYPE made up")
    assert c.call("DEBUG", "NOSUCH") == \
        ("-", "ERR unknown subcommand or wrong number of arguments for 'NOSUCH'. Try DEBUG HELP.")
    assert c.call("DEBUG", "SLEEP") == \
        ("-", "ERR unknown subcommand or wrong number of arguments for 'SLEEP'. Try DEBUG HELP.")
    kind, lines = c.call("DEBUG", "HELP")
    assert kind == "*" and ("+", b"DIGEST-VALUE <key> [<key> ...]") in lines


@pytest.mark.basalt_only(reason="Redis fuzzes its matcher for many seconds")
def test_debug_stringmatch_test(c):
    assert c.call("DEBUG", "STRINGMATCH-TEST") == \
        ("+", b"Apparently Redis did not crash: test passed")


@pytest.mark.basalt_only(reason="Basalt has no listpack encoding")
def test_debug_listpack_of_an_existing_key(c):
    c.call("RPUSH", "l", "a")
    assert c.call("DEBUG", "LISTPACK", "l") == ("-", "ERR Not a listpack encoded object.")


def test_lolwut_reply_type_and_version_line(c):
    kind, text = c.call("LOLWUT")
    assert kind == "$" and re.search(rb"ver\. \S+\n$", text)
    assert c.call("LOLWUT", "VERSION", "nine") == \
        ("-", "ERR value is not an integer or out of range")
    c.call("HELLO", "3")
    kind, text = c.call("LOLWUT", "VERSION", "7")
    assert kind == "=" and text.startswith(b"txt:")


@pytest.mark.basalt_only(reason="names Basalt and its version")
def test_lolwut_names_basalt_and_the_redis_version_it_follows(c):
    kind, text = c.call("LOLWUT")
    info = parse_info(c.call("INFO", "server")[1].decode())["server"]
    assert text.decode().splitlines()[-1] == "Basalt ver. 0.1.0, Redis ver. %s" % (
        info["redis_version"])


def test_command_info_rows(c):
    def row(name):
        kind, rows = c.call("COMMAND", "INFO", name)
        entry = rows[0][1]
        return (entry[1][1], sorted(f[1].decode() for f in entry[2][1]),
                sorted(cat[1].decode() for cat in entry[6][1]))
    assert row("monitor") == (1, ["admin", "loading", "noscript", "stale"],
                              ["@admin", "@dangerous", "@slow"])
    assert row("debug") == (-2, ["admin", "loading", "noscript", "stale"],
                            ["@admin", "@dangerous", "@slow"])
    assert row("lolwut") == (-1, ["fast", "readonly"], ["@fast", "@read"])
    assert row("module") == (-2, [], ["@slow"])
    # A script is shown to monitors by EVAL itself, before its calls: skip_monitor, as Redis.
    flags = row("eval")[1]
    assert "skip_monitor" in flags and "may_replicate" not in flags
    # Its keys are optional (numkeys 0), which COMMAND GETKEYS relies on.
    assert "no_mandatory_keys" in flags and "no_mandatory_keys" not in row("get")[1]


@pytest.mark.basalt_only(reason="Redis saves and reloads its RDB file, which the oracle's "
                                "harness set-up does not allow (it drops the connection)")
def test_debug_reload_keeps_the_data(c):
    c.call("SET", "s", "v")
    c.call("RPUSH", "l", "a", "b")
    assert c.call("DEBUG", "RELOAD") == ("+", b"OK")
    assert c.call("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") == ("+", b"OK")
    assert c.call("GET", "s") == ("$", b"v")
    assert c.call("LRANGE", "l", "0", "-1") == ("*", [("$", b"a"), ("$", b"b")])
    assert c.call("DEBUG", "RELOAD", "SOON") == (
        "-", "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")


@pytest.mark.basalt_only(reason="Redis saves and reloads its RDB file, which the oracle's "
                                "harness set-up does not allow (it drops the connection)")
def test_debug_reload_without_flush_or_merge_refuses_the_data_it_holds(c):
    """Redis loads the file over the data it came from: a library it holds already fails the
    load (and a key it holds already stops Redis); with MERGE, or with nothing held, it loads."""
    c.call("FLUSHALL")
    c.call("FUNCTION", "FLUSH")
    assert c.call("DEBUG", "RELOAD", "NOFLUSH") == ("+", b"OK")
    code = "#!lua name=reloadlib\nredis.register_function('f', function() return 1 end)"
    assert c.call("FUNCTION", "LOAD", code) == ("$", b"reloadlib")
    error = ("-", "ERR Error trying to load the RDB dump, check server logs.")
    assert c.call("DEBUG", "RELOAD", "NOFLUSH") == error
    assert c.call("DEBUG", "RELOAD", "NOFLUSH", "MERGE") == ("+", b"OK")
    c.call("FUNCTION", "FLUSH")
    c.call("SET", "k", "v")
    assert c.call("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH") == error
    assert c.call("GET", "k") == ("$", b"v")


@pytest.mark.basalt_only(reason="Redis rewrites and reloads its AOF files, which the oracle's "
                                "harness set-up does not keep")
def test_bgrewriteaof_and_debug_loadaof_keep_the_data(c):
    c.call("SET", "s", "v")
    c.call("SET", "t", "w", "EX", "1000")
    assert c.call("BGREWRITEAOF") == ("+", b"Background append only file rewriting started")
    assert c.call("DEBUG", "LOADAOF") == ("+", b"OK")
    assert c.call("GET", "s") == ("$", b"v")
    assert 900 < c.call("TTL", "t")[1] <= 1000
    assert c.call("BGREWRITEAOF", "x")[0] == "-"


@pytest.mark.basalt_only  # Redis describes its hash tables here; Basalt says it has none
def test_debug_htstats_answers_text_and_needs_a_key(c):
    c.call("SADD", "s", "a", "b")
    kind, text = c.call("DEBUG", "HTSTATS-KEY", "s")
    assert kind == "$" and b"RocksDB" in text
    kind, text = c.call("DEBUG", "HTSTATS", "0")
    assert kind == "$" and text.startswith(b"[Dictionary HT]")
    assert c.call("DEBUG", "HTSTATS-KEY", "missing") == ("-", "ERR no such key")
