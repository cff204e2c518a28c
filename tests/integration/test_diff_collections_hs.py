"""Differential testing of the hash and set commands.

The same seeded random command stream goes to the server under test and to a real
redis-server (the `oracle`); replies must match exactly, including RESP type and error text.
Half the connections speak RESP3, so map/set reply types are compared too.

Reproduce one failing stream with HS_DIFF_SEED=<seed> pytest -s test_diff_collections_hs.py
(HS_DIFF_COMMANDS overrides the stream length).

Normalization (only what may legitimately differ):
  * order of multi-member replies (HKEYS, HVALS, HGETALL, SMEMBERS, SINTER/SUNION/SDIFF, ...):
    compared sorted (HGETALL as sorted field/value pairs);
  * HSCAN/SSCAN: each side is iterated to cursor 0 and the collected sets compared;
  * SRANDMEMBER/HRANDFIELD: reply type and count must match, distinctness for positive
    counts, and every returned member (and value) must exist on the oracle;
  * SPOP: type and count must match and the popped members must be members; when the two
    servers popped different members, the oracle is brought to the tested server's state
    (its own pops re-added, the other's removed, which also proves they were members).
Random-output commands are not generated inside MULTI.
"""
import os
import random

import pytest

from diffpair import DiffPair, WeightedGen

HKEYS = ["h%d" % i for i in range(5)]
SKEYS = ["s%d" % i for i in range(5)]
OTHER = ["str", "nokey"]
ALL_KEYS = HKEYS + SKEYS + OTHER
FIELDS = ["f%d" % i for i in range(8)] + ["", "a\x00b", "long" * 10]
MEMBERS = ["m%d" % i for i in range(10)] + ["", "1", "x\r\ny"]
VALUES = ["", "v", "0", "1", "-1", "42", "3.5", "-2.25", "1e3", " 7", "007", "abc",
          "9223372036854775807", "-9223372036854775808", "inf", "x" * 30,
          "L" * 4095, "L" * 4096, "B" * 9000]  # around Basalt's large-value threshold (4096)
INCRS = [1, -1, 5, 100, 0, 9223372036854775807, -9223372036854775808, "abc", "1.5"]
FLOAT_INCRS = ["0.1", "1.5", "-2.25", "3", "1e3", "0", "abc", "inf", "1e-3"]
PATTERNS = ["*", "f1*", "m?", "*0", "nomatch", "[fm][0-3]"]
SEEDS = [int(os.environ["HS_DIFF_SEED"])] if os.environ.get("HS_DIFF_SEED") else [1, 2, 3, 4]
N_COMMANDS = int(os.environ.get("HS_DIFF_COMMANDS", "1500"))


