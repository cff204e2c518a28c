"""Keyspace notifications (notify-keyspace-events): the class letters and their canonical form,
the exact messages every command family sends, class filtering, `new` and key-miss events,
`expired` from the active expirer, RESP3 pushes, MULTI/EXEC, Lua scripts, and a replica's
subscribers.

Most tests are differential: the same commands run against the server under test and a real
redis-server (the `oracle` fixture), each with a subscriber on `__key*__:*`, and the two
message lists must be equal, message for message and in order. The commands of one list end
with a PUBLISH on a marker channel the subscriber also listens to, so the collection stops at
a known point instead of waiting for silence. Every test also passes with --target redis,
except the basalt_only one about how Basalt's replicas hear their master's expiry."""
import threading
import time

import pytest
import redis

from helpers import exact, wait_until

DONE = "notifications-test-done"


def collect(srv, commands, classes="AKE", db=0, protocol=2):
    """Runs `commands` (argument lists; errors are part of the script) on a flushed `srv` with
    notify-keyspace-events set to `classes`, and returns what a pattern subscriber on
    __key*__:* received, as (channel, message) pairs in arrival order."""
    c = srv.client(db=db)
    c.flushall()
    c.config_set("notify-keyspace-events", classes)
    sub = srv.client(protocol=protocol).pubsub()
    try:
        sub.psubscribe("__key*__:*")
        sub.subscribe(DONE)
        confirmed = 0
        while confirmed < 2:
            m = sub.get_message(timeout=5)
            assert m is not None, "no subscription confirmation"
            confirmed += m["type"] in ("psubscribe", "subscribe")
        for cmd in commands:
            try:
                c.execute_command(*cmd)
            except redis.ResponseError:
                pass
        c.publish(DONE, "x")
        got = []
        while True:
            m = sub.get_message(timeout=5)
            assert m is not None, "the marker message never came; so far %r" % got
            if m["type"] == "message" and m["channel"] == DONE:
                return got
            if m["type"] == "pmessage":
                got.append((m["channel"], m["data"]))
    finally:
        sub.close()
        c.config_set("notify-keyspace-events", "")
        c.close()


def both(server, oracle, commands, **kw):
    """The messages of `commands` on the server under test and on redis-server."""
    return collect(server, commands, **kw), collect(oracle, commands, **kw)


def events(pairs, db=0):
    """The keyevent messages as (event, key): the order of what happened."""
    prefix = "__keyevent@%d__:" % db
    return [(ch[len(prefix):], msg) for ch, msg in pairs if ch.startswith(prefix)]


def assert_same(server, oracle, commands, **kw):
    mine, redis_got = both(server, oracle, commands, **kw)
    assert mine == redis_got
    assert mine, "the script produced no notification at all: nothing was compared"
    return mine


# --------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------
@pytest.mark.parametrize("given,shown", [
    ("KEA", "AKE"), ("", ""), ("Kl", "lK"), ("E$", "$E"), ("Ag", "A"), ("An", "A"),
    ("g$lshzxetd", "A"), ("xgKEm", "gxKEm"), ("KEn", "nKE"), ("AKEm", "AKEm"), ("lK", "lK"),
])
def test_config_get_shows_the_canonical_letters(r, target, given, shown):
    if target == "basalt" and given == "An":
        # Redis's text drops n beside A while it keeps the class; Basalt shows it, so that the
        # value CONFIG GET shows (and CONFIG REWRITE writes) means what was set.
        shown = "An"
    r.config_set("notify-keyspace-events", given)
    try:
        assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": shown}
    finally:
        r.config_set("notify-keyspace-events", "")


