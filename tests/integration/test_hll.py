"""HyperLogLog commands (Redis 7.0 semantics): PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST.

An HLL is a string in Redis's byte format ("HYLL" header, sparse or dense registers, cached
cardinality in the header), so GET/SET/TYPE see a string and hand-made or Redis-made values
are read as such. Exact agreement with redis-server over many cardinalities is in
test_diff_geo_hll.py.
"""
import struct

import pytest

from helpers import arity, raises

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_HLL = "WRONGTYPE Key is not a valid HyperLogLog string value."
CORRUPT = "INVALIDOBJ Corrupted HLL object detected"
DENSE_SIZE = 16 + 16384 * 6 // 8


def header(encoding, card=0, stale=True):
    card_bytes = bytearray(struct.pack("<Q", card))
    if stale:
        card_bytes[7] |= 0x80
    return b"HYLL" + bytes([encoding, 0, 0, 0]) + bytes(card_bytes)


@pytest.fixture
def rb(server, r):
    """Flushed client that returns bytes (HLL values are binary)."""
    c = server.client(decode_responses=False)
    yield c
    c.close()


def test_pfadd_and_pfcount(rb):
    assert rb.pfadd("h", "a", "b", "c") == 1
    assert rb.pfadd("h", "a", "b") == 0  # no register changed
    assert rb.pfadd("h", "d") == 1
    assert rb.pfcount("h") == 4
    assert rb.type("h") == b"string"
    assert rb.object("encoding", "h") == b"raw"
    v = rb.get("h")
    assert v[:5] == b"HYLL\x01"  # small: sparse
    assert rb.strlen("h") == len(v)


def test_pfadd_without_elements_creates_an_empty_hll(rb):
    assert rb.execute_command("PFADD", "h") == 1
    assert rb.get("h") == header(1) + b"\x7f\xff"  # one run of 16384 zero registers
    assert rb.execute_command("PFADD", "h") == 0
    assert rb.pfcount("h") == 0


def test_pfcount_of_missing_keys_and_unions(rb):
    assert rb.pfcount("nokey") == 0
    rb.pfadd("h1", *["a%d" % i for i in range(100)])
    rb.pfadd("h2", *["a%d" % i for i in range(50, 150)])
    one = rb.pfcount("h1")
    assert 97 <= one <= 103
    assert rb.pfcount("h1", "nokey") == one
    union = rb.pfcount("h1", "h2")
    assert 145 <= union <= 155
    assert rb.pfcount("h2", "h1", "h2") == union
    rb.pfadd("both", *["a%d" % i for i in range(150)])
    assert rb.pfcount("both") == union  # the union has the registers of one HLL of all
    assert not rb.exists("nokey")


def test_pfcount_caches_the_cardinality_in_the_header(rb):
    rb.pfadd("h", "x", "y", "z")
    assert rb.get("h")[15] & 0x80  # stale after a write
    assert rb.pfcount("h") == 3
    v = rb.get("h")
    assert v[8:16] == struct.pack("<Q", 3)  # cached, little-endian, valid
    rb.pfadd("h", "w")
    v2 = rb.get("h")
    assert v2[8:15] == v[8:15] and v2[15] == 0x80  # only the stale bit changes
    assert rb.pfcount("h") == 4


def test_a_valid_cached_cardinality_is_trusted(rb):
    # Registers all zero but a valid cache of 12345: PFCOUNT answers from the header.
    rb.set("h", header(1, card=12345, stale=False) + b"\x7f\xff")
    assert rb.pfcount("h") == 12345
    rb.set("h", header(1, card=12345, stale=True) + b"\x7f\xff")
    assert rb.pfcount("h") == 0


def test_pfcount_cache_write_touches_watchers(server, rb):
    rb.pfadd("h", "a")
    with server.raw() as c:
        # The first PFCOUNT stores the cache: the key changed, EXEC aborts.
        c.call("WATCH", "h")
        assert c.call("PFCOUNT", "h") == (":", 1)
        c.call("MULTI")
        c.call("PING")
        assert c.call("EXEC") == ("*", None)
        # The cache is valid now: PFCOUNT writes nothing and EXEC runs.
        c.call("WATCH", "h")
        assert c.call("PFCOUNT", "h") == (":", 1)
        c.call("MULTI")
        c.call("PING")
        assert c.call("EXEC") == ("*", [("+", b"PONG")])


