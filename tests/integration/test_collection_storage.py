"""How collections live on disk (Basalt only): O(1) delete of a large collection, stale members
physically reclaimed by compaction, no resurrection after re-creation, exact sizes under
concurrent writers, and large hash values kept in blob files that field-only commands never
read. Timings are printed (run with -s), never asserted.
"""
import os
import time

import pytest

from helpers import run_clients, wait_until

pytestmark = pytest.mark.basalt_only


def rocksdb_info(r):
    return r.info("rocksdb")


def compact_and_wait(r):
    """Full manual compaction (COMPACT runs it in the background); waits until it is done."""
    assert r.execute_command("COMPACT") == "OK"
    done = wait_until(lambda: rocksdb_info(r)["manual_compaction_running"] == 0, timeout=120)
    assert done


def stored_members(r):
    """Entries in the member column families, exact after a full compaction."""
    info = rocksdb_info(r)
    return sum(info["cf_%s_stored_entries" % cf] for cf in ("subkey", "zset_score", "large_value"))


def fill_set(r, key, n, prefix="m", batch=10000):
    p = r.pipeline(transaction=False)
    for start in range(0, n, batch):
        p.sadd(key, *["%s%d" % (prefix, i) for i in range(start, min(n, start + batch))])
    p.execute()


def test_million_member_set_created_counted_deleted_recreated(r):
    n = 1000000
    t0 = time.monotonic()
    fill_set(r, "big", n)
    t1 = time.monotonic()
    assert r.scard("big") == n
    assert r.sismember("big", "m999999")
    t2 = time.monotonic()
    assert r.delete("big") == 1
    t3 = time.monotonic()
    r.set("str", "v")
    t4 = time.monotonic()
    r.delete("str")
    t5 = time.monotonic()
    assert r.exists("big") == 0 and r.scard("big") == 0
    # Re-created: none of the earlier life's members shows through.
    r.sadd("big", "fresh")
    assert r.smembers("big") == {"fresh"}
    assert r.sismember("big", "m5") == 0
    print("\n1M-member set: SADD %.2f s, SCARD+SISMEMBER %.4f s, DEL %.4f ms "
          "(string SET+DEL %.4f ms)" % (t1 - t0, t2 - t1, (t3 - t2) * 1000, (t5 - t3) * 1000))
    compact_and_wait(r)
    assert stored_members(r) == 1  # only "fresh" is left on disk


@pytest.mark.parametrize("kind", ["hash", "set", "zset", "list", "string"])
def test_deleted_and_expired_members_are_reclaimed_by_compaction(r, kind):
    n = 2000
    write = {
        # every tenth value is large enough (4500 bytes) to live in large_value
        "hash": lambda k: r.hset(k, mapping={"f%d" % i: "v" * (i % 10 * 500) for i in range(n)}),
        "set": lambda k: r.sadd(k, *["m%d" % i for i in range(n)]),
        "zset": lambda k: r.zadd(k, {"m%d" % i: i for i in range(n)}),
        "list": lambda k: r.rpush(k, *["e%d" % i for i in range(n)]),
        "string": lambda k: r.set(k, "s" * 200000),  # four 64 KiB segments
    }[kind]
    write("deleted")
    write("expired")
    write("kept")
    r.execute_command("SAVE")  # flush memtables: the members are in SST and blob files now
    # Counted before the deletes: an automatic compaction may reclaim the dead members as soon
    # as they are dead, before the manual one below runs.
    before = stored_members(r)
    assert before > 0
    r.delete("deleted")
    r.pexpire("expired", 1)
    wait_until(lambda: r.exists("expired") == 0)
    compact_and_wait(r)
    after = stored_members(r)
    kept = r.type("kept") == kind and {
        "hash": lambda: r.hlen("kept") == n, "set": lambda: r.scard("kept") == n,
        "zset": lambda: r.zcard("kept") == n, "list": lambda: r.llen("kept") == n,
        "string": lambda: r.strlen("kept") == 200000}[kind]()
    assert kept
    assert after < before
    # Exactly the live incarnation's entries remain.
    expected = {"hash": n + n // 10,
                "set": n, "zset": 2 * n, "list": n, "string": 4}[kind]
    assert after == expected, (kind, before, after)


def test_large_hash_values_live_in_blob_files_that_field_reads_never_touch(r):
    r.hset("h", mapping={"f%d" % i: "y" * 9000 + str(i) for i in range(30)})
    r.hset("h", "small", "v")
    r.execute_command("SAVE")  # flush: large values are written to blob files
    info = rocksdb_info(r)
    assert info["cf_large_value_blob_files"] >= 1
    assert info["cf_large_value_blob_bytes"] > 0
    before = info["blob_read_bytes"]
    for _ in range(3):
        assert r.hexists("h", "f3") and r.hstrlen("h", "f3") == 9001
        assert r.hlen("h") == 31 and len(r.hkeys("h")) == 31
        assert r.hsetnx("h", "f4", "no") == 0
        assert r.hget("h", "small") == "v"
    assert rocksdb_info(r)["blob_read_bytes"] == before
    assert r.hget("h", "f3") == "y" * 9000 + "3"
    assert rocksdb_info(r)["blob_read_bytes"] > before


