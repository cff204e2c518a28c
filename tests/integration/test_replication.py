"""Replication with two or three real servers: REPLICAOF/ROLE/WAIT/INFO, read-only replicas,
full sync and incremental streaming, faults (kill -9 of either side, purged WAL), promotion
and chained replicas.

Replicas are compared with their master through full dumps (every database, SCAN plus a
type-specific read of every key, and whether it has a TTL). Tests that depend on how Basalt
syncs (checkpoints, WAL retention, resuming from the stored position) are basalt_only; the
others also run against redis-server."""
import os
import random
import signal
import threading
import time

import pytest
import redis

from helpers import exact, parse_info, wait_until

SYNC_TIMEOUT = 30.0


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------
def replica_args(target, master, extra=None):
    args = [("replicaof", "127.0.0.1 %d" % master.port)]
    if target == "redis":
        args.append(("repl-diskless-sync-delay", "0"))
    return args + list(extra or [])


def master_args(target, extra=None):
    args = list(extra or [])
    if target == "redis":
        args.append(("repl-diskless-sync-delay", "0"))
    return args


def dump(server):
    """Every key of every database with its type, value and whether it has a TTL."""
    out = {}
    for db in range(16):
        c = server.client(db=db, decode_responses=False)
        try:
            for key in c.scan_iter(count=1000):
                kind = c.type(key)
                if kind == b"string":
                    value = c.get(key)
                elif kind == b"hash":
                    value = c.hgetall(key)
                elif kind == b"list":
                    value = c.lrange(key, 0, -1)
                elif kind == b"set":
                    value = c.smembers(key)
                elif kind == b"zset":
                    value = c.zrange(key, 0, -1, withscores=True)
                elif kind == b"stream":
                    # Without redis-py's reply callbacks; the pending entries without their
                    # idle times, which differ by when each server is asked; the groups up to
                    # last-delivered-id, since a Redis 7.0 replica loses entries-read (Basalt's
                    # exactness there is test_streams.py's replication test).
                    plain = server.client(db=db, decode_responses=False, callbacks=False)
                    value = (plain.execute_command("XRANGE", key, "-", "+"),
                             [g[:8] for g in plain.execute_command("XINFO", "GROUPS", key)],
                             [p[:2] + p[3:] for p in
                              plain.execute_command("XPENDING", key, "g", "-", "+", 1000)])
                    plain.close()
                else:
                    continue  # expired between SCAN and TYPE
                out[(db, key)] = (kind, value, c.pttl(key) > 0)
        finally:
            c.close()
    return out


def info_repl(server):
    c = server.client(callbacks=False, password=server.password)
    try:
        return parse_info(c.execute_command("INFO", "replication"))["replication"]
    finally:
        c.close()


def repl_offset_of(master):
    return int(info_repl(master)["master_repl_offset"])


def wait_synced(master, replica, timeout=SYNC_TIMEOUT):
    """Until the replica's dump equals the master's (the master must be idle)."""
    expected = dump(master)
    assert wait_until(lambda: dump(replica) == expected, timeout=timeout, interval=0.1), \
        "replica did not converge to the master"
    return expected


def wait_link_up(replica, timeout=SYNC_TIMEOUT):
    assert wait_until(lambda: info_repl(replica).get("master_link_status") == "up",
                      timeout=timeout, interval=0.05), info_repl(replica)