def test_invalid_class_letters_are_refused_and_change_nothing(server, r):
    r.config_set("notify-keyspace-events", "lKE")
    try:
        with pytest.raises(redis.ResponseError, match="Invalid event class character"):
            r.config_set("notify-keyspace-events", "KEq")
        assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": "lKE"}
        sub = server.client().pubsub()
        sub.psubscribe("__key*__:*")
        assert sub.get_message(timeout=5)["type"] == "psubscribe"
        r.set("s", "v")  # not a list event: not sent
        r.lpush("l", "x")
        got = [sub.get_message(timeout=5) for _ in range(2)]
        sub.close()
        assert [(m["channel"], m["data"]) for m in got] == [
            ("__keyspace@0__:l", "lpush"), ("__keyevent@0__:lpush", "l")]
    finally:
        r.config_set("notify-keyspace-events", "")


def test_an_invalid_start_up_value_stops_the_server(start_server):
    with pytest.raises(RuntimeError):
        start_server([("notify-keyspace-events", "KEq")], name="bad")


def test_classes_given_at_start_up_apply(start_server, target):
    srv = start_server([("notify-keyspace-events", "AKE")], name="startup")
    assert srv.client().config_get("notify-keyspace-events") == {"notify-keyspace-events": "AKE"}
    sub = srv.client().pubsub()
    sub.psubscribe("__keyevent@0__:*")
    assert sub.get_message(timeout=5)["type"] == "psubscribe"
    srv.client().set("k", "v")
    m = sub.get_message(timeout=5)
    assert (m["channel"], m["data"]) == ("__keyevent@0__:set", "k")
    sub.close()


# --------------------------------------------------------------------------
# the exact messages, against redis-server
# --------------------------------------------------------------------------
# The command families run with A (every type class), and again with the new-key and key-miss
# classes as well, so that where `new` and `keymiss` fall among the other events is compared.
EVERY_CLASS = pytest.mark.parametrize("classes", ["AKE", "AKEnm"])


def test_set_sends_keyspace_then_keyevent(server, oracle):
    got = assert_same(server, oracle, [["SET", "k", "v"]])
    assert got == [("__keyspace@0__:k", "set"), ("__keyevent@0__:set", "k")]


STRING_SCRIPT = [
    ["SET", "k", "v"], ["SET", "k", "v2", "EX", "100"], ["SET", "k", "v3", "KEEPTTL"],
    ["SET", "k", "x", "NX"], ["SET", "missing", "x", "XX"], ["SETNX", "k", "x"],
    ["SETNX", "n", "v"], ["SETEX", "e", "100", "v"], ["PSETEX", "p", "100000", "v"],
    ["GETSET", "k", "v4"], ["APPEND", "k", "zz"], ["APPEND", "fresh", "a"],
    ["SETRANGE", "k", "1", "XX"], ["SETRANGE", "k", "0", ""], ["SETRANGE", "sr", "2", "ab"],
    ["INCR", "c"], ["INCRBY", "c", "5"], ["DECR", "c"], ["DECRBY", "c", "2"],
    ["INCRBYFLOAT", "f", "1.5"], ["INCR", "k"], ["MSET", "a", "1", "b", "2"],
    ["MSETNX", "a", "1", "z", "2"], ["MSETNX", "y", "1", "z", "2"], ["GETDEL", "a"],
    ["GETDEL", "a"], ["GETEX", "b", "EX", "100"], ["GETEX", "b", "PERSIST"], ["GETEX", "b"],
    ["GETEX", "b", "PXAT", "1"], ["SET", "past", "v", "PXAT", "1"],
]


@EVERY_CLASS
def test_string_commands(server, oracle, classes):
    assert_same(server, oracle, STRING_SCRIPT, classes=classes)


BITMAP_HLL_SCRIPT = [
    ["SETBIT", "bits", "7", "1"], ["SETBIT", "bits", "7", "1"],
    ["BITFIELD", "bf", "SET", "u8", "0", "200"], ["BITFIELD", "bf", "GET", "u8", "0"],
    ["BITOP", "OR", "dest", "bits", "bf"], ["BITOP", "AND", "dest", "nokey1", "nokey2"],
    ["BITOP", "AND", "dest", "nokey1", "nokey2"],
    ["PFADD", "h", "a", "b", "c"], ["PFADD", "h", "a"], ["PFADD", "h2", "x"],
    ["PFMERGE", "h3", "h", "h2"], ["PFCOUNT", "h"],
]


