"""Reads whose data is not in memory (Basalt only; commands/dispatcher.h, commands/offload.h):
a worker runs a read with memory-only reads and hands it to the read threads when one needs
the disk. The servers here keep almost nothing in memory (a 1 MB block cache, no metadata
cache) and SAVE flushes the memtables, so reads of the data go to SST files and are offloaded.
Whatever ran where, a client's replies stay in order, it reads its own writes, transactions and
scripts stay atomic, and the statistics count each command once.
"""
import random

import pytest

from helpers import run_clients
from resp import RawConn

pytestmark = pytest.mark.basalt_only

KEYS = 4000
SMALL_CACHES = {"rocksdb.block-cache-size": "1mb", "metadata-cache-size": "0"}


def value_of(i):
    return ("v%06d-" % i) * 120  # ~1 KiB: 4000 keys are some 4 MB of data blocks


def fill(r):
    p = r.pipeline(transaction=False)
    for i in range(KEYS):
        p.set("k%d" % i, value_of(i))
    p.execute()
    assert r.save()


def offloaded(r):
    return r.info("stats")["offloaded_reads"]


@pytest.fixture(scope="module")
def disk_server(start_module_server):
    s = start_module_server(args=SMALL_CACHES)
    fill(s.client())
    return s


@pytest.fixture
def d(disk_server):
    c = disk_server.client()
    yield c
    c.close()


def test_reads_that_need_the_disk_are_offloaded_and_answer_right(d):
    before = offloaded(d)
    order = list(range(KEYS))
    random.Random(1).shuffle(order)
    for i in order[:500]:
        assert d.get("k%d" % i) == value_of(i)
    assert d.get("absent") is None
    assert offloaded(d) > before


def test_pipelined_reads_and_writes_reply_in_order_and_read_their_own_writes(d):
    rng = random.Random(2)
    p = d.pipeline(transaction=False)
    expected = []
    written = {}
    for n in range(400):
        i = rng.randrange(KEYS)
        key = "k%d" % i
        if n % 3 == 0:
            value = "w%d-%d" % (i, n)
            p.set(key, value)
            written[key] = value
            expected.append(True)
        else:
            p.get(key)
            expected.append(written.get(key, value_of(i)))
        p.strlen(key)
        expected.append(len(written.get(key, value_of(i))))
    before = offloaded(d)
    assert p.execute() == expected
    assert offloaded(d) > before
    for key, value in written.items():  # put back for the other tests
        d.set(key, value_of(int(key[1:])))


def test_many_clients_reading_at_once_get_their_keys_values(disk_server):
    def read(c, t, n):
        i = (t * 7919 + n * 104729) % KEYS
        if n % 2:
            assert c.get("k%d" % i) == value_of(i)
        else:
            keys = ["k%d" % ((i + j) % KEYS) for j in range(5)]
            assert c.mget(keys) == [value_of((i + j) % KEYS) for j in range(5)]

    c = disk_server.client()
    before = offloaded(c)
    run_clients(disk_server, 16, 60, read)
    assert offloaded(c) > before


def test_transactions_and_scripts_read_the_disk_in_place_and_stay_atomic(d):
    before = offloaded(d)
    p = d.pipeline(transaction=True)
    p.get("k10")
    p.set("k10", "tx")
    p.get("k10")
    p.get("k11")
    assert p.execute() == [value_of(10), True, "tx", value_of(11)]
    script = "local v = redis.call('GET', KEYS[1]); redis.call('SET', KEYS[1], 'lua'); " \
             "return {v, redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2])}"
    assert d.eval(script, 2, "k12", "k13") == [value_of(12), "lua", value_of(13)]
    # Neither EXEC nor EVAL nor the commands inside them went to the read threads.
    assert offloaded(d) == before
    d.set("k10", value_of(10))
    d.set("k12", value_of(12))


def test_a_silenced_offloaded_read_stays_silent(disk_server):
    from resp import RawConn
    with RawConn(disk_server.port) as c:
        before = offloaded(disk_server.client())
        c.send("CLIENT", "REPLY", "SKIP")
        c.send("GET", "k100")
        c.send("CLIENT", "REPLY", "OFF")
        for i in range(101, 150):
            c.send("GET", "k%d" % i)
        c.send("CLIENT", "REPLY", "ON")
        assert c.read() == ("+", b"OK")
        assert c.call("GET", "k150") == ("$", value_of(150).encode())
        assert offloaded(disk_server.client()) > before