def test_pfmerge(rb):
    rb.pfadd("a", "1", "2", "3")
    rb.pfadd("b", "3", "4")
    rb.pfadd("d", "0")
    assert rb.pfmerge("d", "a", "b") is True
    assert rb.pfcount("d") == 5  # the destination's own registers count too
    assert rb.pfmerge("new") is True
    assert rb.get("new") == header(1) + b"\x7f\xff"
    assert rb.pfmerge("c", "a", "missing") is True
    assert rb.pfcount("c") == 3
    assert rb.pfmerge("a", "a") is True
    assert rb.pfcount("a") == 3


def test_writes_keep_the_ttl(rb):
    rb.pfadd("h", "a")
    rb.expire("h", 1000)
    rb.pfadd("h", "b")
    assert 990 < rb.ttl("h") <= 1000
    rb.pfmerge("h", "other")
    assert 990 < rb.ttl("h") <= 1000
    rb.pfcount("h")
    assert 990 < rb.ttl("h") <= 1000


def test_sparse_turns_dense_past_the_limit(rb):
    rb.pfadd("h", *["e%d" % i for i in range(5000)])
    v = rb.get("h")
    assert len(v) == DENSE_SIZE and v[4] == 0
    assert 4900 < rb.pfcount("h") < 5100
    rb.pfadd("h", "more")
    assert rb.strlen("h") == DENSE_SIZE  # dense stays dense


def test_hll_sparse_max_bytes_is_configurable(rb):
    old = list(rb.config_get("hll-sparse-max-bytes").values())[0]
    assert old in ("3000", b"3000")
    try:
        rb.config_set("hll-sparse-max-bytes", 30)
        rb.pfadd("h", *["e%d" % i for i in range(20)])
        assert rb.strlen("h") == DENSE_SIZE
        rb.config_set("hll-sparse-max-bytes", 3000)
        rb.pfadd("s", *["e%d" % i for i in range(20)])
        assert rb.strlen("s") < 100
    finally:
        rb.config_set("hll-sparse-max-bytes", old)


def test_merge_with_a_dense_input_is_dense(rb):
    rb.pfadd("big", *["e%d" % i for i in range(5000)])
    rb.pfadd("small", "x")
    rb.pfmerge("small", "big")
    assert rb.strlen("small") == DENSE_SIZE
    rb.pfmerge("fresh", "small")
    assert rb.strlen("fresh") == DENSE_SIZE
    rb.pfadd("s1", "a")
    rb.pfmerge("s2", "s1")
    assert rb.get("s2")[4] == 1  # sparse inputs only: sparse


def test_dense_values_written_elsewhere_are_read(rb):
    # A dense HLL built by hand: register 0 = 3, register 16383 = 2.
    body = bytearray(DENSE_SIZE - 16)
    body[0] = 3
    body[-1] = 2 << 2
    rb.set("h", header(0) + bytes(body))
    before = rb.pfcount("h")
    assert before == 2
    rb.pfadd("h2", "a")
    assert rb.pfcount("h", "h2") == 3


def test_wrong_types(rb):
    rb.lpush("list", "a")
    rb.set("str", "hello")
    for args in (["PFADD", "list", "a"], ["PFCOUNT", "list"], ["PFCOUNT", "h", "list"],
                 ["PFMERGE", "list"], ["PFMERGE", "d", "list"]):
        raises(rb, WRONGTYPE, *args)
    for args in (["PFADD", "str", "a"], ["PFCOUNT", "str"], ["PFCOUNT", "nokey", "str"],
                 ["PFMERGE", "str"], ["PFMERGE", "d", "str"]):
        raises(rb, NOT_HLL, *args)
    assert not rb.exists("d")  # a failed PFMERGE creates nothing
    assert rb.get("str") == b"hello"


def test_values_that_are_not_hlls(rb):
    rb.set("short", b"HYLL")
    rb.set("magic", b"HYLX" + bytes(14))
    rb.set("encoding", header(2) + b"\x7f\xff")
    rb.set("dense_size", header(0) + bytes(100))  # dense must be exactly 12304 bytes
    for k in ("short", "magic", "encoding", "dense_size"):
        raises(rb, NOT_HLL, "PFCOUNT", k)
        raises(rb, NOT_HLL, "PFADD", k, "x")