@EVERY_CLASS
def test_bitmap_and_hyperloglog_commands(server, oracle, classes):
    assert_same(server, oracle, BITMAP_HLL_SCRIPT, classes=classes)


GENERIC_SCRIPT = [
    ["SET", "a", "1"], ["SET", "b", "2"], ["RPUSH", "l", "x", "y"],
    ["DEL", "a", "missing"], ["UNLINK", "b"], ["SET", "t", "v"],
    ["EXPIRE", "t", "100"], ["PEXPIRE", "t", "100000", "NX"], ["PERSIST", "t"], ["PERSIST", "t"],
    ["EXPIREAT", "t", "1"], ["EXPIRE", "missing", "10"],
    ["SET", "src", "v"], ["RENAME", "src", "dst"], ["RENAME", "dst", "dst"],
    ["SET", "other", "o"], ["RENAME", "dst", "other"], ["RENAMENX", "other", "l"],
    ["RENAMENX", "other", "fresh"], ["COPY", "fresh", "copy"], ["COPY", "fresh", "copy"],
    ["COPY", "fresh", "copy", "REPLACE"], ["COPY", "l", "l2", "DB", "3"],
    ["MOVE", "copy", "5"], ["MOVE", "missing", "5"], ["SET", "m", "1"],
]


@EVERY_CLASS
def test_generic_commands(server, oracle, classes):
    got = assert_same(server, oracle, GENERIC_SCRIPT, classes=classes)
    assert ("__keyevent@3__:copy_to", "l2") in got
    assert ("__keyevent@5__:move_to", "copy") in got


LIST_SCRIPT = [
    ["RPUSH", "l", "a", "b", "c"], ["LPUSH", "l", "z"], ["LPUSHX", "nol", "a"],
    ["RPUSHX", "l", "d"], ["LINSERT", "l", "BEFORE", "b", "bb"],
    ["LINSERT", "l", "BEFORE", "nope", "x"], ["LSET", "l", "0", "zz"], ["LREM", "l", "0", "bb"],
    ["LREM", "l", "0", "nope"], ["LTRIM", "l", "0", "2"], ["LPOP", "l"], ["RPOP", "l", "1"],
    ["LMOVE", "l", "l2", "LEFT", "RIGHT"], ["RPOPLPUSH", "l2", "l3"], ["RPUSH", "m", "1", "2"],
    ["LMPOP", "2", "nol", "m", "LEFT", "COUNT", "5"], ["RPUSH", "b", "1", "2"],
    ["BLPOP", "b", "0"], ["BRPOP", "b", "0"], ["RPUSH", "b", "1"],
    ["BLMOVE", "b", "b2", "RIGHT", "LEFT", "0"], ["BLMPOP", "0", "1", "b2", "RIGHT"],
    ["RPUSH", "t", "1", "2"], ["LTRIM", "t", "5", "10"], ["RPUSH", "r", "x"],
    ["LREM", "r", "1", "x"], ["RPUSH", "s", "3", "1", "2"], ["SORT", "s", "STORE", "sorted"],
    ["SORT", "s", "DESC", "STORE", "sorted"], ["SET", "str", "x"],
    ["SORT", "s", "STORE", "str"], ["SORT", "s", "STORE", "s"],
    ["SORT", "nokey", "STORE", "sorted"],
]


@EVERY_CLASS
def test_list_commands(server, oracle, classes):
    assert_same(server, oracle, LIST_SCRIPT, classes=classes)


