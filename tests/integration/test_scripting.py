"""Lua scripting: EVAL / EVALSHA / EVAL_RO / EVALSHA_RO, SCRIPT, the redis.* API,
conversions in both directions, error texts, the sandbox, the libraries, atomicity,
BUSY / SCRIPT KILL / SHUTDOWN NOSAVE, and persistence of loaded scripts.

Expected replies were taken from redis-server 7.0.15; every test without the
basalt_only marker also passes with --target redis."""
import hashlib
import re
import threading
import time

import pytest
import redis

from resp import RawConn


def sha1(body):
    return hashlib.sha1(body.encode()).hexdigest()


def script_error(msg, body, line=1):
    """Redis 7's text for an error raised while a script runs."""
    return "%s script: %s, on @user_script:%d." % (msg, sha1(body), line)


BUSY = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
UNKILLABLE = ("UNKILLABLE Sorry the script already executed write commands against the dataset. "
              "You can either wait the script termination or kill the server in a hard way "
              "using the SHUTDOWN NOSAVE command.")
NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL."
OK = ("+", b"OK")


@pytest.fixture
def c(server, r):
    """Raw RESP2 connection on a flushed server with an empty script cache."""
    conn = RawConn(server.port)
    assert conn.call("SCRIPT", "FLUSH") == OK
    yield conn
    conn.close()


@pytest.fixture
def c3(c, server):
    conn = RawConn(server.port)
    conn.call("HELLO", "3")
    yield conn
    conn.close()


def ev(conn, body, *keys_and_args, numkeys=0):
    return conn.call("EVAL", body, numkeys, *keys_and_args)


# --------------------------------------------------------------------------------------
# Lua -> reply
# --------------------------------------------------------------------------------------
LUA_TO_RESP2 = [
    ("return 1", (":", 1)),
    ("return 3.99", (":", 3)),
    ("return -3.99", (":", -3)),
    ("return 1e20", (":", -9223372036854775808)),
    ("return 2^53", (":", 9007199254740992)),
    ("return '3.99'", ("$", b"3.99")),
    ("return true", (":", 1)),
    ("return false", ("$", None)),
    ("return nil", ("$", None)),
    ("return {1,2,3.7,'a',nil,4}", ("*", [(":", 1), (":", 2), (":", 3), ("$", b"a")])),
    ("return {1,{2,{3}},'x',true,false}",
     ("*", [(":", 1), ("*", [(":", 2), ("*", [(":", 3)])]), ("$", b"x"), (":", 1), ("$", None)])),
    ("return {1, 2, foo='bar'}", ("*", [(":", 1), (":", 2)])),
    ("return {foo='bar'}", ("*", [])),
    ("return {err='bad thing'}", ("-", "bad thing")),
    ("return {err=''}", ("-", "")),
    ("return {ok='fine'}", ("+", b"fine")),
    ("return {err='x', ok='y'}", ("-", "x")),
    ("return {err=12}", ("*", [])),
    ("return {1, 'a', {err='inner'}, {ok='innerok'}}",
     ("*", [(":", 1), ("$", b"a"), ("-", "inner"), ("+", b"innerok")])),
    ("return redis.error_reply('My Error')", ("-", "My Error")),
    ("return redis.error_reply('oops')", ("-", "ERR oops")),
    ("return redis.error_reply('')", ("-", "ERR ")),
    ("return redis.error_reply('-ERR')", ("-", "ERR ERR")),
    ("return redis.error_reply()", ("-", "ERR wrong number or type of arguments")),
    ("return redis.status_reply('FINE')", ("+", b"FINE")),
    ("return redis.status_reply()", ("-", "ERR wrong number or type of arguments")),
    ("return {map={a=1}}", ("*", [("$", b"a"), (":", 1)])),
    ("return {set={a=true}}", ("*", [("$", b"a")])),
    ("return {double=3.5}", ("$", b"3.5")),
    ("return {big_number='123456789012345678901234567890'}",
     ("$", b"123456789012345678901234567890")),
    ("return {verbatim_string={format='txt', string='hi'}}", ("$", b"hi")),
    ("return {double='x'}", ("*", [])),
    ("redis.setresp(3); return true", (":", 1)),
    ("redis.setresp(3); return false", (":", 0)),
]


@pytest.mark.parametrize("body,expected", LUA_TO_RESP2)
def test_lua_to_resp2(c, body, expected):
    assert ev(c, body) == expected


LUA_TO_RESP3 = [
    ("return true", (":", 1)),
    ("return false", ("_", None)),
    ("return nil", ("_", None)),
    ("return {1,false,3}", ("*", [(":", 1), ("_", None), (":", 3)])),
    ("redis.setresp(3); return true", ("#", True)),
    ("redis.setresp(3); return {1, true, false, nil, 2}",
     ("*", [(":", 1), ("#", True), ("#", False)])),
    ("return {map={a=1}}", ("%", [(("$", b"a"), (":", 1))])),
    ("return {map={a={1,2}, b={map={c=1}}}}",
     ("%", [(("$", b"a"), ("*", [(":", 1), (":", 2)])),
            (("$", b"b"), ("%", [(("$", b"c"), (":", 1))]))])),
    ("return {set={a=true}}", ("~", [("$", b"a")])),
    ("return {double=3.5}", (",", "3.5")),
    ("return {double=3}", (",", "3")),
    ("return {double=1/0}", (",", "inf")),
    ("return {big_number='123456789012345678901234567890'}",
     ("(", 123456789012345678901234567890)),
    ("return {verbatim_string={format='txt', string='hi'}}", ("=", b"txt:hi")),
    ("return {verbatim_string={format='markdown', string='hi'}}", ("=", b"mar:hi")),
]


