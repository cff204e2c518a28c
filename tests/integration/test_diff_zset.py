"""Differential test of the sorted-set commands: the same random command stream goes to the
server under test and to a real redis-server (the `oracle`); every reply must be identical,
including its RESP type and, for errors, the exact text. Half the streams speak RESP3, so
score doubles and map/array shapes are compared too.

Reproduce one failing stream with  ZSET_DIFF_SEED=<seed> pytest test_diff_zset.py -s
(DIFF_COMMANDS overrides the stream length).

Normalization (only what may legitimately differ):
  * ZRANDMEMBER: reply type and length must match, members must be distinct for a positive
    count, and every returned member must be a member on the oracle.
  * ZSCAN: each side is iterated to cursor 0 and the collected (member, score) sets compared.
Few members and many tied scores, so lexicographic tie-breaks and BYLEX ranges are exercised.
ZRANK ... WITHSCORE is not generated: the oracle (Redis 7.0) predates it.
"""
import os
import random

import pytest

from diffpair import DiffPair, WeightedGen
from helpers import wait_until

KEYS = ["z%d" % i for i in range(5)] + ["str"]  # "str" is often a string: WRONGTYPE paths
MEMBERS = ["a", "b", "c", "d", "e", "f", "g", "", "m\x00n", "10", "2"]
SCORES = ["0", "1", "1", "2", "-1", "1.5", "-2.5", "3e2", "+inf", "-inf", "0.1", "100"]
SEEDS = [int(os.environ["ZSET_DIFF_SEED"])] if os.environ.get("ZSET_DIFF_SEED") else [31, 32, 33, 34]
N_COMMANDS = int(os.environ.get("DIFF_COMMANDS", "2000"))