def test_compaction_drops_stale_blob_values_without_reading_them(r):
    """The segments of overwritten large strings are in blob files; compaction judges them by
    key (SubkeyFilter::FilterBlobByKey) and drops them without reading a blob byte. RocksDB may
    start that compaction itself at any time after the second flush, so the drops are counted
    by the filter's ticker rather than by comparing stored entries before and after ours."""
    assert r.config_set("rocksdb.enable-blob-gc", "no")  # GC reads live blobs to move them
    try:
        before = rocksdb_info(r)
        for i in range(8):
            r.set("s%d" % i, "a" * 200000)  # four 64 KiB segments each
        r.execute_command("BGREWRITEAOF")  # flushes the memtables (a SAVE reads every value)
        for i in range(8):
            r.set("s%d" % i, "b" * 200000)  # a new version: the old segments are stale
        r.execute_command("BGREWRITEAOF")
        assert rocksdb_info(r)["cf_subkey_blob_files"] >= 1
        compact_and_wait(r)
        after = rocksdb_info(r)
        assert after["blob_read_bytes"] == before["blob_read_bytes"]
        dropped = after["compaction_filter_dropped_keys"] - before["compaction_filter_dropped_keys"]
        assert dropped >= 8 * 4
        assert stored_members(r) == 8 * 4
        assert all(r.get("s%d" % i) == "b" * 200000 for i in range(8))
    finally:
        r.config_set("rocksdb.enable-blob-gc", "yes")


def test_blob_gc_runs_only_while_blob_files_hold_garbage_above_the_ratio(start_server):
    """Blob GC is switched on by the garbage RocksDB has accounted, not left on (storage/blob_gc.h):
    off after a load, on once overwrites leave more than rocksdb.blob-gc-garbage-ratio of the blob
    bytes as garbage, off again once compaction has collected it."""
    s = start_server(args=[("rocksdb.blob-file-size", "1mb"), ("rocksdb.write-buffer-size", "1mb"),
                           ("rocksdb.blob-gc-garbage-ratio", "0.2")])
    r, raw = s.client(), s.client(decode_responses=False)
    info = lambda: rocksdb_info(r)  # noqa: E731
    for i in range(400):
        raw.set("s%d" % i, os.urandom(16384))  # one blob-stored segment each
    compact_and_wait(r)
    assert info()["cf_subkey_blob_files"] >= 2 and info()["cf_subkey_blob_garbage_bytes"] == 0
    time.sleep(1.5)  # the governor looks once a second
    assert info()["cf_subkey_blob_gc_running"] == 0

    # Overwrite half the values with GC disallowed: the compaction counts the old blobs as garbage
    # (a third of the blob bytes) without collecting them.
    assert r.config_set("rocksdb.enable-blob-gc", "no")
    for i in range(0, 400, 2):
        raw.set("s%d" % i, os.urandom(16384))
    compact_and_wait(r)
    garbage = info()
    share = garbage["cf_subkey_blob_garbage_bytes"] / garbage["cf_subkey_live_blob_bytes"]
    assert 0.25 < share < 0.45, garbage
    time.sleep(1.5)
    assert info()["cf_subkey_blob_gc_running"] == 0  # disallowed, whatever the garbage

    assert r.config_set("rocksdb.enable-blob-gc", "yes")
    assert wait_until(lambda: info()["cf_subkey_blob_gc_running"] == 1, timeout=10)

    # A compaction with every blob file eligible collects the garbage; GC then stops again.
    relocated = info()["blob_gc_relocated_bytes"]
    assert r.config_set("rocksdb.blob-gc-age-cutoff", "1.0")
    compact_and_wait(r)
    after = info()
    assert after["cf_subkey_blob_garbage_bytes"] == 0
    assert after["blob_gc_relocated_bytes"] > relocated
    assert wait_until(lambda: info()["cf_subkey_blob_gc_running"] == 0, timeout=10)
    assert all(len(raw.get("s%d" % i)) == 16384 for i in range(400))


