"""String commands: GET/SET family, counters, ranges (Redis 7.0 semantics).

WRONGTYPE cases are left for later (no collection types in Basalt yet).
"""
import time

import pytest

from helpers import arity, raises
from resp import RawConn

SYNTAX = "ERR syntax error"
NOT_INT = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
OVERFLOW = "ERR increment or decrement would overflow"


def expire_err(cmd):
    return "ERR invalid expire time in '%s' command" % cmd


# --------------------------------------------------------------------------
# GET / SET
# --------------------------------------------------------------------------
def test_get_missing_is_nil(r):
    assert r.get("nokey") is None


def test_set_get_roundtrip(r):
    assert r.execute_command("SET", "k", "v") is True
    assert r.get("k") == "v"
    assert r.execute_command("SET", "k", "w") is True
    assert r.get("k") == "w"


def test_set_reply_types_raw(server, r):
    with RawConn(server.port) as c:
        assert c.call("SET", "k", "v") == ("+", b"OK")
        assert c.call("GET", "k") == ("$", b"v")
        assert c.call("GET", "nokey") == ("$", None)
        assert c.call("SET", "k", "x", "NX") == ("$", None)
        assert c.call("SET", "k", "x", "GET") == ("$", b"v")
        assert c.call("SET", "n", "5") == ("+", b"OK")
        assert c.call("INCR", "n") == (":", 6)
        assert c.call("INCRBYFLOAT", "n", "1.5") == ("$", b"7.5")
        assert c.call("MGET", "k", "nokey") == ("*", [("$", b"x"), ("$", None)])
        assert c.call("SETNX", "k", "y") == (":", 0)
        assert c.call("STRLEN", "k") == (":", 1)


def test_set_ex_px(r):
    assert r.execute_command("SET", "k", "v", "EX", 100)
    assert r.ttl("k") in range(98, 101)
    assert r.execute_command("SET", "k", "v", "PX", 50000)
    assert 49000 < r.pttl("k") <= 50000


def test_set_exat_pxat(r):
    assert r.execute_command("SET", "k", "v", "EXAT", 4000000000)
    assert r.expiretime("k") == 4000000000
    assert r.execute_command("SET", "k", "v", "PXAT", 4000000000123)
    assert r.pexpiretime("k") == 4000000000123


def test_set_exat_in_the_past_deletes(r):
    assert r.execute_command("SET", "k", "v", "EXAT", 1) is True
    assert r.exists("k") == 0
    assert r.execute_command("SET", "k", "v", "PXAT", 1) is True
    assert r.exists("k") == 0


def test_set_options_are_case_insensitive(r):
    assert r.execute_command("SET", "k", "v", "ex", 10)
    assert r.ttl("k") in range(8, 11)
    assert r.execute_command("SET", "k", "w", "Nx") is None
    assert r.get("k") == "v"


def test_set_without_ttl_option_clears_ttl(r):
    r.execute_command("SET", "k", "v", "EX", 100)
    r.execute_command("SET", "k", "w")
    assert r.ttl("k") == -1


def test_set_keepttl(r):
    r.execute_command("SET", "k", "v", "EX", 100)
    assert r.execute_command("SET", "k", "w", "KEEPTTL") is True
    assert r.get("k") == "w"
    assert r.ttl("k") in range(98, 101)
    assert r.execute_command("SET", "new", "w", "KEEPTTL") is True
    assert r.ttl("new") == -1


def test_set_nx(r):
    assert r.execute_command("SET", "k", "v", "NX") is True
    assert r.execute_command("SET", "k", "w", "NX") is None
    assert r.get("k") == "v"


def test_set_xx(r):
    assert r.execute_command("SET", "k", "v", "XX") is None
    assert r.exists("k") == 0
    r.set("k", "v")
    assert r.execute_command("SET", "k", "w", "XX") is True
    assert r.get("k") == "w"


