"""INFO as Redis 7.2 prints it: sections and their order, every field of Redis's sections,
multi-section calls, errorstats / commandstats / latencystats counts, CONFIG RESETSTAT.

Field names are compared with the oracle, a real redis-server 7.0.15, corrected by the list of
what Redis 7.2 added (REDIS_72_ADDED below)."""
import threading
import time

import pytest
import redis

from helpers import parse_info, parse_kv, raises, arity, wait_until

REDIS_SECTIONS = ["server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                  "modules", "commandstats", "errorstats", "latencystats", "cluster", "keyspace"]
DEFAULT_SECTIONS = ["server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                    "modules", "errorstats", "cluster", "keyspace"]

# What Redis 7.2's genRedisInfoString prints that 7.0.15 does not, by section: (field, the field
# it follows). 7.2 removed no field of these sections.
REDIS_72_ADDED = {
    "server": [("listener0", "io_threads_active")],
    "clients": [("total_blocking_keys", "clients_in_timeout_table"),
                ("total_blocking_keys_on_nokey", "total_blocking_keys")],
    "stats": [("eventloop_cycles", "reply_buffer_expands"),
              ("eventloop_duration_sum", "eventloop_cycles"),
              ("eventloop_duration_cmd_sum", "eventloop_duration_sum"),
              ("instantaneous_eventloop_cycles_per_sec", "eventloop_duration_cmd_sum"),
              ("instantaneous_eventloop_duration_usec", "instantaneous_eventloop_cycles_per_sec"),
              ("acl_access_denied_auth", "instantaneous_eventloop_duration_usec"),
              ("acl_access_denied_cmd", "acl_access_denied_auth"),
              ("acl_access_denied_key", "acl_access_denied_cmd"),
              ("acl_access_denied_channel", "acl_access_denied_key")],
}

# Basalt's own fields in Redis's sections (its own sections, such as rocksdb, are not compared).
BASALT_FIELDS = {
    "server": {"basalt_version"},
    "memory": {"block_cache_usage", "block_cache_capacity", "memtables_size"},
    "persistence": {"durability", "wal_syncs", "storage_write_status", "storage_last_error",
                    "storage_errors", "storage_recoveries", "rdb_last_save_keys",
                    "rdb_syncs", "backups", "backup_last_time",
                    "backup_last_status"},
    "stats": {"grouped_write_commits", "grouped_write_commands", "delegated_write_commands",
              "moved_connections", "offloaded_reads", "client_query_buffer_limit_disconnections",
              "reply_size_limit_disconnections"},
    "replication": {"repl_checkpoints_created"},
}


def section_names(text):
    return [line[2:].strip().lower() for line in text.split("\r\n") if line.startswith("# ")]


def field_names(text):
    """INFO text -> {section: [field names in order]}."""
    out = {}
    cur = None
    for line in text.split("\r\n"):
        if line.startswith("# "):
            cur = out.setdefault(line[2:].strip().lower(), [])
        elif line and cur is not None:
            cur.append(line.partition(":")[0])
    return out


def connected(*clients):
    """Makes each client connect now: a new redis-py connection sends CLIENT SETINFO, which
    Redis 7.0 answers with an error that would count in the statistics under test."""
    for c in clients:
        c.ping()


def info(rr, *sections):
    return rr.execute_command("INFO", *sections)


def stat_line(rr, section, key):
    """The parsed value of one commandstats/errorstats/latencystats line, or None."""
    value = parse_info(info(rr, section)).get(section, {}).get(key)
    return parse_kv(value) if value is not None else None


def with_72_fields(section, fields):
    fields = list(fields)
    for name, after in REDIS_72_ADDED.get(section, []):
        fields.insert(fields.index(after) + 1, name)
    return fields


# --------------------------------------------------------------------------
# sections
# --------------------------------------------------------------------------
def test_everything_prints_redis_sections_in_redis_order(rr):
    names = section_names(info(rr, "everything"))
    assert [n for n in names if n in REDIS_SECTIONS] == REDIS_SECTIONS


def test_all_equals_everything_and_default_omits_the_statistics(rr):
    assert [n for n in section_names(info(rr, "all")) if n in REDIS_SECTIONS] == REDIS_SECTIONS
    for text in (info(rr), info(rr, "default")):
        assert [n for n in section_names(text) if n in REDIS_SECTIONS] == DEFAULT_SECTIONS
        assert "commandstats" not in section_names(text)
        assert "latencystats" not in section_names(text)


def test_several_sections_in_one_call_keep_redis_order(rr):
    assert section_names(info(rr, "clients", "server")) == ["server", "clients"]
    assert section_names(info(rr, "KEYSPACE", "cpu", "Server")) == ["server", "cpu", "keyspace"]
    # a section named twice is printed once
    assert section_names(info(rr, "cpu", "cpu")) == ["cpu"]
    # "default" plus a statistics section
    names = section_names(info(rr, "default", "commandstats"))
    assert [n for n in names if n in REDIS_SECTIONS] == \
        DEFAULT_SECTIONS[:8] + ["commandstats"] + DEFAULT_SECTIONS[8:]


def test_unknown_section_is_empty(rr):
    assert info(rr, "nosuchsection") == ""
    assert section_names(info(rr, "nosuchsection", "cpu")) == ["cpu"]


def test_sections_agree_with_the_oracle(rr, oracle):
    o = oracle.client(callbacks=False)
    try:
        assert [n for n in section_names(info(rr, "everything")) if n in REDIS_SECTIONS] == \
            [n for n in section_names(info(o, "everything")) if n in REDIS_SECTIONS]
    finally:
        o.close()


@pytest.mark.basalt_only
def test_field_names_per_section_are_redis_72s(rr, oracle):
    # The oracle is Redis 7.0.15: its field names plus what 7.2 added, in Redis's order; Basalt
    # may add only the fields it lists as its own.
    o = oracle.client(callbacks=False)
    try:
        theirs = field_names(info(o, "everything"))
    finally:
        o.close()
    ours = field_names(info(rr, "everything"))
    for section in ("server", "clients", "memory", "persistence", "stats", "replication", "cpu",
                    "cluster"):
        expected = with_72_fields(section, theirs[section])
        extras = BASALT_FIELDS.get(section, set())
        assert [f for f in ours[section] if f not in extras] == expected, section
        assert extras <= set(ours[section]), section


def test_fields_tools_read_are_present(r):
    # What redis_exporter and redis-py's own test suite read.
    everything = r.info("everything")
    for field in ("redis_version", "redis_mode", "arch_bits", "os", "process_id", "run_id",
                  "tcp_port", "uptime_in_seconds", "connected_clients", "blocked_clients",
                  "maxclients", "used_memory", "used_memory_rss", "used_memory_peak",
                  "maxmemory", "maxmemory_policy", "mem_fragmentation_ratio", "loading",
                  "rdb_changes_since_last_save", "rdb_last_save_time", "rdb_last_bgsave_status",
                  "aof_enabled", "total_connections_received", "total_commands_processed",
                  "instantaneous_ops_per_sec", "total_net_input_bytes", "rejected_connections",
                  "expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses",
                  "pubsub_channels", "total_error_replies", "role", "connected_slaves",
                  "master_repl_offset", "used_cpu_sys", "used_cpu_user", "cluster_enabled"):
        assert field in everything, field
    assert everything["cluster_enabled"] == 0
    assert everything["aof_enabled"] == 0
    assert everything["arch_bits"] == 64


def test_instantaneous_ops_follow_the_load(r):
    r.info("stats")
    deadline = time.monotonic() + 0.5
    sent = 0
    while time.monotonic() < deadline:
        r.ping()
        sent += 1
    stats = r.info("stats")
    # Redis averages its last 16 samples of 100 ms, Basalt measures since the previous INFO
    assert stats["instantaneous_ops_per_sec"] > 0
    assert stats["instantaneous_input_kbps"] > 0 and stats["instantaneous_output_kbps"] > 0


def test_memory_figures_are_consistent(r):
    mem = r.info("memory")
    assert mem["used_memory"] > 0 and mem["used_memory_rss"] > 0
    assert mem["used_memory_peak"] >= mem["used_memory"]
    # Redis samples the RSS periodically, so its ratio may lag the figures it prints
    assert mem["mem_fragmentation_ratio"] == pytest.approx(
        mem["used_memory_rss"] / mem["used_memory"], rel=0.1)
    assert mem["total_system_memory"] > mem["used_memory_rss"]


# --------------------------------------------------------------------------
# errorstats, commandstats
# --------------------------------------------------------------------------
def test_errorstats_and_failed_and_rejected_calls(r, rr):
    connected(rr)
    r.set("str", "v")
    assert r.config_resetstat() is True
    assert info(rr, "errorstats") == "# Errorstats\r\n"
    with pytest.raises(redis.ResponseError):
        r.lpush("str", "x")  # ran and failed: WRONGTYPE
    raises(r, arity("set"), "SET", "k")  # refused before running
    with pytest.raises(redis.ResponseError):
        r.execute_command("NOSUCHCOMMAND")  # refused, no command to count
    assert stat_line(rr, "errorstats", "errorstat_WRONGTYPE") == {"count": "1"}
    assert stat_line(rr, "errorstats", "errorstat_ERR") == {"count": "2"}
    assert r.info("stats")["total_error_replies"] == 3
    lpush = stat_line(rr, "commandstats", "cmdstat_lpush")
    assert (lpush["calls"], lpush["rejected_calls"], lpush["failed_calls"]) == ("1", "0", "1")
    set_ = stat_line(rr, "commandstats", "cmdstat_set")
    assert (set_["calls"], set_["rejected_calls"], set_["failed_calls"]) == ("0", "1", "0")
    # a good call after a rejected one is not counted as failed
    r.set("k", "v")
    set_ = stat_line(rr, "commandstats", "cmdstat_set")
    assert (set_["calls"], set_["rejected_calls"], set_["failed_calls"]) == ("1", "1", "0")


def test_errors_inside_exec_count_for_the_command_that_failed(r, rr):
    connected(rr)
    r.set("str", "v")
    r.config_resetstat()
    p = r.pipeline(transaction=True)
    p.set("a", "b")
    p.lpush("str", "x")
    with pytest.raises(redis.ResponseError):
        p.execute()
    assert stat_line(rr, "commandstats", "cmdstat_lpush")["failed_calls"] == "1"
    assert stat_line(rr, "commandstats", "cmdstat_set")["failed_calls"] == "0"
    assert stat_line(rr, "commandstats", "cmdstat_exec")["failed_calls"] == "0"
    raises(r, "ERR EXEC without MULTI", "EXEC")
    exec_ = stat_line(rr, "commandstats", "cmdstat_exec")
    assert (exec_["calls"], exec_["failed_calls"]) == ("2", "1")
    assert r.info("stats")["total_error_replies"] == 2


def test_a_rejected_command_in_multi_aborts_exec_and_counts(server, r, rr):
    c = server.client()
    connected(rr, c)
    r.config_resetstat()
    try:
        c.execute_command("MULTI")
        raises(c, arity("set"), "SET")
        with pytest.raises(redis.ResponseError, match="^EXECABORT"):
            c.execute_command("EXEC")
    finally:
        c.close()
    assert stat_line(rr, "errorstats", "errorstat_ERR") == {"count": "1"}
    assert stat_line(rr, "errorstats", "errorstat_EXECABORT") == {"count": "1"}
    set_ = stat_line(rr, "commandstats", "cmdstat_set")
    assert (set_["calls"], set_["rejected_calls"]) == ("0", "1")
    assert stat_line(rr, "commandstats", "cmdstat_exec")["failed_calls"] == "1"


def test_acl_denial_is_a_rejected_call(server, r, rr):
    r.execute_command("ACL", "SETUSER", "infouser", "on", ">pw", "~*", "+get", "+info")
    c = server.client()
    try:
        c.execute_command("AUTH", "infouser", "pw")
        r.config_resetstat()
        with pytest.raises(redis.ResponseError, match="^NOPERM"):
            c.set("a", "b")
    finally:
        c.close()
        r.execute_command("ACL", "DELUSER", "infouser")
    assert stat_line(rr, "errorstats", "errorstat_NOPERM") == {"count": "1"}
    set_ = stat_line(rr, "commandstats", "cmdstat_set")
    assert (set_["calls"], set_["rejected_calls"], set_["failed_calls"]) == ("0", "1", "0")


def test_subcommands_have_their_own_stats(r, rr):
    r.config_resetstat()
    r.client_id()
    r.client_id()
    line = stat_line(rr, "commandstats", "cmdstat_client|id")
    assert line["calls"] == "2"
    assert float(line["usec_per_call"]) >= 0
    assert stat_line(rr, "commandstats", "cmdstat_client") is None


# --------------------------------------------------------------------------
# latencystats
# --------------------------------------------------------------------------
def test_latencystats_percentiles(r, rr):
    r.config_resetstat()
    assert stat_line(rr, "latencystats", "latency_percentiles_usec_set") is None
    r.set("a", "b")
    r.get("a")
    line = stat_line(rr, "latencystats", "latency_percentiles_usec_set")
    assert list(line) == ["p50", "p99", "p99.9"]
    assert all(float(v) > 0 for v in line.values())
    assert stat_line(rr, "latencystats", "latency_percentiles_usec_get") is not None
    r.client_id()
    assert stat_line(rr, "latencystats", "latency_percentiles_usec_client|id") is not None
    try:
        r.config_set("latency-tracking-info-percentiles", "0 50 100")
        assert list(stat_line(rr, "latencystats", "latency_percentiles_usec_set")) == \
            ["p0", "p50", "p100"]
        with pytest.raises(redis.ResponseError, match="^ERR CONFIG SET failed"):
            r.config_set("latency-tracking-info-percentiles", "10 50 101")
        with pytest.raises(redis.ResponseError, match="^ERR CONFIG SET failed"):
            r.config_set("latency-tracking-info-percentiles", "10 a")
        assert list(stat_line(rr, "latencystats", "latency_percentiles_usec_set")) == \
            ["p0", "p50", "p100"]
    finally:
        r.config_set("latency-tracking-info-percentiles", "50 99 99.9")
    r.config_resetstat()
    assert stat_line(rr, "latencystats", "latency_percentiles_usec_set") is None


def test_latency_tracking_can_be_turned_off(r, rr):
    try:
        r.config_resetstat()
        r.config_set("latency-tracking", "no")
        r.set("a", "b")
        assert stat_line(rr, "latencystats", "latency_percentiles_usec_set") is None
        r.config_set("latency-tracking", "yes")
        r.set("a", "b")
        assert stat_line(rr, "latencystats", "latency_percentiles_usec_set") is not None
    finally:
        r.config_set("latency-tracking", "yes")


def test_latencystats_measure_the_command(r, rr):
    loop = "local i = 0 while i < 3000000 do i = i + 1 end return i"
    r.config_resetstat()
    began = time.monotonic()
    r.eval(loop, 0)
    waited_us = (time.monotonic() - began) * 1e6
    p50 = float(stat_line(rr, "latencystats", "latency_percentiles_usec_eval")["p50"])
    # the histogram's bucket is at most 1% wide
    assert waited_us / 2 <= p50 <= waited_us * 1.01


# --------------------------------------------------------------------------
# CONFIG RESETSTAT
# --------------------------------------------------------------------------
def test_resetstat_resets_statistics_but_not_the_slowlog(r, rr):
    connected(rr)
    try:
        r.config_set("slowlog-log-slower-than", 0)
        r.set("a", "b")
        with pytest.raises(redis.ResponseError):
            r.lpush("a", "x")
        assert r.slowlog_len() > 0
        assert r.config_resetstat() is True
        assert r.slowlog_len() > 0
        assert info(rr, "errorstats") == "# Errorstats\r\n"
        assert r.info("stats")["total_error_replies"] == 0
        assert stat_line(rr, "commandstats", "cmdstat_lpush") is None
        assert stat_line(rr, "latencystats", "latency_percentiles_usec_lpush") is None
    finally:
        r.config_set("slowlog-log-slower-than", 10000)


def test_a_script_passing_on_a_commands_error_counts_it_once(r, rr):
    # The command's error is counted where it happened; the EVAL that passes it on fails
    # without counting it again, while the script's own errors count.
    connected(rr)
    r.set("str", "v")
    r.config_resetstat()
    with pytest.raises(redis.ResponseError):
        r.eval("return redis.call('incr', KEYS[1])", 1, "str")
    with pytest.raises(redis.ResponseError):
        r.eval("return redis.pcall('incr', KEYS[1])", 1, "str")
    assert r.eval("redis.pcall('incr', KEYS[1]) return 1", 1, "str") == 1
    with pytest.raises(redis.ResponseError):
        r.eval("return redis.error_reply('MY own')", 0)
    with pytest.raises(redis.ResponseError):
        r.eval("error('boom')", 0)
    assert stat_line(rr, "errorstats", "errorstat_ERR") == {"count": "4"}
    assert stat_line(rr, "errorstats", "errorstat_MY") == {"count": "1"}
    assert r.info("stats")["total_error_replies"] == 5
    incr = stat_line(rr, "commandstats", "cmdstat_incr")
    assert (incr["calls"], incr["failed_calls"]) == ("3", "3")
    eval_ = stat_line(rr, "commandstats", "cmdstat_eval")
    assert (eval_["calls"], eval_["failed_calls"]) == ("5", "4")


def test_a_blocking_command_counts_once_when_it_replies(server, r, rr):
    c = server.client()
    connected(rr, c)
    r.config_resetstat()
    r.delete("bl")
    done = []
    t = threading.Thread(target=lambda: done.append(c.blpop("bl", 0)))
    t.start()
    try:
        assert wait_until(lambda: r.info("clients")["blocked_clients"] == 1, timeout=5)
        # a Redis 7.2 field (REDIS_72_ADDED)
        assert r.info("clients").get("total_blocking_keys", 1) == 1
        r.lpush("bl", "a")
        t.join(5)
    finally:
        c.close()
    assert done == [("bl", "a")]
    assert r.blpop("bl", 0.1) is None  # times out
    blpop = stat_line(rr, "commandstats", "cmdstat_blpop")
    assert (blpop["calls"], blpop["failed_calls"]) == ("2", "0")
    # the timed-out call is not in the histogram, as in Redis
    assert stat_line(rr, "latencystats", "latency_percentiles_usec_blpop") is not None


@pytest.mark.basalt_only
def test_a_bad_percentile_list_at_start_up_is_refused(start_server):
    with pytest.raises(RuntimeError, match="Invalid latency-tracking-info-percentiles"):
        start_server(args={"latency-tracking-info-percentiles": "50 x"})