def test_corrupt_sparse_values(rb):
    rb.set("short", header(1) + b"\x7f\xfe")  # runs cover 16383 registers
    rb.set("long", header(1) + b"\x7f\xff\x00")  # 16385
    for k in ("short", "long"):
        raises(rb, CORRUPT, "PFCOUNT", k)
        raises(rb, CORRUPT, "PFCOUNT", k, "nokey")
        raises(rb, CORRUPT, "PFMERGE", "dst", k)
    assert not rb.exists("dst")


def test_arity(rb):
    raises(rb, arity("pfadd"), "PFADD")
    raises(rb, arity("pfcount"), "PFCOUNT")
    raises(rb, arity("pfmerge"), "PFMERGE")


def test_error_is_within_the_bound(rb):
    n = 30000
    for i in range(0, n, 1000):
        rb.pfadd("h", *["m%d" % j for j in range(i, i + 1000)])
    assert abs(rb.pfcount("h") - n) / n < 3 * 0.0081


def test_type_commands_see_a_string(rb):
    rb.pfadd("h", "a")
    assert rb.execute_command("SCAN", 0, "TYPE", "string")[1] == [b"h"]
    rb.rename("h", "h2")
    assert rb.pfcount("h2") == 1
    rb.copy("h2", "h3")
    assert rb.pfcount("h3") == 1
    rb.append("h3", "x")  # still a string; its sparse body no longer adds up
    assert rb.pfcount("h3") == 1  # the cached cardinality is still marked valid
    raises(rb, CORRUPT, "PFMERGE", "d", "h3")


def test_pfdebug_encoding_and_decode(rb):
    rb.pfadd("h", "a", "b", "c")
    assert rb.execute_command("PFDEBUG", "ENCODING", "h") == b"sparse"
    # The three elements land in registers 8436, 12711 and 15780 with values 1, 2 and 1.
    assert rb.execute_command("PFDEBUG", "DECODE", "h") == \
        b"Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603"
    rb.pfadd("e")
    assert rb.execute_command("PFDEBUG", "DECODE", "e") == b"Z:16384"
    rb.set("z", header(1) + bytes([0x3f]))  # a lone ZERO opcode of 64 registers
    assert rb.execute_command("PFDEBUG", "DECODE", "z") == b"z:64"


def test_pfdebug_getreg_and_todense_make_the_value_dense(rb):
    rb.pfadd("h", "a", "b", "c")
    regs = rb.execute_command("PFDEBUG", "GETREG", "h")
    assert len(regs) == 16384
    assert [(i, v) for i, v in enumerate(regs) if v] == [(8436, 1), (12711, 2), (15780, 1)]
    assert rb.execute_command("PFDEBUG", "ENCODING", "h") == b"dense"
    assert rb.strlen("h") == DENSE_SIZE
    assert rb.pfcount("h") == 3
    raises(rb, "ERR HLL encoding is not sparse", "PFDEBUG", "DECODE", "h")
    rb.pfadd("s", "x")
    assert rb.execute_command("PFDEBUG", "TODENSE", "s") == 1
    assert rb.execute_command("PFDEBUG", "TODENSE", "s") == 0
    assert rb.execute_command("PFDEBUG", "ENCODING", "s") == b"dense"
    assert rb.pfcount("s") == 1


def test_pfdebug_errors(rb):
    raises(rb, "ERR The specified key does not exist", "PFDEBUG", "ENCODING", "nokey")
    raises(rb, "ERR The specified key does not exist", "PFDEBUG", "NOSUCH", "nokey")
    rb.set("str", "plain")
    raises(rb, NOT_HLL, "PFDEBUG", "ENCODING", "str")
    rb.pfadd("h", "a")
    raises(rb, "ERR Unknown PFDEBUG subcommand 'nosuch'", "PFDEBUG", "nosuch", "h")
    raises(rb, arity("pfdebug"), "PFDEBUG", "ENCODING")
    raises(rb, arity("pfdebug"), "PFDEBUG", "ENCODING", "h", "x")
    rb.set("bad", header(1) + bytes([0x3f]))  # covers 64 registers, not 16384
    raises(rb, CORRUPT, "PFDEBUG", "TODENSE", "bad")


def test_pfselftest_passes(rb):
    assert rb.execute_command("PFSELFTEST") == b"OK"
    raises(rb, arity("pfselftest"), "PFSELFTEST", "x")