def test_set_get_option(rr):
    assert rr.execute_command("SET", "k", "v", "GET") is None
    assert rr.execute_command("SET", "k", "w", "GET") == "v"
    assert rr.execute_command("SET", "k", "x", "GET", "EX", 100) == "w"
    assert rr.execute_command("TTL", "k") in range(98, 101)
    assert rr.execute_command("GET", "k") == "x"


def test_set_get_with_nx_and_xx(rr):
    # Redis 7.0 allows NX together with GET.
    assert rr.execute_command("SET", "k", "v", "NX", "GET") is None
    assert rr.execute_command("GET", "k") == "v"
    assert rr.execute_command("SET", "k", "w", "NX", "GET") == "v"
    assert rr.execute_command("GET", "k") == "v"  # not overwritten
    assert rr.execute_command("SET", "k", "z", "XX", "GET") == "v"
    assert rr.execute_command("GET", "k") == "z"
    assert rr.execute_command("SET", "nk", "z", "XX", "GET") is None
    assert rr.execute_command("EXISTS", "nk") == 0


def test_set_repeated_same_option_is_accepted(rr):
    rr.execute_command("SET", "k", "v")
    assert rr.execute_command("SET", "k", "v", "EX", 10, "EX", 20) == "OK"
    assert rr.execute_command("TTL", "k") in range(18, 21)  # the last one wins
    assert rr.execute_command("SET", "k", "v", "NX", "NX") is None
    assert rr.execute_command("SET", "k", "w", "GET", "GET") == "v"
    assert rr.execute_command("SET", "k", "v", "KEEPTTL", "KEEPTTL") == "OK"


@pytest.mark.parametrize("opts", [
    ("EX", 10, "PX", 100),
    ("EX", 10, "EXAT", 4000000000),
    ("PX", 10, "PXAT", 4000000000000),
    ("EXAT", 10, "PXAT", 10),
    ("NX", "XX"),
    ("XX", "NX"),
    ("KEEPTTL", "EX", 10),
    ("EX", 10, "KEEPTTL"),
    ("PXAT", 4000000000000, "KEEPTTL"),
    ("EX",),
    ("PX",),
    ("FOO",),
    ("EX", 10, "BAR"),
])
def test_set_conflicting_or_bad_options_are_syntax_errors(r, opts):
    raises(r, SYNTAX, "SET", "k", "v", *opts)
    assert r.exists("k") == 0


@pytest.mark.parametrize("opts", [
    ("EX", 0), ("EX", -1), ("PX", 0), ("PX", -100), ("EXAT", 0), ("PXAT", -1),
    ("EX", 9223372036854775807), ("EX", 9223372036854775), ("PX", 9223372036854775807),
    ("EXAT", 9223372036854775807),
])
def test_set_invalid_expire_time(r, opts):
    raises(r, expire_err("set"), "SET", "k", "v", *opts)
    assert r.exists("k") == 0


@pytest.mark.parametrize("val", ["abc", "1.5", "", "10s"])
def test_set_expire_not_integer(r, val):
    raises(r, NOT_INT, "SET", "k", "v", "EX", val)


def test_set_arity(r):
    raises(r, arity("set"), "SET", "k")
    raises(r, arity("set"), "SET")
    raises(r, arity("get"), "GET")
    raises(r, arity("get"), "GET", "a", "b")


# --------------------------------------------------------------------------
# SETNX / SETEX / PSETEX / GETSET / GETDEL / GETEX
# --------------------------------------------------------------------------
def test_setnx(r):
    assert r.setnx("k", "v") is True
    assert r.setnx("k", "w") is False
    assert r.get("k") == "v"


def test_setex_psetex(r):
    assert r.setex("k", 100, "v") is True
    assert r.get("k") == "v" and r.ttl("k") in range(98, 101)
    assert r.psetex("p", 100000, "v") is True
    assert 99000 < r.pttl("p") <= 100000


@pytest.mark.parametrize("cmd", ["SETEX", "PSETEX"])
@pytest.mark.parametrize("t", [0, -1, 9223372036854775807])
def test_setex_invalid_expire(r, cmd, t):
    raises(r, expire_err(cmd.lower()), cmd, "k", t, "v")
    assert r.exists("k") == 0


