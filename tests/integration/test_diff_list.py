"""Differential test of the list commands: the same random command stream goes
to the server under test and to a real redis-server (the `oracle`); every
reply must be identical, including its RESP type and, for errors, the exact
text. Modelled on test_differential.py (same conventions, self-contained).

Reproduce one failing stream with  DIFF_SEED=<seed> pytest test_diff_list.py -s
(DIFF_COMMANDS overrides the stream length).

Few keys and few distinct values, so that LINSERT/LREM/LPOS find their
pivots and moves between lists (and onto a string key) happen often. After
the stream, and every few hundred commands, every key is compared whole.
"""
import os
import random

import pytest

from diffpair import DiffPair, WeightedGen

KEYS = ["l%d" % i for i in range(6)] + ["s"]  # "s" is often a string: WRONGTYPE paths
VALUES = ["a", "b", "c", "d", "", "x" * 30, "a\x00b", "1"]
SEEDS = [int(os.environ["DIFF_SEED"])] if os.environ.get("DIFF_SEED") else [11, 12, 13, 14]
N_COMMANDS = int(os.environ.get("DIFF_COMMANDS", "3000"))


class Gen(WeightedGen):
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.gens = [
            (10, self.g_push), (3, self.g_pushx), (6, self.g_pop), (3, self.g_llen),
            (4, self.g_lindex), (6, self.g_lrange), (3, self.g_lset), (4, self.g_linsert),
            (4, self.g_lrem), (3, self.g_ltrim), (4, self.g_lpos), (4, self.g_move),
            (3, self.g_lmpop), (1, self.g_del), (1, self.g_string), (1, self.g_keyops),
            (1, self.g_bad),
        ]

    def key(self):
        return self.r.choice(KEYS)

    def val(self):
        return self.r.choice(VALUES)

    def idx(self, span=9):
        return self.r.randint(-span, span)

    def end(self):
        return self.r.choice(["LEFT", "RIGHT", "left", "Right"] * 6 + ["UP"])

    def g_push(self):
        cmd = self.r.choice(["LPUSH", "RPUSH"])
        return [cmd, self.key()] + [self.val() for _ in range(self.r.randint(1, 4))]

    def g_pushx(self):
        cmd = self.r.choice(["LPUSHX", "RPUSHX"])
        return [cmd, self.key()] + [self.val() for _ in range(self.r.randint(1, 2))]

    def g_pop(self):
        args = [self.r.choice(["LPOP", "RPOP"]), self.key()]
        if self.r.random() < 0.4:
            args.append(self.r.choice([0, 1, 2, 3, 10, -1, "x"]))
        return args

    def g_llen(self):
        return ["LLEN", self.key()]

    def g_lindex(self):
        return ["LINDEX", self.key(), self.idx() if self.r.random() < 0.95 else "x"]

    def g_lrange(self):
        return ["LRANGE", self.key(), self.idx(12), self.idx(12)]

    def g_lset(self):
        return ["LSET", self.key(), self.idx(6), self.val()]

    def g_linsert(self):
        where = self.r.choice(["BEFORE", "AFTER", "before", "after"] * 5 + ["MIDDLE"])
        return ["LINSERT", self.key(), where, self.val(), self.val()]

    def g_lrem(self):
        return ["LREM", self.key(), self.r.randint(-3, 3), self.val()]

    def g_ltrim(self):
        return ["LTRIM", self.key(), self.idx(8), self.idx(8)]

    def g_lpos(self):
        r = self.r
        args = ["LPOS", self.key(), self.val()]
        opts = [["RANK", r.choice([1, 2, 3, -1, -2, -4])], ["COUNT", r.choice([0, 1, 2, 5])],
                ["MAXLEN", r.choice([0, 1, 3, 6])]]
        r.shuffle(opts)
        for o in opts[:r.randint(0, 3)]:
            args += o
        if r.random() < 0.05:
            args += r.choice([["RANK", 0], ["COUNT", -1], ["MAXLEN", -2], ["RANK"], ["FOO", 1]])
        return args

    def g_move(self):
        if self.r.random() < 0.3:
            return ["RPOPLPUSH", self.key(), self.key()]
        return ["LMOVE", self.key(), self.key(), self.end(), self.end()]

    def g_lmpop(self):
        r = self.r
        n = r.randint(1, 3)
        args = ["LMPOP", n] + [self.key() for _ in range(n)] + [self.end()]
        if r.random() < 0.5:
            args += ["COUNT", r.choice([1, 2, 5, 0])]
        if r.random() < 0.03:
            args[1] = r.choice([0, n + 1, "x"])
        return args

    def g_del(self):
        return ["DEL", self.key()]

    def g_string(self):
        return self.r.choice([["SET", "s", "str"], ["SET", self.key(), "str"], ["GET", "s"],
                              ["TYPE", self.key()], ["EXISTS", self.key(), self.key()]])

    def g_keyops(self):
        r = self.r
        return r.choice([["RENAME", self.key(), self.key()], ["COPY", self.key(), self.key()],
                         ["EXPIRE", self.key(), 5000], ["PERSIST", self.key()],
                         ["TTL", self.key()]])

    def g_bad(self):
        return self.r.choice([["LPUSH", "l1"], ["LPOP"], ["LRANGE", "l1", 0],
                              ["LPOP", "l1", 1, 2], ["LMPOP", 1, "l1"], ["LSET", "l1", 0]])


