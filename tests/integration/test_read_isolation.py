"""A read of one key sees the key as it was between two writes, never in the middle of one.

In Basalt a read of a collection is several RocksDB lookups (the key's metadata, then its
elements); these tests run such reads while other clients keep writing the same key, and check
that every reply is one the key could have had. Redis runs one command at a time, so they hold
for it trivially (`--target redis`).
"""
import threading
import time

import redis

SECONDS = 2.0
WRITERS = 4


def hammer(server, write, read, check):
    """Runs `write(client)` in WRITERS threads and `read(client)` in one, for SECONDS; returns
    the failures `check(reply)` found plus any error reply either side got."""
    stop = time.time() + SECONDS
    failures = []

    def writer():
        c = server.client()
        while time.time() < stop and not failures:
            try:
                write(c)
            except redis.ResponseError as e:
                failures.append("write: %s" % e)

    def reader():
        c = server.client()
        reads = 0
        while time.time() < stop and not failures:
            try:
                problem = check(read(c))
            except redis.ResponseError as e:
                problem = "read: %s" % e
            if problem:
                failures.append(problem)
            reads += 1
        assert reads > 0

    threads = [threading.Thread(target=writer) for _ in range(WRITERS)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def test_lrange_never_sees_half_of_a_push_or_pop(server, r):
    r.rpush("q", *["seed"] * 20)

    def write(c):
        # Separate commands, so that the list's head really moves between the reads.
        c.lpush("q", "x", "x", "x")
        c.lpop("q", 3)

    def check(reply):
        # Every command leaves at least the 20 seeds: LRANGE 0 10 always has 11 elements.
        return None if len(reply) == 11 else "LRANGE 0 10 returned %d elements" % len(reply)

    assert hammer(server, write, lambda c: c.lrange("q", 0, 10), check) == []


def test_hgetall_never_sees_half_of_a_write(server, r):
    r.hset("h", mapping={"seed%d" % i: "v" for i in range(20)})

    def write(c):
        c.hset("h", mapping={"f1": "v", "f2": "v", "f3": "v"})
        c.hdel("h", "f1", "f2", "f3")

    def check(reply):
        # Each HSET adds the three fields together and each HDEL removes them together.
        return None if len(reply) in (20, 23) else "HGETALL returned %d fields" % len(reply)

    assert hammer(server, write, lambda c: c.hgetall("h"), check) == []