def test_shutdown_with_reads_in_flight_exits_cleanly(start_server):
    s = start_server(args=SMALL_CACHES)
    r = s.client()
    fill(r)
    readers = [s.client() for _ in range(8)]
    pipes = []
    for n, c in enumerate(readers):
        p = c.pipeline(transaction=False)
        for i in range(n, KEYS, 8):
            p.get("k%d" % i)
        pipes.append(p)
    import threading
    threads = [threading.Thread(target=lambda p=p: _ignore_closed(p.execute)) for p in pipes]
    for t in threads:
        t.start()
    try:
        r.shutdown(nosave=True)
    except Exception:  # the connection closes under redis-py
        pass
    for t in threads:
        t.join(30)
    assert s.proc.wait(30) == 0


def _ignore_closed(fn):
    try:
        fn()
    except Exception:  # the server closed the connection while replies were pending
        pass


def test_collection_and_scan_reads_from_disk_are_complete(start_server):
    s = start_server(args=SMALL_CACHES)
    r = s.client()
    members = ["m%04d-" % i + "x" * 200 for i in range(2000)]
    r.rpush("list", *members)
    r.hset("hash", mapping={m: i for i, m in enumerate(members)})
    r.zadd("zset", {m: i for i, m in enumerate(members)})
    r.sadd("set", *members)
    for i in range(300):
        r.set("s%d" % i, "y" * 900)
    assert r.save()
    before = offloaded(r)
    assert r.lrange("list", 0, -1) == members
    assert r.hgetall("hash") == {m: str(i) for i, m in enumerate(members)}
    assert r.zrange("zset", 0, -1) == members
    assert sorted(r.smembers("set")) == members
    assert sorted(r.scan_iter(count=50)) == sorted(
        ["list", "hash", "zset", "set"] + ["s%d" % i for i in range(300)])
    assert offloaded(r) > before


def test_an_offloaded_read_is_counted_once(start_server):
    s = start_server(args=SMALL_CACHES)
    r = s.client()
    fill(r)
    r.hset("h", mapping={"f%d" % i: "z" * 500 for i in range(500)})
    assert r.save()
    r.config_resetstat()
    for i in range(200):
        assert r.get("k%d" % i) == value_of(i)
    for i in range(50):
        assert r.get("absent%d" % i) is None
    with pytest.raises(Exception, match="^WRONGTYPE"):
        r.get("h")
    stats = r.info("stats")
    assert stats["offloaded_reads"] > 0
    assert stats["keyspace_hits"] == 200
    assert stats["keyspace_misses"] == 50
    assert stats["total_error_replies"] == 1
    assert r.info("errorstats") == {"errorstat_WRONGTYPE": {"count": 1}}
    assert r.info("commandstats")["cmdstat_get"]["calls"] == 251


def test_without_read_threads_reads_wait_on_their_worker(start_server):
    s = start_server(args={**SMALL_CACHES, "read-threads": "0"})
    r = s.client()
    fill(r)
    for i in range(0, KEYS, 10):
        assert r.get("k%d" % i) == value_of(i)
    assert offloaded(r) == 0
    assert r.config_get("read-threads") == {"read-threads": "0"}


def test_optin_caching_yes_covers_the_next_read_even_when_it_needs_the_disk(disk_server, d):
    """CLIENT CACHING yes covers exactly the client's next command while the reads around it go
    to the read threads: the reads after it are not tracked."""
    a = RawConn(disk_server.port)
    assert a.call("HELLO", "3")[0] == "%"
    assert a.call("CLIENT", "TRACKING", "on", "OPTIN") == ("+", b"OK")
    assert a.call("CLIENT", "CACHING", "yes") == ("+", b"OK")
    assert a.call("GET", "k10")[1] == value_of(10).encode()
    before = offloaded(d)
    later = ["k%d" % i for i in range(3001, 3101)]
    for key in later:
        assert a.call("GET", key)[1] == value_of(int(key[1:])).encode()
    assert offloaded(d) > before
    for key in later + ["k10"]:
        d.set(key, "changed")
    assert a.read() == (">", [("$", b"invalidate"), ("*", [("$", b"k10")])])
    a.close()