class Gen(WeightedGen):
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.gens = [
            (12, self.g_zadd), (3, self.g_zincrby), (4, self.g_zrem), (3, self.g_zcard),
            (3, self.g_zscore), (4, self.g_zrank), (8, self.g_zrange), (4, self.g_zrange_old),
            (3, self.g_zcount), (3, self.g_zpop), (2, self.g_zmpop), (3, self.g_zremrange),
            (4, self.g_setop), (2, self.g_zrangestore), (1, self.g_keyops), (1, self.g_bad),
        ]

    def key(self):
        return self.r.choice(KEYS)

    def member(self):
        return self.r.choice(MEMBERS)

    def score(self):
        return self.r.choice(SCORES)

    def score_bound(self):
        s = self.r.choice(SCORES + ["(1", "(0", "(-inf", "(+inf", "abc", "(2.5"])
        return s

    def lex_bound(self):
        return self.r.choice(["-", "+", "[a", "(a", "[c", "(d", "[", "(", "[10", "a", "[\x00"])

    def g_zadd(self):
        r = self.r
        args = ["ZADD", self.key()]
        for flag in ["NX", "XX", "GT", "LT", "CH"]:
            if r.random() < 0.1:
                args.append(flag)
        if r.random() < 0.08:
            return args + ["INCR", self.score(), self.member()]
        for _ in range(r.randint(1, 4)):
            args += [self.score(), self.member()]
        if r.random() < 0.03:
            args += ["nan", "x"]
        return args

    def g_zincrby(self):
        return ["ZINCRBY", self.key(), self.r.choice(SCORES + ["abc"]), self.member()]

    def g_zrem(self):
        return ["ZREM", self.key()] + [self.member() for _ in range(self.r.randint(1, 3))]

    def g_zcard(self):
        return ["ZCARD", self.key()]

    def g_zscore(self):
        if self.r.random() < 0.5:
            return ["ZSCORE", self.key(), self.member()]
        return ["ZMSCORE", self.key()] + [self.member() for _ in range(self.r.randint(1, 3))]

    def g_zrank(self):
        return [self.r.choice(["ZRANK", "ZREVRANK"]), self.key(), self.member()]

    def g_zrange(self):
        r = self.r
        args = ["ZRANGE", self.key()]
        mode = r.choice(["rank", "rank", "score", "lex"])
        if mode == "rank":
            args += [r.randint(-8, 8), r.randint(-8, 8)]
        elif mode == "score":
            args += [self.score_bound(), self.score_bound(), "BYSCORE"]
        else:
            args += [self.lex_bound(), self.lex_bound(), "BYLEX"]
        if r.random() < 0.3:
            args.append("REV")
        if mode != "rank" and r.random() < 0.3:
            args += ["LIMIT", r.randint(-1, 3), r.randint(-1, 4)]
        if mode != "lex" and r.random() < 0.4:
            args.append("WITHSCORES")
        return args

    def g_zrange_old(self):
        r = self.r
        k = self.key()
        cmd = r.choice(["ZREVRANGE", "ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX",
                        "ZREVRANGEBYLEX"])
        if cmd == "ZREVRANGE":
            args = [cmd, k, r.randint(-6, 6), r.randint(-6, 6)]
        elif "LEX" in cmd:
            args = [cmd, k, self.lex_bound(), self.lex_bound()]
        else:
            args = [cmd, k, self.score_bound(), self.score_bound()]
        if "LEX" not in cmd and r.random() < 0.4:
            args.append("WITHSCORES")
        if cmd != "ZREVRANGE" and r.random() < 0.3:
            args += ["LIMIT", r.randint(0, 2), r.randint(-1, 3)]
        return args

    def g_zcount(self):
        if self.r.random() < 0.5:
            return ["ZCOUNT", self.key(), self.score_bound(), self.score_bound()]
        return ["ZLEXCOUNT", self.key(), self.lex_bound(), self.lex_bound()]

    def g_zpop(self):
        args = [self.r.choice(["ZPOPMIN", "ZPOPMAX"]), self.key()]
        if self.r.random() < 0.5:
            args.append(self.r.choice([0, 1, 2, 5, -1]))
        return args

    def g_zmpop(self):
        n = self.r.randint(1, 3)
        args = ["ZMPOP", n] + [self.key() for _ in range(n)] + [self.r.choice(["MIN", "MAX"])]
        if self.r.random() < 0.5:
            args += ["COUNT", self.r.choice([1, 2, 10, 0])]
        return args

    def g_zremrange(self):
        r = self.r
        cmd = r.choice(["ZREMRANGEBYRANK", "ZREMRANGEBYSCORE", "ZREMRANGEBYLEX"])
        if cmd == "ZREMRANGEBYRANK":
            return [cmd, self.key(), r.randint(-5, 5), r.randint(-5, 5)]
        if cmd == "ZREMRANGEBYSCORE":
            return [cmd, self.key(), self.score_bound(), self.score_bound()]
        return [cmd, self.key(), self.lex_bound(), self.lex_bound()]

    def g_setop(self):
        r = self.r
        op = r.choice(["ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE",
                       "ZINTERCARD"])
        n = r.randint(1, 3)
        keys = [self.key() for _ in range(n)]
        args = [op] + ([self.key()] if op.endswith("STORE") else []) + [n] + keys
        if op in ("ZUNION", "ZINTER", "ZUNIONSTORE", "ZINTERSTORE"):
            if r.random() < 0.3:
                args += ["WEIGHTS"] + [r.choice([1, 2, -1, 0.5, 0]) for _ in range(n)]
            if r.random() < 0.3:
                args += ["AGGREGATE", r.choice(["SUM", "MIN", "MAX"])]
        if op == "ZINTERCARD" and r.random() < 0.4:
            args += ["LIMIT", r.choice([0, 1, 3])]
        if op in ("ZUNION", "ZINTER", "ZDIFF") and r.random() < 0.5:
            args.append("WITHSCORES")
        return args

    def g_zrangestore(self):
        r = self.r
        args = ["ZRANGESTORE", self.key(), self.key()]
        if r.random() < 0.5:
            return args + [r.randint(-5, 5), r.randint(-5, 5)]
        return args + [self.score_bound(), self.score_bound(), "BYSCORE"] + (
            ["REV"] if r.random() < 0.3 else [])

    def g_keyops(self):
        r = self.r
        return r.choice([["DEL", self.key()], ["RENAME", self.key(), self.key()],
                         ["COPY", self.key(), self.key(), "REPLACE"], ["TYPE", self.key()],
                         ["SET", "str", "x"], ["EXPIRE", self.key(), 1000], ["PERSIST", self.key()],
                         ["EXISTS", self.key()]])

    def g_bad(self):
        return self.r.choice([
            ["ZADD", "z1"], ["ZADD", "z1", "1"], ["ZADD", "z1", "NX", "XX", "1", "a"],
            ["ZADD", "z1", "GT", "LT", "1", "a"], ["ZADD", "z1", "INCR", "1", "a", "2", "b"],
            ["ZRANGE", "z1", 0, 1, "BYLEX"], ["ZRANGE", "z1", 0, 1, "LIMIT", 0, 1],
            ["ZRANGE", "z1", 0, 1, "BYLEX", "WITHSCORES"], ["ZRANGEBYSCORE", "z1", "x", "1"],
            ["ZUNIONSTORE", "d", 0, "z1"], ["ZUNION", 2, "z1"], ["ZINTER", 1, "z1", "WEIGHTS"],
            ["ZMPOP", 0, "z1", "MIN"], ["ZMPOP", 1, "z1", "UP"], ["ZPOPMIN", "z1", "x"],
            ["ZINCRBY", "z1", "nan", "a"], ["ZRANDMEMBER", "z1", "x"],
        ])