HASH_SCRIPT = [
    ["HSET", "h", "a", "1", "b", "2"], ["HSET", "h", "a", "1"], ["HSETNX", "h", "a", "x"],
    ["HSETNX", "h", "c", "3"], ["HMSET", "h", "d", "4"], ["HINCRBY", "h", "n", "5"],
    ["HINCRBYFLOAT", "h", "f", "1.5"], ["HDEL", "h", "nope"], ["HDEL", "h", "a", "b"],
    ["HDEL", "h", "c", "d", "n", "f"], ["HDEL", "h", "x"], ["HGET", "h", "a"],
]


@EVERY_CLASS
def test_hash_commands(server, oracle, classes):
    assert_same(server, oracle, HASH_SCRIPT, classes=classes)


SET_SCRIPT = [
    ["SADD", "s", "a", "b", "c"], ["SADD", "s", "a"], ["SREM", "s", "nope"], ["SREM", "s", "a"],
    ["SPOP", "s"], ["SADD", "s2", "x", "y"], ["SPOP", "s2", "5"], ["SADD", "p", "1", "2", "3"],
    ["SPOP", "p", "1"], ["SADD", "m1", "a", "b"], ["SMOVE", "m1", "m2", "a"],
    ["SMOVE", "m1", "m2", "b"], ["SADD", "m3", "a"], ["SMOVE", "m2", "m3", "a"],
    ["SMOVE", "m2", "m2", "b"], ["SADD", "x", "1", "2"], ["SADD", "y", "2", "3"],
    ["SINTERSTORE", "i", "x", "y"], ["SUNIONSTORE", "u", "x", "y"], ["SDIFFSTORE", "d", "x", "y"],
    ["SINTERSTORE", "i", "x", "nokey"], ["SINTERSTORE", "i", "x", "nokey"],
]


@EVERY_CLASS
def test_set_commands(server, oracle, classes):
    assert_same(server, oracle, SET_SCRIPT, classes=classes)


ZSET_SCRIPT = [
    ["ZADD", "z", "1", "a", "2", "b", "3", "c"], ["ZADD", "z", "1", "a"],
    ["ZADD", "z", "INCR", "5", "a"], ["ZINCRBY", "z", "1", "b"], ["ZINCRBY", "z", "0", "b"],
    ["ZADD", "z", "XX", "1", "nope"], ["ZADD", "z", "NX", "9", "a"], ["ZREM", "z", "nope"],
    ["ZREM", "z", "c"], ["ZADD", "z", "4", "d", "5", "e", "6", "f", "7", "g"],
    ["ZREMRANGEBYSCORE", "z", "4", "4"], ["ZREMRANGEBYRANK", "z", "0", "0"],
    ["ZREMRANGEBYLEX", "z", "[x", "[y"], ["ZPOPMIN", "z"], ["ZPOPMAX", "z", "1"],
    ["ZMPOP", "1", "z", "MIN", "COUNT", "10"], ["ZADD", "q", "1", "a", "2", "b"],
    ["BZPOPMIN", "q", "0"], ["BZPOPMAX", "q", "0"], ["ZADD", "q", "1", "a"],
    ["BZMPOP", "0", "1", "q", "MAX"], ["ZADD", "x", "1", "a", "2", "b"], ["ZADD", "y", "3", "b"],
    ["ZUNIONSTORE", "u", "2", "x", "y"], ["ZINTERSTORE", "i", "2", "x", "y"],
    ["ZDIFFSTORE", "d", "2", "x", "y"], ["ZINTERSTORE", "i", "2", "x", "nokey"],
    ["ZRANGESTORE", "r", "x", "0", "-1"], ["ZRANGESTORE", "r", "nokey", "0", "-1"],
    ["ZREMRANGEBYSCORE", "x", "-inf", "+inf"],
]


@EVERY_CLASS
def test_sorted_set_commands(server, oracle, classes):
    assert_same(server, oracle, ZSET_SCRIPT, classes=classes)


