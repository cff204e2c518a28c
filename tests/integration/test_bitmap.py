"""Bitmap commands (Redis 7.0 semantics) and large strings.

Bitmaps are strings: SETBIT/GETBIT/BITCOUNT/BITPOS/BITOP/BITFIELD/BITFIELD_RO, their error
texts, and the string views (GET/STRLEN/GETRANGE) of bitmaps written bit by bit. The second half
covers values beyond Basalt's 4000-byte inline limit, which Basalt stores in segments: they must
behave exactly like small ones through every string and key command. test_diff_bitmap.py
compares random streams of the same commands with a real redis-server.
"""
import pytest

from helpers import arity, raises

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX = "ERR syntax error"
NOT_INT = "ERR value is not an integer or out of range"
BIT_OFFSET = "ERR bit offset is not an integer or out of range"


@pytest.fixture
def rb(server, r):
    """Binary-safe and without reply callbacks: bitmaps are bytes, not UTF-8 text."""
    c = server.client(callbacks=False, decode_responses=False)
    yield c
    c.close()


BAD_TYPE = ("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not "
            "supported but i64 is.")


def test_setbit_getbit(rr):
    assert rr.execute_command("SETBIT", "b", 7, 1) == 0
    assert rr.execute_command("SETBIT", "b", 7, 1) == 1
    assert rr.execute_command("GET", "b") == "\x01"
    assert rr.execute_command("GETBIT", "b", 7) == 1
    assert rr.execute_command("GETBIT", "b", 6) == 0
    assert rr.execute_command("GETBIT", "b", 100000) == 0
    assert rr.execute_command("GETBIT", "nokey", 0) == 0
    # setting a 0 bit far away still grows the string with zeros
    assert rr.execute_command("SETBIT", "b", 23, 0) == 0
    assert rr.execute_command("STRLEN", "b") == 3
    assert rr.execute_command("SETBIT", "b", 7, 0) == 1
    assert rr.execute_command("GET", "b") == "\x00\x00\x00"
    assert rr.execute_command("OBJECT", "ENCODING", "b") == "raw"


def test_setbit_errors(rr):
    rr.execute_command("HSET", "h", "f", "v")
    raises(rr, BIT_OFFSET, "SETBIT", "b", -1, 1)
    raises(rr, BIT_OFFSET, "SETBIT", "b", "x", 1)
    raises(rr, BIT_OFFSET, "SETBIT", "b", 4294967296 * 2, 1)  # past proto-max-bulk-len
    raises(rr, "ERR bit is not an integer or out of range", "SETBIT", "b", 1, 2)
    raises(rr, "ERR bit is not an integer or out of range", "SETBIT", "b", 1, "on")
    raises(rr, BIT_OFFSET, "GETBIT", "b", -1)
    raises(rr, WRONGTYPE, "SETBIT", "h", 1, 1)
    raises(rr, WRONGTYPE, "GETBIT", "h", 1)
    raises(rr, arity("setbit"), "SETBIT", "b", 1)
    raises(rr, arity("getbit"), "GETBIT", "b")
    assert rr.execute_command("EXISTS", "b") == 0


def test_bitcount(rr):
    rr.execute_command("SET", "s", "foobar")
    assert rr.execute_command("BITCOUNT", "s") == 26
    assert rr.execute_command("BITCOUNT", "s", 0, 0) == 4
    assert rr.execute_command("BITCOUNT", "s", 1, 1) == 6
    assert rr.execute_command("BITCOUNT", "s", 1, 1, "BYTE") == 6
    assert rr.execute_command("BITCOUNT", "s", 5, 30, "BIT") == 17
    assert rr.execute_command("BITCOUNT", "s", -2, -1) == 7
    assert rr.execute_command("BITCOUNT", "s", -1, -2) == 0
    assert rr.execute_command("BITCOUNT", "s", 4, 2) == 0
    assert rr.execute_command("BITCOUNT", "s", 0, 1000) == 26
    assert rr.execute_command("BITCOUNT", "nokey") == 0
    assert rr.execute_command("BITCOUNT", "nokey", 0) == 0  # a missing key answers first
    raises(rr, SYNTAX, "BITCOUNT", "s", 0)
    raises(rr, SYNTAX, "BITCOUNT", "s", 0, 1, "WORD")
    raises(rr, NOT_INT, "BITCOUNT", "s", "a", 1)
    rr.execute_command("LPUSH", "l", "x")
    raises(rr, WRONGTYPE, "BITCOUNT", "l")