class Pair(DiffPair):
    def scan_all(self, conn, key):
        cursor, seen = "0", set()
        while True:
            t, v = conn.call("ZSCAN", key, cursor, "COUNT", 3)
            if t == "-":
                return (t, v)
            cursor = v[0][1].decode()
            items = v[1][1]
            seen.update(zip([x[1] for x in items[0::2]], [x[1] for x in items[1::2]]))
            if cursor == "0":
                return seen

    def zscan(self, key):
        self.note("ZSCAN %r (to cursor 0)" % key)
        a, b = (self.scan_all(c, key) for c in self.slots[0])
        if a != b:
            self.mismatch(["ZSCAN", key], a, b)

    def zrandmember(self, key, count):
        args = ["ZRANDMEMBER", key] + ([] if count is None else [count])
        a, b = self.send(args)
        if a[0] != b[0] or a[0] not in ("*", "$", "_", "~"):
            if a != b:
                self.mismatch(args, a, b)
            return
        if a[0] == "*":
            if len(a[1]) != len(b[1]):
                self.mismatch(args, a, b)
            names = [x[1] for x in a[1]]
            if count is not None and count > 0 and len(set(names)) != len(names):
                self.mismatch(args, a, b)
            for n in names:
                if self.oracle().call("ZSCORE", key, n)[0] not in ("$", ","):
                    self.mismatch(args, a, b)

    def compare_all(self):
        for k in KEYS:
            self.call(["TYPE", k])
            self.call(["ZRANGE", k, 0, -1, "WITHSCORES"])
            self.call(["ZCARD", k])
        self.call(["DBSIZE"])


@pytest.fixture
def pair(diff_pair):
    return lambda seed, resp3: diff_pair(seed, cls=Pair, resp3_slots=(0,) if resp3 else ())


@pytest.mark.parametrize("seed", SEEDS)
def test_random_zset_stream_matches_redis(pair, seed):
    g = Gen(seed)
    p = pair(seed, resp3=seed % 2 == 0)
    p.call(["FLUSHALL"])
    for step in range(N_COMMANDS):
        x = g.r.random()
        if x < 0.03:
            p.call(["MULTI"])
            for _ in range(g.r.randint(0, 4)):
                p.call(g.pick())
            p.call(["EXEC"])
        elif x < 0.05:
            p.zrandmember(g.key(), g.r.choice([None, 1, 3, -3, 20, -20, 0]))
        elif x < 0.06:
            p.zscan(g.key())
        else:
            p.call(g.pick())
        if step % 400 == 399:
            p.compare_all()
    p.compare_all()


def random_pop_queue_write(rnd, keys):
    """A sorted-set write that changes what a later pop of `keys` returns, pops most often."""
    k = rnd.choice(keys)
    member = "m%d" % rnd.randrange(400)
    op = rnd.random()
    if op < 0.6:
        return [rnd.choice(["ZPOPMIN", "ZPOPMIN", "ZPOPMAX"]), k]
    if op < 0.7:  # new members and moved ones, often below or above everything
        return ["ZADD", k, rnd.choice([-1000, rnd.randrange(400), 5000]), member]
    if op < 0.78:
        return ["ZREM", k, member]
    if op < 0.84:
        return ["ZINCRBY", k, rnd.choice([-500, 1, 500]), member]
    if op < 0.9:
        return ["ZREMRANGEBYRANK", k, rnd.choice([0, 1, -2]), rnd.choice([0, 1, -1])]
    if op < 0.95:
        return [rnd.choice(["ZPOPMIN", "ZPOPMAX"]), k, rnd.randint(1, 3)]
    return ["ZMPOP", 1, k, rnd.choice(["MIN", "MAX"])]