def test_setex_not_integer_and_arity(r):
    raises(r, NOT_INT, "SETEX", "k", "abc", "v")
    raises(r, NOT_INT, "PSETEX", "k", "1.5", "v")
    raises(r, arity("setex"), "SETEX", "k", "10")


def test_getset(r):
    assert r.getset("k", "a") is None
    assert r.getset("k", "b") == "a"
    r.execute_command("SET", "k", "c", "EX", 100)
    assert r.getset("k", "d") == "c"
    assert r.ttl("k") == -1  # GETSET discards the TTL


def test_getdel(r):
    assert r.getdel("nokey") is None
    r.execute_command("SET", "k", "v", "EX", 100)
    assert r.getdel("k") == "v"
    assert r.exists("k") == 0
    assert r.getdel("k") is None


def test_getex_no_option_keeps_ttl(r):
    assert r.execute_command("GETEX", "nokey") is None
    r.execute_command("SET", "k", "v", "EX", 100)
    assert r.execute_command("GETEX", "k") == "v"
    assert r.ttl("k") in range(98, 101)


def test_getex_options(r):
    r.set("k", "v")
    assert r.execute_command("GETEX", "k", "EX", 100) == "v"
    assert r.ttl("k") in range(98, 101)
    assert r.execute_command("GETEX", "k", "PX", 50000) == "v"
    assert 49000 < r.pttl("k") <= 50000
    assert r.execute_command("GETEX", "k", "EXAT", 4000000000) == "v"
    assert r.expiretime("k") == 4000000000
    assert r.execute_command("GETEX", "k", "PXAT", 4000000000123) == "v"
    assert r.pexpiretime("k") == 4000000000123
    assert r.execute_command("GETEX", "k", "PERSIST") == "v"
    assert r.ttl("k") == -1


def test_getex_missing_key_with_option_is_nil(r):
    assert r.execute_command("GETEX", "nokey", "EX", 10) is None
    assert r.exists("nokey") == 0


def test_getex_missing_key_checks_syntax_but_not_expire_value(r):
    # Option syntax is checked first; the expire value only once the key
    # was found, so a bad value on a missing key is just nil.
    for opts in (("EX", 0), ("EX", "abc"), ("PX", -1), ("EXAT", 9223372036854775807)):
        assert r.execute_command("GETEX", "nokey", *opts) is None
    for opts in (("EX", 10, "PX", 10), ("FOO",), ("EX",)):
        raises(r, SYNTAX, "GETEX", "nokey", *opts)


def test_getex_past_exat_deletes(r):
    r.set("k", "v")
    assert r.execute_command("GETEX", "k", "EXAT", 1) == "v"
    assert r.exists("k") == 0


def test_getex_repeated_option_accepted(r):
    r.set("k", "v")
    assert r.execute_command("GETEX", "k", "PERSIST", "PERSIST") == "v"
    assert r.execute_command("GETEX", "k", "EX", 10, "EX", 20) == "v"
    assert r.ttl("k") in range(18, 21)


@pytest.mark.parametrize("opts", [
    ("EX", 10, "PX", 100), ("PERSIST", "EX", 10), ("EX", 10, "PERSIST"), ("FOO",), ("EX",),
    ("EXAT", 4000000000, "PXAT", 4000000000000),
])
def test_getex_syntax_errors(r, opts):
    r.set("k", "v")
    raises(r, SYNTAX, "GETEX", "k", *opts)
    assert r.ttl("k") == -1


@pytest.mark.parametrize("opts", [("EX", 0), ("EX", -1), ("PX", 0), ("EXAT", 0), ("PXAT", -5)])
def test_getex_invalid_expire(r, opts):
    r.set("k", "v")
    raises(r, expire_err("getex"), "GETEX", "k", *opts)
    raises(r, NOT_INT, "GETEX", "k", opts[0], "abc")
    assert r.get("k") == "v"