def write_every_type(server):
    c = server.client(password=server.password)
    c.set("str", "v")
    c.set("ttl", "t", ex=1000)
    c.set("bin\x00key", "\x00\xff")
    c.incrby("counter", 41)
    c.hset("hash", mapping={"f%d" % i: "v%d" % i for i in range(50)})
    c.rpush("list", *["e%d" % i for i in range(50)])
    c.lpop("list")
    c.sadd("set", *["m%d" % i for i in range(50)])
    c.srem("set", "m0")
    c.zadd("zset", {"z%d" % i: i * 1.5 - 10 for i in range(50)})
    c.zincrby("zset", 2.5, "z3")
    c.expire("hash", 5000)
    c.hset("hash", "large", "L" * 5000)  # a large field value
    c.set("segmented", "S" * 10000)  # a string stored in segments
    c.setrange("segmented", 6000, "middle")
    c.append("segmented", "tail")
    c.setbit("bits", 100000, 1)
    c.pfadd("hll", *["e%d" % i for i in range(100)])
    c.execute_command("GEOADD", "geo", 13.361389, 38.115556, "Palermo", 15.087269, 37.502669,
                      "Catania")
    stream_keys = c.keys("stream*")
    c.execute_command("XADD", "stream", "MAXLEN", "=", "40", "*", "n", len(stream_keys))
    for i in range(50):
        c.execute_command("XADD", "stream", "*", "i", i)
    if not stream_keys:
        c.execute_command("XGROUP", "CREATE", "stream", "g", "0")
    c.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", 7, "STREAMS", "stream", ">")
    c.set("gone", "x")
    c.delete("gone")
    c.rename("str", "str2")
    pipe = c.pipeline(transaction=True)
    pipe.set("tx1", 1).incr("tx1").hset("txhash", "a", "b")
    pipe.execute()
    for db in (1, 2, 3):
        other = server.client(db=db, password=server.password)
        other.mset({"db%d:a" % db: "1", "db%d:b" % db: "2"})
        other.close()
    c.execute_command("SWAPDB", 1, 2)
    c.execute_command("MOVE", "counter", 3)
    c.close()


class Load:
    """Writes to a server from a thread until stopped, riding out connection errors
    (the server may be killed and restarted meanwhile)."""

    def __init__(self, server):
        self.server = server
        self.stop = threading.Event()
        self.acked = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        rng = random.Random(7)
        c = self.server.client(socket_timeout=5)
        i = 0
        while not self.stop.is_set():
            try:
                pipe = c.pipeline(transaction=False)
                for _ in range(200):
                    i += 1
                    k = "load:%d" % rng.randrange(5000)
                    op = i % 4
                    if op == 0:
                        pipe.set(k, i)
                    elif op == 1:
                        pipe.hset("lh:%d" % (i % 50), k, i)
                    elif op == 2:
                        pipe.rpush("ll:%d" % (i % 20), i)
                    else:
                        pipe.zadd("lz", {k: i})
                pipe.execute()
                self.acked += 200
            except (redis.ConnectionError, redis.TimeoutError, ConnectionError, OSError):
                time.sleep(0.05)
                c = self.server.client(socket_timeout=5)
        c.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(30)


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------
def test_replica_holds_every_type_and_follows(start_server, target):
    master = start_server(master_args(target), name="master")
    m = master.client()
    write_every_type(master)
    replica = start_server(replica_args(target, master), name="replica")
    wait_synced(master, replica)
    # Incremental from here on: more writes of every kind, flushes included.
    m.hset("hash", "late", "field")
    m.zrem("zset", "z1")
    m.set("newkey", "n", px=900000)
    m.persist("ttl")
    m.flushdb()  # database 0 only; 1-3 keep their keys
    write_every_type(master)
    expected = wait_synced(master, replica)
    assert len(expected) > 10
    r = replica.client()
    for db in range(4):
        assert replica.client(db=db).dbsize() == master.client(db=db).dbsize()
    counts = lambda c: {db: (v["keys"], v["expires"]) for db, v in c.info("keyspace").items()}
    assert counts(r) == counts(m)