@pytest.mark.parametrize("seed", [31, 32])
def test_pipelined_pops_among_other_zset_writes_match_redis(pair, seed):
    """Pipelines of pops among the writes that change what a pop returns: a run of single pops
    in one write group takes its members from entries read ahead (src/types/zset.cc), which every
    other write to the score index must invalidate or advance."""
    rnd = random.Random(seed)
    p = pair(seed, resp3=False)
    p.call(["FLUSHALL"])
    keys = ["z1", "z2"]
    for _ in range(80):
        for k in keys:
            if p.call(["ZCARD", k])[1] < 60:
                args = []
                for i in range(300):
                    args += [rnd.randrange(1000), "m%d" % i]
                p.call(["ZADD", k] + args)
        commands = [random_pop_queue_write(rnd, keys) for _ in range(rnd.randint(10, 60))]
        p.pipeline(commands)
    for k in keys:
        p.call(["ZRANGE", k, 0, -1, "WITHSCORES"])


def random_beyond_mark_command(rnd, key):
    """A command on a sorted set whose pops have set marks at both ends: adds land below the low
    mark and above the high one (listed in the metadata until they overflow it, and members
    over 256 bytes never are), pops and removals take them again, and reads start from either
    end or from a score inside the range."""
    def member():
        if rnd.random() < 0.05:
            return "L" * 300 + str(rnd.randrange(20))
        return "m%d" % rnd.randrange(300)

    op = rnd.random()
    if op < 0.3:
        return ["ZADD", key, rnd.randrange(1000), member()]
    if op < 0.5:
        return [rnd.choice(["ZPOPMIN", "ZPOPMAX"]), key] + ([rnd.randint(1, 4)] if rnd.random() < 0.2 else [])
    if op < 0.57:
        return ["ZREM", key, member()]
    if op < 0.62:
        return ["ZINCRBY", key, rnd.choice([-300, -1, 1, 300]), member()]
    if op < 0.7:
        start = rnd.choice([0, 1, 3, -1, -4])
        return ["ZRANGE", key, start, start + rnd.randint(0, 5), "WITHSCORES"]
    if op < 0.78:
        lo = rnd.randrange(1000)
        return [rnd.choice(["ZRANGEBYSCORE", "ZCOUNT"]), key, lo, rnd.choice([lo + 50, "+inf"])]
    if op < 0.85:
        hi = rnd.randrange(1000)
        return ["ZREVRANGEBYSCORE", key, rnd.choice([hi, "(%d" % hi, "+inf"]), hi - 80,
                "LIMIT", 0, 4]
    if op < 0.93:
        return [rnd.choice(["ZRANK", "ZREVRANK"]), key, member()]
    if op < 0.96:
        return ["ZRANGEBYLEX", key, "-", "+", "LIMIT", 0, 3]
    return ["ZCARD", key]


@pytest.mark.parametrize("seed", [41, 42])
def test_sorted_set_fed_beyond_its_pop_marks_matches_redis(pair, seed):
    """A priority queue with random priorities: what the metadata lists beyond each end's pop
    mark (src/types/metadata.h, ZsetEnd) must agree with the members themselves, alone and in
    pipelines, across list overflow and long members."""
    rnd = random.Random(seed)
    p = pair(seed, resp3=seed % 2 == 0)
    p.call(["FLUSHALL"])
    for _ in range(60):
        if p.call(["ZCARD", "q"])[1] < 40:
            args = []
            for _ in range(200):
                args += [rnd.randrange(1000), "m%d" % rnd.randrange(300)]
            p.call(["ZADD", "q"] + args)
            p.call(["ZPOPMIN", "q", 20])
            p.call(["ZPOPMAX", "q", 20])
        commands = [random_beyond_mark_command(rnd, "q") for _ in range(rnd.randint(5, 40))]
        if rnd.random() < 0.5:
            p.pipeline(commands)
        else:
            for c in commands:
                p.call(c)
        p.call(["ZRANGE", "q", 0, -1, "WITHSCORES"])