@pytest.mark.parametrize("body,expected", LUA_TO_RESP3)
def test_lua_to_resp3(c3, body, expected):
    assert ev(c3, body) == expected


# --------------------------------------------------------------------------------------
# reply -> Lua
# --------------------------------------------------------------------------------------
REPLY_TO_LUA = [
    ("local t = redis.call('get','nokey'); return type(t) .. tostring(t)", b"booleanfalse"),
    ("redis.setresp(3); return type(redis.call('get','nokey'))", b"nil"),
    ("local r = redis.call('ping'); return type(r) .. r.ok", b"tablePONG"),
    ("return type(redis.call('exists', 'str'))", b"number"),
    ("redis.setresp(3); local t = redis.call('hgetall','h'); return t.map.f1", b"v1"),
    ("redis.setresp(3); local t = redis.call('smembers','s'); return tostring(t.set.m1)", b"true"),
    ("redis.setresp(3); local t = redis.call('zscore','z','m');"
     " return type(t.double) .. tostring(t.double)", b"number1.5"),
    ("local t = redis.call('zscore','z','m'); return type(t) .. t", b"string1.5"),
    ("redis.setresp(3); return tostring(redis.call('exists', 'str') == 1)", b"true"),
    ("local t = redis.call('hgetall','h'); return #t", None),
    ("local t = redis.pcall('incr','str'); return t['err']",
     b"ERR value is not an integer or out of range"),
    ("redis.setresp(3); local t = redis.call('hgetall', 'nokey');"
     " return type(t) .. tostring(next(t.map))", b"tablenil"),
]


@pytest.mark.parametrize("body,expected", REPLY_TO_LUA)
def test_reply_to_lua(c, body, expected):
    c.call("HSET", "h", "f1", "v1", "f2", "v2")
    c.call("SADD", "s", "m1")
    c.call("ZADD", "z", "1.5", "m")
    c.call("SET", "str", "hello")
    if expected is None:
        assert ev(c, body) == (":", 4)
    else:
        assert ev(c, body) == ("$", expected)


def test_resp3_replies_reach_a_resp3_client(c3):
    c3.call("HSET", "h", "f1", "v1")
    c3.call("ZADD", "z", "1.5", "m")
    assert ev(c3, "redis.setresp(3); return redis.call('hgetall','h')") == \
        ("%", [(("$", b"f1"), ("$", b"v1"))])
    assert ev(c3, "redis.setresp(3); return redis.call('zscore','z','m')") == (",", "1.5")
    # Without setresp(3) the command replied in RESP2 to the script: a flat array.
    assert ev(c3, "return redis.call('hgetall','h')") == ("*", [("$", b"f1"), ("$", b"v1")])


def test_numbers_as_command_arguments_use_17_digits(c):
    for value, stored in [("1.5", b"1.5"), ("3.0", b"3"), ("0.1", b"0.10000000000000001"),
                          ("1e100", b"1e+100"), ("123456789012345", b"123456789012345"),
                          ("-0.0", b"-0"), ("1/0", b"inf")]:
        assert ev(c, "return redis.call('set', 'n', %s)" % value) == OK
        assert c.call("GET", "n") == ("$", stored)


def test_setresp_errors(c):
    body = "redis.setresp(4)"
    assert ev(c, body) == ("-", script_error("ERR RESP version must be 2 or 3.", body))
    body = "redis.setresp()"
    assert ev(c, body) == ("-", script_error("ERR redis.setresp() requires one argument.", body))


# --------------------------------------------------------------------------------------
# EVAL arguments, EVALSHA, SCRIPT
# --------------------------------------------------------------------------------------
def test_keys_and_argv(c):
    assert ev(c, "return KEYS", "k1", "k2", "a1", numkeys=2) == ("*", [("$", b"k1"), ("$", b"k2")])
    assert ev(c, "return ARGV", "k1", "k2", "a1", numkeys=2) == ("*", [("$", b"a1")])
    assert ev(c, "return #KEYS + #ARGV") == (":", 0)
    assert ev(c, "KEYS[1] = 'z'; return KEYS[1]", "a", numkeys=1) == ("$", b"z")


def test_numkeys_errors(c):
    assert c.call("EVAL", "return 1", "-1") == ("-", "ERR Number of keys can't be negative")
    assert c.call("EVAL", "return 1", "3", "a") == \
        ("-", "ERR Number of keys can't be greater than number of args")
    assert c.call("EVAL", "return 1", "x") == ("-", "ERR value is not an integer or out of range")
    assert c.call("EVAL", "return 1") == ("-", "ERR wrong number of arguments for 'eval' command")


def test_script_load_exists_evalsha_flush(c):
    body = "return 'loaded'"
    assert c.call("SCRIPT", "LOAD", body) == ("$", sha1(body).encode())
    assert c.call("SCRIPT", "EXISTS", sha1(body), sha1(body).upper(), "abc") == \
        ("*", [(":", 1), (":", 1), (":", 0)])
    assert c.call("EVALSHA", sha1(body), 0) == ("$", b"loaded")
    assert c.call("EVALSHA", sha1(body).upper(), 0) == ("$", b"loaded")
    assert c.call("EVALSHA_RO", sha1(body), 0) == ("$", b"loaded")
    assert c.call("SCRIPT", "FLUSH") == OK
    assert c.call("SCRIPT", "EXISTS", sha1(body)) == ("*", [(":", 0)])
    assert c.call("EVALSHA", sha1(body), 0) == ("-", NOSCRIPT)
    assert c.call("EVALSHA", "fff", 0) == ("-", NOSCRIPT)