class Gen(WeightedGen):
    """Random deterministic commands; each generator returns (args, kind)."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.gens = [
            (8, self.g_hset), (2, self.g_hsetnx), (5, self.g_hget), (2, self.g_hmget),
            (1, self.g_hmset), (3, self.g_hdel), (2, self.g_hlen), (1, self.g_hstrlen),
            (2, self.g_hexists), (3, self.g_hincrby), (2, self.g_hincrbyfloat),
            (2, self.g_hread_all), (8, self.g_sadd), (3, self.g_srem), (2, self.g_scard),
            (2, self.g_sismember), (1, self.g_smismember), (2, self.g_smembers),
            (3, self.g_setop), (2, self.g_setop_store), (2, self.g_sintercard),
            (2, self.g_smove), (2, self.g_generic), (1, self.g_bad),
        ]

    def key(self, pool):
        return self.r.choice(pool if self.r.random() < 0.85 else ALL_KEYS)

    def hk(self):
        return self.key(HKEYS)

    def sk(self):
        return self.key(SKEYS)

    def field(self):
        return self.r.choice(FIELDS)

    def member(self):
        return self.r.choice(MEMBERS)

    def val(self):
        return self.r.choice(VALUES)

# -- hashes ------------------------------------------------------------------------------------
    def g_hset(self):
        args = [self.r.choice(["HSET", "HSET", "HMSET"]), self.hk()]
        for _ in range(self.r.randint(1, 3)):
            args += [self.field(), self.val()]
        if self.r.random() < 0.05:
            args.pop()
        return args, None

    def g_hsetnx(self):
        return ["HSETNX", self.hk(), self.field(), self.val()], None

    def g_hget(self):
        return ["HGET", self.hk(), self.field()], None

    def g_hmget(self):
        return ["HMGET", self.hk()] + [self.field() for _ in range(self.r.randint(1, 4))], None

    def g_hmset(self):
        return ["HMSET", self.hk(), self.field(), self.val()], None

    def g_hdel(self):
        return ["HDEL", self.hk()] + [self.field() for _ in range(self.r.randint(1, 3))], None

    def g_hlen(self):
        return ["HLEN", self.hk()], None

    def g_hstrlen(self):
        return ["HSTRLEN", self.hk(), self.field()], None

    def g_hexists(self):
        return ["HEXISTS", self.hk(), self.field()], None

    def g_hincrby(self):
        return ["HINCRBY", self.hk(), self.field(), self.r.choice(INCRS)], None

    def g_hincrbyfloat(self):
        return ["HINCRBYFLOAT", self.hk(), self.field(), self.r.choice(FLOAT_INCRS)], None

    def g_hread_all(self):
        cmd = self.r.choice(["HKEYS", "HVALS", "HGETALL"])
        return [cmd, self.hk()], "pairs" if cmd == "HGETALL" else "sorted"

# -- sets --------------------------------------------------------------------------------------
    def g_sadd(self):
        return ["SADD", self.sk()] + [self.member() for _ in range(self.r.randint(1, 4))], None

    def g_srem(self):
        return ["SREM", self.sk()] + [self.member() for _ in range(self.r.randint(1, 3))], None

    def g_scard(self):
        return ["SCARD", self.sk()], None

    def g_sismember(self):
        return ["SISMEMBER", self.sk(), self.member()], None

    def g_smismember(self):
        return ["SMISMEMBER", self.sk()] + [self.member() for _ in range(3)], None

    def g_smembers(self):
        return ["SMEMBERS", self.sk()], "sorted"

    def g_setop(self):
        cmd = self.r.choice(["SINTER", "SUNION", "SDIFF"])
        return [cmd] + [self.sk() for _ in range(self.r.randint(1, 3))], "sorted"

    def g_setop_store(self):
        cmd = self.r.choice(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"])
        dst = self.r.choice(SKEYS + ["str"])
        return [cmd, dst] + [self.sk() for _ in range(self.r.randint(1, 3))], None

    def g_sintercard(self):
        n = self.r.randint(1, 3)
        args = ["SINTERCARD", self.r.choice([n, n, n, 0, n + 1, "x"])]
        args += [self.sk() for _ in range(n)]
        if self.r.random() < 0.4:
            args += ["LIMIT", self.r.choice([0, 1, 2, 5, -1])]
        return args, None

    def g_smove(self):
        return ["SMOVE", self.sk(), self.sk(), self.member()], None

# -- keyspace and errors -----------------------------------------------------------------------
    def g_generic(self):
        r = self.r
        k = r.choice(ALL_KEYS)
        return r.choice([["DEL", k], ["EXISTS", k], ["TYPE", k], ["SET", "str", "v"],
                         ["EXPIRE", k, 5000], ["PERSIST", k], ["SET", k, "1"],
                         ["RENAME", r.choice(HKEYS + SKEYS), r.choice(ALL_KEYS)],
                         ["COPY", r.choice(HKEYS + SKEYS), r.choice(ALL_KEYS), "REPLACE"]]), None

    def g_bad(self):
        return self.r.choice([["HSET", "h0"], ["HGET", "h0"], ["SADD", "s0"], ["SPOP"],
                              ["HSCAN", "h0", "x"], ["SSCAN", "s0", "0", "COUNT", "0"],
                              ["SPOP", "s0", "-1"], ["SPOP", "s0", "1", "2"],
                              ["SRANDMEMBER", "s0", "x"], ["HRANDFIELD", "h0", "1", "foo"],
                              ["SINTERCARD", "1", "s0", "LIMIT"]]), None


def _norm(reply, kind):
    t, v = reply
    if kind == "sorted" and t in ("*", "~") and v is not None:
        return (t, sorted(v))
    if kind == "pairs" and t == "*" and v is not None:
        return (t, sorted(zip(v[::2], v[1::2])))
    if kind == "pairs" and t == "%":
        return (t, sorted(v))
    return reply


class Pair(DiffPair):
    """Two slots: 0 speaks RESP2, 1 RESP3."""

    def __init__(self, test_port, oracle_port, seed):
        super().__init__(test_port, oracle_port, seed, slots=2, resp3_slots=(1,))

    def both(self, args, resp3=False):
        return self.send(args, slot=1 if resp3 else 0, tag="r3 " if resp3 else "")

    def call(self, args, kind=None, resp3=False, queued_kinds=None):
        a, b = self.both(args, resp3)
        if queued_kinds is not None and a[0] == b[0] == "*" and a[1] is not None \
                and b[1] is not None and len(a[1]) == len(b[1]) == len(queued_kinds):
            ok = all(_norm(x, k) == _norm(y, k) for x, y, k in zip(a[1], b[1], queued_kinds))
        else:
            ok = _norm(a, kind) == _norm(b, kind)
        if not ok:
            self.mismatch(args, a, b)
        return a, b


def items(reply):
    """The bulk strings of an array/set reply, flattening RESP3 pairs."""
    out = []
    for t, v in reply[1]:
        if t == "*":
            out += [x[1] for x in v]
        else:
            out.append(v)
    return out


def check_random_read(p, g, resp3):
    r = g.r
    if r.random() < 0.5:
        key = g.sk()
        args = ["SRANDMEMBER", key] + ([r.choice([0, 1, 2, 5, 20, -1, -7])]
                                       if r.random() < 0.8 else [])
        with_values = False
    else:
        key = g.hk()
        args = ["HRANDFIELD", key] + ([r.choice([0, 1, 2, 5, 20, -1, -7])]
                                      if r.random() < 0.8 else [])
        with_values = len(args) == 3 and r.random() < 0.5
        if with_values:
            args.append("WITHVALUES")
    a, b = p.both(args, resp3)
    if a[0] != b[0] or (a[0] in ("-", "_") and a != b):
        p.fail("%r: %r vs %r" % (args, a, b))
    if a[0] == "-":
        if a != b:
            p.fail("%r: %r vs %r" % (args, a, b))
        return
    oc = p.oracle()
    if a[0] in ("$", "_"):
        if (a[1] is None) != (b[1] is None):
            p.fail("%r nil-ness differs: %r vs %r" % (args, a, b))
        got = [a[1]] if a[1] is not None else []
    else:
        if len(a[1]) != len(b[1]):
            p.fail("%r count differs: %r vs %r" % (args, a, b))
        got = items(a)
        count = int(args[2])
        names = got[::2] if with_values else got
        if count > 0 and len(set(names)) != len(names):
            p.fail("%r repeated members: %r" % (args, a))
    if with_values:
        for f, v in zip(got[::2], got[1::2]):
            if oc.call("HGET", key, f) != ("$", v):
                p.fail("%r returned %r=%r, not in the oracle's hash" % (args, f, v))
        return
    for m in got:
        probe = ("SISMEMBER", key, m) if args[0] == "SRANDMEMBER" else ("HEXISTS", key, m)
        if oc.call(*probe) != (":", 1):
            p.fail("%r returned %r, not in the oracle's collection" % (args, m))


def check_spop(p, g, resp3):
    key = g.sk()
    args = ["SPOP", key] + ([g.r.choice([0, 1, 2, 3, 8])] if g.r.random() < 0.6 else [])
    a, b = p.both(args, resp3)
    if a[0] != b[0] or (a[0] == "-" and a != b):
        p.fail("%r: %r vs %r" % (args, a, b))
    if a[0] == "-":
        return
    if a[0] in ("$", "_"):
        mine = [a[1]] if a[1] is not None else []
        theirs = [b[1]] if b[1] is not None else []
    else:
        mine, theirs = items(a), items(b)
    if len(mine) != len(theirs):
        p.fail("%r count differs: %r vs %r" % (args, a, b))
    if sorted(mine) == sorted(theirs):
        return
# Bring the oracle to the tested server's state.
    oc = p.oracle()
    p.history.append("  (resync oracle: +%r -%r)" % (theirs, mine))
    oc.call("SADD", key, *theirs)
    if oc.call("SREM", key, *mine) != (":", len(mine)):
        p.fail("%r popped %r, not all members of the set" % (args, mine))


def full_scan(conn, cmd, key, opts):
    cursor, seen = b"0", []
    for _ in range(10000):
        t, v = conn.call(cmd, key, cursor, *opts)
        if t == "-":
            return ("-", v)
        cursor = v[0][1]
        seen += [x[1] for x in v[1][1]]
        if cursor == b"0":
            break
    if cmd == "HSCAN":
        return sorted(zip(seen[::2], seen[1::2]))
    return sorted(seen)


def run_macro(p, g, name):
    r = g.r
    if name == "random_read":
        check_random_read(p, g, r.random() < 0.5)
    elif name == "spop":
        check_spop(p, g, r.random() < 0.5)
    elif name == "scan":
        cmd, key = r.choice([("HSCAN", g.hk()), ("SSCAN", g.sk())])
        opts = []
        if r.random() < 0.5:
            opts += ["MATCH", r.choice(PATTERNS)]
        if r.random() < 0.5:
            opts += ["COUNT", r.choice([1, 2, 5, 100])]
        p.history.append("%s-to-0 %r %r" % (cmd, key, opts))
        a, b = (full_scan(c, cmd, key, opts) for c in p.slots[0])
        if a != b:
            p.fail("%s %s %r differs: %r vs %r" % (cmd, key, opts, a, b))
    elif name == "multi":
        resp3 = r.random() < 0.5
        p.call(["MULTI"], resp3=resp3)
        kinds = []
        for _ in range(r.randint(0, 5)):
            args, kind = g.pick()
            p.call(args, resp3=resp3)
            kinds.append(kind)
        if r.random() < 0.15:
            p.call(["DISCARD"], resp3=resp3)
        else:
            p.call(["EXEC"], resp3=resp3, queued_kinds=kinds)
    else:  # pragma: no cover
        raise AssertionError(name)


def compare_keyspaces(p):
    p.call(["DBSIZE"])
    for k in ALL_KEYS:
        a, _ = p.call(["TYPE", k])
        if a[1] == "hash":
            p.call(["HGETALL", k], kind="pairs")
            p.call(["HLEN", k])
        elif a[1] == "set":
            p.call(["SMEMBERS", k], kind="sorted")
            p.call(["SCARD", k])


MACROS = [(3, "random_read"), (3, "spop"), (2, "scan"), (3, "multi")]


@pytest.fixture
def pair(diff_pair):
    return lambda seed: diff_pair(seed, cls=Pair)


@pytest.mark.parametrize("seed", SEEDS)
def test_hash_set_stream_matches_redis(pair, seed):
    g = Gen(seed)
    p = pair(seed)
    p.call(["FLUSHALL"])
    total = sum(w for w, _ in MACROS)
    for _ in range(N_COMMANDS):
        if g.r.random() < 0.15:
            x = g.r.uniform(0, total)
            for w, name in MACROS:
                x -= w
                if x <= 0:
                    break
            run_macro(p, g, name)
        else:
            args, kind = g.pick()
            p.call(args, kind, resp3=g.r.random() < 0.3)
    compare_keyspaces(p)


def test_large_collections_match_redis(pair):
    """Collections big enough for Redis's hashtable encodings, with pops and scans."""
    p = pair(0)
    p.call(["FLUSHALL"])
    rnd = random.Random(7)
    for i in range(0, 600, 50):
        p.call(["SADD", "big"] + ["e%d" % j for j in range(i, i + 50)])
        p.call(["HSET", "bh"] + sum((["k%d" % j, str(j)] for j in range(i, i + 50)), []))
    for _ in range(60):
        p.call(["SPOP", "big", "0"])
        a, b = p.both(["SPOP", "big", rnd.choice([1, 7, 30])])
# resync as check_spop does
        mine, theirs = items(a), items(b)
        assert len(mine) == len(theirs)
        p.oracle().call("SADD", "big", *theirs)
        assert p.oracle().call("SREM", "big", *mine) == (":", len(mine))
        p.call(["HDEL", "bh"] + ["k%d" % rnd.randrange(600) for _ in range(5)])
        p.call(["SCARD", "big"])
        p.call(["HLEN", "bh"])
    for opts in ([], ["COUNT", "7"], ["MATCH", "e1*", "COUNT", "40"]):
        a, b = (full_scan(c, "SSCAN", "big", opts) for c in p.slots[0])
        assert a == b
        a, b = (full_scan(c, "HSCAN", "bh", opts) for c in p.slots[0])
        assert a == b
    p.call(["SMEMBERS", "big"], kind="sorted")
    p.call(["HGETALL", "bh"], kind="pairs")
    p.call(["SINTERCARD", "1", "big", "LIMIT", "10"])