def test_bitpos(rb):
    rb.execute_command("SET", "s", b"\xff\xf0\x00")
    assert rb.execute_command("BITPOS", "s", 0) == 12
    assert rb.execute_command("BITPOS", "s", 1, 2) == -1
    assert rb.execute_command("BITPOS", "s", 1, 7, 15, "BIT") == 7
    assert rb.execute_command("BITPOS", "s", 0, 0, 11, "BIT") == -1
    rb.execute_command("SET", "ones", b"\xff\xff")
    assert rb.execute_command("BITPOS", "ones", 0) == 16       # padded with zeros
    assert rb.execute_command("BITPOS", "ones", 0, 0) == 16
    assert rb.execute_command("BITPOS", "ones", 0, 0, -1) == -1  # explicit end: no padding
    assert rb.execute_command("BITPOS", "nokey", 0) == 0
    assert rb.execute_command("BITPOS", "nokey", 1) == -1
    rb.execute_command("SET", "empty", "")
    assert rb.execute_command("BITPOS", "empty", 0) == -1
    raises(rb, "ERR The bit argument must be 1 or 0.", "BITPOS", "s", 2)
    raises(rb, SYNTAX, "BITPOS", "s", 1, 0, 1, "WORD")
    raises(rb, SYNTAX, "BITPOS", "s", 1, 0, 1, "BIT", "x")


def test_bitop(rb):
    rb.execute_command("SET", "a", b"\x0f\xf0")
    rb.execute_command("SET", "b", b"\xff")
    assert rb.execute_command("BITOP", "AND", "d", "a", "b") == 2
    assert rb.execute_command("GET", "d") == b"\x0f\x00"
    assert rb.execute_command("BITOP", "or", "d", "a", "b", "nokey") == 2
    assert rb.execute_command("GET", "d") == b"\xff\xf0"
    assert rb.execute_command("BITOP", "XOR", "d", "a", "b") == 2
    assert rb.execute_command("GET", "d") == b"\xf0\xf0"
    assert rb.execute_command("BITOP", "NOT", "d", "b") == 1
    assert rb.execute_command("GET", "d") == b"\x00"
    # an empty result deletes the destination, whatever it held
    rb.execute_command("EXPIRE", "d", 100)
    assert rb.execute_command("BITOP", "AND", "d", "nokey") == 0
    assert rb.execute_command("EXISTS", "d") == 0
    raises(rb, "ERR BITOP NOT must be called with a single source key.",
           "BITOP", "NOT", "d", "a", "b")
    raises(rb, SYNTAX, "BITOP", "NAND", "d", "a")
    raises(rb, arity("bitop"), "BITOP", "AND", "d")
    rb.execute_command("SADD", "set", "m")
    raises(rb, WRONGTYPE, "BITOP", "AND", "d", "a", "set")


