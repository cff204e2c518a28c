"""Key DUMP and RESTORE: round trips of every type, payloads moved between the target and a real
redis-server (the oracle) in both directions, TTL and REPLACE semantics, option errors, and
corrupted payloads that must be refused without changing anything."""
import struct
import time

import pytest

from rdbgen import crc64, dump_payload, rdb_length, rdb_string


def read_value(c, key):
    """The key's type and whole value, in a form that compares equal across servers."""
    t = c.type(key)
    t = t.decode() if isinstance(t, bytes) else t
    if t == "string":
        return t, c.get(key)
    if t == "list":
        return t, c.lrange(key, 0, -1)
    if t == "set":
        return t, sorted(c.smembers(key))
    if t == "hash":
        return t, sorted(c.hgetall(key).items())
    if t == "zset":
        return t, c.zrange(key, 0, -1, withscores=True)
    if t == "stream":
        return t, stream_view(c, key)
    return t, None


def pairs(flat):
    return dict(zip(flat[::2], flat[1::2]))


def stream_view(c, key):
    """XINFO STREAM FULL without what differs between servers holding the same stream: the
    radix tree's shape, and consumers' active times (Redis 7.0 has none, type 19 carries none)."""
    full = pairs(c.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", 0))
    for k in (b"radix-tree-keys", b"radix-tree-nodes"):
        full.pop(k)
    groups = []
    for g in full.pop(b"groups"):
        g = pairs(g)
        g[b"consumers"] = [{k: v for k, v in pairs(x).items() if k != b"active-time"}
                           for x in g[b"consumers"]]
        groups.append(g)
    full[b"groups"] = groups
    return full


def fill(c, kind, key):
    """Writes a value of `kind` (type and size, chosen so that redis-server picks each of its
    encodings: int, embstr/raw, intset, listpack, hashtable, skiplist, quicklist)."""
    if kind == "string-int":
        c.set(key, "-123456789")
    elif kind == "string-small":
        c.set(key, "hello world")
    elif kind == "string-large":
        c.set(key, ("abcdefgh" * 4000) + "tail")  # LZF-compressible
    elif kind == "string-binary":
        c.set(key, bytes(range(256)) * 70)
    elif kind == "list-small":
        c.rpush(key, "a", "1", "-5", "", "x" * 100, "70000", "-70000", str(2**40))
    elif kind == "list-large":
        c.rpush(key, *["element-%d" % i for i in range(3000)], "y" * 10000)
    elif kind == "set-intset":
        c.sadd(key, 1, -2, 300, 70000, -(2**40), 2**62)
    elif kind == "set-small":
        c.sadd(key, "a", "b", "12", "x" * 50)
    elif kind == "set-large":
        c.sadd(key, *["member-%d" % i for i in range(1000)])
    elif kind == "hash-small":
        c.hset(key, mapping={"f1": "v1", "n": "42", "neg": "-7", "empty": ""})
    elif kind == "hash-large":
        c.hset(key, mapping={"field-%d" % i: "value-%d" % i for i in range(1000)})
        c.hset(key, "big", "z" * 5000)
    elif kind == "zset-small":
        c.zadd(key, {"a": 1, "b": -2.5, "c": 3e10, "d": 0, "e": 1.0 / 3})
    elif kind == "zset-large":
        c.zadd(key, {"m-%d" % i: i * 0.5 - 100 for i in range(1000)})
        c.zadd(key, {"inf": float("inf"), "-inf": float("-inf")})
    elif kind == "stream-small":
        c.xadd(key, {"f": "v"}, id="5-1")
        c.xadd(key, {"f": "w", "n": "-12"}, id="5-2")
    elif kind == "stream-groups":
        fill_stream_with_groups(c, key)
    elif kind == "stream-empty":
        c.xadd(key, {"a": "b"}, id="7-0")
        c.xdel(key, "7-0")
        c.xgroup_create(key, "g", "$")
    else:
        raise AssertionError(kind)


def fill_stream_with_groups(c, key):
    """Several listpack nodes, entries with differing fields, a deleted entry, two groups, three
    consumers (one idle) and pending entries with repeated deliveries."""
    for i in range(250):
        fields = {"f": "v%d" % i, "n": str(i)} if i % 7 else {"other": "x" * (i % 50)}
        c.xadd(key, fields, id="%d-%d" % (1000 + i // 3, i % 3))
    c.xdel(key, "1001-0")
    c.xgroup_create(key, "g1", "1010-0")
    c.xgroup_create(key, "g2", "0")
    c.xreadgroup("g2", "alice", {key: ">"}, count=5)
    c.xreadgroup("g2", "bob", {key: ">"}, count=3)
    c.xreadgroup("g2", "bob", {key: "0"})  # a second delivery of bob's entries
    c.xgroup_createconsumer(key, "g2", "carol")
    c.xack(key, "g2", "1000-1")


KINDS = ["string-int", "string-small", "string-large", "string-binary", "list-small",
         "list-large", "set-intset", "set-small", "set-large", "hash-small", "hash-large",
         "zset-small", "zset-large", "stream-small", "stream-groups", "stream-empty"]


@pytest.fixture
def r(server):
    """A client that keeps replies as bytes: payloads are binary."""
    c = server.client(decode_responses=False)
    c.flushall()
    yield c
    c.close()


@pytest.fixture
def ref(oracle):
    c = oracle.client(decode_responses=False)
    c.flushall()
    yield c
    c.close()


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip(r, kind):
    fill(r, kind, "src")
    payload = r.dump("src")
    r.restore("dst", 0, payload)
    assert read_value(r, "dst") == read_value(r, "src")
    assert r.ttl("dst") == -1


@pytest.mark.parametrize("kind", KINDS)
def test_dump_restores_into_redis(r, ref, kind):
    fill(r, kind, "k")
    ref.restore("k", 0, r.dump("k"))
    assert read_value(ref, "k") == read_value(r, "k")


@pytest.mark.parametrize("kind", KINDS)
def test_redis_dump_restores_here(r, ref, kind):
    fill(ref, kind, "k")
    r.restore("k", 0, ref.dump("k"))
    assert read_value(r, "k") == read_value(ref, "k")


def test_dump_missing_key_is_nil(r):
    assert r.dump("nope") is None


def test_ttl_relative_and_absolute(r):
    r.set("s", "v")
    payload = r.dump("s")
    r.restore("rel", 100000, payload)
    assert 99000 <= r.pttl("rel") <= 100000
    at = int(time.time() * 1000) + 200000
    r.restore("abs", at, payload, absttl=True)
    assert r.pexpiretime("abs") == at
    r.rpush("l", "a", "b")
    r.restore("lttl", 50000, r.dump("l"))
    assert 49000 <= r.pttl("lttl") <= 50000
    assert r.lrange("lttl", 0, -1) == [b"a", b"b"]


def test_ttl_in_the_past_creates_nothing_and_replace_deletes(r):
    r.set("s", "v")
    payload = r.dump("s")
    assert r.restore("gone", 1000, payload, absttl=True) == b"OK"
    assert r.exists("gone") == 0
    r.set("old", "x")
    assert r.restore("old", 1000, payload, absttl=True, replace=True) == b"OK"
    assert r.exists("old") == 0


def test_busykey_and_replace(r):
    r.hset("h", "f", "v")
    r.set("s", "v")
    payload = r.dump("h")
    with pytest.raises(Exception, match="BUSYKEY Target key name already exists."):
        r.restore("s", 0, payload)
    assert r.get("s") == b"v"
    r.restore("s", 0, payload, replace=True)
    assert r.hgetall("s") == {b"f": b"v"}
    r.sadd("big", *range(100))
    r.restore("big", 0, r.dump("s"), replace=True)
    assert r.type("big") == b"hash" and r.hlen("big") == 1


def test_option_errors(r):
    r.set("s", "v")
    p = r.dump("s")
    cases = [
        (["x", -1, p], "Invalid TTL value, must be >= 0"),
        (["x", "abc", p], "value is not an integer or out of range"),
        (["x", 0, p, "FREQ", 256], "Invalid FREQ value, must be >= 0 and <= 255"),
        (["x", 0, p, "FREQ", -1], "Invalid FREQ value, must be >= 0 and <= 255"),
        (["x", 0, p, "IDLETIME", -1], "Invalid IDLETIME value, must be >= 0"),
        (["x", 0, p, "IDLETIME", 5, "FREQ", 5], "syntax error"),
        (["x", 0, p, "BOGUS"], "syntax error"),
        (["x", 0, p, "FREQ"], "syntax error"),
    ]
    for args, msg in cases:
        with pytest.raises(Exception, match=msg):
            r.execute_command("RESTORE", *args)
    assert r.exists("x") == 0
    assert r.restore("x", 0, p, idletime=100, replace=True) == b"OK"
    assert r.restore("y", 0, p, frequency=255) == b"OK"
    assert r.get("x") == b"v" and r.get("y") == b"v"


def restore_error(r, payload):
    with pytest.raises(Exception) as e:
        r.restore("victim", 0, payload, replace=True)
    return str(e.value)


def test_checksum_and_version_errors(r):
    r.set("victim", "keep")
    r.rpush("l", *range(50))
    p = bytearray(r.dump("l"))
    wrong = "DUMP payload version or checksum are wrong"
    flipped = bytes(p[:3]) + bytes([p[3] ^ 0x01]) + bytes(p[4:])
    assert wrong in restore_error(r, flipped)
    assert wrong in restore_error(r, bytes(p[:-1]))
    assert wrong in restore_error(r, b"short")
    assert wrong in restore_error(r, dump_payload(b"\x00\x01a", version=12))
    assert r.get("victim") == b"keep"


BAD_BODIES = [
    b"",                                                # no type byte
    b"\x63" + rdb_string(b"x"),                         # unknown type
    b"\x00" + rdb_length(100) + b"abc",                 # string longer than the payload
    b"\x00" + b"\xc3" + rdb_length(5) + rdb_length(100) + b"xy",  # LZF past the end
    b"\x01" + rdb_length(1000000) + rdb_string(b"a"),   # list count beyond the payload
    b"\x01" + rdb_length(0),                            # empty list
    b"\x02" + rdb_length(2) + rdb_string(b"a") + rdb_string(b"a"),  # duplicate set member
    b"\x04" + rdb_length(1) + rdb_string(b"f") + rdb_length(100000),  # value past the end
    b"\x05" + rdb_length(1) + rdb_string(b"m") + struct.pack("<d", float("nan")),
    b"\x0b" + rdb_string(struct.pack("<II", 2, 3) + struct.pack("<hh", 1, 2)),  # intset short
    b"\x14" + rdb_string(struct.pack("<IH", 9, 1) + b"\x81\xff"),  # listpack entry past end
    b"\x10" + rdb_string(struct.pack("<IH", 9, 1) + b"\x01\x01\xff"),  # odd field count
    b"\x12" + rdb_length(1) + rdb_length(7) + rdb_string(b"x"),  # bad quicklist container
]


# Redis reads an object's value on into the footer bytes and checks intsets for order only
# with sanitize-dump-payload yes; Basalt always refuses these.
STRICT_BAD_BODIES = [
    b"\x04" + rdb_length(1) + rdb_string(b"f"),  # hash field without value
    b"\x00" + rdb_string(b"a") + b"trailing",    # bytes after the object
    b"\x05" + rdb_length(1) + rdb_string(b"m") + b"\x00" * 7,  # truncated score
    b"\x0b" + rdb_string(struct.pack("<II", 2, 2) + struct.pack("<hh", 5, 1)),  # unsorted
]


@pytest.mark.parametrize("body", BAD_BODIES + [pytest.param(b, marks=pytest.mark.basalt_only)
                                               for b in STRICT_BAD_BODIES],
                         ids=range(len(BAD_BODIES) + len(STRICT_BAD_BODIES)))
def test_bad_data_format_changes_nothing(r, body):
    r.set("victim", "keep")
    assert "Bad data format" in restore_error(r, dump_payload(body))
    assert r.get("victim") == b"keep"


def test_crafted_compact_encodings(r):
    # A ziplist hash (RDB type 13, Redis 6.x) and a ziplist-node quicklist (type 14).
    def ziplist(entries):
        body = b""
        prev = 0
        tail = 10
        for e in entries:
            enc = bytes([len(e)]) + e if isinstance(e, bytes) else b"\xfe" + struct.pack("<b", e)
            entry = bytes([prev]) + enc
            tail = 10 + len(body)
            body += entry
            prev = len(entry)
        total = 10 + len(body) + 1
        return struct.pack("<IIH", total, tail, len(entries)) + body + b"\xff"

    p = dump_payload(b"\x0d" + rdb_string(ziplist([b"f", b"v", b"n", 7])))
    r.restore("zh", 0, p)
    assert r.hgetall("zh") == {b"f": b"v", b"n": b"7"}
    p = dump_payload(b"\x0e" + rdb_length(2) + rdb_string(ziplist([b"a", -3]))
                     + rdb_string(ziplist([b"b"])))
    r.restore("zl", 0, p)
    assert r.lrange("zl", 0, -1) == [b"a", b"-3", b"b"]
    p = dump_payload(b"\x03" + rdb_length(2) + rdb_string(b"x") + b"\x031.5"
                     + rdb_string(b"y") + b"\xfe")
    r.restore("oldz", 0, p)
    assert r.zrange("oldz", 0, -1, withscores=True) == [(b"x", 1.5), (b"y", float("inf"))]


def test_crafted_quicklist_with_plain_node(r):
    # RDB type 18: a plain node (one element stored as is, what Redis writes for huge
    # elements) between two listpack nodes holding 7-bit, 13-bit, 16-bit and string entries.
    def listpack(entries):
        data = b"".join(e + bytes([len(e)]) for e in entries)
        total = 6 + len(data) + 1
        return struct.pack("<IH", total, len(entries)) + data + b"\xff"

    first = listpack([b"\x05", b"\xdf\x9c", b"\xf1" + struct.pack("<h", -30000)])
    last = listpack([b"\x82ab"])
    body = (b"\x12" + rdb_length(3) + rdb_length(2) + rdb_string(first) + rdb_length(1)
            + rdb_string(b"plain element") + rdb_length(2) + rdb_string(last))
    r.restore("ql", 0, dump_payload(body))
    assert r.lrange("ql", 0, -1) == [b"5", b"-100", b"-30000", b"plain element", b"ab"]


@pytest.mark.parametrize("name", ["dump", "restore"])
def test_command_info_matches_redis(server, oracle, name):
    # name, arity, flags, first key, last key, step, ACL categories
    def info(srv):
        c = srv.client(callbacks=False)
        try:
            return c.execute_command("COMMAND", "INFO", name)[0][:7]
        finally:
            c.close()

    mine, theirs = info(server), info(oracle)
    assert mine[0] == theirs[0] and mine[1] == theirs[1] and mine[3:6] == theirs[3:6]
    assert sorted(mine[2]) == sorted(theirs[2])
    assert sorted(mine[6]) == sorted(theirs[6])


def test_restore_notifies_restore_event(r, server):
    r.set("s", "v")
    payload = r.dump("s")
    r.config_set("notify-keyspace-events", "Kg")
    sub = server.client(decode_responses=False).pubsub()
    try:
        sub.psubscribe("__keyspace@0__:*")
        assert sub.get_message(timeout=5)["type"] == "psubscribe"
        r.restore("n", 0, payload)
        msg = sub.get_message(timeout=5)
        assert (msg["channel"], msg["data"]) == (b"__keyspace@0__:n", b"restore")
    finally:
        sub.close()
        r.config_set("notify-keyspace-events", "")


def test_truncated_stream_payloads_are_refused(r, ref):
    # A real stream payload cut short anywhere (re-framed with a valid footer) is malformed.
    fill_stream_with_groups(ref, "k")
    body = ref.dump("k")[:-10]
    for cut in list(range(1, 40)) + list(range(40, len(body), 97)):
        with pytest.raises(Exception, match="Bad data format"):
            r.restore("t", 0, dump_payload(body[:cut]))
    assert r.exists("t") == 0


@pytest.mark.basalt_only
def test_stream_pending_entry_without_owner_is_refused(r):
    # Type 19: no entries, counters, one group whose PEL holds 1-1 but whose one consumer owns
    # nothing. Redis's shallow check would load it; Basalt needs an owner for every entry.
    # length 0, last ID 1-1, first ID 0-0, max deleted ID 0-0, entries added 1.
    counters = rdb_length(0) + rdb_length(1) * 2 + rdb_length(0) * 4 + rdb_length(1)
    pel = rdb_length(1) + struct.pack(">QQ", 1, 1) + struct.pack("<q", 5) + rdb_length(1)
    consumer = rdb_string(b"c") + struct.pack("<q", 5) + rdb_length(0)
    group = rdb_string(b"g") + rdb_length(1) * 2 + rdb_length(0) + pel + rdb_length(1) + consumer
    owned = rdb_string(b"c") + struct.pack("<q", 5) + rdb_length(1) + struct.pack(">QQ", 1, 1)
    good = bytes([19, 0]) + counters + rdb_length(1)
    r.restore("ok", 0, dump_payload(good + group.replace(consumer, owned)))
    assert r.xpending("ok", "g")["consumers"] == [{"name": b"c", "pending": 1}]
    with pytest.raises(Exception, match="Bad data format"):
        r.restore("bad", 0, dump_payload(good + group))
    assert r.exists("bad") == 0