def test_eval_caches_the_script(c):
    body = "return 'cached'"
    assert ev(c, body) == ("$", b"cached")
    assert c.call("SCRIPT", "EXISTS", sha1(body)) == ("*", [(":", 1)])
    assert c.call("EVALSHA", sha1(body), 0) == ("$", b"cached")


def test_info_counts_the_cached_scripts(c):
    def cached():
        info = c.call("INFO", "memory")[1].decode()
        return int(re.search(r"number_of_cached_scripts:(\d+)", info).group(1))
    assert cached() == 0  # the fixture flushed them
    c.call("SCRIPT", "LOAD", "return 1")
    c.call("SCRIPT", "LOAD", "return 1")
    ev(c, "return 2")
    assert cached() == 2
    assert c.call("SCRIPT", "FLUSH", "ASYNC") == OK
    assert cached() == 0


def test_script_subcommand_errors(c):
    assert c.call("SCRIPT", "FLUSH", "ASYNC") == OK
    assert c.call("SCRIPT", "FLUSH", "SYNC") == OK
    assert c.call("SCRIPT", "FLUSH", "bogus") == \
        ("-", "ERR SCRIPT FLUSH only support SYNC|ASYNC option")
    assert c.call("SCRIPT", "nosuch") == ("-", "ERR unknown subcommand 'nosuch'. Try SCRIPT HELP.")
    assert c.call("SCRIPT") == ("-", "ERR wrong number of arguments for 'script' command")
    assert c.call("SCRIPT", "KILL") == ("-", "NOTBUSY No scripts in execution right now.")
    assert c.call("SCRIPT", "LOAD", "return (") == \
        ("-", "ERR Error compiling script (new function): user_script:1: "
              "unexpected symbol near '<eof>'")
    t, lines = c.call("SCRIPT", "HELP")
    assert t == "*" and lines[0][1].startswith(b"SCRIPT <subcommand>")


def test_shebang(c):
    assert ev(c, "#!lua\nreturn 1") == (":", 1)
    assert ev(c, "#!lua\r\nreturn 1") == (":", 1)
    assert ev(c, "#!lua flags=\nreturn 1") == (":", 1)
    assert ev(c, "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster\nreturn 1") == (":", 1)
    assert ev(c, "#!lua") == ("-", "ERR Invalid script shebang")
    assert ev(c, "#!lua flags=bogus\nreturn 1") == \
        ("-", "ERR Unexpected flag in script shebang: bogus")
    assert ev(c, "#!lua name=x\nreturn 1") == ("-", "ERR Unknown lua shebang option: name=x")
    assert ev(c, "#!foo\nreturn 1") == ("-", "ERR Unexpected engine in script shebang: #!foo")
    body = "#!lua\nlocal x = 1\nerror('at three')"
    assert ev(c, body) == ("-", script_error("ERR user_script:3: at three", body, 3))


def test_read_only_scripts_refuse_writes(c):
    body = "return redis.call('set',KEYS[1],'b')"
    assert c.call("EVAL_RO", body, 1, "a") == \
        ("-", script_error("ERR Write commands are not allowed from read-only scripts.", body))
    assert c.call("EVALSHA_RO", sha1(body), 1, "a") == \
        ("-", script_error("ERR Write commands are not allowed from read-only scripts.", body))
    c.call("SET", "a", "v")
    assert c.call("EVAL_RO", "return redis.call('get',KEYS[1])", 1, "a") == ("$", b"v")
    body = "#!lua flags=no-writes\nreturn redis.call('set',KEYS[1],'b')"
    assert ev(c, body, "a", numkeys=1) == \
        ("-", script_error("ERR Write commands are not allowed from read-only scripts.", body, 2))
    assert c.call("GET", "a") == ("$", b"v")


def test_a_shebang_without_no_writes_declares_a_write(c):
    # A script with a shebang declares its flags: without no-writes, *_RO refuses it outright.
    refused = ("-", "ERR Can not execute a script with write flag using *_ro command.")
    body = "#!lua\nreturn 1"
    assert c.call("EVAL_RO", body, 0) == refused
    assert c.call("EVALSHA_RO", sha1(body), 0) == refused
    assert c.call("EVAL_RO", "#!lua flags=no-writes\nreturn 2", 0) == (":", 2)
    # Without a shebang, a script keeps the old rules: EVAL_RO runs it.
    assert c.call("EVAL_RO", "return 3", 0) == (":", 3)


# --------------------------------------------------------------------------------------
# redis.call / redis.pcall and script errors
# --------------------------------------------------------------------------------------
CALL_ERRORS = [
    ("redis.call('nosuch')", "ERR Unknown Redis command called from script"),
    ("redis.call('get')", "ERR Wrong number of args calling Redis command from script"),
    ("redis.call('get', 'a', 'b')", "ERR Wrong number of args calling Redis command from script"),
    ("redis.call('get', {})", "ERR Lua redis lib command arguments must be strings or integers"),
    ("redis.call('set', 'n', true)",
     "ERR Lua redis lib command arguments must be strings or integers"),
    ("redis.call()", "ERR Please specify at least one argument for this redis lib call"),
    ("redis.call('incr', 'str')", "ERR value is not an integer or out of range"),
    ("redis.call('lpush', 'str', 'b')",
     "WRONGTYPE Operation against a key holding the wrong kind of value"),
    ("redis.call('set', 'a', 'b', 'XX', 'NX')", "ERR syntax error"),
]