def test_bitfield(rr):
    assert rr.execute_command("BITFIELD", "f", "SET", "i8", 0, 100, "GET", "i8", 0) == [0, 100]
    assert rr.execute_command("BITFIELD", "f", "INCRBY", "i8", 0, 100) == [-56]  # wraps
    assert rr.execute_command("BITFIELD", "f", "OVERFLOW", "SAT", "INCRBY", "i8", 0, -200) == [-128]
    assert rr.execute_command("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "i8", 0, -1) == [None]
    assert rr.execute_command("BITFIELD", "f", "GET", "u8", 0) == [128]
    assert rr.execute_command("BITFIELD", "f", "SET", "u4", "#1", 15, "GET", "u16", 0) == [0, 36608]
    assert rr.execute_command("BITFIELD", "f", "OVERFLOW", "SAT", "SET", "u8", 8, -1) == [0]
    assert rr.execute_command("BITFIELD", "f", "GET", "u8", 8) == [255]
    assert rr.execute_command("BITFIELD", "f", "SET", "i64", 64, -1, "GET", "u63", 64) == [
        0, 2 ** 63 - 1]
    assert rr.execute_command("BITFIELD", "f") == []
    # only GETs: a missing key is not created
    assert rr.execute_command("BITFIELD", "g", "GET", "u8", 0) == [0]
    assert rr.execute_command("EXISTS", "g") == 0
    # a refused write still creates and grows the key, as in Redis
    assert rr.execute_command("BITFIELD", "g", "OVERFLOW", "FAIL", "SET", "u2", 20, 9) == [None]
    assert rr.execute_command("GET", "g") == "\x00\x00\x00"
    assert rr.execute_command("BITFIELD_RO", "f", "GET", "u8", 8) == [255]


def test_bitfield_errors(rr):
    raises(rr, BAD_TYPE, "BITFIELD", "f", "GET", "u64", 0)
    raises(rr, BAD_TYPE, "BITFIELD", "f", "GET", "i65", 0)
    raises(rr, BAD_TYPE, "BITFIELD", "f", "GET", "x8", 0)
    raises(rr, BIT_OFFSET, "BITFIELD", "f", "GET", "u8", -1)
    raises(rr, BIT_OFFSET, "BITFIELD", "f", "GET", "u8", "#x")
    raises(rr, NOT_INT, "BITFIELD", "f", "SET", "u8", 0, "big")
    raises(rr, "ERR Invalid OVERFLOW type specified", "BITFIELD", "f", "OVERFLOW", "HUGE")
    raises(rr, SYNTAX, "BITFIELD", "f", "GET", "u8")
    raises(rr, SYNTAX, "BITFIELD", "f", "DEL", "u8", 0)
    raises(rr, "ERR BITFIELD_RO only supports the GET subcommand",
           "BITFIELD_RO", "f", "SET", "u8", 0, 1)
    rr.execute_command("ZADD", "z", 1, "m")
    raises(rr, WRONGTYPE, "BITFIELD", "z", "GET", "u8", 0)
    raises(rr, WRONGTYPE, "BITFIELD_RO", "z", "GET", "u8", 0)
    assert rr.execute_command("EXISTS", "f") == 0


def test_bitfield_resp3(server, r):
    with server.raw() as c:
        c.call("HELLO", "3")
        assert c.call("BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 5, "GET", "u2", 0) \
            == ("*", [("_", None), (":", 0)])


def test_sparse_bitmap(rb):
    # A bit far out: the value is 125 MB of zeros with one bit, in Redis and in Basalt alike.
    assert rb.execute_command("SETBIT", "big", 1000000000, 1) == 0
    assert rb.execute_command("STRLEN", "big") == 125000001
    assert rb.execute_command("BITCOUNT", "big") == 1
    assert rb.execute_command("BITPOS", "big", 1) == 1000000000
    assert rb.execute_command("BITPOS", "big", 0) == 0
    assert rb.execute_command("BITPOS", "big", 0, 124999999) == 999999992
    assert rb.execute_command("GETBIT", "big", 1000000000) == 1
    assert rb.execute_command("GETRANGE", "big", 124999998, -1) == b"\x00\x00\x80"
    assert rb.execute_command("BITFIELD", "big", "GET", "u8", 1000000000) == [128]
    rb.execute_command("DEL", "big")


# ------------------------------------------------------------------------------------------------
# Values beyond the inline limit (Basalt stores them in segments)
# ------------------------------------------------------------------------------------------------
def test_large_value_roundtrip(rr):
    value = "".join(chr(65 + i % 26) for i in range(200000))
    rr.execute_command("SET", "big", value)
    assert rr.execute_command("GET", "big") == value
    assert rr.execute_command("STRLEN", "big") == 200000
    assert rr.execute_command("GETRANGE", "big", 65530, 65545) == value[65530:65546]
    assert rr.execute_command("GETRANGE", "big", -10, -1) == value[-10:]
    assert rr.execute_command("APPEND", "big", "tail") == 200004
    assert rr.execute_command("SETRANGE", "big", 65535, "XY") == 200004
    expected = value[:65535] + "XY" + value[65537:] + "tail"
    assert rr.execute_command("GET", "big") == expected
    assert rr.execute_command("GETSET", "big", "small") == expected
    assert rr.execute_command("GET", "big") == "small"
    assert rr.execute_command("OBJECT", "ENCODING", "big") == "embstr"


def test_values_grow_across_the_inline_limit(rr):
    rr.execute_command("SET", "k", "a" * 3998)
    assert rr.execute_command("APPEND", "k", "bcd") == 4001
    assert rr.execute_command("GET", "k") == "a" * 3998 + "bcd"
    assert rr.execute_command("SETRANGE", "k", 10000, "z") == 10001
    assert rr.execute_command("GET", "k") == "a" * 3998 + "bcd" + "\x00" * 5999 + "z"
    assert rr.execute_command("SETBIT", "k", 10001 * 8 + 7, 1) == 0
    assert rr.execute_command("GETRANGE", "k", 9999, -1) == "\x00z\x01"


def test_large_values_through_key_commands(r):
    value = "v" * 100000
    r.set("big", value)
    r.expire("big", 1000)
    r.rename("big", "moved")
    assert r.get("moved") == value and r.ttl("moved") > 0
    assert r.copy("moved", "copy")
    r.setrange("moved", 0, "W")  # the copy is independent of its source
    assert r.get("copy") == value
    assert r.move("copy", 3)
    r.select(3)
    assert r.get("copy") == value
    r.select(0)
    assert r.getex("moved", persist=True) == "W" + value[1:]
    assert r.ttl("moved") == -1
    assert r.getdel("moved") == "W" + value[1:]
    assert r.exists("moved") == 0
    r.set("n", "7" * 5000)
    with pytest.raises(Exception, match="not an integer"):
        r.incr("n")


@pytest.mark.basalt_only
def test_setbit_rewrites_only_a_segment(server, r):
    """A SETBIT on a 1 MB bitmap must not rewrite the megabyte: the WAL grows by a few KB."""
    r.setbit("bm", 8 * 1024 * 1024 - 1, 1)
    wal = lambda: int(r.info("rocksdb")["wal_bytes"])
    before = wal()
    for i in range(100):
        r.setbit("bm", (i * 7919 * 8) % (8 * 1024 * 1024), 1)
    grown = wal() - before
    assert grown < 100 * 16 * 1024, grown  # a whole-value rewrite would be 100 MB
    assert r.bitcount("bm") == 101


@pytest.mark.basalt_only  # Redis 7.2's rule; Debian's 7.0 counts every SETBIT/BITFIELD SET
def test_setbit_and_bitfield_change_nothing_when_the_value_stays(r):
    def dirty():
        return r.info("persistence")["rdb_changes_since_last_save"]

    start = dirty()
    r.setbit("foo", 0, 0)
    r.execute_command("BITFIELD", "foo2", "SET", "i5", 0, 0)
    assert dirty() == start + 2  # new keys
    r.setbit("foo", 0, 0)
    r.execute_command("BITFIELD", "foo2", "SET", "i5", 0, 0)
    assert dirty() == start + 2
    r.setbit("foo", 0, 1)
    r.execute_command("BITFIELD", "foo2", "SET", "i5", 0, 1)
    assert dirty() == start + 4
    assert r.getbit("foo", 0) == 1
    assert r.execute_command("BITFIELD", "foo2", "GET", "i5", 0) == [1]
