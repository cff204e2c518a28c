"""MEMORY and LATENCY: reply shapes and errors as Redis 7.2 gives them, and figures that follow
what the server did; the cluster commands as a Redis without cluster support answers them."""
import time

import pytest
import redis

from helpers import raises, arity

BUSY_LOOP = "local i = 0 while i < 3000000 do i = i + 1 end return i"

MEMORY_STATS_KEYS = [
    "peak.allocated", "total.allocated", "startup.allocated", "replication.backlog",
    "clients.slaves", "clients.normal", "cluster.links", "aof.buffer", "lua.caches",
    "functions.caches", "overhead.total", "keys.count", "keys.bytes-per-key", "dataset.bytes",
    "dataset.percentage", "peak.percentage", "allocator.allocated", "allocator.active",
    "allocator.resident", "allocator-fragmentation.ratio", "allocator-fragmentation.bytes",
    "allocator-rss.ratio", "allocator-rss.bytes", "rss-overhead.ratio", "rss-overhead.bytes",
    "fragmentation", "fragmentation.bytes"]


def pairs(flat):
    return dict(zip(flat[::2], flat[1::2]))


# --------------------------------------------------------------------------
# MEMORY
# --------------------------------------------------------------------------
def test_memory_usage_of_a_string_grows_with_its_value(r):
    assert r.memory_usage("missing") is None
    r.set("small", "v")
    r.set("large", "x" * 20000)
    small, large = r.memory_usage("small"), r.memory_usage("large")
    assert 0 < small < 200
    assert 20000 <= large <= 21000 + small


def test_memory_usage_samples_a_collection(r):
    r.hset("h", mapping={"field:%04d" % i: "value:%04d" % i for i in range(1000)})
    exact = r.memory_usage("h", samples=0)
    sampled = r.memory_usage("h")
    # 1000 fields of ~20 bytes each
    assert 20000 <= exact <= 200000
    assert exact / 2 <= sampled <= exact * 2
    r.rpush("l", *range(100))
    r.zadd("z", {"m%d" % i: i for i in range(100)})
    r.sadd("s", *range(100))
    for key in ("l", "z", "s"):
        assert r.memory_usage(key, samples=0) > 100 * 2, key


def test_memory_usage_errors(r):
    r.set("k", "v")
    raises(r, arity("memory|usage"), "MEMORY", "USAGE")
    raises(r, "ERR syntax error", "MEMORY", "USAGE", "k", "SAMPLES", "-1")
    raises(r, "ERR syntax error", "MEMORY", "USAGE", "k", "FOO")
    raises(r, "ERR syntax error", "MEMORY", "USAGE", "k", "SAMPLES")
    raises(r, "ERR value is not an integer or out of range",
           "MEMORY", "USAGE", "k", "SAMPLES", "x")
    raises(r, "ERR unknown subcommand 'foo'. Try MEMORY HELP.", "MEMORY", "foo")
    raises(r, arity("memory|stats"), "MEMORY", "STATS", "x")
    raises(r, arity("memory"), "MEMORY")


def test_memory_stats_has_redis_keys(rr):
    rr.execute_command("SET", "k", "v")
    stats = pairs(rr.execute_command("MEMORY", "STATS"))
    for key in MEMORY_STATS_KEYS:
        assert key in stats, key
    assert "db.0" in stats
    assert int(stats["keys.count"]) == 1
    assert int(stats["peak.allocated"]) >= int(stats["total.allocated"]) > 0


def test_memory_stats_resp3_is_a_map(r3):
    stats = r3.execute_command("MEMORY", "STATS")
    assert isinstance(stats, dict)
    assert set(MEMORY_STATS_KEYS) <= {k.decode() if isinstance(k, bytes) else k for k in stats}


def test_memory_doctor_purge_malloc_stats_help(rr):
    assert isinstance(rr.execute_command("MEMORY", "DOCTOR"), str)
    assert rr.execute_command("MEMORY", "PURGE") == "OK"
    assert len(rr.execute_command("MEMORY", "MALLOC-STATS")) > 0
    lines = rr.execute_command("MEMORY", "HELP")
    assert lines[0].startswith("MEMORY <subcommand>")
    assert any(line.startswith("USAGE <key> [SAMPLES <count>]") for line in lines)


# --------------------------------------------------------------------------
# LATENCY
# --------------------------------------------------------------------------
def test_latency_events_record_slow_commands(r, rr):
    try:
        r.config_set("latency-monitor-threshold", 1)
        rr.execute_command("LATENCY", "RESET")
        assert rr.execute_command("LATENCY", "LATEST") == []
        r.eval(BUSY_LOOP, 0)
        latest = rr.execute_command("LATENCY", "LATEST")
        assert len(latest) == 1
        event, when, last, worst = latest[0]
        assert event == "command"
        assert abs(when - time.time()) < 5
        assert 1 <= last <= worst
        history = rr.execute_command("LATENCY", "HISTORY", "command")
        assert len(history) == 1 and history[0] == [when, last]
        assert rr.execute_command("LATENCY", "HISTORY", "nosuchevent") == []
        graph = rr.execute_command("LATENCY", "GRAPH", "command")
        assert graph.startswith("command - high %d ms, low %d ms" % (last, last))
        doctor = rr.execute_command("LATENCY", "DOCTOR")
        assert "1. command: 1 latency spikes" in doctor
        assert rr.execute_command("LATENCY", "RESET", "nosuchevent") == 0
        assert rr.execute_command("LATENCY", "RESET", "command") == 1
        assert rr.execute_command("LATENCY", "LATEST") == []
    finally:
        r.config_set("latency-monitor-threshold", 0)