@pytest.mark.parametrize("call,msg", CALL_ERRORS)
def test_call_raises_and_pcall_returns(c, call, msg):
    c.call("SET", "str", "hello")
    body = "return " + call
    assert ev(c, body) == ("-", script_error(msg, body))
    pbody = "return " + call.replace("redis.call", "redis.pcall", 1)
    if call != "redis.call()":
        assert ev(c, pbody) == ("-", msg)
        assert ev(c, "local t = %s; return t['err']" % call.replace("redis.call", "redis.pcall", 1)) == \
            ("$", msg.encode())


@pytest.mark.parametrize("args", ["'eval', 'return 1', '0'", "'evalsha', 'a', '0'", "'multi'",
                                  "'exec'", "'watch', 'a'", "'client', 'id'",
                                  "'config', 'get', 'x'", "'auth', 'a'", "'hello'", "'quit'",
                                  "'shutdown'", "'script', 'load', 'return 1'"])
def test_commands_not_allowed_from_scripts(c, args):
    body = "return redis.call(%s)" % args
    assert ev(c, body) == ("-", script_error("ERR This Redis command is not allowed from script", body))


def test_scripts_are_refused_or_allowed_by_the_subcommands_flags(c):
    # CLUSTER is callable from scripts, CLUSTER RESET is not; CLIENT is not, CLIENT HELP is.
    body = "return redis.call('cluster', 'reset')"
    assert ev(c, body) == ("-", script_error("ERR This Redis command is not allowed from script", body))
    t, lines = ev(c, "return redis.call('client', 'help')")
    assert t == "*" and lines[0][1].startswith(b"CLIENT <subcommand>")


def test_blmpop_from_a_script_pops_without_blocking(c):
    # Redis 7.0 refuses BLPOP in scripts but runs BLMPOP there, as a non-blocking LMPOP.
    c.call("DEL", "bq")
    body = "return redis.call('blmpop', 0, 1, KEYS[1], 'LEFT')"
    assert ev(c, body, "bq", numkeys=1) == ("$", None)
    c.call("RPUSH", "bq", "a", "b")
    assert ev(c, body, "bq", numkeys=1) == ("*", [("$", b"bq"), ("*", [("$", b"a")])])


SCRIPT_ERRORS = [
    ("error('boom')", "ERR user_script:1: boom", 1),
    ("error({err='custom'})", "custom", 1),
    ("error({err='x', source='y'})", "x", 1),
    ("error()", "ERR nil", 1),
    ("error(12)", "ERR user_script:1: 12", 1),
    ("error('x', 0)", "ERR x", 1),
    ("return nil + 1", "ERR user_script:1: attempt to perform arithmetic on a nil value", 1),
    ("local function f() f() end f()", "ERR user_script:1: stack overflow", 1),
    ("local function f() error('deep') end\nlocal x = 1\nf()", "ERR user_script:1: deep", 1),
    ("local x = 1\nreturn redis.call('nosuch')", "ERR Unknown Redis command called from script", 2),
    ("local function f() return redis.call('nosuch') end\nlocal x = 1\nreturn f()",
     "ERR Unknown Redis command called from script", 1),
    ("return redis.log(redis.LOG_WARNING)", "ERR redis.log() requires two arguments or more.", 1),
    ("return redis.log(99, 'x')", "ERR Invalid debug level.", 1),
    ("return redis.sha1hex()", "ERR wrong number of arguments", 1),
    ("return redis.set_repl(99)",
     "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.", 1),
    ("return cjson.decode('[')",
     "ERR user_script:1: Expected value but found T_END at character 2", 1),
    ("return bit.band('x')",
     "ERR user_script:1: bad argument #1 to 'band' (number expected, got string)", 1),
]


@pytest.mark.parametrize("body,msg,line", SCRIPT_ERRORS)
def test_script_errors(c, body, msg, line):
    assert ev(c, body) == ("-", script_error(msg, body, line))


def test_compile_error(c):
    assert ev(c, "return (") == \
        ("-", "ERR Error compiling script (new function): user_script:1: "
              "unexpected symbol near '<eof>'")


def test_lua_pcall_sees_error_strings(c):
    c.call("SET", "str", "x")
    assert ev(c, "local ok, e = pcall(redis.call, 'incr', 'str'); return {tostring(ok), e}") == \
        ("*", [("$", b"false"), ("$", b"ERR value is not an integer or out of range")])
    assert ev(c, "local ok, e = pcall(error, {err='x'}); return {tostring(ok), e}") == \
        ("*", [("$", b"false"), ("$", b"x")])
    assert ev(c, "return {pcall(function() return 1, 2 end)}") == \
        ("*", [(":", 1), (":", 1), (":", 2)])
    assert ev(c, "return {pcall()}") == \
        ("*", [("$", None), ("$", b"attempt to call a boolean value")])
    assert ev(c, "return {xpcall(function() error('x') end, function(e) return 'h ' .. e end)}") \
        == ("*", [("$", None), ("$", b"h user_script:1: x")])


def test_writes_before_an_error_are_kept(c):
    # As in Redis: a script is not rolled back when it fails after writing.
    body = "redis.call('set', 'a', '1'); error('later')"
    assert ev(c, body) == ("-", script_error("ERR user_script:1: later", body))
    assert c.call("GET", "a") == ("$", b"1")


