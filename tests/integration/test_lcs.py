"""LCS: the longest common subsequence of two strings (Redis 7.0 semantics).

Every test here holds for redis-server too (`--target redis`); the last one compares Basalt's
replies with a real redis-server's on random strings over small alphabets, where many
subsequences tie for longest and only the same walk through the table gives the same reply.
"""
import random

import pytest

from diffpair import DiffPair
from helpers import arity, raises

TYPE = "ERR The specified keys must contain string values"
BOTH = "ERR If you want both the length and indexes, please just use IDX."
TOO_BIG = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"


def test_lcs_string_and_length(r):
    r.mset({"a": "ohmytext", "b": "mynewtext"})
    assert r.execute_command("LCS", "a", "b") == "mytext"
    assert r.execute_command("LCS", "a", "b", "LEN") == 6
    assert r.execute_command("LCS", "b", "a", "len") == 6


def test_lcs_idx_lists_matches_last_first(r, r3):
    r.mset({"a": "ohmytext", "b": "mynewtext"})
    assert r.execute_command("LCS", "a", "b", "IDX") == [
        "matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], "len", 6]
    assert r.execute_command("LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN") == [
        "matches", [[[4, 7], [5, 8], 4]], "len", 6]
    # A negative minimum is no minimum.
    assert r.execute_command("LCS", "a", "b", "IDX", "MINMATCHLEN", "-3") == [
        "matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], "len", 6]
    # RESP3 makes the reply a map.
    assert r3.execute_command("LCS", "a", "b", "IDX", "WITHMATCHLEN") == {
        "matches": [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], "len": 6}


def test_lcs_missing_keys_are_empty_strings(r):
    r.set("a", "abc")
    assert r.execute_command("LCS", "a", "nokey") == ""
    assert r.execute_command("LCS", "nokey", "nokey2", "LEN") == 0
    assert r.execute_command("LCS", "nokey", "a", "IDX") == ["matches", [], "len", 0]


def test_lcs_errors(r):
    r.set("a", "abc")
    r.rpush("l", "x")
    raises(r, arity("lcs"), "LCS", "a")
    raises(r, TYPE, "LCS", "a", "l")
    raises(r, TYPE, "LCS", "l", "nokey", "NOPE")  # the type is checked before the options
    raises(r, BOTH, "LCS", "a", "a", "LEN", "IDX")
    raises(r, "ERR syntax error", "LCS", "a", "a", "NOPE")
    raises(r, "ERR syntax error", "LCS", "a", "a", "MINMATCHLEN")
    raises(r, "ERR value is not an integer or out of range", "LCS", "a", "a", "MINMATCHLEN", "x")
    assert r.get("a") == "abc"


def test_lcs_table_over_proto_max_bulk_len_is_refused(r):
    old = r.config_get("proto-max-bulk-len")["proto-max-bulk-len"]
    r.config_set("proto-max-bulk-len", str(1024 * 1024))
    try:
        r.set("x", "a" * 600)
        r.set("y", "a" * 600)
        raises(r, TOO_BIG, "LCS", "x", "y")  # 601 * 601 * 4 bytes
        r.set("y", "a" * 400)
        assert r.execute_command("LCS", "x", "y", "LEN") == 400
        assert r.ping()
    finally:
        r.config_set("proto-max-bulk-len", old)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lcs_matches_redis_on_random_strings(diff_pair, seed):
    rnd = random.Random(seed)
    p = diff_pair(seed, cls=DiffPair)
    options = [[], ["LEN"], ["IDX"], ["IDX", "WITHMATCHLEN"], ["IDX", "MINMATCHLEN", "2"],
               ["IDX", "MINMATCHLEN", "3", "WITHMATCHLEN"]]
    for _ in range(150):
        alphabet = rnd.choice(["ab", "abc", "acgt", "xyz\x00"])
        for key in ("s1", "s2"):
            p.call(["SET", key, "".join(rnd.choice(alphabet)
                                        for _ in range(rnd.randint(0, 60)))])
        for opts in options:
            p.call(["LCS", "s1", "s2"] + opts)
