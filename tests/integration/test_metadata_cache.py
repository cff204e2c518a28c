"""The metadata cache in front of RocksDB (Basalt only; docs/encoding.md, "The metadata cache"):
it answers repeated lookups, shows in INFO, can be switched off and on live, and keeps every
value, size and key count exact under concurrent writers while it evicts all the time.
"""
import pytest

from helpers import run_clients

pytestmark = pytest.mark.basalt_only


def cache_info(r):
    info = r.info("rocksdb")
    return {k[len("metadata_cache_"):]: v for k, v in info.items()
            if k.startswith("metadata_cache_")}


def test_repeated_lookups_are_answered_by_the_cache_which_can_be_switched_off(r):
    r.set("k", "v")
    r.rpush("l", "a", "b")
    before = cache_info(r)
    for _ in range(5):
        assert r.get("k") == "v"
        assert r.llen("l") == 2
        assert r.get("absent") is None
    after = cache_info(r)
    assert after["hits"] - before["hits"] >= 14  # all but the first lookup of "absent"
    assert after["entries"] >= 2 and after["usage"] > 0

    assert r.config_set("metadata-cache-size", "0")
    assert r.config_get("metadata-cache-size") == {"metadata-cache-size": "0"}
    assert cache_info(r)["entries"] == 0
    r.set("k", "w")  # written while the cache is off
    hits = cache_info(r)["hits"]
    assert r.get("k") == "w" and cache_info(r)["hits"] == hits

    assert r.config_set("metadata-cache-size", "64mb")
    assert r.get("k") == "w"
    assert r.get("k") == "w"
    assert cache_info(r)["hits"] == hits + 1


def test_a_cache_that_knows_every_key_answers_for_absent_ones(r):
    # FLUSHALL leaves no key: the cache knows them all, and a key it lacks is absent.
    r.flushall()
    assert cache_info(r)["complete_shards"] == 64
    r.set("k", "v")
    misses = cache_info(r)["misses"]
    assert r.get("absent") is None and r.exists("absent2") == 0 and r.get("k") == "v"
    assert cache_info(r)["misses"] == misses
    # Switched off and on again, it has forgotten what it knew: absent keys are read once.
    assert r.config_set("metadata-cache-size", "0")
    assert r.config_set("metadata-cache-size", "64mb")
    assert cache_info(r)["complete_shards"] == 0
    assert r.get("absent") is None and r.get("absent") is None and r.get("k") == "v"
    assert cache_info(r)["misses"] == misses + 2
    # A FLUSHDB leaves the other databases' keys, which the emptied cache does not know.
    r.flushall()
    r.execute_command("SELECT", 1)
    r.set("other", "1")
    r.execute_command("SELECT", 0)
    r.flushdb()
    assert cache_info(r)["complete_shards"] == 0
    r.execute_command("SELECT", 1)
    assert r.get("other") == "1"
    r.execute_command("SELECT", 0)


def test_values_sizes_and_counts_stay_exact_with_a_cache_that_evicts_constantly(start_server):
    s = start_server(args=[("metadata-cache-size", "16kb")])
    r = s.client()
    threads, rounds, keys = 6, 60, 150

    def work(c, t, i):
        p = c.pipeline(transaction=False)
        for k in range(keys):
            p.incr("n%d" % k)
        p.rpush("list%d" % (i % 5), "%d-%d" % (t, i))
        p.set("tmp%d-%d" % (t, i), "x")
        if i % 2:
            p.delete("tmp%d-%d" % (t, i - 1))
        p.execute()

    run_clients(s, threads, rounds, work)
    assert [int(r.get("n%d" % k)) for k in range(keys)] == [threads * rounds] * keys
    for n in range(5):
        assert r.llen("list%d" % n) == len(r.lrange("list%d" % n, 0, -1)) == threads * rounds // 5
    assert r.dbsize() == len(r.keys("*")) == keys + 5 + threads * rounds // 2
    info = cache_info(r)
    assert info["usage"] <= 16 * 1024 and info["hits"] > 0