def test_redis_api_misc(c):
    assert ev(c, "return redis.sha1hex('')") == ("$", b"da39a3ee5e6b4b0d3255bfef95601890afd80709")
    assert ev(c, "return redis.sha1hex('abc')") == ("$", b"a9993e364706816aba3e25717850c26c9cd0d89d")
    assert ev(c, "return redis.sha1hex(12)") == ("$", b"7b52009b64fd0a2a49e6d8a939753077792b0554")
    long_text = "x" * 1000
    assert ev(c, "return redis.sha1hex(ARGV[1])", long_text) == ("$", sha1(long_text).encode())
    assert ev(c, "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}") \
        == ("*", [(":", 0), (":", 1), (":", 2), (":", 3)])
    assert ev(c, "return redis.log(redis.LOG_WARNING, 'from', 'a script')") == ("$", None)
    assert ev(c, "return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA,"
                 " redis.REPL_ALL}") == ("*", [(":", 0), (":", 1), (":", 2), (":", 2), (":", 3)])
    assert ev(c, "return redis.set_repl(redis.REPL_ALL)") == ("$", None)
    assert ev(c, "return redis.replicate_commands()") == (":", 1)
    assert ev(c, "return redis.acl_check_cmd('get', 'x')") == (":", 1)
    # The version a script sees is the one INFO reports, in both forms.
    server = c.call("INFO", "server")[1].decode()
    version = dict(line.split(":", 1) for line in server.split("\r\n") if ":" in line)[
        "redis_version"]
    assert ev(c, "return redis.REDIS_VERSION") == ("$", version.encode())
    major, minor, patch = (int(part) for part in version.split("."))
    assert ev(c, "return redis.REDIS_VERSION_NUM") == (":", (major << 16) | (minor << 8) | patch)


def test_select_inside_a_script_does_not_change_the_caller(c):
    c.call("SET", "str", "db0")
    assert ev(c, "redis.call('select', '1'); redis.call('set', 'str', 'db1');"
                 " return redis.call('get', 'str')") == ("$", b"db1")
    assert c.call("GET", "str") == ("$", b"db0")
    c.call("SELECT", "1")
    assert c.call("GET", "str") == ("$", b"db1")
    c.call("FLUSHDB")
    c.call("SELECT", "0")


def test_eval_inside_multi(c):
    assert c.call("MULTI") == OK
    assert ev(c, "return redis.call('incr', KEYS[1])", "n", numkeys=1) == ("+", b"QUEUED")
    assert c.call("INCR", "n") == ("+", b"QUEUED")
    assert c.call("EXEC") == ("*", [(":", 1), (":", 2)])


def test_pipelined_commands_after_eval_keep_their_order(server, c):
    c.send_raw(b"".join([
        b"*3\r\n$4\r\nEVAL\r\n$36\r\nreturn redis.call('incr', 'counter')\r\n$1\r\n0\r\n",
        b"*2\r\n$4\r\nINCR\r\n$7\r\ncounter\r\n",
        b"*3\r\n$4\r\nEVAL\r\n$36\r\nreturn redis.call('incr', 'counter')\r\n$1\r\n0\r\n",
    ]))
    assert [c.read() for _ in range(3)] == [(":", 1), (":", 2), (":", 3)]


# --------------------------------------------------------------------------------------
# Sandbox
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["os", "io", "print", "dofile", "loadfile", "require", "module",
                                  "package", "debug", "setfenv", "getfenv", "newproxy", "x"])
def test_missing_globals(c, name):
    body = "return %s" % name
    assert ev(c, body) == ("-", script_error(
        "ERR user_script:1: Script attempted to access nonexistent global variable '%s'" % name,
        body))


READONLY = [
    ("x = 1", "ERR user_script:1: Attempt to modify a readonly table"),
    ("_G.x = 1", "ERR user_script:1: Attempt to modify a readonly table"),
    ("string.foo = 1", "ERR user_script:1: Attempt to modify a readonly table"),
    ("redis.call = nil", "ERR user_script:1: Attempt to modify a readonly table"),
    ("cjson.encode = nil", "ERR user_script:1: Attempt to modify a readonly table"),
    ("getmetatable('').__index.foo = 1", "ERR user_script:1: Attempt to modify a readonly table"),
    ("getmetatable(_G).__index = {}", "ERR user_script:1: Attempt to modify a readonly table"),
    ("rawset(_G, 'x', 1)", "ERR Attempt to modify a readonly table"),
    ("setmetatable(_G, nil)", "ERR Attempt to modify a readonly table"),
    ("table.insert(_G, 1)", "ERR Attempt to modify a readonly table"),
    ("table.insert(redis, 1)", "ERR Attempt to modify a readonly table"),
]


@pytest.mark.parametrize("body,msg", READONLY)
def test_readonly_globals_and_libraries(c, body, msg):
    assert ev(c, body) == ("-", script_error(msg, body))
    # Nothing leaked into the next script.
    assert ev(c, "return type(rawget(_G, 'x'))") == ("$", b"nil")
    assert ev(c, "return type(redis.call)") == ("$", b"function")