def popped_members_command(rnd, popped):
    """A read of a sorted set through its `subkey` entries, where pops leave the popped members'
    entries in place (src/types/zset.h, ZsetMemberLive), or a write that meets such an entry."""
    member = rnd.choice(popped) if popped and rnd.random() < 0.7 else "m%d" % rnd.randrange(3000)
    op = rnd.random()
    if op < 0.15:
        return ["ZSCORE", "q", member]
    if op < 0.22:
        return ["ZMSCORE", "q", member, rnd.choice(popped or [member]), "m1"]
    if op < 0.3:
        return [rnd.choice(["ZRANK", "ZREVRANK"]), "q", member]
    if op < 0.4:  # popped members added back, some beyond the marks (listed, or moving them)
        return ["ZADD", "q"] + rnd.choice([["NX"], ["XX"], ["GT"], []]) + [
            rnd.choice([-5000 - rnd.randrange(100), rnd.randrange(1000), 9000]), member]
    if op < 0.45:
        return ["ZINCRBY", "q", rnd.choice([-1, 7]), member]
    if op < 0.5:
        return ["ZREM", "q", member]
    if op < 0.56:
        return [rnd.choice(["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"]), "d", 2, "q", "u"]
    if op < 0.6:
        return ["ZINTERCARD", 2, "u", "q"]
    if op < 0.66:
        return ["ZRANGEBYLEX", "u", rnd.choice(["-", "[m1", "(m5"]), "+", "LIMIT", 0, 5]
    if op < 0.7:
        return ["ZREVRANGEBYLEX", "u", "+", "-", "LIMIT", 0, 5]
    if op < 0.74:
        return ["COPY", "q", "q2", "REPLACE"]
    return [rnd.choice(["ZPOPMIN", "ZPOPMAX"]), rnd.choice(["q", "q", "u"]), rnd.randint(1, 40)]


@pytest.mark.parametrize("seed", [51, 52])
def test_popped_members_are_gone_from_every_read_of_their_set(pair, seed):
    """Pops write no `subkey` tombstones: every reader of those entries (ZSCORE, ZRANK, ZSCAN,
    ZRANDMEMBER, lex ranges of a set of equal scores, the set operations, COPY, ZADD's and
    ZINCRBY's lookups) must skip the popped members, also after adds that move a mark outward,
    after a flush (which filters) and after a full compaction (the filter drops them)."""
    rnd = random.Random(seed)
    p = pair(seed, resp3=seed % 2 == 0)
    p.call(["FLUSHALL"])
    args = []
    for i in range(3000):
        args += [rnd.randrange(1000), "m%d" % i]
    p.call(["ZADD", "q"] + args)
    p.call(["ZADD", "u"] + [x for i in range(0, 3000, 3) for x in (0, "m%d" % i)])
    popped = []
    for rnd_round in range(30):
        for key in ("q", "u"):
            t, v = p.call([rnd.choice(["ZPOPMIN", "ZPOPMAX"]), key, rnd.randint(20, 60)])
            # RESP2: member, score, ...; RESP3: [member, score] pairs.
            names = [x[1][0] if x[0] == "*" else x for x in v] if seed % 2 == 0 else v[0::2]
            popped += [n[1].decode() for n in names]
        commands = [popped_members_command(rnd, popped) for _ in range(rnd.randint(10, 40))]
        if rnd.random() < 0.5:
            p.pipeline(commands)
        else:
            for c in commands:
                p.call(c)
        p.zscan("q")
        p.zrandmember("q", rnd.choice([30, -30, 5000]))
        if rnd_round % 10 == 9:
            p.call(["SAVE"])  # the flush filters what the marks say is dead
            # COMPACT starts a compaction in the background and refuses while the previous
            # one still runs, which a loaded machine can make outlast ten rounds.
            assert wait_until(lambda: p.tested().call("COMPACT")[0] == "+", timeout=120,
                              interval=0.1)
            p.call(["ZRANGE", "q", 0, -1, "WITHSCORES"])
    for key in ("q", "u", "q2", "d"):
        p.call(["ZRANGE", key, 0, -1, "WITHSCORES"])
        p.call(["ZCARD", key])