def test_replica_is_read_only_and_reports_its_role(start_server, target):
    master = start_server(master_args(target), name="master")
    replica = start_server(replica_args(target, master), name="replica")
    wait_link_up(replica)
    r = replica.client()
    with pytest.raises(redis.ResponseError,
                       match=exact("READONLY You can't write against a read only replica.")):
        r.set("k", "v")
    with pytest.raises(redis.ResponseError,
                       match=exact("READONLY You can't write against a read only replica.")):
        r.execute_command("FLUSHALL")
    role = r.execute_command("ROLE")
    assert role[:4] == ["slave", "127.0.0.1", master.port, "connected"]
    assert replica.client(protocol=3).execute_command("HELLO", "3")["role"] == "replica"
    info = info_repl(replica)
    assert info["role"] == "slave" and info["master_link_status"] == "up"
    assert info["slave_read_only"] == "1"
    m = master.client()
    assert wait_until(lambda: len(m.execute_command("ROLE")[2]) == 1)
    role = m.execute_command("ROLE")
    assert role[0] == "master"
    assert role[2][0][:2] == ["127.0.0.1", str(replica.port)]
    # Inside MULTI the rejected write aborts the transaction, as in Redis.
    raw = replica.raw()
    assert raw.call("MULTI") == ("+", b"OK")
    assert raw.call("SET", "a", "1") == ("-", "READONLY You can't write against a read only "
                                              "replica.")
    assert raw.call("EXEC") == ("-", "EXECABORT Transaction discarded because of previous "
                                     "errors.")
    raw.close()
    with pytest.raises(redis.ResponseError, match="^ERR WAIT cannot be used with replica"):
        r.execute_command("WAIT", 0, 0)
    with pytest.raises(redis.ResponseError, match=exact("ERR Invalid master port")):
        r.execute_command("REPLICAOF", "127.0.0.1", "notaport")
    assert r.execute_command("REPLICAOF", "127.0.0.1", master.port) == \
        "OK Already connected to specified master"
    # Reads see the master's writes; WATCHed keys written by the master abort EXEC.
    m.set("watched", "1")
    assert wait_until(lambda: r.get("watched") == "1")
    pipe = r.pipeline(transaction=True)
    pipe.watch("watched")
    m.set("watched", "2")
    assert wait_until(lambda: r.get("watched") == "2")
    pipe.multi()
    pipe.get("watched")
    with pytest.raises(redis.WatchError):
        pipe.execute()


def test_wait_counts_replicas_that_applied_the_write(start_server, target):
    master = start_server(master_args(target), name="master")
    replica = start_server(replica_args(target, master), name="replica")
    wait_link_up(replica)
    m = master.client()
    assert wait_until(lambda: m.execute_command("WAIT", 1, 100) == 1, timeout=10)
    m.set("w", "1")
    assert m.execute_command("WAIT", 1, 1000) == 1
    assert replica.client().get("w") == "1"
    # Only one replica exists: asking for two waits out the timeout and reports one.
    m.set("w", "2")
    assert m.execute_command("WAIT", 2, 200) == 1
    with pytest.raises(redis.ResponseError, match=exact("ERR timeout is negative")):
        m.execute_command("WAIT", 1, -1)


def stored_members(server):
    """Entries in a server's member column families (exact counts, Basalt only)."""
    info = server.client().info("rocksdb")
    return sum(info["cf_%s_stored_entries" % cf] for cf in ("subkey", "zset_score", "large_value"))


@pytest.mark.basalt_only
@pytest.mark.parametrize("end", ["drain", "del"])
def test_replica_compacts_the_files_its_masters_pops_and_deletions_left_dead(
        start_server, target, end):
    """Pops and the deletion of a large collection write nothing over the entries they leave
    dead, on a replica as on its master, so no compaction of RocksDB's own choosing comes for
    the files holding them. The master's notes of those ranges reach the replica with the writes,
    and the replica's reclaimer compacts its own files: without them the wait times out."""
    master = start_server(master_args(target), name="master")
    replica = start_server(replica_args(target, master), name="replica")
    wait_link_up(replica)
    m, r = master.client(), replica.client()
    n = 50000
    p = m.pipeline(transaction=False)
    for start in range(0, n, 10000):
        p.rpush("q", *["element-%08d" % i for i in range(start, start + 10000)])
    p.execute()
    assert wait_until(lambda: r.llen("q") == n, timeout=SYNC_TIMEOUT)
    assert r.execute_command("SAVE")  # the replica's elements are in a level 0 file now
    assert stored_members(replica) == n
    if end == "drain":
        assert len(m.lpop("q", n - 10)) == n - 10
        assert wait_until(lambda: r.llen("q") == 10, timeout=SYNC_TIMEOUT)
        left = 10
    else:
        assert m.delete("q") == 1
        assert wait_until(lambda: r.exists("q") == 0, timeout=SYNC_TIMEOUT)
        left = 0
    assert wait_until(lambda: stored_members(replica) == left, timeout=30), stored_members(replica)
    assert r.lrange("q", 0, -1) == m.lrange("q", 0, -1)


