"""Member filters (Basalt only; src/types/member_filter.h): a hash, set or sorted set this server
started keeps a filter of every member written into it, and a write of a member the filter has
never seen skips its existence read. Replies and sizes must stay exact whether a filter answers,
was dropped under a small budget, or never existed (a renamed collection).
"""
import random

import pytest

from helpers import run_clients

pytestmark = pytest.mark.basalt_only


def absent_answers(r):
    return r.info("rocksdb")["member_filter_absent_answers"]


def test_new_members_skip_their_reads_and_every_reply_stays_exact(r):
    before = absent_answers(r)
    assert sum(r.hset("h", "f%d" % i, "v") for i in range(300)) == 300
    assert sum(r.sadd("s", "m%d" % i) for i in range(300)) == 300
    assert sum(r.zadd("z", {"m%d" % i: i}) for i in range(300)) == 300
    assert absent_answers(r) - before >= 900
    info = r.info("rocksdb")
    assert info["member_filters"] == 3 and info["member_filter_usage"] > 0

    # Members the filter has seen are read: overwrites add nothing.
    assert sum(r.hset("h", "f%d" % i, "w") for i in range(300)) == 0
    assert sum(r.sadd("s", "m%d" % i) for i in range(300)) == 0
    assert sum(r.zadd("z", {"m%d" % i: -i}) for i in range(300)) == 0
    # Removed members stay in the filter, which then only says "maybe": they come back as new.
    assert r.hdel("h", "f1", "f2") == 2 and r.hset("h", "f1", "x") == 1
    assert r.srem("s", "m1", "m2") == 2 and r.sadd("s", "m1") == 1
    assert r.zrem("z", "m1", "m2") == 2 and r.zadd("z", {"m1": 5}) == 1
    # Never-seen members that a remove names are known absent without a read.
    assert r.hdel("h", "nope") == 0 and r.srem("s", "nope") == 0 and r.zrem("z", "nope") == 0
    # A member named twice in one command is counted once: the second is the batch's own write.
    assert r.execute_command("HSET", "h", "d", "1", "d", "2") == 1 and r.hget("h", "d") == "2"
    assert r.execute_command("SADD", "s", "d", "d") == 1
    assert r.execute_command("ZADD", "z", 1, "d", 2, "d") == 1 and r.zscore("z", "d") == 2
    assert r.hlen("h") == 300 and r.scard("s") == 300 and r.zcard("z") == 300
    assert r.hincrby("h", "counter", 2) == 2 and r.hincrby("h", "counter", 3) == 5
    assert r.hsetnx("h", "fresh", "1") == 1 and r.hsetnx("h", "fresh", "2") == 0


def test_a_collection_recreated_or_renamed_starts_over(r):
    r.sadd("s", "a", "b")
    r.delete("s")
    assert r.sadd("s", "a") == 1  # a new incarnation: its own, empty filter
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.rename("h", "h2")  # members copied to a new incarnation that has no filter
    assert r.hset("h2", "a", "3") == 0 and r.hset("h2", "c", "3") == 1 and r.hlen("h2") == 3
    r.zadd("z", {"a": 1})
    r.copy("z", "z2")
    assert r.zadd("z2", {"a": 2}) == 0 and r.zcard("z2") == 1
    r.sadd("x", "a", "b")
    r.sinterstore("y", ["x"])
    assert r.sadd("y", "a") == 0 and r.sadd("y", "c") == 1


def test_replies_stay_exact_when_a_small_budget_drops_filters_all_the_time(r):
    rng = random.Random(5)
    model = {}
    try:
        assert r.config_set("member-filter-size", "4kb")
        for step in range(3000):
            key = "k%d" % rng.randrange(40)
            member = "m%d" % rng.randrange(60)
            kind = ("h", "s", "z")[hash(key) % 3]
            members = model.setdefault(key, set())
            if rng.random() < 0.7:
                new = member not in members
                got = {"h": lambda: r.hset(key, member, "v"),
                       "s": lambda: r.sadd(key, member),
                       "z": lambda: r.zadd(key, {member: step})}[kind]()
                assert got == (1 if new else 0), (step, key, member)
                members.add(member)
            else:
                present = member in members
                got = {"h": lambda: r.hdel(key, member),
                       "s": lambda: r.srem(key, member),
                       "z": lambda: r.zrem(key, member)}[kind]()
                assert got == (1 if present else 0), (step, key, member)
                members.discard(member)
            if step == 1500:
                assert r.config_set("member-filter-size", "0")  # none at all for a while
            if step == 2000:
                assert r.config_set("member-filter-size", "64kb")
        assert r.info("rocksdb")["member_filter_usage"] <= 64 * 1024
    finally:
        r.config_set("member-filter-size", "64mb")
    for key, members in model.items():
        kind = ("h", "s", "z")[hash(key) % 3]
        size = {"h": r.hlen, "s": r.scard, "z": r.zcard}[kind](key)
        assert size == len(members), key


def test_concurrent_writers_of_one_hash_count_each_new_field_once(server, r):
    added = []

    def write(c, t, i):
        # Four clients write overlapping fields: each field is new for exactly one of them.
        added.append(c.hset("h", "f%d" % ((i * 7 + t * 3) % 500), "v"))

    run_clients(server, 4, 400, write)
    assert sum(added) == r.hlen("h")
    assert r.hlen("h") == len({(i * 7 + t * 3) % 500 for t in range(4) for i in range(400)})


def test_reads_of_members_never_written_are_answered_by_the_filter(r):
    r.hset("h", mapping={"f%d" % i: "v%d" % i for i in range(100)})
    r.sadd("s", *["m%d" % i for i in range(100)])
    r.sadd("small", "m5", "nope", "m7")
    r.zadd("z", {"m%d" % i: i for i in range(100)})
    before = absent_answers(r)
    assert r.hget("h", "nope") is None and r.hexists("h", "nope") is False
    assert r.hmget("h", "f1", "nope") == ["v1", None] and r.hstrlen("h", "nope") == 0
    assert r.sismember("s", "nope") == 0
    assert r.smismember("s", ["m1", "nope"]) == [1, 0]
    assert r.zscore("z", "nope") is None and r.zmscore("z", ["m2", "nope"]) == [2.0, None]
    assert r.zrank("z", "nope") is None and r.zrevrank("z", "nope") is None
    # The intersection walks the smaller set and looks its members up in the larger one.
    assert sorted(r.sinter("small", "s")) == ["m5", "m7"]
    assert r.smove("s", "small", "nope") is False
    assert absent_answers(r) - before == 12
    # Present members are still read, removed ones are gone, and a member written earlier in
    # the same transaction is found.
    assert r.hget("h", "f99") == "v99" and r.sismember("s", "m99") and r.zscore("z", "m99") == 99
    r.hdel("h", "f99")
    assert r.hget("h", "f99") is None
    p = r.pipeline(transaction=True)
    p.sadd("s", "fresh").sismember("s", "fresh").hset("h", "fresh", "1").hget("h", "fresh")
    p.zadd("z", {"fresh": 7}).zscore("z", "fresh")
    assert p.execute() == [1, 1, 1, "1", 1, 7.0]