GEO_SCRIPT = [
    ["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"],
    ["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
    ["GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km"],
    ["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gr"],
    ["GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
]


@EVERY_CLASS
def test_geo_commands(server, oracle, classes):
    assert_same(server, oracle, GEO_SCRIPT, classes=classes)


# --------------------------------------------------------------------------
# classes: filtering, new, key misses
# --------------------------------------------------------------------------
MIXED_SCRIPT = [
    ["SET", "s", "v"], ["RPUSH", "l", "a"], ["LPOP", "l"], ["HSET", "h", "f", "v"],
    ["SADD", "st", "m"], ["ZADD", "z", "1", "m"], ["EXPIRE", "s", "100"], ["DEL", "s", "h"],
    ["GET", "nokey"], ["SET", "s", "again"],
]


@pytest.mark.parametrize("classes", ["Kl", "E$", "Kg", "KEsz", "Eh", "KEn", "gK$", "KEx", "AKE"])
def test_only_the_enabled_classes_and_channels_are_sent(server, oracle, classes):
    mine, redis_got = both(server, oracle, MIXED_SCRIPT, classes=classes)
    assert mine == redis_got


def test_without_K_or_E_nothing_is_sent(server, oracle):
    assert both(server, oracle, MIXED_SCRIPT, classes="A") == ([], [])


def test_new_events_come_before_the_command_event(server, oracle):
    got = assert_same(server, oracle, [
        ["SET", "a", "1"], ["SET", "a", "2"], ["RPUSH", "l", "x"], ["RPUSH", "l", "y"],
        ["HSET", "h", "f", "v"], ["SADD", "s", "m"], ["ZADD", "z", "1", "m"],
        ["SET", "b", "1"], ["RENAME", "a", "b"], ["COPY", "l", "l2"], ["INCR", "c"],
    ], classes="KEA$n")
    assert events(got)[:3] == [("new", "a"), ("set", "a"), ("set", "a")]


def test_key_miss_events(server, oracle):
    got = assert_same(server, oracle, [
        ["GET", "nokey"], ["SET", "k", "v"], ["GET", "k"], ["MGET", "k", "no1", "no2"],
        ["HGET", "noh", "f"], ["LRANGE", "nol", "0", "-1"], ["LINDEX", "nol", "0"],
        ["LLEN", "nol"], ["HMGET", "noh", "a"], ["RPUSH", "l", "x"], ["MGET", "l", "no3"],
        ["STRLEN", "nos"], ["GETRANGE", "nos", "0", "1"], ["GETDEL", "nos"], ["GETEX", "nos"],
        ["GETSET", "gs", "v"], ["EXISTS", "k", "noe"], ["TYPE", "not"], ["TTL", "nottl"],
        ["PTTL", "k"], ["SADD", "s", "a"], ["SINTERSTORE", "d", "s", "nos1"],
        ["SUNION", "s", "nos2"], ["ZADD", "z", "1", "a"], ["ZUNIONSTORE", "d2", "2", "z", "noz"],
        ["ZRANGE", "noz2", "0", "-1"], ["ZRANGESTORE", "d3", "noz3", "0", "-1"],
        ["SORT", "nosort"], ["BITOP", "OR", "d4", "nob1", "k"], ["PFADD", "h", "a"],
        ["PFMERGE", "h2", "h", "noh2"], ["PFCOUNT", "h", "noh3"],
        ["HLEN", "nh1"], ["HSTRLEN", "nh2", "f"], ["HEXISTS", "nh3", "f"], ["HGETALL", "nh4"],
        ["HKEYS", "nh5"], ["HVALS", "nh6"], ["HRANDFIELD", "nh7"], ["HRANDFIELD", "nh8", "2"],
        ["SCARD", "ns1"], ["SISMEMBER", "ns2", "a"], ["SMISMEMBER", "ns3", "a"],
        ["SMEMBERS", "ns4"], ["SRANDMEMBER", "ns5"], ["ZCARD", "nz1"], ["ZSCORE", "nz2", "a"],
        ["ZMSCORE", "nz3", "a"], ["ZRANK", "nz4", "a"], ["ZREVRANK", "nz5", "a"],
        ["ZCOUNT", "nz6", "0", "1"], ["ZLEXCOUNT", "nz7", "-", "+"], ["ZRANDMEMBER", "nz8"],
        ["GETBIT", "nb2", "0"], ["BITCOUNT", "nb3"], ["BITPOS", "nb4", "1"],
        ["HSCAN", "nh9", "0"], ["SSCAN", "ns6", "0"], ["ZSCAN", "nz9", "0"],
        ["GEOPOS", "ng1", "a"], ["GEODIST", "ng2", "a", "b"], ["GEOHASH", "ng3", "a"],
        ["GEOSEARCH", "ng4", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
        ["HGET", "h", "f"], ["SCARD", "s"], ["ZCARD", "z"],
    ], classes="KEm")
    assert events(got)[0] == ("keymiss", "nokey")


def test_other_databases_name_their_number(server, oracle):
    got = assert_same(server, oracle, [["SET", "k", "v"], ["LPUSH", "l", "x"]], db=7)
    assert got[0] == ("__keyspace@7__:k", "set")


# --------------------------------------------------------------------------
# expiry, transactions, scripts, RESP3
# --------------------------------------------------------------------------
def test_the_active_expirer_sends_expired_for_a_key_nobody_reads(r, server):
    r.config_set("notify-keyspace-events", "KEx")
    sub = server.client().pubsub()
    try:
        sub.psubscribe("__key*__:*")
        assert sub.get_message(timeout=5)["type"] == "psubscribe"
        r.set("short", "v", px=100)
        got = []
        deadline = time.monotonic() + 10
        while len(got) < 2 and time.monotonic() < deadline:
            m = sub.get_message(timeout=1)
            if m is not None and m["type"] == "pmessage":
                got.append((m["channel"], m["data"]))
        assert got == [("__keyspace@0__:short", "expired"), ("__keyevent@0__:expired", "short")]
        assert r.exists("short") == 0
    finally:
        sub.close()
        r.config_set("notify-keyspace-events", "")


def test_multi_exec_sends_each_commands_events_in_order(server, oracle):
    def script(srv):
        c = srv.client()
        p = c.pipeline(transaction=True)
        p.set("a", "1").rpush("l", "x", "y").incr("a").delete("l").hset("h", "f", "v")
        p.execute()
        c.close()

    results = []
    for srv in (server, oracle):
        collect_with(srv, script, results)
    assert results[0] == results[1]
    assert events(results[0]) == [("set", "a"), ("rpush", "l"), ("incrby", "a"), ("del", "l"),
                                  ("hset", "h")]


def collect_with(srv, action, results, classes="AKE"):
    """Like collect(), but runs `action(srv)` instead of a command list."""
    c = srv.client()
    c.flushall()
    c.config_set("notify-keyspace-events", classes)
    sub = srv.client().pubsub()
    try:
        sub.psubscribe("__key*__:*")
        sub.subscribe(DONE)
        confirmed = 0
        while confirmed < 2:
            m = sub.get_message(timeout=5)
            assert m is not None
            confirmed += m["type"] in ("psubscribe", "subscribe")
        action(srv)
        c.publish(DONE, "x")
        got = []
        while True:
            m = sub.get_message(timeout=5)
            assert m is not None, got
            if m["type"] == "message":
                break
            if m["type"] == "pmessage":
                got.append((m["channel"], m["data"]))
        results.append(got)
    finally:
        sub.close()
        c.config_set("notify-keyspace-events", "")
        c.close()


def test_a_blocked_pop_served_by_a_push_sends_its_events_after_the_push(server, oracle):
    def script(srv):
        blocked = srv.client()
        result = []
        t = threading.Thread(target=lambda: result.append(blocked.blpop(["q"], timeout=10)))
        t.start()
        c = srv.client()
        assert wait_until(lambda: c.info("clients")["blocked_clients"] == 1, timeout=5)
        c.rpush("q", "x")
        t.join(10)
        assert result == [("q", "x")]
        blocked.close()
        c.close()

    results = []
    for srv in (server, oracle):
        collect_with(srv, script, results)
    assert results[0] == results[1]
    assert events(results[0]) == [("rpush", "q"), ("lpop", "q"), ("del", "q")]


def test_a_lua_script_sends_the_events_of_its_commands(server, oracle):
    got = assert_same(server, oracle, [[
        "EVAL", "redis.call('SET', KEYS[1], 'v'); redis.call('LPUSH', KEYS[2], 'a', 'b'); "
        "redis.call('LPOP', KEYS[2]); redis.call('DEL', KEYS[1]); return 1", "2", "k", "l"]])
    assert events(got) == [("set", "k"), ("lpush", "l"), ("lpop", "l"), ("del", "k")]


def test_resp3_subscribers_get_push_messages(server, oracle):
    got = assert_same(server, oracle, [["SET", "k", "v"], ["HSET", "h", "f", "v"]], protocol=3)
    assert events(got) == [("set", "k"), ("hset", "h")]


# --------------------------------------------------------------------------
# replicas
# --------------------------------------------------------------------------
def test_a_replicas_subscribers_get_the_masters_events(start_server, target):
    extra = [("repl-diskless-sync-delay", "0")] if target == "redis" else []
    master = start_server(extra, name="master")
    replica = start_server([("replicaof", "127.0.0.1 %d" % master.port)] + extra, name="replica")
    rc = replica.client()
    assert wait_until(lambda: rc.info("replication").get("master_link_status") == "up",
                      timeout=30, interval=0.05)
    # Redis's replica sends the events of the commands it replays under its own setting;
    # Basalt's delivers the master's. Both are set alike here.
    for srv in (master, replica):
        srv.client().config_set("notify-keyspace-events", "KEA")
    sub = rc.pubsub()
    sub.psubscribe("__key*__:*")
    assert sub.get_message(timeout=5)["type"] == "psubscribe"
    m = master.client()
    m.set("k", "v")
    m.rpush("l", "a", "b")
    m.lpop("l")
    m.hset("h", "f", "v")
    m.delete("k")
    expected = [("set", "k"), ("rpush", "l"), ("lpop", "l"), ("hset", "h"), ("del", "k")]
    got = []
    deadline = time.monotonic() + 15
    while len(got) < 2 * len(expected) and time.monotonic() < deadline:
        msg = sub.get_message(timeout=1)
        if msg is not None and msg["type"] == "pmessage":
            got.append((msg["channel"], msg["data"]))
    sub.close()
    assert events(got) == expected
    assert got[0] == ("__keyspace@0__:k", "set")


@pytest.mark.basalt_only
def test_a_replica_hears_its_masters_active_expiry_as_expired(start_server):
    """Basalt's replicas deliver the master's events, so the master's expirer is heard as
    `expired` on the replica too (a Redis replica replays the master's DEL and sends `del`)."""
    master = start_server(name="master")
    replica = start_server([("replicaof", "127.0.0.1 %d" % master.port)], name="replica")
    rc = replica.client()
    assert wait_until(lambda: rc.info("replication").get("master_link_status") == "up",
                      timeout=30, interval=0.05)
    m = master.client()
    m.config_set("notify-keyspace-events", "Ex")
    sub = rc.pubsub()
    sub.psubscribe("__key*__:*")
    assert sub.get_message(timeout=5)["type"] == "psubscribe"
    m.set("short", "v", px=100)
    msg = None
    deadline = time.monotonic() + 10
    while msg is None and time.monotonic() < deadline:
        msg = sub.get_message(timeout=1)
    sub.close()
    assert msg is not None and (msg["channel"], msg["data"]) == ("__keyevent@0__:expired", "short")
    assert rc.exists("short") == 0