# --------------------------------------------------------------------------
# MGET / MSET / MSETNX / APPEND / STRLEN
# --------------------------------------------------------------------------
def test_mget(r):
    r.set("a", "1")
    r.set("c", "3")
    assert r.mget("a", "b", "c", "a") == ["1", None, "3", "1"]
    raises(r, arity("mget"), "MGET")


def test_mset(r):
    assert r.execute_command("MSET", "a", "1", "b", "2", "a", "3") is True
    assert r.mget("a", "b") == ["3", "2"]  # the last duplicate wins
    r.execute_command("SET", "t", "x", "EX", 100)
    r.execute_command("MSET", "t", "y")
    assert r.ttl("t") == -1
    for bad in (("MSET",), ("MSET", "a"), ("MSET", "a", "1", "b")):
        raises(r, arity("mset"), *bad)


def test_msetnx(r):
    assert r.execute_command("MSETNX", "a", "1", "b", "2") == 1
    assert r.execute_command("MSETNX", "b", "x", "c", "3") == 0
    assert r.exists("c") == 0 and r.get("b") == "2"  # all or nothing
    assert r.execute_command("MSETNX", "e", "1", "e", "2") == 1
    assert r.get("e") == "2"
    raises(r, arity("msetnx"), "MSETNX", "x")
    raises(r, arity("msetnx"), "MSETNX", "x", "1", "y")


def test_append_and_strlen(r):
    assert r.append("k", "abc") == 3
    assert r.append("k", "def") == 6
    assert r.append("k", "") == 6
    assert r.get("k") == "abcdef"
    assert r.strlen("k") == 6
    assert r.strlen("nokey") == 0
    r.set("i", 123)
    assert r.strlen("i") == 3
    assert r.append("i", "4") == 4
    assert r.incr("i") == 1235


def test_append_keeps_ttl(r):
    r.execute_command("SET", "k", "v", "EX", 100)
    r.append("k", "w")
    assert r.ttl("k") in range(98, 101)


# --------------------------------------------------------------------------
# counters
# --------------------------------------------------------------------------
def test_incr_decr(r):
    assert r.incr("n") == 1
    assert r.incr("n") == 2
    assert r.decr("n") == 1
    assert r.decr("m") == -1
    assert r.incrby("n", 10) == 11
    assert r.decrby("n", 20) == -9
    assert r.incrby("n", -1) == -10
    assert r.get("n") == "-10"


def test_incr_keeps_ttl(r):
    r.execute_command("SET", "n", "5", "EX", 100)
    assert r.incr("n") == 6
    assert r.ttl("n") in range(98, 101)


@pytest.mark.parametrize("val", ["abc", "+1", "01", " 1", "1 ", "-0", "0x10", "1.0", "",
                                 "9223372036854775808", "-9223372036854775809"])
def test_incr_on_non_integer_string(r, val):
    r.set("n", val)
    raises(r, NOT_INT, "INCR", "n")
    raises(r, NOT_INT, "DECRBY", "n", 1)
    assert r.get("n") == val


def test_incrby_bad_increment(r):
    for inc in ("abc", "1.5", "", "9223372036854775808"):
        raises(r, NOT_INT, "INCRBY", "n", inc)
        raises(r, NOT_INT, "DECRBY", "n", inc)
    assert r.exists("n") == 0


def test_incr_overflow(r):
    r.set("n", "9223372036854775807")
    raises(r, OVERFLOW, "INCR", "n")
    raises(r, OVERFLOW, "INCRBY", "n", 1)
    raises(r, OVERFLOW, "DECRBY", "n", -1)
    r.set("n", "-9223372036854775808")
    raises(r, OVERFLOW, "DECR", "n")
    raises(r, OVERFLOW, "INCRBY", "n", -1)
    assert r.get("n") == "-9223372036854775808"


def test_decrby_min_int64(r):
    # DECRBY cannot negate LLONG_MIN: a distinct error text.
    raises(r, "ERR decrement would overflow", "DECRBY", "n", "-9223372036854775808")
    assert r.incrby("n", -9223372036854775808) == -9223372036854775808
    assert r.decrby("n", -9223372036854775807) == -1