@pytest.mark.basalt_only
def test_replica_flushes_the_memtables_its_masters_flushall_emptied(start_server, target):
    """FLUSHALL leaves its range deletions and the entries they cover in the memtables; the
    master and, applying it, the replica each start a flush that drops them: the flushed
    strings are then no longer stored anywhere. Without the replica's flush they stay."""
    master = start_server(master_args(target), name="master")
    replica = start_server(replica_args(target, master), name="replica")
    wait_link_up(replica)
    m, r = master.client(), replica.client()
    n = 70000  # a memtable of fewer entries is left as it is (Keyspace::FlushEmptiedMemtables)
    p = m.pipeline(transaction=False)
    for start in range(0, n, 5000):  # commands of a size a sanitizer build answers in time
        p.mset({"key:%d" % i: "v" for i in range(start, start + 5000)})
    p.execute()
    assert wait_until(lambda: r.dbsize() == n, timeout=SYNC_TIMEOUT)

    def stored(server):
        return server.client().info("rocksdb")["cf_metadata_stored_entries"]

    assert stored(replica) >= n
    assert m.flushall()
    assert wait_until(lambda: r.dbsize() == 0, timeout=SYNC_TIMEOUT)
    # What may stay are range deletions, which INFO counts as entries: the replica applies the
    # master's FLUSHALL one database at a time and flushes after the first.
    assert wait_until(lambda: stored(master) <= 16, timeout=30), stored(master)
    assert wait_until(lambda: stored(replica) <= 16, timeout=30), stored(replica)


@pytest.mark.basalt_only
def test_new_replica_catches_up_by_full_sync_then_streams(start_server, target):
    master = start_server(name="master")
    m = master.client()
    pipe = m.pipeline(transaction=False)
    for i in range(100000):
        pipe.set("key:%d" % i, i)
        if i % 10000 == 9999:
            pipe.execute()
    replica = start_server(replica_args(target, master), name="replica")
    r = replica.client()
    assert wait_until(lambda: r.dbsize() == 100000, timeout=SYNC_TIMEOUT)
    assert int(info_repl(master)["repl_checkpoints_created"]) == 1
    for i in range(1000):
        m.incr("key:%d" % i)
    m.execute_command("WAIT", 1, 5000)
    assert r.mget("key:0", "key:999", "key:1000") == ["1", "1000", "1000"]
    info = info_repl(master)
    assert info["repl_checkpoints_created"] == "1"  # the increments streamed, no new sync
    assert "state=online" in info["slave0"]
    assert int(info_repl(replica)["slave_repl_offset"]) == repl_offset_of(master)


@pytest.mark.basalt_only
def test_replica_whose_wal_was_purged_falls_back_to_full_sync(start_server, target):
    # Keep obsolete WAL for one second only: what a stopped replica needs is soon gone.
    master = start_server([("repl-wal-ttl", 1), ("repl-wal-size-limit", 0)], name="master")
    m = master.client()
    m.set("before", "1")
    replica = start_server(replica_args(target, master), name="replica")
    wait_synced(master, replica)
    replica.stop()
    m.set("while-down", "1")
    m.execute_command("SAVE")  # flush: the WAL holding those writes becomes obsolete
    time.sleep(2.5)
    m.set("later", "1")
    m.execute_command("SAVE")  # the next flush purges obsolete WAL older than the TTL
    replica.start()
    wait_synced(master, replica)
    assert info_repl(master)["repl_checkpoints_created"] == "2"
    m.set("after", "1")
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert replica.client().get("after") == "1"


