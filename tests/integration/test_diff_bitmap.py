"""Differential test of the bitmap commands and of large and sparse strings: the same random
command stream goes to the server under test and to a real redis-server (the `oracle`); every
reply must be identical, including its RESP type and, for errors, the exact text.

Reproduce one failing stream with  DIFF_SEED=<seed> pytest test_diff_bitmap.py -s
(DIFF_COMMANDS overrides the stream length).

Offsets are drawn so that values cross Basalt's storage boundaries: the 4000-byte inline limit,
4 KiB edit segments and 64 KiB whole-value segments, and sparse bitmaps whose bytes are mostly
never written. After the stream, and every few hundred commands, every key is compared whole
(GET, STRLEN, BITCOUNT). No normalization is needed: every command here is deterministic.
"""
import os
import random

import pytest

from diffpair import DiffPair, WeightedGen

KEYS = ["b%d" % i for i in range(5)] + ["h"]  # "h" is often a hash: WRONGTYPE paths
SEEDS = [int(os.environ["DIFF_SEED"])] if os.environ.get("DIFF_SEED") else [21, 22, 23, 24]
N_COMMANDS = int(os.environ.get("DIFF_COMMANDS", "1500"))
# Byte positions around the storage boundaries (inline limit 4000, segments of 4096/65536).
BYTE_POSITIONS = [0, 1, 7, 100, 3999, 4000, 4001, 4095, 4096, 4097, 8191, 8192, 12000,
                  65535, 65536, 65537, 70000, 131072, 300000]
TYPES = ["u1", "i1", "u7", "i8", "u8", "i16", "u16", "i31", "u32", "i63", "u63", "i64",
         "u64", "i65", "x8", "i0"]