def test_latency_monitor_off_records_nothing(r, rr):
    r.config_set("latency-monitor-threshold", 0)
    rr.execute_command("LATENCY", "RESET")
    r.eval(BUSY_LOOP, 0)
    assert rr.execute_command("LATENCY", "LATEST") == []
    assert rr.execute_command("LATENCY", "DOCTOR").startswith("I'm sorry, Dave")


def test_latency_errors(r):
    raises(r, "ERR No samples available for event 'foo'", "LATENCY", "GRAPH", "foo")
    raises(r, "ERR unknown subcommand 'foo'. Try LATENCY HELP.", "LATENCY", "foo")
    raises(r, arity("latency|history"), "LATENCY", "HISTORY")
    raises(r, arity("latency|latest"), "LATENCY", "LATEST", "x")
    raises(r, arity("latency"), "LATENCY")


def test_latency_histogram_resp2(r, rr):
    r.config_resetstat()
    for _ in range(3):
        r.set("a", "b")
    r.client_id()
    reply = pairs(rr.execute_command("LATENCY", "HISTOGRAM", "set", "client", "nosuchcommand"))
    # a new redis-py connection also sends CLIENT SETINFO
    assert {"set", "client|id"} <= set(reply)
    assert all(name == "set" or name.startswith("client|") for name in reply)
    hist = pairs(reply["set"])
    assert hist["calls"] == 3
    buckets = pairs(hist["histogram_usec"])
    counts = list(buckets.values())
    assert counts == sorted(counts) and counts[-1] == 3  # cumulative
    assert all(b & (b - 1) == 0 or b in (65, 131, 262, 524) or b > 1000 for b in buckets)
    everything = pairs(rr.execute_command("LATENCY", "HISTOGRAM"))
    assert {"set", "client|id", "config|resetstat"} <= set(everything)
    r.config_resetstat()
    assert rr.execute_command("LATENCY", "HISTOGRAM", "set") == []


def test_latency_histogram_resp3(r, r3):
    r.config_resetstat()
    r.set("a", "b")
    reply = r3.execute_command("LATENCY", "HISTOGRAM", "set")
    key = next(iter(reply))
    assert key in ("set", b"set")
    hist = reply[key]
    calls = hist.get("calls", hist.get(b"calls"))
    assert calls == 1
    buckets = hist.get("histogram_usec", hist.get(b"histogram_usec"))
    assert isinstance(buckets, dict) and list(buckets.values()) == [1]


def test_latency_help(rr):
    lines = rr.execute_command("LATENCY", "HELP")
    assert lines[0].startswith("LATENCY <subcommand>")
    assert "HISTOGRAM [COMMAND ...]" in lines