@pytest.mark.basalt_only
def test_replica_synced_and_killed_during_load_resumes_and_converges(start_server, target):
    master = start_server(name="master")
    with Load(master) as load:
        assert wait_until(lambda: load.acked > 5000, timeout=10)
        # Its full sync happens under load: the copy ends mid-stream, streaming takes over.
        replica = start_server(replica_args(target, master), name="replica")
        wait_link_up(replica)
        acked = load.acked
        assert wait_until(lambda: load.acked > acked + 5000, timeout=10)
        replica.kill9()
        acked = load.acked
        assert wait_until(lambda: load.acked > acked + 5000, timeout=10)
        replica.start()
        wait_link_up(replica)
        acked = load.acked
        assert wait_until(lambda: load.acked > acked + 5000, timeout=10)
    wait_synced(master, replica)
    # It resumed from its own stored position: the only checkpoint is its first sync.
    assert info_repl(master)["repl_checkpoints_created"] == "1"


@pytest.mark.basalt_only
def test_master_killed_during_load_replica_reconnects_and_converges(start_server, target):
    master = start_server(name="master")
    replica = start_server(replica_args(target, master, [("repl-timeout", 5)]), name="replica")
    wait_link_up(replica)
    with Load(master) as load:
        assert wait_until(lambda: load.acked > 5000, timeout=10)
        master.kill9()
        assert wait_until(lambda: info_repl(replica)["master_link_status"] == "down")
        master.start()
        acked = load.acked
        assert wait_until(lambda: load.acked > acked + 5000, timeout=20)
    wait_link_up(replica)
    wait_synced(master, replica)
    # The restarted master recognised the replica's position: no full sync was needed.
    assert info_repl(master)["repl_checkpoints_created"] == "0"


def test_promoted_replica_takes_the_old_master_as_its_replica(start_server, target):
    a = start_server(master_args(target), name="a")
    b = start_server(replica_args(target, a), name="b")
    ca, cb = a.client(), b.client()
    write_every_type(a)
    ca.set("last", "1")
    assert ca.execute_command("WAIT", 1, 5000) == 1
    wait_synced(a, b)
    assert cb.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    assert cb.execute_command("ROLE")[0] == "master"
    cb.set("written-on-b", "yes")  # accepted at once
    assert ca.execute_command("REPLICAOF", "127.0.0.1", b.port) == "OK"
    wait_link_up(a)
    assert wait_until(lambda: ca.get("written-on-b") == "yes", timeout=SYNC_TIMEOUT)
    cb.hset("hash", "after-promotion", "1")
    assert cb.execute_command("WAIT", 1, 5000) == 1
    wait_synced(b, a)
    with pytest.raises(redis.ResponseError, match="^READONLY"):
        ca.set("k", "v")


def test_single_pops_after_failing_over_and_back_skip_what_the_other_side_popped(start_server,
                                                                                target):
    """Basalt pops a large set's members picked ahead without looking them up while no command
    removed members since. Pops that reach it by replication must end that: A pops, B takes
    over and pops, A follows B, then takes over again; no pop of A may return what B popped."""
    a = start_server(master_args(target), name="a")
    b = start_server(replica_args(target, a), name="b")
    ca, cb = a.client(), b.client()
    members = ["m%06d" % i for i in range(20000)]
    for i in range(0, len(members), 5000):
        ca.sadd("s", *members[i:i + 5000])

    def pops(client, n):
        p = client.pipeline(transaction=False)
        for _ in range(n):
            p.spop("s")
        return p.execute()

    popped_by_a = pops(ca, 1100)
    assert ca.execute_command("WAIT", 1, 5000) == 1
    wait_synced(a, b)
    assert cb.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    popped_by_b = pops(cb, 6000)
    assert ca.execute_command("REPLICAOF", "127.0.0.1", b.port) == "OK"
    wait_link_up(a)
    wait_synced(b, a)
    assert ca.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    later = pops(ca, 3000)
    assert not set(later) & set(popped_by_b)
    everything = popped_by_a + popped_by_b + later
    assert len(set(everything)) == len(everything)
    assert set(ca.smembers("s")) == set(members) - set(everything)
    assert ca.scard("s") == len(members) - len(everything)