def test_large_and_small_values_replace_each_other(r):
    r.hset("h", "f", "a" * 5000)
    assert r.hget("h", "f") == "a" * 5000
    r.hset("h", "f", "small")
    assert r.hget("h", "f") == "small" and r.hstrlen("h", "f") == 5
    r.hset("h", "f", "b" * 6000)
    assert r.hgetall("h") == {"f": "b" * 6000}
    assert r.hincrbyfloat("h", "n", 1.5) == 1.5
    r.hdel("h", "f")
    r.rename("h", "h2")
    assert r.hgetall("h2") == {"n": "1.5"}
    r.hset("h2", "g", "c" * 7000)
    assert r.copy("h2", "h3")
    assert sorted(r.hvals("h3")) == ["1.5", "c" * 7000]
    r.execute_command("SAVE")
    compact_and_wait(r)
    # h2 and h3 each hold one large value; the deleted and replaced ones are gone.
    assert rocksdb_info(r)["cf_large_value_stored_entries"] == 2


def test_sizes_stay_exact_under_concurrent_writers(server, r):
    threads, per_thread = 8, 300

    def work(c, t, i):
        p = c.pipeline(transaction=False)
        # overlapping fields/members across threads: sizes must count each once
        p.hset("h", "f%d" % ((t * 7 + i) % 500), i)
        p.hincrby("h", "counter", 1)
        p.sadd("s", "m%d" % ((t * 13 + i) % 700))
        p.zadd("z", {"m%d" % ((t * 11 + i) % 600): i})
        p.lpush("l", i)
        if i % 3 == 0:
            p.hdel("h", "f%d" % ((t + i) % 500))
            p.srem("s", "m%d" % ((t + i) % 700))
            p.zrem("z", "m%d" % ((t + i) % 600))
            p.rpop("l")
        p.execute()

    run_clients(server, threads, per_thread, work)
    assert r.hlen("h") == len(r.hkeys("h"))
    assert r.hget("h", "counter") == str(threads * per_thread)
    assert r.scard("s") == len(r.smembers("s"))
    assert r.zcard("z") == len(r.zrange("z", 0, -1))
    assert r.llen("l") == len(r.lrange("l", 0, -1)) == threads * per_thread - sum(
        1 for _ in range(threads) for i in range(per_thread) if i % 3 == 0)


def test_popped_and_trimmed_list_elements_are_reclaimed_by_compaction(r):
    """Pops, LTRIM and LREM move a list's ends and delete nothing: compaction drops the elements
    outside [head, tail) and keeps every live one, including those pushed again at indexes that
    were popped before (and flushed to files in between)."""
    model = ["e%d" % i for i in range(3000)]
    r.rpush("q", *model)
    r.execute_command("SAVE")  # the elements are in SST files now
    p = r.pipeline(transaction=False)
    for _ in range(700):
        p.lpop("q")
    for _ in range(400):
        p.rpop("q")
    p.execute()
    model = model[700:-400]
    assert r.lpop("q", 50) == model[:50] and r.rpop("q", 50) == model[-50:][::-1]
    model = model[50:-50]
    r.execute_command("SAVE")
    # Pushed again over popped indexes, at both ends, after those indexes were flushed.
    r.lpush("q", *["l%d" % i for i in range(300)])
    r.rpush("q", *["r%d" % i for i in range(200)])
    model = ["l%d" % i for i in range(300)][::-1] + model + ["r%d" % i for i in range(200)]
    assert r.ltrim("q", 10, -11)
    model = model[10:-10]
    assert r.lrem("q", 0, "e1500") == 1
    model.remove("e1500")
    assert r.copy("q", "q2")
    assert r.lrange("q2", 0, -1) == model
    r.execute_command("SAVE")
    compact_and_wait(r)
    assert r.lrange("q", 0, -1) == model
    assert r.lrange("q2", 0, -1) == model
    assert r.llen("q") == len(model)
    # Only the live elements of the two lists are left on disk.
    assert stored_members(r) == 2 * len(model)


def test_flush_leaves_out_elements_popped_before_it(r):
    """A queue's elements pushed and popped within one memtable's life never reach a file: the
    flush filters them as compactions do."""
    # The files of the tests before this one go with the next compaction that reaches them (the
    # reclaimer's, a second after the fixture's FLUSHALL, may not have run yet): count from none.
    compact_and_wait(r)
    assert stored_members(r) == 0
    r.rpush("q", *["v%d" % i + "x" * 100 for i in range(2000)])
    assert len(r.lpop("q", 1500)) == 1500
    assert len(r.rpop("q", 100)) == 100
    r.execute_command("SAVE")  # flushes the memtables; no compaction runs
    assert r.llen("q") == 400 and r.lindex("q", 0) == "v1500" + "x" * 100
    assert stored_members(r) == 400