class Gen(WeightedGen):
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.gens = [
            (10, self.g_setbit), (5, self.g_getbit), (6, self.g_bitcount), (6, self.g_bitpos),
            (3, self.g_bitop), (6, self.g_bitfield), (2, self.g_bitfield_ro), (3, self.g_set),
            (3, self.g_append), (3, self.g_setrange), (4, self.g_getrange), (2, self.g_keyops),
            (1, self.g_bad),
        ]

    def key(self):
        return self.r.choice(KEYS)

    def byte_pos(self):
        base = self.r.choice(BYTE_POSITIONS)
        return max(0, base + self.r.randint(-3, 3))

    def bit_pos(self):
        return self.byte_pos() * 8 + self.r.randint(0, 7)

    def index(self, in_bits):
        v = self.byte_pos() * (8 if in_bits else 1) + self.r.randint(0, 7 if in_bits else 0)
        return -v - 1 if self.r.random() < 0.3 else v

    def g_setbit(self):
        return ["SETBIT", self.key(), self.bit_pos(), self.r.choice([0, 1, 1])]

    def g_getbit(self):
        return ["GETBIT", self.key(), self.bit_pos()]

    def unit(self):
        return self.r.choice([[], [], ["BYTE"], ["BIT"], ["bit"]])

    def g_bitcount(self):
        if self.r.random() < 0.2:
            return ["BITCOUNT", self.key()]
        unit = self.unit()
        in_bits = unit and unit[0].lower() == "bit"
        return ["BITCOUNT", self.key(), self.index(in_bits), self.index(in_bits)] + unit

    def g_bitpos(self):
        args = ["BITPOS", self.key(), self.r.choice([0, 1])]
        t = self.r.random()
        if t < 0.2:
            return args
        unit = self.unit()
        in_bits = unit and unit[0].lower() == "bit"
        args.append(self.index(in_bits))
        if t < 0.4 and not unit:
            return args
        return args + [self.index(in_bits)] + unit

    def g_bitop(self):
        op = self.r.choice(["AND", "OR", "XOR", "NOT", "and"])
        n = 1 if op == "NOT" else self.r.randint(1, 3)
        return ["BITOP", op, self.key()] + [self.key() for _ in range(n)]

    def bitfield_ops(self, read_only):
        ops = []
        for _ in range(self.r.randint(1, 4)):
            t = self.r.choice(TYPES)
            off = self.r.choice([str(self.bit_pos()), "#%d" % self.r.randint(0, 40),
                                 str(self.r.randint(0, 64))])
            kind = "GET" if read_only else self.r.choice(["GET", "SET", "INCRBY", "OVERFLOW"])
            if kind == "OVERFLOW":
                ops += ["OVERFLOW", self.r.choice(["WRAP", "SAT", "FAIL", "fail", "BAD"])]
            elif kind == "GET":
                ops += ["GET", t, off]
            else:
                v = self.r.choice([0, 1, -1, 100, -100, 127, 128, 255, 256, 2 ** 62,
                                   -2 ** 63, 2 ** 63 - 1])
                ops += [kind, t, off, v]
        return ops

    def g_bitfield(self):
        return ["BITFIELD", self.key()] + self.bitfield_ops(False)

    def g_bitfield_ro(self):
        ops = self.bitfield_ops(True)
        if self.r.random() < 0.1:
            ops += ["SET", "u8", 0, 1]
        return ["BITFIELD_RO", self.key()] + ops

    def g_set(self):
        size = self.r.choice([0, 10, 3999, 4000, 4001, 70000, 140000])
        ch = self.r.choice("\x00\xffab")
        return ["SET", self.key(), ch * size]

    def g_append(self):
        return ["APPEND", self.key(), self.r.choice(["x", "yz" * 100, "\xff" * 3000])]

    def g_setrange(self):
        return ["SETRANGE", self.key(), self.byte_pos(), self.r.choice(["abc", "\x00", "Z" * 5000])]

    def g_getrange(self):
        return ["GETRANGE", self.key(), self.index(False), self.index(False)]

    def g_keyops(self):
        r = self.r
        return r.choice([["DEL", self.key()], ["RENAME", self.key(), self.key()],
                         ["COPY", self.key(), self.key(), "REPLACE"], ["STRLEN", self.key()],
                         ["HSET", "h", "f", "v"], ["TYPE", self.key()],
                         ["EXPIRE", self.key(), 5000], ["PERSIST", self.key()]])

    def g_bad(self):
        return self.r.choice([
            ["SETBIT", "b1", -1, 1], ["SETBIT", "b1", 1, 2], ["SETBIT", "b1", "x", 1],
            ["SETBIT", "b1", 4294967296 * 2, 1], ["GETBIT", "b1", "-5"],
            ["BITCOUNT", "b1", 0], ["BITCOUNT", "b1", 0, 1, "BOTH"], ["BITCOUNT", "b1", "a", 1],
            ["BITPOS", "b1", 2], ["BITPOS", "b1", 1, 0, 1, "NOPE"], ["BITPOS", "b1", 1, 0, 1, 2, 3],
            ["BITOP", "NAND", "d", "b1"], ["BITOP", "NOT", "d", "b1", "b2"], ["BITOP", "AND", "d"],
            ["BITFIELD", "b1", "GET", "u8"], ["BITFIELD", "b1", "FOO"],
            ["BITFIELD", "b1", "GET", "u8", "-1"], ["BITFIELD", "b1", "SET", "u8", "0", "x"],
        ])


class Pair(DiffPair):
    def compare_all(self):
        for k in KEYS:
            self.call(["TYPE", k])
            if self.call(["TYPE", k]) == ("+", b"string"):
                self.call(["GET", k])
                self.call(["STRLEN", k])
                self.call(["BITCOUNT", k])
        self.call(["DBSIZE"])


@pytest.fixture
def pair(diff_pair):
    return lambda seed: diff_pair(seed, cls=Pair)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_bitmap_stream_matches_redis(pair, seed):
    g = Gen(seed)
    p = pair(seed)
    p.call(["FLUSHALL"])
    for step in range(N_COMMANDS):
        if g.r.random() < 0.03:
            p.call(["MULTI"])
            for _ in range(g.r.randint(0, 4)):
                p.call(g.pick())
            p.call(["EXEC"])
        else:
            p.call(g.pick())
        if step % 300 == 299:
            p.compare_all()
    p.compare_all()