@pytest.mark.parametrize("start,inc,result", [
    ("10", "0.5", "10.5"),
    ("3.0", "0", "3"),
    ("5.0e3", "0", "5000"),
    (None, "2.5", "2.5"),
    (None, "3", "3"),
    (None, "5.0e3", "5000"),
    ("10", "-5", "5"),
    ("1.5", "1.1", "2.6"),
    ("0.1", "0.2", "0.3"),      # long double arithmetic, 17 digits then trimmed
    ("1", "1e2", "101"),
    (".5", "0", "0.5"),
    ("5.", "0", "5"),
    ("1.10", "0", "1.1"),
    ("-0.0", "0", "0"),
    ("+1.5", "0", "1.5"),
    ("1E3", "0", "1000"),
    ("00012", "0", "12"),
    ("1e17", "1", "100000000000000001"),
])
def test_incrbyfloat_formatting(rr, start, inc, result):
    if start is not None:
        rr.execute_command("SET", "f", start)
    assert rr.execute_command("INCRBYFLOAT", "f", inc) == result
    assert rr.execute_command("GET", "f") == result


def test_incrbyfloat_keeps_ttl(r):
    r.execute_command("SET", "f", "1", "EX", 100)
    r.incrbyfloat("f", 1.5)
    assert r.ttl("f") in range(98, 101)


@pytest.mark.parametrize("val", ["abc", " 1", "1 ", "nan", ""])
def test_incrbyfloat_value_not_float(r, val):
    r.set("f", val)
    raises(r, NOT_FLOAT, "INCRBYFLOAT", "f", "1")
    assert r.get("f") == val


@pytest.mark.parametrize("inc", ["abc", "", "nan", "1.5x"])
def test_incrbyfloat_increment_not_float(r, inc):
    r.set("f", "1")
    raises(r, NOT_FLOAT, "INCRBYFLOAT", "f", inc)


def test_incrbyfloat_nan_or_infinity(r):
    r.set("f", "1")
    raises(r, "ERR increment would produce NaN or Infinity", "INCRBYFLOAT", "f", "inf")
    raises(r, "ERR increment would produce NaN or Infinity", "INCRBYFLOAT", "f", "-inf")
    r.set("g", "inf")
    raises(r, "ERR increment would produce NaN or Infinity", "INCRBYFLOAT", "g", "0")
    assert r.get("f") == "1"


# --------------------------------------------------------------------------
# GETRANGE / SUBSTR / SETRANGE
# --------------------------------------------------------------------------
@pytest.mark.parametrize("start,end,expected", [
    (0, 3, "Hell"), (-3, -1, "rld"), (0, -1, "Hello World"), (10, 100, "d"),
    (5, 3, ""), (-100, 2, "Hel"), (100, 200, ""), (0, 0, "H"), (-1, -100, ""),
    (11, 11, ""), (-1, -1, "d"), (3, -100, ""),
    (0, -100, "H"),  # Redis 7.0: a negative end is clamped to 0, not ''
    (0, 9223372036854775807, "Hello World"), (-9223372036854775808, 2, "Hel"),
])
def test_getrange(r, start, end, expected):
    r.set("s", "Hello World")
    assert r.getrange("s", start, end) == expected


def test_getrange_edge_cases(r):
    assert r.getrange("nokey", 0, 10) == ""
    r.set("e", "")
    assert r.getrange("e", 0, -1) == ""
    assert r.getrange("e", -1, -1) == ""
    r.set("s", "abc")
    assert r.execute_command("SUBSTR", "s", 0, 1) == "ab"
    raises(r, NOT_INT, "GETRANGE", "s", "a", "1")
    raises(r, NOT_INT, "GETRANGE", "s", "0", "1.5")
    raises(r, arity("getrange"), "GETRANGE", "s", "0")
    raises(r, arity("substr"), "SUBSTR", "s", "0")


