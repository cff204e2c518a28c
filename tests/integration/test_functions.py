"""Functions: FUNCTION LOAD/DELETE/FLUSH/LIST/STATS/KILL/DUMP/RESTORE, FCALL and FCALL_RO,
redis.register_function in both forms, the load-time sandbox, flags, BUSY and FUNCTION KILL,
DUMP payloads exchanged with a real redis-server in both directions, persistence across
restarts and replication.

Expected replies were taken from redis-server 7.0.15; every test without the basalt_only
marker also passes with --target redis."""
import threading
import time

import pytest
import redis

from helpers import wait_until
from resp import RawConn

OK = ("+", b"OK")
BUSY_EVAL = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
BUSY_FUNCTION = ("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 "SHUTDOWN NOSAVE.")
NAME_RULES = ("Library names can only contain letters, numbers, or underscores(_) and must be at "
              "least one character long")
UNKILLABLE = ("UNKILLABLE Sorry the script already executed write commands against the dataset. "
              "You can either wait the script termination or kill the server in a hard way "
              "using the SHUTDOWN NOSAVE command.")

LIB = """#!lua name=mylib
redis.register_function('setit', function(keys, args) return redis.call('set', keys[1], args[1]) end)
redis.register_function{function_name='getit', callback=function(keys, args)
  return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads a key'}
"""


def lib(name, *functions):
    """A library registering each function name to return its own name."""
    body = "".join("redis.register_function('%s', function() return '%s' end)\n" % (f, f)
                   for f in functions)
    return "#!lua name=%s\n%s" % (name, body)


def no_writes_lib(name, function):
    """A library with one no-writes function returning the library's name."""
    return ("#!lua name=%s\nredis.register_function{function_name='%s', callback=function()"
            " return '%s' end, flags={'no-writes'}}" % (name, function, name))


@pytest.fixture
def c(server, r):
    """Raw RESP2 connection on a flushed server without libraries."""
    conn = RawConn(server.port)
    assert conn.call("FUNCTION", "FLUSH") == OK
    yield conn
    conn.close()


@pytest.fixture
def c3(server, c):
    conn = RawConn(server.port)
    conn.call("HELLO", "3")
    yield conn
    conn.close()


def err(conn, *args):
    reply = conn.call(*args)
    assert reply[0] == "-", (args, reply)
    return reply[1]


# --------------------------------------------------------------------------------------
# LOAD and FCALL
# --------------------------------------------------------------------------------------
def test_load_and_call_both_registration_forms(c):
    assert c.call("FUNCTION", "LOAD", LIB) == ("$", b"mylib")
    assert c.call("FCALL", "setit", "1", "k", "v") == OK
    assert c.call("FCALL", "getit", "1", "k") == ("$", b"v")
    assert c.call("FCALL_RO", "getit", "1", "k") == ("$", b"v")
    # Function names are found whatever their case, as in Redis.
    assert c.call("FCALL", "GETIT", "1", "k") == ("$", b"v")


def test_keys_and_args_are_parameters_not_globals(c):
    code = ("#!lua name=params\n"
            "redis.register_function('both', function(keys, args)"
            " return {#keys, #args, keys[1], args[2]} end)\n"
            "redis.register_function('globals', function() return KEYS end)\n")
    c.call("FUNCTION", "LOAD", code)
    assert c.call("FCALL", "both", "2", "a", "b", "x", "y", "z") == (
        "*", [(":", 2), (":", 3), ("$", b"a"), ("$", b"y")])
    assert err(c, "FCALL", "globals", "0") == (
        "ERR user_function:3: Script attempted to access nonexistent global variable 'KEYS' "
        "script: globals, on @user_function:3.")


def test_load_replace_and_already_exists(c):
    assert c.call("FUNCTION", "LOAD", lib("l1", "f1")) == ("$", b"l1")
    assert err(c, "FUNCTION", "LOAD", lib("l1", "f2")) == "ERR Library 'l1' already exists"
    assert c.call("FUNCTION", "LOAD", "REPLACE", lib("l1", "f2")) == ("$", b"l1")
    assert err(c, "FCALL", "f1", "0") == "ERR Function not found"
    assert c.call("FCALL", "f2", "0") == ("$", b"f2")
    assert err(c, "FUNCTION", "LOAD", "bogus", lib("l1", "f2")) == "ERR Unknown option given: bogus"


def test_function_names_collide_across_libraries(c):
    c.call("FUNCTION", "LOAD", lib("l1", "f1", "shared"))
    assert err(c, "FUNCTION", "LOAD", lib("l2", "f2", "shared")) == "ERR Function shared already exists"
    # A failed REPLACE leaves the old library working.
    c.call("FUNCTION", "LOAD", lib("l2", "f2"))
    assert err(c, "FUNCTION", "LOAD", "REPLACE", lib("l2", "f3", "f1")) == (
        "ERR Function f1 already exists")
    assert c.call("FCALL", "f2", "0") == ("$", b"f2")
    assert err(c, "FCALL", "f3", "0") == "ERR Function not found"


LOAD_ERRORS = [
    ("return 1", "ERR Missing library metadata"),
    ("#!lua", "ERR Invalid library metadata"),
    ("#!lua\nreturn 1", "ERR Library name was not given"),
    ("#!foo name=x\nreturn 1", "ERR Engine 'foo' not found"),
    ("#!lua name=x foo=bar\n", "ERR Invalid metadata value given: foo=bar"),
    ("#!lua name=x name=y\n", "ERR Invalid metadata value, name argument was given multiple times"),
    ("#!lua name=a-b\n", "ERR " + NAME_RULES),
    ("#!lua name=x\nreturn 1", "ERR No functions registered"),
    ("#!lua name=x\nlocal function", "ERR Error compiling function: user_function:2: '<name>' "
                                      "expected near '<eof>'"),
    ("#!lua name=x\nredis.register_function('a-b', function() end)",
     "ERR Error registering functions: ERR " + NAME_RULES),
    ("#!lua name=x\nredis.register_function('f', function() end)\n"
     "redis.register_function('f', function() end)",
     "ERR Error registering functions: ERR Function already exists in the library"),
    ("#!lua name=x\nerror('boom')", "ERR Error registering functions: ERR user_function:2: "
                                    "Script attempted to access nonexistent global variable 'error'"),
]


@pytest.mark.parametrize("code,expected", LOAD_ERRORS)
def test_load_errors(c, code, expected):
    assert err(c, "FUNCTION", "LOAD", code) == expected
    assert c.call("FUNCTION", "LIST") == ("*", [])


REGISTER_ERRORS = [
    ("redis.register_function('a')",
     "calling redis.register_function with a single argument is only applicable to Lua table "
     "(representing named arguments)."),
    ("redis.register_function('a', 1)",
     "second argument to redis.register_function must be a function"),
    ("redis.register_function({}, function() end)",
     "first argument to redis.register_function must be a string"),
    ("redis.register_function(1, 2, 3)", "wrong number of arguments to redis.register_function"),
    ("redis.register_function{callback=function() end}",
     "redis.register_function must get a function name argument"),
    ("redis.register_function{function_name='x'}",
     "redis.register_function must get a callback argument"),
    ("redis.register_function{function_name='x', callback=function() end, foo=1}",
     "unknown argument given to redis.register_function"),
    ("redis.register_function{function_name='x', callback=function() end, flags='no-writes'}",
     "flags argument to redis.register_function must be a table representing function flags"),
    ("redis.register_function{function_name='x', callback=function() end, flags={'bad'}}",
     "unknown flag given"),
    ("redis.register_function{function_name='x', callback=1}",
     "callback argument given to redis.register_function must be a function"),
    ("redis.register_function{function_name={}, callback=function() end}",
     "function_name argument given to redis.register_function must be a string"),
    ("redis.register_function{function_name='x', callback=function() end, description={}}",
     "description argument given to redis.register_function must be a string"),
]


@pytest.mark.parametrize("code,expected", REGISTER_ERRORS)
def test_register_function_argument_errors(c, code, expected):
    assert err(c, "FUNCTION", "LOAD", "#!lua name=r\n" + code) == (
        "ERR Error registering functions: ERR " + expected)


def test_load_time_sandbox(c):
    # While a library loads, only register_function, log and the version are there.
    prefix = "ERR Error registering functions: ERR user_function:2: "
    assert err(c, "FUNCTION", "LOAD", "#!lua name=x\nredis.call('ping')") == (
        prefix + "Script attempted to access nonexistent global variable 'call'")
    assert err(c, "FUNCTION", "LOAD", "#!lua name=x\nlocal a = string.len('x')") == (
        prefix + "Script attempted to access nonexistent global variable 'string'")
    assert err(c, "FUNCTION", "LOAD", "#!lua name=x\na = 1") == (
        prefix + "Attempt to modify a readonly table")
    code = ("#!lua name=x\nredis.log(redis.LOG_NOTICE, 'loading', redis.REDIS_VERSION)\n"
            "redis.register_function('f', function() return string.upper('ok') end)")
    assert c.call("FUNCTION", "LOAD", code) == ("$", b"x")
    # At call time the whole sandbox is back.
    assert c.call("FCALL", "f", "0") == ("$", b"OK")


def test_register_function_inside_a_function_fails(c):
    code = ("#!lua name=x\nredis.register_function('f', function()"
            " return redis.register_function('g', function() end) end)")
    c.call("FUNCTION", "LOAD", code)
    assert err(c, "FCALL", "f", "0") == (
        "ERR user_function:2: attempt to call field 'register_function' (a nil value) "
        "script: f, on @user_function:2.")


def test_load_time_limit(c):
    assert err(c, "FUNCTION", "LOAD", "#!lua name=t\nwhile true do end") == (
        "ERR Error registering functions: ERR FUNCTION LOAD timeout")
    assert c.call("FUNCTION", "LIST") == ("*", [])


def test_fcall_errors(c):
    c.call("FUNCTION", "LOAD", LIB)
    assert err(c, "FCALL", "nope", "0") == "ERR Function not found"
    assert err(c, "FCALL", "setit", "x") == "ERR Bad number of keys provided"
    assert err(c, "FCALL", "setit", "-1") == "ERR Number of keys can't be negative"
    assert err(c, "FCALL", "setit", "3", "a") == (
        "ERR Number of keys can't be greater than number of args")
    assert err(c, "FCALL") == "ERR wrong number of arguments for 'fcall' command"
    assert err(c, "FCALL_RO", "setit", "1", "k", "v") == (
        "ERR Can not execute a script with write flag using *_ro command.")
    assert c.call("EXISTS", "k") == (":", 0)


def test_no_writes_function_refuses_writes(c):
    code = ("#!lua name=z\nredis.register_function{function_name='w', callback=function(keys)"
            " return redis.call('set', keys[1], 1) end, flags={'no-writes'}}")
    c.call("FUNCTION", "LOAD", code)
    expected = ("ERR Write commands are not allowed from read-only scripts. script: w, "
                "on @user_function:2.")
    assert err(c, "FCALL", "w", "1", "k") == expected
    assert err(c, "FCALL_RO", "w", "1", "k") == expected
    assert c.call("EXISTS", "k") == (":", 0)


def test_runtime_error_names_the_function(c):
    c.call("FUNCTION", "LOAD", "#!lua name=e\n\nredis.register_function('e', function() "
           "return error('boom') end)")
    assert err(c, "FCALL", "e", "0") == "ERR user_function:3: boom script: e, on @user_function:3."


def test_all_flags_accepted_and_listed_in_redis_order(c):
    code = ("#!lua name=fl\nredis.register_function{function_name='f', callback=function()"
            " return 1 end, flags={'allow-cross-slot-keys', 'NO-CLUSTER', 'allow-stale',"
            " 'allow-oom', 'no-writes'}}")
    c.call("FUNCTION", "LOAD", code)
    reply = c.call("FUNCTION", "LIST")
    fn = dict_of(reply[1][0])["functions"][1][0]
    assert dict_of(fn)["flags"] == ("*", [("+", b"no-writes"), ("+", b"allow-oom"),
                                          ("+", b"allow-stale"), ("+", b"no-cluster"),
                                          ("+", b"allow-cross-slot-keys")])
    assert c.call("FCALL_RO", "f", "0") == (":", 1)


# --------------------------------------------------------------------------------------
# LIST, DELETE, FLUSH, STATS
# --------------------------------------------------------------------------------------
def dict_of(reply):
    """A RESP2 flat key/value array (or RESP3 map) as a dict of tagged values."""
    kind, items = reply
    if kind == "%":
        return {k[1].decode(): v for k, v in items}
    assert kind == "*"
    return {items[i][1].decode(): items[i + 1] for i in range(0, len(items), 2)}


def test_list_resp2_shape(c):
    c.call("FUNCTION", "LOAD", LIB)
    kind, libs = c.call("FUNCTION", "LIST")
    assert kind == "*" and len(libs) == 1
    assert [k for k in libs[0][1][::2]] == [("$", b"library_name"), ("$", b"engine"),
                                            ("$", b"functions")]
    info = dict_of(libs[0])
    assert info["library_name"] == ("$", b"mylib")
    assert info["engine"] == ("$", b"LUA")
    functions = sorted((dict_of(f) for f in info["functions"][1]),
                       key=lambda f: f["name"][1])
    assert functions == [
        {"name": ("$", b"getit"), "description": ("$", b"reads a key"),
         "flags": ("*", [("+", b"no-writes")])},
        {"name": ("$", b"setit"), "description": ("$", None), "flags": ("*", [])},
    ]


def test_list_resp3_shape(c3):
    c3.call("FUNCTION", "LOAD", LIB)
    kind, libs = c3.call("FUNCTION", "LIST", "WITHCODE")
    assert kind == "*" and libs[0][0] == "%"
    info = dict_of(libs[0])
    assert info["library_code"] == ("$", LIB.encode())
    functions = {dict_of(f)["name"][1]: dict_of(f) for f in info["functions"][1]}
    assert functions[b"getit"]["flags"] == ("~", [("+", b"no-writes")])
    assert functions[b"setit"]["flags"] == ("~", [])
    assert functions[b"setit"]["description"] == ("_", None)


def test_list_with_redis_py(server, r):
    r.function_flush()
    r.function_load(LIB)
    [flat] = r.function_list(library="my*", withcode=True)
    entry = dict(zip(flat[::2], flat[1::2]))
    assert entry["library_name"] == "mylib"
    assert entry["library_code"] == LIB
    assert r.function_list(library="other*") == []
    r3 = server.client(protocol=3)
    [entry] = r3.function_list()
    assert entry["library_name"] == "mylib" and "library_code" not in entry
    r3.close()


def test_list_arguments(c):
    c.call("FUNCTION", "LOAD", lib("alpha", "a"))
    c.call("FUNCTION", "LOAD", lib("beta", "b"))
    names = lambda reply: sorted(dict_of(x)["library_name"][1] for x in reply[1])
    assert names(c.call("FUNCTION", "LIST")) == [b"alpha", b"beta"]
    assert names(c.call("FUNCTION", "LIST", "LIBRARYNAME", "AL*")) == [b"alpha"]
    assert names(c.call("FUNCTION", "LIST", "libraryname", "*", "withcode")) == [b"alpha", b"beta"]
    assert err(c, "FUNCTION", "LIST", "bad") == "ERR Unknown argument bad"
    assert err(c, "FUNCTION", "LIST", "WITHCODE", "WITHCODE") == "ERR Unknown argument WITHCODE"
    assert err(c, "FUNCTION", "LIST", "LIBRARYNAME") == "ERR library name argument was not given"


def test_delete_and_flush(c):
    c.call("FUNCTION", "LOAD", lib("l1", "f1"))
    c.call("FUNCTION", "LOAD", lib("l2", "f2"))
    assert err(c, "FUNCTION", "DELETE", "nope") == "ERR Library not found"
    assert c.call("FUNCTION", "DELETE", "l1") == OK
    assert err(c, "FCALL", "f1", "0") == "ERR Function not found"
    assert c.call("FCALL", "f2", "0") == ("$", b"f2")
    # The deleted library's function name is free again.
    assert c.call("FUNCTION", "LOAD", lib("l3", "f1")) == ("$", b"l3")
    assert err(c, "FUNCTION", "FLUSH", "bad") == "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
    for mode in ("ASYNC", "sync", None):
        c.call("FUNCTION", "LOAD", "REPLACE", lib("l4", "f4"))
        assert c.call("FUNCTION", "FLUSH", *([mode] if mode else [])) == OK
        assert c.call("FUNCTION", "LIST") == ("*", [])
        assert err(c, "FCALL", "f4", "0") == "ERR Function not found"


def test_flushall_keeps_functions(c):
    c.call("FUNCTION", "LOAD", lib("l1", "f1"))
    assert c.call("FLUSHALL") == OK
    assert c.call("FCALL", "f1", "0") == ("$", b"f1")


def test_stats(c, c3):
    c.call("FUNCTION", "LOAD", lib("l1", "f1", "f2"))
    c.call("FUNCTION", "LOAD", lib("l2", "f3"))
    stats = dict_of(c.call("FUNCTION", "STATS"))
    assert stats["running_script"] == ("*", None) or stats["running_script"] == ("$", None)
    engines = dict_of(stats["engines"])
    assert dict_of(engines["LUA"]) == {"libraries_count": (":", 2), "functions_count": (":", 3)}
    reply = c3.call("FUNCTION", "STATS")
    assert reply[0] == "%"
    stats = dict_of(reply)
    assert stats["running_script"] == ("_", None)
    assert dict_of(dict_of(stats["engines"])["LUA"])["functions_count"] == (":", 3)


def test_info_memory_counts_functions_and_libraries(server, c):
    c.call("FUNCTION", "LOAD", lib("l1", "f1", "f2"))
    c.call("FUNCTION", "LOAD", lib("l2", "f3"))
    info = server.client().info("memory")
    assert (info["number_of_libraries"], info["number_of_functions"]) == (2, 3)
    c.call("FUNCTION", "DELETE", "l1")
    info = server.client().info("memory")
    assert (info["number_of_libraries"], info["number_of_functions"]) == (1, 1)


def test_help_and_unknown_subcommand(c):
    reply = c.call("FUNCTION", "HELP")
    assert reply[0] == "*" and reply[1][0][1].startswith(b"FUNCTION <subcommand>")
    assert err(c, "FUNCTION", "NOPE") == "ERR unknown subcommand 'NOPE'. Try FUNCTION HELP."
    assert err(c, "FUNCTION", "DELETE") == (
        "ERR wrong number of arguments for 'function|delete' command")


def test_acl_applies_inside_functions(server, c):
    c.call("FUNCTION", "LOAD", LIB)
    assert c.call("ACL", "SETUSER", "fu", "on", "nopass", "~*", "+fcall", "+get") == OK
    try:
        with RawConn(server.port) as limited:
            assert limited.call("AUTH", "fu", "x") == OK
            assert err(limited, "FCALL", "setit", "1", "k", "v") == (
                "ERR The user executing the script can't run this command or subcommand "
                "script: setit, on @user_function:2.")
            assert err(limited, "FUNCTION", "LIST") == (
                "NOPERM this user has no permissions to run the 'function|list' command")
            assert limited.call("FCALL", "getit", "1", "k") == ("$", None)
    finally:
        c.call("ACL", "DELUSER", "fu")


def test_load_and_call_in_one_transaction(c):
    assert c.call("MULTI") == OK
    assert c.call("FUNCTION", "LOAD", lib("tx", "in_tx")) == ("+", b"QUEUED")
    assert c.call("FCALL", "in_tx", "0") == ("+", b"QUEUED")
    assert c.call("EXEC") == ("*", [("$", b"tx"), ("$", b"in_tx")])


def test_functions_are_refused_from_scripts(c):
    assert err(c, "EVAL", "return redis.call('function', 'list')", "0").startswith(
        "ERR This Redis command is not allowed from script")
    assert err(c, "EVAL", "return redis.call('fcall', 'x', '0')", "0").startswith(
        "ERR This Redis command is not allowed from script")


# --------------------------------------------------------------------------------------
# DUMP and RESTORE
# --------------------------------------------------------------------------------------
def raw_dump(conn):
    kind, payload = conn.call("FUNCTION", "DUMP")
    assert kind == "$"
    return payload


def test_dump_restore_round_trip_and_policies(c):
    c.call("FUNCTION", "LOAD", lib("l1", "f1"))
    c.call("FUNCTION", "LOAD", LIB)
    payload = raw_dump(c)
    c.call("FUNCTION", "FLUSH")
    assert c.call("FUNCTION", "RESTORE", payload) == OK
    assert c.call("FCALL", "f1", "0") == ("$", b"f1")
    assert c.call("FCALL", "setit", "1", "k", "v") == OK
    # APPEND (the default) refuses existing libraries, and changes nothing.
    assert err(c, "FUNCTION", "RESTORE", payload, "APPEND") in (
        "ERR Library l1 already exists", "ERR Library mylib already exists")
    # REPLACE replaces the namesakes.
    c.call("FUNCTION", "LOAD", "REPLACE", lib("l1", "other"))
    assert c.call("FUNCTION", "RESTORE", payload, "REPLACE") == OK
    assert c.call("FCALL", "f1", "0") == ("$", b"f1")
    assert err(c, "FCALL", "other", "0") == "ERR Function not found"
    # A function of the payload held by another library: REPLACE fails as a whole.
    c.call("FUNCTION", "DELETE", "l1")
    c.call("FUNCTION", "LOAD", lib("l9", "f1"))
    assert err(c, "FUNCTION", "RESTORE", payload, "REPLACE") == "ERR Function f1 already exists"
    assert c.call("FCALL", "f1", "0") == ("$", b"f1")
    # FLUSH drops every library first.
    assert c.call("FUNCTION", "RESTORE", payload, "FLUSH") == OK
    names = sorted(dict_of(x)["library_name"][1] for x in c.call("FUNCTION", "LIST")[1])
    assert names == [b"l1", b"mylib"]
    assert err(c, "FUNCTION", "RESTORE", payload, "bogus") == (
        "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")


def test_dump_of_nothing_restores_to_nothing(c):
    payload = raw_dump(c)
    assert len(payload) == 10
    c.call("FUNCTION", "LOAD", lib("l1", "f1"))
    assert c.call("FUNCTION", "RESTORE", payload, "FLUSH") == OK
    assert c.call("FUNCTION", "LIST") == ("*", [])


def test_bad_payloads_change_nothing(c):
    c.call("FUNCTION", "LOAD", lib("l1", "f1"))
    payload = raw_dump(c)
    version_error = "ERR DUMP payload version or checksum are wrong"
    flipped = bytearray(payload)
    flipped[5] ^= 0x20
    for bad in (b"", b"abc", b"abcdefghijklmnop", bytes(flipped), payload[:-1],
                payload[:-10] + b"\x0c\x00" + payload[-8:]):
        assert err(c, "FUNCTION", "RESTORE", bad, "FLUSH") == version_error
    assert c.call("FCALL", "f1", "0") == ("$", b"f1")


# Redis 7.2's behaviour: 7.0 still reads the pre-GA function format and refuses RDB version 11.
@pytest.mark.basalt_only
def test_restore_refuses_non_function_content(server, c):
    from rdbgen import dump_payload, rdb_string
    c.call("FUNCTION", "LOAD", lib("l1", "f1"))
    cases = [
        (dump_payload(b"\x00" + rdb_string(b"x")), "ERR given type is not a function"),
        (dump_payload(b"\xf6" + rdb_string(b"x")), "ERR Pre-GA function format not supported"),
        (dump_payload(b"\xf5\x3f"), "ERR Failed loading library payload"),
        (dump_payload(b"\xf5" + rdb_string(b"return 1")), "ERR Missing library metadata"),
        (dump_payload(b"\xf5" + rdb_string(lib("a", "x").encode()) +
                      b"\xf5" + rdb_string(lib("a", "y").encode())),
         "ERR Library 'a' already exists"),
        (dump_payload(b"\xf5" + rdb_string(lib("a", "x").encode()) +
                      b"\xf5" + rdb_string(lib("b", "x").encode())),
         "ERR Function x already exists"),
        # A claimed LZF length far beyond what its input can expand to.
        (dump_payload(b"\xf5\xc3\x05\x80\x7f\xff\xff\xff" + b"\x00" * 5),
         "ERR Failed loading library payload"),
    ]
    for payload, expected in cases:
        assert err(c, "FUNCTION", "RESTORE", payload, "FLUSH") == expected
    assert c.call("FCALL", "f1", "0") == ("$", b"f1")
    assert c.call("FUNCTION", "RESTORE", dump_payload(b"", version=11), "FLUSH") == OK
    assert err(c, "FUNCTION", "RESTORE", dump_payload(b"", version=12)) == (
        "ERR DUMP payload version or checksum are wrong")


def test_payloads_cross_between_redis_and_the_server(server, oracle, c):
    """FUNCTION DUMP of redis-server restores here and ours restores into redis-server; the
    long library makes redis-server compress its code with LZF."""
    long_lib = lib("long_lib", *["fn_%02d" % i for i in range(40)])
    o = RawConn(oracle.port)
    try:
        assert o.call("FUNCTION", "FLUSH") == OK
        o.call("FUNCTION", "LOAD", long_lib)
        o.call("FUNCTION", "LOAD", LIB)
        from_redis = raw_dump(o)
        assert c.call("FUNCTION", "RESTORE", from_redis) == OK
        assert c.call("FCALL", "fn_39", "0") == ("$", b"fn_39")
        assert c.call("FCALL", "setit", "1", "k", "v") == OK
        code = dict_of(c.call("FUNCTION", "LIST", "LIBRARYNAME", "long_lib", "WITHCODE")[1][0])
        assert code["library_code"] == ("$", long_lib.encode())

        c.call("FUNCTION", "FLUSH")
        c.call("FUNCTION", "LOAD", long_lib)
        c.call("FUNCTION", "LOAD", lib("ours", "from_us"))
        ours = raw_dump(c)
        assert o.call("FUNCTION", "RESTORE", ours, "FLUSH") == OK
        assert o.call("FCALL", "from_us", "0") == ("$", b"from_us")
        assert o.call("FCALL", "fn_00", "0") == ("$", b"fn_00")
        assert err(o, "FCALL", "setit", "1", "k", "v") == "ERR Function not found"
    finally:
        o.call("FUNCTION", "FLUSH")
        o.close()


# --------------------------------------------------------------------------------------
# BUSY, FUNCTION KILL, SCRIPT KILL
# --------------------------------------------------------------------------------------
def wait_for_busy(port, text, timeout=5.0):
    deadline = time.monotonic() + timeout
    with RawConn(port) as probe:
        while time.monotonic() < deadline:
            if probe.call("PING") == ("-", text):
                return True
            time.sleep(0.02)
    return False


@pytest.fixture
def short_threshold(server, r):
    r.config_set("busy-reply-threshold", 100)
    yield
    r.config_set("busy-reply-threshold", 5000)


def test_busy_function_and_function_kill(server, c, short_threshold):
    c.call("FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function{function_name='spin',"
           " callback=function() while true do end end, flags={'no-writes'}}")
    runner = RawConn(server.port)
    runner.send("FCALL", "spin", "0")
    assert wait_for_busy(server.port, BUSY_FUNCTION)
    with RawConn(server.port) as other:
        assert other.call("GET", "x") == ("-", BUSY_FUNCTION)
        assert other.call("SCRIPT", "KILL") == ("-", BUSY_FUNCTION)
        stats = dict_of(other.call("FUNCTION", "STATS"))
        running = dict_of(stats["running_script"])
        assert running["name"] == ("$", b"spin")
        assert running["command"] == ("*", [("$", b"FCALL"), ("$", b"spin"), ("$", b"0")])
        assert running["duration_ms"][1] >= 100
        assert other.call("FUNCTION", "KILL") == OK
    assert runner.read() == ("-", "ERR Script killed by user with SCRIPT KILL... script: spin, "
                                  "on @user_function:2.")
    assert runner.call("PING") == ("+", b"PONG")
    with RawConn(server.port) as other:
        assert other.call("FUNCTION", "KILL") == ("-", "NOTBUSY No scripts in execution right now.")
    runner.close()


def test_function_kill_refuses_an_eval_script(server, c, short_threshold):
    runner = RawConn(server.port)
    runner.send("EVAL", "while true do end", "0")
    assert wait_for_busy(server.port, BUSY_EVAL)
    with RawConn(server.port) as other:
        assert other.call("FUNCTION", "KILL") == ("-", BUSY_EVAL)
        assert other.call("FUNCTION", "STATS") == ("-", BUSY_EVAL)
        assert other.call("FUNCTION", "LIST") == ("-", BUSY_EVAL)
        assert other.call("SCRIPT", "KILL") == OK
    assert runner.read()[0] == "-"
    runner.close()


def test_function_that_wrote_is_unkillable(start_server, target):
    srv = start_server(args={"busy-reply-threshold": "100"})
    with RawConn(srv.port) as setup:
        setup.call("FUNCTION", "LOAD", "#!lua name=w\nredis.register_function('w', function()"
                   " redis.call('set', 'written', '1') while true do end end)")
    runner = RawConn(srv.port)
    runner.send("FCALL", "w", "0")
    assert wait_for_busy(srv.port, BUSY_FUNCTION)
    with RawConn(srv.port) as killer:
        assert killer.call("FUNCTION", "KILL") == ("-", UNKILLABLE)
        killer.send("SHUTDOWN", "NOSAVE")
    assert srv.wait_exit(timeout=20) is not None
    runner.close()


# --------------------------------------------------------------------------------------
# Persistence and replicas
# --------------------------------------------------------------------------------------
@pytest.mark.basalt_only  # redis-server keeps functions only in its RDB/AOF
def test_libraries_survive_restart(start_server):
    srv = start_server()
    with RawConn(srv.port) as conn:
        conn.call("FUNCTION", "LOAD", LIB)
        conn.call("FUNCTION", "LOAD", lib("gone", "g"))
        conn.call("FUNCTION", "LOAD", lib("replaced", "old"))
        conn.call("FUNCTION", "LOAD", "REPLACE", lib("replaced", "new"))
        conn.call("FUNCTION", "DELETE", "gone")
    srv.restart()
    with RawConn(srv.port) as conn:
        assert conn.call("FCALL", "setit", "1", "k", "v") == OK
        assert conn.call("FCALL_RO", "getit", "1", "k") == ("$", b"v")
        assert conn.call("FCALL", "new", "0") == ("$", b"new")
        assert err(conn, "FCALL", "old", "0") == "ERR Function not found"
        assert err(conn, "FCALL", "g", "0") == "ERR Function not found"
        conn.call("FUNCTION", "FLUSH")
    srv.kill9()
    srv.start(retries=0)
    with RawConn(srv.port) as conn:
        assert conn.call("FUNCTION", "LIST") == ("*", [])
        conn.call("FUNCTION", "LOAD", lib("dumped", "d1"))
        payload = raw_dump(conn)
        conn.call("FUNCTION", "LOAD", "REPLACE", lib("dumped", "d2"))
        conn.call("FUNCTION", "LOAD", lib("dropped", "x"))
        assert conn.call("FUNCTION", "RESTORE", payload, "FLUSH") == OK
    srv.restart()
    with RawConn(srv.port) as conn:
        assert conn.call("FCALL", "d1", "0") == ("$", b"d1")
        assert err(conn, "FCALL", "d2", "0") == "ERR Function not found"
        assert err(conn, "FCALL", "x", "0") == "ERR Function not found"


def test_libraries_reach_replicas(start_server, target):
    extra = [("repl-diskless-sync-delay", "0")] if target == "redis" else []
    master = start_server(args=extra, name="master")
    with RawConn(master.port) as m:
        m.call("FUNCTION", "LOAD", lib("before", "b"))
    replica = start_server(args=[("replicaof", "127.0.0.1 %d" % master.port)] + extra,
                           name="replica")
    rc = replica.client()
    assert wait_until(lambda: rc.info("replication").get("master_link_status") == "up",
                      timeout=30)
    with RawConn(master.port) as m:
        m.call("FUNCTION", "LOAD", LIB)
        m.call("FUNCTION", "LOAD", lib("after", "a"))
        m.call("FUNCTION", "DELETE", "after")
        m.call("FCALL", "setit", "1", "k", "v")
    with RawConn(replica.port) as s:
        assert wait_until(lambda: s.call("GET", "k") == ("$", b"v"), timeout=30)
        assert s.call("FCALL_RO", "getit", "1", "k") == ("$", b"v")
        assert s.call("FCALL", "getit", "1", "k") == ("$", b"v")
        assert err(s, "FCALL", "a", "0") == "ERR Function not found"
        # A function without no-writes is a write: the replica refuses it.
        readonly = "READONLY You can't write against a read only replica."
        assert err(s, "FCALL", "b", "0") == readonly
        assert err(s, "FCALL_RO", "setit", "1", "k", "w") == readonly
        # So is an EVAL script whose shebang does not declare no-writes.
        assert err(s, "EVAL", "#!lua\nreturn 1", "0") == readonly
        assert s.call("EVAL", "#!lua flags=no-writes\nreturn 1", "0") == (":", 1)
        assert err(s, "FUNCTION", "LOAD", lib("x", "x")) == (
            "READONLY You can't write against a read only replica.")
        assert err(s, "FUNCTION", "FLUSH") == "READONLY You can't write against a read only replica."
    with RawConn(master.port) as m:
        # A RESTORE REPLACE that swaps functions between two libraries.
        m.call("FUNCTION", "FLUSH")
        m.call("FUNCTION", "LOAD", no_writes_lib("la", "g"))
        m.call("FUNCTION", "LOAD", no_writes_lib("lb", "f"))
        swapped = raw_dump(m)
        m.call("FUNCTION", "FLUSH")
        m.call("FUNCTION", "LOAD", no_writes_lib("la", "f"))
        m.call("FUNCTION", "LOAD", no_writes_lib("lb", "g"))
        assert m.call("FUNCTION", "RESTORE", swapped, "REPLACE") == OK
        m.call("SET", "restored", "1")
    with RawConn(replica.port) as s:
        assert wait_until(lambda: s.call("GET", "restored") == ("$", b"1"), timeout=30)
        assert s.call("FCALL", "g", "0") == ("$", b"la")
        assert s.call("FCALL", "f", "0") == ("$", b"lb")
    with RawConn(master.port) as m:
        m.call("FUNCTION", "FLUSH")
        m.call("SET", "flushed", "1")
    with RawConn(replica.port) as s:
        assert wait_until(lambda: s.call("GET", "flushed") == ("$", b"1"), timeout=30)
        assert err(s, "FCALL", "g", "0") == "ERR Function not found"
    rc.close()