class Pair(DiffPair):
    def call(self, args):
        a, b = self.send(args)
        if args[0] == "TTL" and a[0] == b[0] == ":" and a[1] >= 0 and b[1] >= 0:
            ok = abs(a[1] - b[1]) <= 1
        else:
            ok = a == b
        if not ok:
            self.mismatch(args, a, b)
        return a

    def compare_all(self):
        for k in KEYS:
            self.call(["TYPE", k])
            self.call(["LRANGE", k, 0, -1])
            self.call(["LLEN", k])
        self.call(["DBSIZE"])


@pytest.fixture
def pair(diff_pair):
    return lambda seed: diff_pair(seed, cls=Pair)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_list_stream_matches_redis(pair, seed):
    g = Gen(seed)
    p = pair(seed)
    p.call(["FLUSHALL"])
    for step in range(N_COMMANDS):
        if g.r.random() < 0.04:
            p.call(["MULTI"])
            for _ in range(g.r.randint(0, 5)):
                p.call(g.pick())
            p.call(["EXEC"] if g.r.random() < 0.9 else ["DISCARD"])
        else:
            p.call(g.pick())
        if step % 500 == 499:
            p.compare_all()
    p.compare_all()


def test_long_lists_match_redis(pair):
    """Longer lists: middle inserts/removes shift hundreds of elements each way."""
    rnd = random.Random(99)
    p = pair(99)
    p.call(["FLUSHALL"])
    p.call(["RPUSH", "big"] + ["v%d" % (i % 50) for i in range(600)])
    p.call(["LPUSH", "big"] + ["w%d" % (i % 50) for i in range(400)])
    for _ in range(300):
        v = "%s%d" % (rnd.choice("vw"), rnd.randrange(50))
        op = rnd.random()
        if op < 0.3:
            p.call(["LINSERT", "big", rnd.choice(["BEFORE", "AFTER"]), v, "n%d" % rnd.randrange(9)])
        elif op < 0.5:
            p.call(["LREM", "big", rnd.randint(-3, 3), v])
        elif op < 0.65:
            p.call(["LPOS", "big", v, "RANK", rnd.choice([1, 3, -1, -3]), "COUNT", 0])
        elif op < 0.8:
            p.call(["LRANGE", "big", rnd.randint(-1200, 1200), rnd.randint(-1200, 1200)])
        elif op < 0.9:
            p.call(["LSET", "big", rnd.randint(-1100, 1100), v])
        else:
            p.call([rnd.choice(["LPOP", "RPOP"]), "big", rnd.randint(1, 20)])
    p.call(["LTRIM", "big", 100, -100])
    p.call(["LRANGE", "big", 0, -1])
    p.call(["LLEN", "big"])


def random_queue_write(rnd, keys, values):
    """A list write that changes what a later pop of `keys` returns, pops most often."""
    k = rnd.choice(keys)
    op = rnd.random()
    if op < 0.6:
        return [rnd.choice(["LPOP", "RPOP"]), k]
    if op < 0.68:
        return ["LSET", k, rnd.randint(-5, 5), "s%d" % rnd.randrange(99)]
    if op < 0.76:
        return [rnd.choice(["LPUSH", "RPUSH"]), k, "p%d" % rnd.randrange(99)]
    if op < 0.82:
        return ["LINSERT", k, rnd.choice(["BEFORE", "AFTER"]), rnd.choice(values), "i"]
    if op < 0.87:
        return ["LREM", k, rnd.choice([1, -1, 2]), rnd.choice(values)]
    if op < 0.92:
        ends = ["LEFT", "RIGHT"]
        return ["LMOVE", k, rnd.choice(keys), rnd.choice(ends), rnd.choice(ends)]
    if op < 0.96:
        return ["LTRIM", k, rnd.randint(0, 2), rnd.randint(-3, -1)]
    return [rnd.choice(["LPOP", "RPOP"]), k, rnd.randint(1, 3)]


@pytest.mark.parametrize("seed", [21, 22])
def test_pipelined_pops_among_other_list_writes_match_redis(pair, seed):
    """Pipelines of pops among the list writes that change what a pop returns: a run of single
    pops in one write group reads the next elements ahead (src/types/list.cc), and every other
    write in the group must still be seen by the pops after it."""
    rnd = random.Random(seed)
    p = pair(seed)
    p.call(["FLUSHALL"])
    keys = ["q1", "q2"]
    values = ["e%d" % i for i in range(300)]
    for _ in range(80):
        for k in keys:
            if p.call(["LLEN", k])[1] < 60:
                p.call(["RPUSH", k] + values)
        commands = [random_queue_write(rnd, keys, values) for _ in range(rnd.randint(10, 60))]
        p.pipeline(commands)
    for k in keys:
        p.call(["LRANGE", k, 0, -1])