# --------------------------------------------------------------------------
# COMMAND LIST FILTERBY, COMMAND GETKEYSANDFLAGS
# --------------------------------------------------------------------------
def test_command_list_filters(rr):
    everything = set(rr.execute_command("COMMAND", "LIST"))
    assert {"get", "client|list", "config|get"} <= everything
    by_pattern = rr.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN", "client|*")
    assert by_pattern and all(name.startswith("client|") for name in by_pattern)
    assert "client|list" in by_pattern
    assert set(rr.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN", "GE?")) == {"get"}
    hyperloglog = set(rr.execute_command("COMMAND", "LIST", "FILTERBY", "ACLCAT", "hyperloglog"))
    assert {"pfadd", "pfcount", "pfmerge"} <= hyperloglog and "get" not in hyperloglog
    assert rr.execute_command("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuchcat") == []
    assert rr.execute_command("COMMAND", "LIST", "FILTERBY", "MODULE", "nosuchmodule") == []
    raises(rr, "ERR syntax error", "COMMAND", "LIST", "FILTERBY")
    raises(rr, "ERR syntax error", "COMMAND", "LIST", "FILTERBY", "FOO", "x")
    raises(rr, "ERR syntax error", "COMMAND", "LIST", "foo", "bar", "baz")


def test_command_getkeysandflags(rr):
    def flags(*cmd):
        return [[key, sorted(f)] for key, f in
                rr.execute_command("COMMAND", "GETKEYSANDFLAGS", *cmd)]
    assert flags("GET", "k") == [["k", ["RO", "access"]]]
    assert flags("MGET", "a", "b") == [["a", ["RO", "access"]], ["b", ["RO", "access"]]]
    assert flags("SET", "k", "v") == [["k", ["OW", "update"]]]
    assert flags("INCR", "k") == [["k", ["RW", "access", "update"]]]
    assert flags("EXISTS", "k") == [["k", ["RO"]]]
    # Flags as Redis's key specifications state them, one specification per key.
    assert flags("LMOVE", "src", "dst", "LEFT", "RIGHT") == [
        ["src", ["RW", "access", "delete"]], ["dst", ["RW", "insert"]]]
    assert flags("SET", "k", "v", "GET") == [["k", ["RW", "access", "update"]]]
    assert flags("SORT", "k", "STORE", "d") == [["k", ["RO", "access"]], ["d", ["OW", "update"]]]
    assert flags("EVAL", "return 1", "2", "a", "b") == [
        ["a", ["RW", "access", "update"]], ["b", ["RW", "access", "update"]]]
    assert flags("XREAD", "COUNT", "1", "STREAMS", "s1", "s2", "0", "0") == [
        ["s1", ["RO", "access"]], ["s2", ["RO", "access"]]]
    assert flags("OBJECT", "ENCODING", "k") == [["k", ["RO"]]]
    assert flags("DEL", "k") == [["k", ["RM", "delete"]]]
    raises(rr, "ERR The command has no key arguments", "COMMAND", "GETKEYSANDFLAGS",
           "SPUBLISH", "channel", "message")
    raises(rr, arity("command|getkeysandflags"), "COMMAND", "GETKEYSANDFLAGS", "GET")
    raises(rr, "ERR Invalid command specified", "COMMAND", "GETKEYSANDFLAGS", "NOSUCH", "x")
    raises(rr, "ERR The command has no key arguments", "COMMAND", "GETKEYSANDFLAGS", "PING", "x")


def test_command_info_carries_key_specifications(rr):
    def info(name):
        return rr.execute_command("COMMAND", "INFO", name)[0]

    lmove = info("lmove")
    assert lmove[8] == [
        ["flags", ["RW", "access", "delete"],
         "begin_search", ["type", "index", "spec", ["index", 1]],
         "find_keys", ["type", "range", "spec", ["lastkey", 0, "keystep", 1, "limit", 0]]],
        ["flags", ["RW", "insert"],
         "begin_search", ["type", "index", "spec", ["index", 2]],
         "find_keys", ["type", "range", "spec", ["lastkey", 0, "keystep", 1, "limit", 0]]]]
    xread = info("xread")[8]
    assert xread[0][2:] == [
        "begin_search", ["type", "keyword", "spec", ["keyword", "STREAMS", "startfrom", 1]],
        "find_keys", ["type", "range", "spec", ["lastkey", -1, "keystep", 1, "limit", 2]]]
    zunion = info("zunionstore")[8]
    assert zunion[1][-1] == ["type", "keynum", "spec",
                             ["keynumidx", 0, "firstkey", 1, "keystep", 1]]
    assert info("ping")[8] == []
    # A subcommand carries its own specifications, and a subcommand without keys none.
    subs = {sub[0]: sub for sub in info("object")[9]}
    assert subs["object|encoding"][3:6] == [2, 2, 1]
    assert subs["object|encoding"][8][0][:2] == ["flags", ["RO"]]
    assert subs["object|help"][3:6] == [0, 0, 0] and subs["object|help"][8] == []


# --------------------------------------------------------------------------
# Cluster commands on a server without cluster support
# --------------------------------------------------------------------------
def test_cluster_commands_answer_as_a_redis_without_cluster_support(r):
    disabled = "ERR This instance has cluster support disabled"
    for args in (("CLUSTER", "INFO"), ("CLUSTER", "SLOTS"), ("CLUSTER", "KEYSLOT", "k"),
                 ("CLUSTER", "HELP"), ("ASKING",), ("READONLY",), ("READWRITE",)):
        raises(r, disabled, *args)
    raises(r, "ERR unknown subcommand 'NOSUCH'. Try CLUSTER HELP.", "CLUSTER", "NOSUCH")
    raises(r, "ERR wrong number of arguments for 'cluster|keyslot' command",
           "CLUSTER", "KEYSLOT")
    listed = set(r.command_list())
    assert {"cluster", "cluster|info", "asking", "readonly", "readwrite"} <= listed
    # ACL rules may name them, as clients' own user set-ups do.
    assert r.execute_command("ACL", "SETUSER", "clusterer", "+cluster", "+readonly",
                             "-cluster|reset") == "OK"
    assert r.execute_command("ACL", "DELUSER", "clusterer") == 1


def test_command_info_names_one_subcommand_with_a_bar(rr):
    [config_set] = rr.execute_command("COMMAND", "INFO", "config|set")
    assert config_set[:3] == ["config|set", -4, ["admin", "noscript", "loading", "stale"]]
    [object_freq] = rr.execute_command("COMMAND", "INFO", "OBJECT|FREQ")
    assert object_freq[0] == "object|freq" and object_freq[1] == 3
    assert object_freq[8][0][:2] == ["flags", ["RO"]]
    assert rr.execute_command("COMMAND", "INFO", "config|nosuch", "nosuch|get") == [None, None]