@pytest.mark.parametrize("kind", ["hash", "set", "zset", "list"])
@pytest.mark.parametrize("end", ["del", "expire", "overwrite"])
def test_files_of_an_ended_large_collection_are_compacted_without_being_asked(r, kind, end):
    """A deleted, expired or overwritten collection's members are dead under their version, and
    nothing will ever write over their keys again: with 4,096 members or more, the files holding
    them are compacted in the background, without COMPACT."""
    n = 20000
    compact_and_wait(r)  # earlier tests' flushed-away data leaves the files
    p = r.pipeline(transaction=False)
    for start in range(0, n, 5000):
        names = ["member-%08d" % i for i in range(start, start + 5000)]
        {"hash": lambda: p.hset("c", mapping={m: "v" for m in names}),
         "set": lambda: p.sadd("c", *names),
         "zset": lambda: p.zadd("c", {m: i for i, m in enumerate(names)}),
         "list": lambda: p.rpush("c", *names)}[kind]()
    p.execute()
    compact_and_wait(r)
    assert stored_members(r) == (2 * n if kind == "zset" else n)
    if end == "del":
        assert r.delete("c") == 1
    elif end == "expire":
        assert r.pexpire("c", 1)
    else:
        assert r.set("c", "a string now")
    # As for drained lists: without the reclaimer the wait times out.
    assert wait_until(lambda: stored_members(r) == 0, timeout=30), stored_members(r)
    assert r.exists("c") == (1 if end == "overwrite" else 0)


@pytest.mark.parametrize("drain", ["lpop", "rpop", "ltrim"])
@pytest.mark.parametrize("level", ["last", "zero"])
def test_files_of_a_drained_list_are_compacted_without_being_asked(r, drain, level):
    """Pops and trims write nothing over the elements they drop, so no compaction of RocksDB's
    own choosing comes for the files holding them. Once a list's end has moved far, the files
    that hold mostly its dead elements are compacted in the background, without COMPACT: in the
    last level, and in level 0, where a queue drained after its last flush leaves them."""
    n = 50000
    model = ["element-%08d" % i for i in range(n)]
    compact_and_wait(r)  # earlier tests' flushed-away data leaves the files
    p = r.pipeline(transaction=False)
    for start in range(0, n, 10000):
        p.rpush("q", *model[start:start + 10000])
    p.execute()
    if level == "last":
        compact_and_wait(r)
    else:
        r.execute_command("SAVE")  # flushes the memtables; no compaction runs
    assert stored_members(r) == n
    if drain == "lpop":
        assert r.lpop("q", n - 10) == model[:-10]
        model = model[-10:]
    elif drain == "rpop":
        assert r.rpop("q", n - 10) == model[10:][::-1]
        model = model[:10]
    else:
        assert r.ltrim("q", 20000, 20009)
        model = model[20000:20010]
    # Without the reclaimer nothing compacts these files and the wait times out. Which compaction
    # drops the entries is not asserted: now and then one of RocksDB's own gets there first.
    assert wait_until(lambda: stored_members(r) == 10, timeout=30), stored_members(r)
    assert r.lrange("q", 0, -1) == model


def test_popped_sorted_set_members_are_dropped_by_compaction_without_being_asked(r):
    """Pops leave the popped members' `subkey` entries without tombstones (src/types/zset.h):
    the compaction filter drops them by the pop marks, and pops that halve a large set note its
    range for the reclaimer, so they go without a COMPACT."""
    compact_and_wait(r)  # earlier tests' flushed-away data leaves the files
    # The reclaimer's pass for the fixture's FLUSHALL, a second after it, would compact these
    # files too: it runs before they exist.
    time.sleep(1.5)
    n = 20000
    p = r.pipeline(transaction=False)
    for start in range(0, n, 5000):
        p.zadd("q", {"m%05d" % i: i % 997 for i in range(start, start + 5000)})
    p.execute()
    r.execute_command("SAVE")
    p = r.pipeline(transaction=False)
    for _ in range(75):
        p.zpopmin("q", 100)
        p.zpopmax("q", 100)
    p.execute()
    left = n - 15000
    assert r.zcard("q") == left
    r.execute_command("SAVE")
    # The members' entries wait for a compaction, which the halvings (20000 -> 16383 -> 8191)
    # asked the reclaimer for. The last member popped at each end, which is its mark, stays
    # until the mark moves on: only the score index can tell it from a member the mark was moved
    # out to (ZsetEnd::reach).
    marks = 2
    assert wait_until(lambda: rocksdb_info(r)["cf_subkey_stored_entries"] == left + marks,
                      timeout=30), rocksdb_info(r)["cf_subkey_stored_entries"]
    assert rocksdb_info(r)["reclaimed_files"] > 0
    remaining = r.zrange("q", 0, -1, withscores=True)
    assert len(remaining) == left
    assert all(r.zscore("q", m) == s for m, s in remaining[:50])
    compact_and_wait(r)
    assert stored_members(r) == 2 * left + marks
    assert r.zrange("q", 0, -1, withscores=True) == remaining