def test_new_members_after_failing_over_and_back_count_what_the_other_side_added(start_server,
                                                                                target):
    """Basalt knows a member is new without reading when the collection's member filter has never
    seen it. Members that arrive by replication pass no filter: A starts a hash, a set and a
    sorted set, B takes over and adds members, A follows B and takes over again; A's reads and
    writes must find B's members present."""
    a = start_server(master_args(target), name="a")
    b = start_server(replica_args(target, a), name="b")
    ca, cb = a.client(), b.client()
    ca.hset("h", "from-a", "1")
    ca.sadd("s", "from-a")
    ca.zadd("z", {"from-a": 1})
    assert ca.execute_command("WAIT", 1, 5000) == 1
    wait_synced(a, b)
    assert cb.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    assert cb.hset("h", "from-b", "1") == 1
    assert cb.sadd("s", "from-b") == 1
    assert cb.zadd("z", {"from-b": 2}) == 1
    assert ca.execute_command("REPLICAOF", "127.0.0.1", b.port) == "OK"
    wait_link_up(a)
    wait_synced(b, a)
    assert ca.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    assert ca.hget("h", "from-b") == "1" and ca.sismember("s", "from-b")
    assert ca.zscore("z", "from-b") == 2
    assert ca.hset("h", "from-b", "2") == 0 and ca.hlen("h") == 2
    assert ca.sadd("s", "from-b") == 0 and ca.scard("s") == 2
    assert ca.zadd("z", {"from-b": 3}) == 0 and ca.zcard("z") == 2
    assert ca.hset("h", "from-a", "2") == 0 and ca.hset("h", "new", "1") == 1


def test_chained_replica_follows_its_replica_master(start_server, target):
    a = start_server(master_args(target), name="a")
    b = start_server(replica_args(target, a), name="b")
    c = start_server(replica_args(target, b), name="c")
    ca = a.client()
    write_every_type(a)
    wait_synced(a, c)
    ca.set("through-b", "1")
    assert wait_until(lambda: c.client().get("through-b") == "1", timeout=SYNC_TIMEOUT)


def test_replicas_authenticate_with_masterauth_and_masteruser(start_server, target):
    master = start_server(master_args(target, [("requirepass", "s3cret")]), name="master")
    replica = start_server(replica_args(target, master, [("masterauth", "s3cret")]),
                           name="replica")
    m = master.client(password="s3cret")
    m.execute_command("ACL", "SETUSER", "repl", "on", ">replpw", "+@all", "~*", "&*")
    by_user = start_server(replica_args(target, master, [("masteruser", "repl"),
                                                         ("masterauth", "replpw")]),
                           name="by-user")
    m.set("secret", "data")
    assert m.execute_command("WAIT", 2, 5000) == 2
    assert replica.client().get("secret") == "data"
    assert by_user.client().get("secret") == "data"


def test_messages_published_on_the_master_reach_replica_subscribers(start_server, target):
    master = start_server(master_args(target), name="master")
    replica = start_server(replica_args(target, master), name="replica")
    wait_link_up(replica)
    sub = replica.client().pubsub()
    sub.subscribe("news")
    assert sub.get_message(timeout=5)["type"] == "subscribe"
    m = master.client()
    r = replica.client()
    for i in range(3):
        m.set("latest", i)
        m.publish("news", "item %d" % i)
    for i in range(3):
        msg = sub.get_message(timeout=10)
        assert msg is not None and msg["data"] == "item %d" % i
        # The message travels in order with the data: the write before it is there.
        assert int(r.get("latest")) >= i
    sub.close()