def test_setrange_overwrites_and_extends(r):
    r.set("s", "Hello World")
    assert r.setrange("s", 6, "Redis") == 11
    assert r.get("s") == "Hello Redis"
    assert r.setrange("s", 20, "!") == 21
    assert r.get("s") == "Hello Redis" + "\x00" * 9 + "!"


def test_setrange_pads_new_key_with_zero_bytes(server, r):
    assert r.setrange("n", 3, "ab") == 5
    rb = server.client(decode_responses=False)
    assert rb.get("n") == b"\x00\x00\x00ab"
    rb.close()


def test_setrange_empty_value(r):
    # An empty value never creates the key and never checks the offset.
    assert r.setrange("e", 0, "") == 0
    assert r.setrange("e", 10, "") == 0
    assert r.exists("e") == 0
    r.set("s", "abc")
    assert r.setrange("s", 100, "") == 3
    assert r.setrange("s", 536870912, "") == 3
    assert r.get("s") == "abc"


def test_setrange_keeps_ttl(r):
    r.execute_command("SET", "s", "abc", "EX", 100)
    r.setrange("s", 1, "X")
    assert r.get("s") == "aXc" and r.ttl("s") in range(98, 101)


def test_setrange_errors(r):
    raises(r, "ERR offset is out of range", "SETRANGE", "s", -1, "x")
    # offset + len(value) > 512 MiB (proto-max-bulk-len)
    raises(r, "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
           "SETRANGE", "s", 536870912, "x")
    raises(r, "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
           "SETRANGE", "s", 536870911, "xy")
    raises(r, NOT_INT, "SETRANGE", "s", "abc", "x")
    raises(r, arity("setrange"), "SETRANGE", "s", 1)
    assert r.exists("s") == 0


# --------------------------------------------------------------------------
# binary safety and big values
# --------------------------------------------------------------------------
BINARY = b"\x00\r\n\x00\xff\xfe*1\r\n$3\r\nfoo\r\n" + bytes(range(256))


def test_binary_safe_values_and_keys(server, r):
    rb = server.client(decode_responses=False)
    try:
        assert rb.set(b"bin\x00key\r\n", BINARY)
        assert rb.get(b"bin\x00key\r\n") == BINARY
        assert rb.strlen(b"bin\x00key\r\n") == len(BINARY)
        assert rb.append(b"bin\x00key\r\n", b"\x00") == len(BINARY) + 1
        assert rb.getrange(b"bin\x00key\r\n", 0, 2) == b"\x00\r\n"
        assert rb.exists(b"bin\x00key") == 0
        assert rb.mget(b"bin\x00key\r\n", b"x") == [BINARY + b"\x00", None]
        rb.setrange(b"k", 0, b"\r\n\x00")
        assert rb.get(b"k") == b"\r\n\x00"
    finally:
        rb.close()


def test_large_value_1mib(server, r):
    big = bytes((i * 7) % 256 for i in range(1 << 20))
    rb = server.client(decode_responses=False)
    try:
        assert rb.set("big", big)
        assert rb.get("big") == big
        assert rb.strlen("big") == 1 << 20
        assert rb.append("big", b"tail") == (1 << 20) + 4
        assert rb.getrange("big", -4, -1) == b"tail"
        assert rb.getrange("big", 1000, 1009) == big[1000:1010]
        assert rb.setrange("big", (1 << 20) - 1, b"Z") == (1 << 20) + 4
        assert rb.get("big")[(1 << 20) - 1:] == b"Ztail"
    finally:
        rb.close()


def test_many_large_values_in_mget(server, r):
    rb = server.client(decode_responses=False)
    vals = {("k%d" % i).encode(): bytes([i]) * (64 * 1024 + i) for i in range(16)}
    try:
        assert rb.mset(vals)
        assert rb.mget(list(vals)) == list(vals.values())
    finally:
        rb.close()


def test_value_expires_with_px(r):
    r.execute_command("SET", "k", "v", "PX", 100)
    time.sleep(0.25)
    assert r.get("k") is None