def test_sandbox_still_allows_the_usual(c):
    assert ev(c, "local t = {} t.x = 1 return t.x") == (":", 1)
    assert ev(c, "return ('x'):upper()") == ("$", b"X")
    assert ev(c, "return getmetatable('').__index == string") == (":", 1)
    assert ev(c, "return rawget(_G, 'redis') ~= nil") == (":", 1)
    assert ev(c, "return type(_G._G)") == ("$", b"table")
    assert ev(c, "local n = 0 for k, v in pairs(redis) do n = n + 1 end return n > 10") == (":", 1)
    assert ev(c, "return loadstring('return 1')()") == (":", 1)
    assert ev(c, "return coroutine.wrap(function() coroutine.yield(5) end)()") == (":", 5)
    assert ev(c, "return unpack({1,2,3})") == (":", 1)
    body = "return loadstring('x = 5')()"
    assert ev(c, body) == ("-", "ERR [string \"x = 5\"]:1: Attempt to modify a readonly table "
                                "script: %s, on x = 5:1." % sha1(body))


def test_bytecode_is_refused(c):
    assert ev(c, "return loadstring(string.dump(function() return 1 end))") == ("$", None)
    assert ev(c, "local f, e = loadstring(string.dump(function() return 1 end)) return e") == \
        ("$", b"[string \"\x1bLuaQ\"]:1: unexpected symbol near 'char(27)'")


# --------------------------------------------------------------------------------------
# Libraries
# --------------------------------------------------------------------------------------
LIBRARIES = [
    ("return cjson.encode({1,2,{a=1}})", ("$", b'[1,2,{"a":1}]')),
    ("return cjson.encode({})", ("$", b"{}")),
    ("return cjson.decode('[1,2,3.5,null]')", ("*", [(":", 1), (":", 2), (":", 3), ("$", None)])),
    ("return cjson.decode('{\"a\":1}').a", (":", 1)),
    ("return cjson.encode('a/b\"c')", ("$", b'"a\\/b\\"c"')),
    ("return cjson.encode({[1]=1,[3]=3})", ("$", b"[1,null,3]")),
    ("return bit.tohex(65535)", ("$", b"0000ffff")),
    ("return bit.tohex(65535, -8)", ("$", b"0000FFFF")),
    # -2^31 (and 2^31, the same 32 bits) cannot be negated: taken as -(2^31 - 1).
    ("return bit.tohex(65535, -2147483648)", ("$", b"0000FFFF")),
    ("return bit.tohex(65535, 2147483648)", ("$", b"0000FFFF")),
    ("return bit.bnot(0)", (":", -1)),
    ("return {bit.bswap(0x12345678), bit.rol(1, 33), bit.arshift(-256, 4)}",
     ("*", [(":", 2018915346), (":", 2), (":", -16)])),
    ("return struct.pack('>i', 1)", ("$", b"\x00\x00\x00\x01")),
    ("return struct.pack('<hHbBlLT', -2, 65535, -1, 255, -5, 7, 9)",
     ("$", b"\xfe\xff\xff\xff\xff\xff" + b"\xfb" + b"\xff" * 7 + b"\x07" + b"\x00" * 7
      + b"\x09" + b"\x00" * 7)),
    ("return struct.pack('>!4 b i', 1, 2)", ("$", b"\x01\x00\x00\x00\x00\x00\x00\x02")),
    ("return struct.pack('c5s', 'hello world', 'hi')", ("$", b"hellohi\x00")),
    ("return {struct.unpack('>i', struct.pack('>i', -7))}", ("*", [(":", -7), (":", 5)])),
    ("return {struct.unpack('bc0', struct.pack('b', 3) .. 'xyzw')}",
     ("*", [("$", b"xyz"), (":", 5)])),
    ("return {struct.unpack('s', 'ab\\0cd')}", ("*", [("$", b"ab"), (":", 4)])),
    ("return struct.size('>!4 b i d')", (":", 16)),
    ("return cmsgpack.pack(1, -1, 200, -200, 70000, 5000000000, 1.5, 0.1, 'abc', true, false)",
     ("$", b"\x01\xff\xcc\xc8\xd1\xff\x38\xce\x00\x01\x11\x70\xcf\x00\x00\x00\x01\x2a\x05\xf2\x00"
           b"\xca\x3f\xc0\x00\x00\xcb\x3f\xb9\x99\x99\x99\x99\x99\x9a\xa3abc\xc3\xc2")),
    ("return cmsgpack.pack({1,2,3}, {a=1}, {})", ("$", b"\x93\x01\x02\x03\x81\xa1a\x01\x90")),
    ("return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1,2,{3}}, 1.5))}",
     ("*", [(":", 1), ("$", b"a"), ("*", [(":", 1), (":", 2), ("*", [(":", 3)])]), (":", 1)])),
    ("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}", ("*", [(":", 1), (":", 1)])),
    ("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
     ("*", [(":", 2), (":", 1), (":", 2)])),
    ("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}", ("*", [(":", -1), (":", 3)])),
]


@pytest.mark.parametrize("body,expected", LIBRARIES)
def test_libraries(c, body, expected):
    assert ev(c, body) == expected


def test_library_errors(c):
    body = "return struct.pack('q', 1)"
    assert ev(c, body) == ("-", script_error(
        "ERR user_script:1: bad argument #1 to 'pack' (invalid format option 'q')", body))
    body = "return {cmsgpack.unpack('\\145')}"
    assert ev(c, body)[0] == "-"
    body = "return cjson.encode(function() end)"
    assert ev(c, body) == ("-", script_error(
        "ERR user_script:1: Cannot serialise function: type not supported", body))