@pytest.mark.basalt_only
def test_scripts_reach_replicas_by_full_sync_and_by_stream(start_server, target):
    master = start_server(name="master")
    m = master.client()
    early = m.script_load("return 'early'")
    replica = start_server(replica_args(target, master), name="replica")
    r = replica.client()
    wait_link_up(replica)
    late = m.script_load("return 'late'")
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert r.evalsha(early, 0) == "early"  # came with the checkpoint
    assert r.evalsha(late, 0) == "late"  # came with the stream
    with pytest.raises(redis.ResponseError, match="READONLY"):
        r.eval("return redis.call('SET', 'k', 'v')", 0)
    m.script_flush()
    assert m.execute_command("WAIT", 1, 5000) == 1
    assert r.script_exists(early, late) == [False, False]


@pytest.mark.basalt_only
def test_replica_without_masterauth_reports_the_refusal(start_server, target):
    master = start_server([("requirepass", "s3cret")], name="master")
    replica = start_server(replica_args(target, master), name="replica")
    assert wait_until(lambda: "NOAUTH" in info_repl(replica).get("master_link_last_error", ""))
    assert info_repl(replica)["master_link_status"] == "down"


WAITAOF_72 = "7.2 command, oracle is 7.0"


@pytest.mark.basalt_only(reason=WAITAOF_72)
def test_wait_after_a_script_waits_for_the_scripts_writes(start_server, target):
    master = start_server(master_args(target), name="master")
    replica = start_server(replica_args(target, master), name="replica")
    wait_link_up(replica)
    m = master.client()
    assert wait_until(lambda: m.execute_command("WAIT", 1, 100) == 1, timeout=10)
    os.kill(replica.proc.pid, signal.SIGSTOP)  # the replica acknowledges nothing from now on
    try:
        writer = master.client()  # no write of its own before the script's
        writer.eval("redis.call('SET', KEYS[1], 'v')", 1, "by-script")
        assert writer.execute_command("WAIT", 1, 300) == 0
    finally:
        os.kill(replica.proc.pid, signal.SIGCONT)
    assert writer.execute_command("WAIT", 1, 5000) == 1
    assert replica.client().get("by-script") == "v"


def test_waitaof_counts_the_fsynced_wal_and_replicas(start_server, target):
    master = start_server(master_args(target), name="master")
    m = master.client()
    # Nothing written yet by this client: its (empty) writes are on disk.
    assert m.execute_command("WAITAOF", 1, 0, 0) == [1, 0]
    m.set("a", "1")
    assert m.execute_command("WAITAOF", 1, 0, 0) == [1, 0]
    # No replica: asking for one waits out the timeout.
    start = time.time()
    assert m.execute_command("WAITAOF", 1, 1, 200) == [1, 0]
    assert time.time() - start >= 0.15
    replica = start_server(replica_args(target, master), name="replica")
    wait_link_up(replica)
    m.set("a", "2")
    assert m.execute_command("WAITAOF", 1, 1, 5000) == [1, 1]
    assert replica.client().get("a") == "2"
    with pytest.raises(redis.ResponseError, match=exact(
            "ERR WAITAOF cannot be used with replica instances. Please also note that writes to "
            "replicas are just local and are not propagated.")):
        replica.client().execute_command("WAITAOF", 0, 0, 0)


@pytest.mark.basalt_only(reason=WAITAOF_72)
@pytest.mark.parametrize("args,error", [
    ((2, 0, 0), "ERR value is out of range, value must between 0 and 1"),
    (("x", 0, 0), "ERR value is not an integer or out of range"),
    ((1, -1, 0), "ERR value is out of range, must be positive"),
    ((1, 0, -5), "ERR timeout is negative"),
    ((1, 0, "x"), "ERR timeout is not an integer or out of range"),
])
def test_waitaof_argument_errors(start_server, target, args, error):
    m = start_server(master_args(target), name="master").client()
    with pytest.raises(redis.ResponseError, match=exact(error)):
        m.execute_command("WAITAOF", *args)


@pytest.mark.basalt_only(reason=WAITAOF_72)
def test_waitaof_in_multi_does_not_wait(start_server, target):
    m = start_server(master_args(target), name="master").client()
    pipe = m.pipeline(transaction=True)
    pipe.set("k", "v")
    pipe.execute_command("WAITAOF", 1, 1, 0)
    assert pipe.execute() == [True, [1, 0]]