# --------------------------------------------------------------------------------------
# Atomicity
# --------------------------------------------------------------------------------------
def test_script_read_modify_write_is_atomic_against_incr(server, r):
    r.set("counter", 0)
    rounds, per_script = 20, 50
    script = ("for i = 1, tonumber(ARGV[1]) do"
              " local v = tonumber(redis.call('get', KEYS[1]))"
              " redis.call('set', KEYS[1], v + 1) end")
    errors = []

    def incr_client():
        cl = server.client()
        try:
            for _ in range(200):
                cl.incr("counter")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def script_client():
        cl = server.client()
        try:
            for _ in range(rounds):
                cl.eval(script, 1, "counter", per_script)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=incr_client) for _ in range(3)]
    threads += [threading.Thread(target=script_client) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert int(r.get("counter")) == 3 * 200 + 2 * rounds * per_script


def test_no_client_sees_a_script_half_done(server, r):
    r.mset({"a": 0, "b": 0})
    # The script moves one unit from a to b many times; a + b stays 0 outside the script.
    script = ("for i = 1, 200 do redis.call('decr', KEYS[1]) redis.call('incr', KEYS[2]) end")
    stop = threading.Event()
    sums = []

    def observer():
        cl = server.client()
        while not stop.is_set():
            a, b = cl.mget("a", "b")
            sums.append(int(a) + int(b))

    t = threading.Thread(target=observer)
    t.start()
    try:
        for _ in range(30):
            r.eval(script, 2, "a", "b")
    finally:
        stop.set()
        t.join()
    assert sums and set(sums) == {0}
    assert r.mget("a", "b") == ["-6000", "6000"]


# --------------------------------------------------------------------------------------
# BUSY, SCRIPT KILL, SHUTDOWN NOSAVE
# --------------------------------------------------------------------------------------
def wait_for_busy(port, timeout=5.0):
    deadline = time.monotonic() + timeout
    with RawConn(port) as probe:
        while time.monotonic() < deadline:
            if probe.call("PING") == ("-", BUSY):
                return True
            time.sleep(0.02)
    return False


@pytest.fixture
def short_threshold(server, r):
    r.config_set("busy-reply-threshold", 100)
    yield
    r.config_set("busy-reply-threshold", 5000)


def test_lua_time_limit_is_an_alias(server, r):
    r.config_set("lua-time-limit", 1234)
    assert r.config_get("busy-reply-threshold") == {"busy-reply-threshold": "1234"}
    assert r.config_get("lua-time-limit") == {"lua-time-limit": "1234"}
    r.config_set("busy-reply-threshold", 5000)


def test_busy_then_script_kill(server, short_threshold):
    runner = RawConn(server.port)
    runner.send("EVAL", "while true do end", "0")
    assert wait_for_busy(server.port)
    # Several fresh connections land on every worker: all of them get BUSY.
    for cmd in [("GET", "x"), ("SET", "x", "1"), ("SCRIPT", "EXISTS", "a"), ("EVAL", "return 1", 0),
                ("SHUTDOWN",), ("CLIENT", "LIST")]:
        with RawConn(server.port) as other:
            assert other.call(*cmd) == ("-", BUSY), cmd
    with RawConn(server.port) as other:
        assert other.call("HELLO", "3")[0] == "%"
        assert other.call("GET", "x") == ("-", BUSY)
    with RawConn(server.port) as killer:
        assert killer.call("SCRIPT", "KILL") == OK
    assert runner.read() == ("-", script_error(
        "ERR Script killed by user with SCRIPT KILL...", "while true do end"))
    assert runner.call("PING") == ("+", b"PONG")
    with RawConn(server.port) as other:
        assert other.call("SCRIPT", "KILL") == ("-", "NOTBUSY No scripts in execution right now.")
    runner.close()


def test_killed_script_caught_by_pcall_still_dies(server, short_threshold):
    body = "while true do pcall(function() while true do end end) end"
    runner = RawConn(server.port)
    runner.send("EVAL", body, "0")
    assert wait_for_busy(server.port)
    with RawConn(server.port) as killer:
        assert killer.call("SCRIPT", "KILL") == OK
    assert runner.read()[1].startswith("ERR Script killed by user with SCRIPT KILL...")
    runner.close()


def test_unkillable_after_a_write_then_shutdown_nosave(start_server, target):
    srv = start_server(args={"busy-reply-threshold": "100"}, persistent=True)
    runner = RawConn(srv.port)
    runner.send("EVAL", "redis.call('set', 'written', '1') while true do end", "0")
    assert wait_for_busy(srv.port)
    with RawConn(srv.port) as killer:
        assert killer.call("SCRIPT", "KILL") == ("-", UNKILLABLE)
        assert killer.call("GET", "written") == ("-", BUSY)
        killer.send("SHUTDOWN", "NOSAVE")
    assert srv.wait_exit(timeout=20) is not None
    runner.close()
    if target == "basalt":
        # The script never finished: none of its writes may land.
        srv.start(retries=0)
        with RawConn(srv.port) as check:
            assert check.call("GET", "written") == ("$", None)


# --------------------------------------------------------------------------------------
# Basalt specifics: persistence, memory limit
# --------------------------------------------------------------------------------------
@pytest.mark.basalt_only
def test_loaded_scripts_survive_restart(start_server):
    srv = start_server()
    cl = srv.client()
    loaded = "return 'loaded ' .. ARGV[1]"
    evaled = "return 'evaled'"
    flushed = "return 'flushed'"
    sha = cl.script_load(loaded)
    assert cl.eval(evaled, 0) == "evaled"
    cl.script_load(flushed)
    cl.execute_command("SCRIPT", "FLUSH")
    cl.script_load(loaded)
    cl.eval(evaled, 0)
    cl.close()
    srv.restart()
    cl = srv.client()
    assert cl.script_exists(sha, sha1(evaled), sha1(flushed)) == [True, True, False]
    assert cl.evalsha(sha, 0, "x") == "loaded x"
    cl.close()
    srv.kill9()
    srv.start(retries=0)
    cl = srv.client()
    assert cl.evalsha(sha1(evaled), 0) == "evaled"
    cl.close()


@pytest.mark.basalt_only
def test_memory_limit_fails_the_script_not_the_server(server, r):
    r.config_set("lua-memory-limit", "16mb")
    try:
        body = "local t = {} for i = 1, 1e8 do t[i] = string.rep('x', 100) .. i end return #t"
        with pytest.raises(redis.ResponseError, match="not enough memory"):
            r.eval(body, 0)
        assert r.eval("return #string.rep('y', 1000)", 0) == 1000
    finally:
        r.config_set("lua-memory-limit", "1gb")
    assert r.eval("return #string.rep('y', 20000000)", 0) == 20000000


@pytest.mark.basalt_only(reason="Redis 7.2 behaviour: 7.0 refuses blocking commands and WAIT "
                                "in scripts")
def test_blocking_commands_in_scripts_answer_as_on_timeout(c):
    c.call("RPUSH", "full", "x")
    # Nothing to pop: the reply a timeout gives (a null, false to Lua), at once, where timeout 0
    # would block for ever.
    for call in ("'blpop', 'l', 0", "'brpop', 'l', 0", "'blmove', 'l', 'l2', 'LEFT', 'LEFT', 0",
                 "'brpoplpush', 'l', 'l2', 0", "'bzpopmin', 'z', 0", "'bzpopmax', 'z', 0",
                 "'blmpop', 0, 1, 'l', 'LEFT'", "'bzmpop', 0, 1, 'z', 'MIN'"):
        assert ev(c, "return redis.pcall(%s) == false" % call) == (":", 1), call
    assert ev(c, "return redis.pcall('wait', '1', '0')") == (":", 0)
    # Something to pop: served as outside a script.
    assert ev(c, "return redis.call('blpop', 'full', 0)") == ("*", [("$", b"full"), ("$", b"x")])


@pytest.mark.basalt_only(reason="Redis 7.2 behaviour: 7.0 answers TIME with the current time")
def test_time_is_frozen_inside_a_script(c):
    # The loop takes milliseconds; both calls still tell the script's start.
    t, v = ev(c, "local a = redis.call('time') for i = 1, 3000000 do end "
                 "return {a, redis.call('time')}")
    assert t == "*" and v[0] == v[1]


@pytest.mark.basalt_only
def test_error_table_without_message(c):
    # Redis 7.0.15 crashes on this one; Basalt replies with an error.
    body = "error({})"
    assert ev(c, body) == ("-", script_error("ERR unknown error", body))
    assert c.call("PING") == ("+", b"PONG")


@pytest.mark.basalt_only
def test_deeply_nested_return_is_cut_with_an_error(c):
    c.send("EVAL", "local t = {} for i = 1, 100000 do t = {t} end return t", "0")
    buf = b""
    while b"-ERR reached lua stack limit\r\n" not in buf:
        chunk = c.sock.recv(1 << 16)
        assert chunk, "connection closed"
        buf += chunk
    assert buf.startswith(b"*1\r\n*1\r\n")
    assert c.call("PING") == ("+", b"PONG")


def test_min_replicas_to_write_refuses_scripts_that_write(r):
    """A script whose shebang does not say no-writes is refused before it runs; one without a
    shebang only when it writes, as Redis 7.2 does."""
    r.set("x", "some value")
    r.config_set("min-replicas-to-write", 1)
    try:
        assert r.eval("#!lua flags=no-writes\nreturn redis.call('get','x')", 1, "x") == \
            "some value"
        assert r.eval("return redis.call('get','x')", 1, "x") == "some value"
        with pytest.raises(redis.ResponseError,
                           match="^NOREPLICAS Not enough good replicas to write.$"):
            r.eval("#!lua\nreturn redis.call('get','x')", 1, "x")
        with pytest.raises(redis.ResponseError, match="NOREPLICAS Not enough good replicas"):
            r.eval("return redis.call('set','x',1)", 1, "x")
    finally:
        r.config_set("min-replicas-to-write", 0)
    assert r.get("x") == "some value"


def test_a_call_refused_inside_a_script_counts_once_as_rejected(r):
    """Redis counts the refusal where it happens: the error once (not again for the script's
    error reply) and a rejected call of the command, not a call."""
    r.config_resetstat()
    r.config_set("maxmemory", 1)
    try:
        with pytest.raises(redis.ResponseError, match="^OOM command not allowed"):
            r.eval("return redis.call('set','x','y')", 1, "x")
        assert r.eval("return redis.pcall('set','x','y')['err']", 1, "x").startswith("OOM ")
    finally:
        r.config_set("maxmemory", 0)
    assert r.info("errorstats")["errorstat_OOM"]["count"] == 2
    assert r.info("stats")["total_error_replies"] == 2
    commands = r.info("commandstats")
    assert commands["cmdstat_set"]["calls"] == 0
    assert commands["cmdstat_set"]["rejected_calls"] == 2
    assert commands["cmdstat_eval"]["calls"] == 2
    assert commands["cmdstat_eval"]["failed_calls"] == 1
