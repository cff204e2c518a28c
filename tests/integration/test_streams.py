"""Streams (Redis 7.2 semantics): XADD, XRANGE/XREVRANGE, XLEN, XDEL, XTRIM, XSETID, XREAD,
consumer groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM), XINFO, blocking reads,
the generic key commands on streams, and a restart with groups and pending entries.

Every test passes with --target redis (Debian's 7.0.15) too, except those marked basalt_only:
each says why (a 7.2 field or rule 7.0 lacks, or Basalt's exact `~` trimming).
"""
import time

import pytest
import redis

from helpers import arity, raises, wait_until
from test_blocking import blocking_call, wait_blocked

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX = "ERR syntax error"
INVALID_ID = "ERR Invalid stream ID specified as stream command argument"
SMALLER = "ERR The ID specified in XADD is equal or smaller than the target stream top item"


def add(rr, key, id_, *fields):
    return rr.execute_command("XADD", key, id_, *(fields or ("f", "v")))


# ---------------------------------------------------------------- XADD and IDs


def test_xadd_explicit_ids_and_xrange(rr):
    assert add(rr, "s", "1-1", "a", "1") == "1-1"
    assert add(rr, "s", "1-2", "b", "2", "c", "3") == "1-2"
    assert add(rr, "s", "5") == "5-0"
    assert rr.execute_command("XRANGE", "s", "-", "+") == [
        ["1-1", ["a", "1"]], ["1-2", ["b", "2", "c", "3"]], ["5-0", ["f", "v"]]]
    assert rr.execute_command("XLEN", "s") == 3
    assert rr.execute_command("TYPE", "s") == "stream"


def test_xadd_auto_ids_grow(rr):
    before = int(time.time() * 1000)
    ids = [add(rr, "s", "*") for _ in range(5)]
    ms = [int(i.split("-")[0]) for i in ids]
    assert ms[0] >= before - 1000
    assert ids == sorted(ids, key=lambda i: tuple(map(int, i.split("-"))))
    assert len(set(ids)) == 5


def test_xadd_ms_star_sequence(rr):
    assert add(rr, "s", "7-*") == "7-0"
    assert add(rr, "s", "7-*") == "7-1"
    assert add(rr, "s", "8-*") == "8-0"
    raises(rr, SMALLER, "XADD", "s", "7-*", "f", "v")


def test_xadd_future_last_id_makes_star_increment(rr):
    far = 2 ** 62
    add(rr, "s", "%d-5" % far)
    assert add(rr, "s", "*") == "%d-6" % far


def test_xadd_id_errors(rr):
    add(rr, "s", "5-5")
    raises(rr, SMALLER, "XADD", "s", "5-5", "f", "v")
    raises(rr, SMALLER, "XADD", "s", "5-4", "f", "v")
    raises(rr, SMALLER, "XADD", "s", "4", "f", "v")
    raises(rr, "ERR The ID specified in XADD must be greater than 0-0", "XADD", "new", "0-0",
           "f", "v")
    assert rr.execute_command("EXISTS", "new") == 0
    for bad in ("abc", "1-x", "-1", "1-2-3", "+", "-", "18446744073709551616"):
        raises(rr, INVALID_ID, "XADD", "s", bad, "f", "v")
    raises(rr, arity("xadd"), "XADD", "s", "*", "f")
    raises(rr, arity("xadd"), "XADD", "s", "*", "f", "v", "g")
    raises(rr, arity("xadd"), "XADD", "s", "*")
    raises(rr, arity("xadd"), "XADD", "s")


def test_xadd_max_id_exhausts_the_stream(rr):
    add(rr, "s", "18446744073709551615-18446744073709551615")
    raises(rr, "ERR The stream has exhausted the last possible ID, unable to add more items",
           "XADD", "s", "*", "f", "v")


def test_xadd_nomkstream(rr):
    assert rr.execute_command("XADD", "s", "NOMKSTREAM", "*", "f", "v") is None
    assert rr.execute_command("EXISTS", "s") == 0
    add(rr, "s", "1-1")
    assert rr.execute_command("XADD", "s", "NOMKSTREAM", "2-1", "f", "v") == "2-1"


def test_xadd_wrongtype(rr):
    rr.execute_command("SET", "k", "v")
    raises(rr, WRONGTYPE, "XADD", "k", "*", "f", "v")
    raises(rr, WRONGTYPE, "XRANGE", "k", "-", "+")
    raises(rr, WRONGTYPE, "XLEN", "k")
    add(rr, "s", "1")
    raises(rr, WRONGTYPE, "GET", "s")
    raises(rr, WRONGTYPE, "LPUSH", "s", "x")


def test_xadd_maxlen_exact(rr):
    for i in range(1, 11):
        rr.execute_command("XADD", "s", "MAXLEN", "3", "%d-0" % i, "f", i)
    assert rr.execute_command("XLEN", "s") == 3
    assert [e[0] for e in rr.execute_command("XRANGE", "s", "-", "+")] == ["8-0", "9-0", "10-0"]
    rr.execute_command("XADD", "s", "MAXLEN", "=", "1", "11-0", "f", "v")
    assert rr.execute_command("XRANGE", "s", "-", "+") == [["11-0", ["f", "v"]]]
    rr.execute_command("XADD", "s", "MAXLEN", "0", "12-0", "f", "v")
    assert rr.execute_command("XLEN", "s") == 0
    assert rr.execute_command("EXISTS", "s") == 1  # an emptied stream stays


def test_xadd_minid(rr):
    for i in range(1, 6):
        add(rr, "s", "%d-0" % i)
    rr.execute_command("XADD", "s", "MINID", "4", "6-0", "f", "v")
    assert [e[0] for e in rr.execute_command("XRANGE", "s", "-", "+")] == ["4-0", "5-0", "6-0"]


def test_xadd_approx_trim_keeps_at_least_threshold(rr):
    for i in range(1, 301):
        rr.execute_command("XADD", "s", "MAXLEN", "~", "50", "%d-0" % i, "f", "v")
    n = rr.execute_command("XLEN", "s")
    assert 50 <= n <= 300
    last = rr.execute_command("XREVRANGE", "s", "+", "-", "COUNT", 1)
    assert last[0][0] == "300-0"


def test_approx_trim_keeps_the_blocks_entries_were_added_in(rr):
    # Redis's nodes hold entries 1-100, 101-200, ... as added; an exact trim leaves the head's
    # node part-used, and `~` then takes that node's rest before whole ones.
    for i in range(1, 1001):
        rr.execute_command("XADD", "s", "%d-0" % i, "f", "v")
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "666") == 334
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "=", "555") == 111
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "~", "444") == 55  # entries 446-500
    assert rr.execute_command("XLEN", "s") == 500
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "~", "450") == 0
    assert rr.execute_command("XTRIM", "s", "MINID", "~", "650") == 100  # entries 501-600
    info = rr.execute_command("XINFO", "STREAM", "s")
    assert info[info.index("radix-tree-keys") + 1] == 4
    # Emptied and refilled, the stream begins its blocks again at its new first entry.
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "0") == 400
    for i in range(1001, 1151):
        rr.execute_command("XADD", "s", "%d-0" % i, "f", "v")
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "~", "10") == 100
    assert rr.execute_command("XRANGE", "s", "-", "+", "COUNT", 1)[0][0] == "1101-0"


def test_approx_trim_takes_whole_blocks_of_100(rr):
    # Redis trims whole radix-tree nodes of 100 entries with ~; Basalt takes whole blocks of 100
    # from the head, the last one however short.
    for i in range(1, 21):
        rr.execute_command("XADD", "s", "MAXLEN", "~", "5", "%d-0" % i, "f", "v")
    assert rr.execute_command("XLEN", "s") == 20  # one partial block: nothing to take
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "~", "0") == 20  # the whole last block
    for i in range(21, 271):
        rr.execute_command("XADD", "s", "MAXLEN", "~", "120", "%d-0" % i, "f", "v")
    assert rr.execute_command("XLEN", "s") == 150
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "50") == 0
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "120") == 100
    assert rr.execute_command("XTRIM", "s", "MINID", "~", "260") == 0
    assert rr.execute_command("XTRIM", "s", "MINID", "~", "999") == 50
    assert rr.execute_command("XLEN", "s") == 0


def test_xadd_trim_option_errors(rr):
    raises(rr, "ERR The MAXLEN argument must be >= 0.", "XADD", "s", "MAXLEN", "-1", "*", "f", "v")
    raises(rr, "ERR value is not an integer or out of range", "XADD", "s", "MAXLEN", "x", "*",
           "f", "v")
    raises(rr, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible",
           "XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v")
    raises(rr, "ERR syntax error, LIMIT cannot be used without the special ~ option",
           "XADD", "s", "MAXLEN", "1", "LIMIT", "10", "*", "f", "v")
    raises(rr, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
           "XADD", "s", "LIMIT", "10", "*", "f", "v")
    raises(rr, "ERR The LIMIT argument must be >= 0.", "XADD", "s", "MAXLEN", "~", "1", "LIMIT",
           "-1", "*", "f", "v")
    raises(rr, INVALID_ID, "XADD", "s", "MINID", "-", "*", "f", "v")
    assert rr.execute_command("EXISTS", "s") == 0


# ---------------------------------------------------------------- XRANGE / XREVRANGE


def fill(rr, key="s", n=5):
    for i in range(1, n + 1):
        add(rr, key, "%d-1" % i, "n", i)


def ids(entries):
    return [e[0] for e in entries]


def test_xrange_bounds_and_count(rr):
    fill(rr)
    assert ids(rr.execute_command("XRANGE", "s", "2", "4")) == ["2-1", "3-1", "4-1"]
    assert ids(rr.execute_command("XRANGE", "s", "2-2", "4-0")) == ["3-1"]
    assert ids(rr.execute_command("XRANGE", "s", "-", "+", "COUNT", 2)) == ["1-1", "2-1"]
    assert ids(rr.execute_command("XREVRANGE", "s", "+", "-", "COUNT", 2)) == ["5-1", "4-1"]
    assert ids(rr.execute_command("XREVRANGE", "s", "4", "2")) == ["4-1", "3-1", "2-1"]
    assert rr.execute_command("XRANGE", "s", "4", "2") == []
    assert rr.execute_command("XRANGE", "s", "-", "+", "COUNT", 0) is None
    assert rr.execute_command("XRANGE", "missing", "-", "+") == []
    assert rr.execute_command("XRANGE", "missing", "-", "+", "COUNT", 0) == []


def test_xrange_negative_count_is_zero(rr):
    fill(rr)
    assert rr.execute_command("XRANGE", "s", "-", "+", "COUNT", -3) is None


def test_xrange_exclusive_bounds(rr):
    fill(rr)
    assert ids(rr.execute_command("XRANGE", "s", "(2-1", "(5-1")) == ["3-1", "4-1"]
    assert ids(rr.execute_command("XREVRANGE", "s", "(5-1", "(2-1")) == ["4-1", "3-1"]
    assert ids(rr.execute_command("XRANGE", "s", "(1", "+")) == ["1-1", "2-1", "3-1", "4-1",
                                                                "5-1"]
    raises(rr, "ERR invalid start ID for the interval", "XRANGE", "s",
           "(18446744073709551615-18446744073709551615", "+")
    raises(rr, "ERR invalid end ID for the interval", "XRANGE", "s", "-", "(0-0")
    raises(rr, INVALID_ID, "XRANGE", "s", "(-", "+")
    raises(rr, INVALID_ID, "XRANGE", "s", "-", "(+")


def test_xrange_errors(rr):
    raises(rr, INVALID_ID, "XRANGE", "s", "x", "+")
    raises(rr, SYNTAX, "XRANGE", "s", "-", "+", "COUNT")
    raises(rr, SYNTAX, "XRANGE", "s", "-", "+", "LIMIT", "1")
    raises(rr, "ERR value is not an integer or out of range", "XRANGE", "s", "-", "+", "COUNT",
           "x")
    raises(rr, arity("xrange"), "XRANGE", "s", "-")


def test_resp3_entry_shapes(server, rr):
    add(rr, "s", "1-1", "a", "b")
    with server.raw() as c:
        c.call("HELLO", "3")
        entry = ("*", [("$", b"1-1"), ("*", [("$", b"a"), ("$", b"b")])])
        assert c.call("XRANGE", "s", "-", "+") == ("*", [entry])
        assert c.call("XRANGE", "s", "-", "+", "COUNT", "0") == ("_", None)
        assert c.call("XREAD", "STREAMS", "s", "0") == ("%", [(("$", b"s"), ("*", [entry]))])
        assert c.call("XREAD", "STREAMS", "s", "1-1") == ("_", None)
        assert c.call("XADD", "t", "NOMKSTREAM", "*", "f", "v") == ("_", None)


def test_resp2_read_shapes(server, rr):
    add(rr, "s", "1-1", "a", "b")
    with server.raw() as c:
        entry = ("*", [("$", b"1-1"), ("*", [("$", b"a"), ("$", b"b")])])
        assert c.call("XREAD", "STREAMS", "s", "0") == ("*", [("*", [("$", b"s"),
                                                                    ("*", [entry])])])
        assert c.call("XREAD", "STREAMS", "s", "1-1") == ("*", None)
        assert c.call("XRANGE", "s", "-", "+", "COUNT", "0") == ("*", None)
        assert c.call("XADD", "t", "NOMKSTREAM", "*", "f", "v") == ("$", None)


# ---------------------------------------------------------------- XDEL / XTRIM / XLEN


def test_xdel(rr):
    fill(rr)
    assert rr.execute_command("XDEL", "s", "2-1", "4-1", "9-9", "2-1") == 2
    assert ids(rr.execute_command("XRANGE", "s", "-", "+")) == ["1-1", "3-1", "5-1"]
    assert rr.execute_command("XLEN", "s") == 3
    assert rr.execute_command("XDEL", "missing", "1-1") == 0
    raises(rr, INVALID_ID, "XDEL", "s", "1-1", "bad")
    assert rr.execute_command("XLEN", "s") == 3  # nothing deleted before the bad ID was seen
    assert rr.execute_command("XDEL", "s", "1-1", "3-1", "5-1") == 3
    assert rr.execute_command("XLEN", "s") == 0
    assert rr.execute_command("EXISTS", "s") == 1
    raises(rr, SMALLER, "XADD", "s", "5-1", "f", "v")  # the last ID stays


def test_xtrim(rr):
    fill(rr, n=10)
    assert rr.execute_command("XTRIM", "s", "MAXLEN", 7) == 3
    assert rr.execute_command("XTRIM", "s", "MAXLEN", "=", 7) == 0
    assert rr.execute_command("XTRIM", "s", "MINID", "6") == 2
    assert ids(rr.execute_command("XRANGE", "s", "-", "+"))[0] == "6-1"
    assert rr.execute_command("XTRIM", "s", "MINID", "=", "9-0") == 3
    assert rr.execute_command("XLEN", "s") == 2
    assert rr.execute_command("XTRIM", "missing", "MAXLEN", 0) == 0
    raises(rr, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
           "XTRIM", "s", "LIMIT", "1")
    raises(rr, "ERR syntax error, XTRIM must be called with a trimming strategy", "XTRIM", "s",
           "LIMIT", "0")
    raises(rr, SYNTAX, "XTRIM", "s", "MAXLEN", "1", "NOMKSTREAM")
    raises(rr, SYNTAX, "XTRIM", "s", "FOO", "1")
    raises(rr, arity("xtrim"), "XTRIM", "s", "MAXLEN")


def test_xtrim_after_xdel_counts_live_entries(rr):
    fill(rr, n=6)
    rr.execute_command("XDEL", "s", "1-1", "3-1")
    assert rr.execute_command("XTRIM", "s", "MAXLEN", 2) == 2
    assert ids(rr.execute_command("XRANGE", "s", "-", "+")) == ["5-1", "6-1"]


# ---------------------------------------------------------------- XSETID


def test_xsetid(rr):
    fill(rr, n=3)
    assert rr.execute_command("XSETID", "s", "10-0") == "OK"
    assert add(rr, "s", "10-*") == "10-1"
    raises(rr, "ERR The ID specified in XSETID is smaller than the target stream top item",
           "XSETID", "s", "2-0")
    raises(rr, "ERR no such key", "XSETID", "missing", "1-0")
    raises(rr, INVALID_ID, "XSETID", "s", "+")


def test_xsetid_lowers_last_id_to_the_top_entry(rr):
    fill(rr, n=3)
    assert rr.execute_command("XSETID", "s", "9-0") == "OK"
    assert rr.execute_command("XSETID", "s", "3-1") == "OK"
    assert add(rr, "s", "3-2") == "3-2"


def test_xsetid_entries_added_and_max_deleted(rr):
    fill(rr, n=3)
    raises(rr, "ERR entries_added must be positive", "XSETID", "s", "9-0", "ENTRIESADDED", "-1")
    raises(rr, "ERR The entries_added specified in XSETID is smaller than the target stream "
           "length", "XSETID", "s", "9-0", "ENTRIESADDED", "2")
    raises(rr, "ERR The ID specified in XSETID is smaller than the provided "
           "max_deleted_entry_id", "XSETID", "s", "9-0", "MAXDELETEDID", "10-0")
    raises(rr, SYNTAX, "XSETID", "s", "9-0", "FOO")
    assert rr.execute_command("XSETID", "s", "9-0", "ENTRIESADDED", 50, "MAXDELETEDID",
                              "8-0") == "OK"
    info = dict(zip(*[iter(rr.execute_command("XINFO", "STREAM", "s"))] * 2))
    assert info["entries-added"] == 50
    assert info["max-deleted-entry-id"] == "8-0"
    assert info["last-generated-id"] == "9-0"


@pytest.mark.basalt_only  # Redis 7.2 refuses a last ID below max-deleted-entry-id; 7.0 did not
def test_xsetid_below_max_deleted_id(rr):
    fill(rr, n=3)
    rr.execute_command("XDEL", "s", "3-1")
    raises(rr, "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id",
           "XSETID", "s", "3-0")


# ---------------------------------------------------------------- XREAD


def test_xread(rr):
    fill(rr, "a", 3)
    fill(rr, "b", 2)
    assert rr.execute_command("XREAD", "COUNT", 2, "STREAMS", "a", "b", "1-1", "0") == [
        ["a", [["2-1", ["n", "2"]], ["3-1", ["n", "3"]]]],
        ["b", [["1-1", ["n", "1"]], ["2-1", ["n", "2"]]]]]
    assert rr.execute_command("XREAD", "STREAMS", "a", "b", "3-1", "1-1") == [
        ["b", [["2-1", ["n", "2"]]]]]
    assert rr.execute_command("XREAD", "STREAMS", "a", "missing", "$", "$") is None
    raises(rr, INVALID_ID, "XREAD", "STREAMS", "a", "+")


def test_xread_errors(rr):
    raises(rr, SYNTAX, "XREAD", "COUNT", 1, "a", "0")
    raises(rr, "ERR The > ID can be specified only when calling XREADGROUP using the GROUP "
           "<group> <consumer> option.", "XREAD", "STREAMS", "a", ">")
    raises(rr, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
           "XREAD", "GROUP", "g", "c", "STREAMS", "a", "0")
    raises(rr, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
           "XREAD", "NOACK", "STREAMS", "a", "0")
    raises(rr, INVALID_ID, "XREAD", "STREAMS", "a", "x")
    raises(rr, INVALID_ID, "XREAD", "STREAMS", "a", "-")
    raises(rr, "ERR timeout is negative", "XREAD", "BLOCK", "-1", "STREAMS", "a", "0")
    raises(rr, "ERR timeout is not an integer or out of range", "XREAD", "BLOCK", "x",
           "STREAMS", "a", "0")
    rr.execute_command("SET", "str", "v")
    raises(rr, WRONGTYPE, "XREAD", "STREAMS", "str", "0")


@pytest.mark.basalt_only  # Redis 7.2 names the command quoted and in lower case; 7.0 did not
def test_unbalanced_streams_error_text(rr):
    raises(rr, "ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be "
           "specified.", "XREAD", "STREAMS", "a", "b", "0")
    raises(rr, "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' "
           "must be specified.", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">", "x")


# ---------------------------------------------------------------- groups


def info_map(reply):
    return dict(zip(reply[::2], reply[1::2]))


def test_xgroup_create_and_errors(rr):
    raises(rr, "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may "
           "want to use the MKSTREAM option to create an empty stream automatically.",
           "XGROUP", "CREATE", "s", "g", "$")
    assert rr.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == "OK"
    assert rr.execute_command("TYPE", "s") == "stream"
    assert rr.execute_command("XLEN", "s") == 0
    raises(rr, "BUSYGROUP Consumer Group name already exists", "XGROUP", "CREATE", "s", "g", "0")
    raises(rr, INVALID_ID, "XGROUP", "CREATE", "s", "g2", "x")
    raises(rr, "ERR value for ENTRIESREAD must be positive or -1", "XGROUP", "CREATE", "s", "g2",
           "0", "ENTRIESREAD", "-5")
    raises(rr, "NOGROUP No such consumer group 'nope' for key name 's'", "XGROUP", "SETID", "s",
           "nope", "0")
    raises(rr, "NOGROUP No such consumer group 'nope' for key name 's'", "XGROUP",
           "CREATECONSUMER", "s", "nope", "c")
    rr.execute_command("SET", "str", "v")
    raises(rr, WRONGTYPE, "XGROUP", "CREATE", "str", "g", "$")


def test_xgroup_consumers_and_destroy(rr):
    fill(rr)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert rr.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "alice") == 1
    assert rr.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "alice") == 0
    rr.execute_command("XREADGROUP", "GROUP", "g", "bob", "COUNT", 2, "STREAMS", "s", ">")
    assert rr.execute_command("XGROUP", "DELCONSUMER", "s", "g", "bob") == 2
    assert rr.execute_command("XGROUP", "DELCONSUMER", "s", "g", "bob") == 0
    assert rr.execute_command("XPENDING", "s", "g")[0] == 0
    assert rr.execute_command("XGROUP", "DESTROY", "s", "g") == 1
    assert rr.execute_command("XGROUP", "DESTROY", "s", "g") == 0
    assert rr.execute_command("XINFO", "GROUPS", "s") == []


def test_xgroup_setid(rr):
    fill(rr)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "$")
    assert rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") is None
    assert rr.execute_command("XGROUP", "SETID", "s", "g", "3-1") == "OK"
    got = rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert ids(got[0][1]) == ["4-1", "5-1"]
    assert rr.execute_command("XGROUP", "SETID", "s", "g", "0") == "OK"
    got = rr.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "s", ">")
    assert ids(got[0][1]) == ["1-1"]


def test_xgroup_help_and_unknown(rr):
    assert rr.execute_command("XGROUP", "HELP")[0].startswith("XGROUP <subcommand>")
    with pytest.raises(redis.ResponseError):
        rr.execute_command("XGROUP", "FOO", "s", "g")


def test_xreadgroup_new_entries_and_pending(rr):
    fill(rr, n=4)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    got = rr.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", 3, "STREAMS", "s",
                             ">")
    assert got == [["s", [["1-1", ["n", "1"]], ["2-1", ["n", "2"]], ["3-1", ["n", "3"]]]]]
    got = rr.execute_command("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">")
    assert got == [["s", [["4-1", ["n", "4"]]]]]
    assert rr.execute_command("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">") is None
    summary = rr.execute_command("XPENDING", "s", "g")
    assert summary == [4, "1-1", "4-1", [["alice", "3"], ["bob", "1"]]]
    # history: the consumer's own pending entries after the given ID
    hist = rr.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0")
    assert ids(hist[0][1]) == ["1-1", "2-1", "3-1"]
    hist = rr.execute_command("XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "s",
                              "1-1")
    assert ids(hist[0][1]) == ["2-1"]
    hist = rr.execute_command("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0")
    assert hist == [["s", []]]


def test_xreadgroup_redelivers_entries_pending_after_setid_back(rr):
    # Entries after the group's last ID can already be pending once SETID moved the group back:
    # a new read hands them to the reader, as Redis's streamReplyWithRange steals them.
    fill(rr, n=3)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    assert rr.execute_command("XGROUP", "SETID", "s", "g", "0") == "OK"
    got = rr.execute_command("XREADGROUP", "GROUP", "g", "bob", "COUNT", 2, "STREAMS", "s", ">")
    assert ids(got[0][1]) == ["1-1", "2-1"]
    assert rr.execute_command("XPENDING", "s", "g") == [3, "1-1", "3-1",
                                                        [["alice", "1"], ["bob", "2"]]]
    ext = rr.execute_command("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1], e[3]) for e in ext] == [("1-1", "bob", 1), ("2-1", "bob", 1),
                                                 ("3-1", "alice", 1)]


def test_xreadgroup_takes_an_entry_claimed_ahead_of_the_group(rr):
    fill(rr, n=3)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert rr.execute_command("XCLAIM", "s", "g", "carol", 0, "3-1", "FORCE", "JUSTID") == ["3-1"]
    got = rr.execute_command("XREADGROUP", "GROUP", "g", "dave", "STREAMS", "s", ">")
    assert ids(got[0][1]) == ["1-1", "2-1", "3-1"]
    assert rr.execute_command("XPENDING", "s", "g") == [3, "1-1", "3-1", [["dave", "3"]]]
    assert rr.execute_command("XACK", "s", "g", "3-1", "2-1", "1-1") == 3
    assert rr.execute_command("XPENDING", "s", "g") == [0, None, None, None]


def test_xreadgroup_history_reports_deleted_entries(rr):
    fill(rr, n=2)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    rr.execute_command("XDEL", "s", "1-1")
    hist = rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    assert hist == [["s", [["1-1", None], ["2-1", ["n", "2"]]]]]


def test_xreadgroup_history_counts_deliveries(rr):
    fill(rr, n=1)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    ext = rr.execute_command("XPENDING", "s", "g", "-", "+", 10)
    assert ext[0][0] == "1-1" and ext[0][1] == "c" and ext[0][3] == 3


def test_xreadgroup_noack(rr):
    fill(rr, n=2)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    got = rr.execute_command("XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s", ">")
    assert ids(got[0][1]) == ["1-1", "2-1"]
    assert rr.execute_command("XPENDING", "s", "g") == [0, None, None, None]


def test_xreadgroup_errors(rr):
    fill(rr, n=1)
    raises(rr, "NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option",
           "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    raises(rr, "NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP "
           "option", "XREADGROUP", "GROUP", "g", "c", "STREAMS", "nokey", ">")
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    raises(rr, "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
           "history of this consumer by specifying a proper ID, or use the > ID to get new "
           "messages. The $ ID would just return an empty result set.",
           "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$")
    raises(rr, "ERR Missing GROUP option for XREADGROUP", "XREADGROUP", "COUNT", "1", "NOACK",
           "STREAMS", "s", ">")


def test_xack(rr):
    fill(rr, n=3)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert rr.execute_command("XACK", "s", "g", "1-1", "3-1", "9-9", "1-1") == 2
    assert rr.execute_command("XPENDING", "s", "g") == [1, "2-1", "2-1", [["c", "1"]]]
    assert rr.execute_command("XACK", "s", "nogroup", "2-1") == 0
    assert rr.execute_command("XACK", "missing", "g", "2-1") == 0
    raises(rr, INVALID_ID, "XACK", "s", "g", "2-1", "bad")
    assert rr.execute_command("XPENDING", "s", "g")[0] == 1


def test_xpending_extended(rr):
    fill(rr, n=4)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "a", "COUNT", 2, "STREAMS", "s", ">")
    rr.execute_command("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
    ext = rr.execute_command("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1], e[3]) for e in ext] == [("1-1", "a", 1), ("2-1", "a", 1),
                                                  ("3-1", "b", 1), ("4-1", "b", 1)]
    assert all(0 <= e[2] < 5000 for e in ext)
    assert [e[0] for e in rr.execute_command("XPENDING", "s", "g", "-", "+", 10, "b")] == [
        "3-1", "4-1"]
    assert [e[0] for e in rr.execute_command("XPENDING", "s", "g", "(1-1", "(4-1", 10)] == [
        "2-1", "3-1"]
    assert [e[0] for e in rr.execute_command("XPENDING", "s", "g", "-", "+", 1)] == ["1-1"]
    assert rr.execute_command("XPENDING", "s", "g", "-", "+", 10, "nobody") == []
    assert rr.execute_command("XPENDING", "s", "g", "IDLE", 60000, "-", "+", 10) == []
    assert len(rr.execute_command("XPENDING", "s", "g", "IDLE", 0, "-", "+", 10)) == 4
    raises(rr, "NOGROUP No such key 's' or consumer group 'x'", "XPENDING", "s", "x")
    raises(rr, "NOGROUP No such key 'm' or consumer group 'x'", "XPENDING", "m", "x")
    raises(rr, SYNTAX, "XPENDING", "s", "g", "-", "+")
    raises(rr, SYNTAX, "XPENDING", "s", "g", "IDLE", "5", "-", "+")


def test_xclaim(rr):
    fill(rr, n=3)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    # too recently delivered for a min-idle-time of an hour
    assert rr.execute_command("XCLAIM", "s", "g", "b", 3600000, "1-1") == []
    got = rr.execute_command("XCLAIM", "s", "g", "b", 0, "1-1", "2-1", "9-9")
    assert got == [["1-1", ["n", "1"]], ["2-1", ["n", "2"]]]
    ext = rr.execute_command("XPENDING", "s", "g", "-", "+", 10)
    assert [(e[0], e[1], e[3]) for e in ext] == [("1-1", "b", 2), ("2-1", "b", 2),
                                                  ("3-1", "a", 1)]
    assert rr.execute_command("XCLAIM", "s", "g", "b", 0, "3-1", "JUSTID") == ["3-1"]
    ext = rr.execute_command("XPENDING", "s", "g", "-", "+", 10)
    assert ext[2][1] == "b" and ext[2][3] == 1  # JUSTID does not count a delivery
    rr.execute_command("XCLAIM", "s", "g", "a", 0, "1-1", "RETRYCOUNT", 7, "IDLE", 5000)
    ext = rr.execute_command("XPENDING", "s", "g", "-", "+", 1)
    assert ext[0][1] == "a" and ext[0][3] == 7 and ext[0][2] >= 5000
    assert rr.execute_command("XPENDING", "s", "g") == [3, "1-1", "3-1", [["a", "1"],
                                                                        ["b", "2"]]]


def test_xclaim_force_lastid_and_deleted(rr):
    fill(rr, n=3)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "$")
    assert rr.execute_command("XCLAIM", "s", "g", "c", 0, "2-1") == []
    assert rr.execute_command("XCLAIM", "s", "g", "c", 0, "2-1", "FORCE", "JUSTID",
                              "LASTID", "2-1") == ["2-1"]
    assert rr.execute_command("XPENDING", "s", "g")[0] == 1
    info = info_map(rr.execute_command("XINFO", "GROUPS", "s")[0])
    assert info["last-delivered-id"] == "3-1"  # LASTID only moves it forward
    rr.execute_command("XDEL", "s", "2-1")
    assert rr.execute_command("XCLAIM", "s", "g", "c", 0, "2-1") == []
    assert rr.execute_command("XPENDING", "s", "g")[0] == 0  # a deleted entry leaves the PEL


def test_xclaim_errors(rr):
    fill(rr, n=1)
    raises(rr, "NOGROUP No such key 's' or consumer group 'g'", "XCLAIM", "s", "g", "c", 0,
           "1-1")
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    raises(rr, "ERR Invalid min-idle-time argument for XCLAIM", "XCLAIM", "s", "g", "c", "x",
           "1-1")
    raises(rr, "ERR Unrecognized XCLAIM option 'FOO'", "XCLAIM", "s", "g", "c", 0, "1-1", "FOO")
    raises(rr, "ERR Invalid IDLE option argument for XCLAIM", "XCLAIM", "s", "g", "c", 0, "1-1",
           "IDLE", "x")
    raises(rr, "ERR Invalid RETRYCOUNT option argument for XCLAIM", "XCLAIM", "s", "g", "c", 0,
           "1-1", "RETRYCOUNT", "x")


def test_xautoclaim(rr):
    fill(rr, n=5)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    got = rr.execute_command("XAUTOCLAIM", "s", "g", "b", 0, "0", "COUNT", 2)
    assert got == ["3-1", [["1-1", ["n", "1"]], ["2-1", ["n", "2"]]], []]
    rr.execute_command("XDEL", "s", "4-1")
    got = rr.execute_command("XAUTOCLAIM", "s", "g", "b", 0, "3-1", "JUSTID")
    assert got == ["0-0", ["3-1", "5-1"], ["4-1"]]
    assert rr.execute_command("XPENDING", "s", "g") == [4, "1-1", "5-1", [["b", "4"]]]
    got = rr.execute_command("XAUTOCLAIM", "s", "g", "a", 3600000, "0")
    assert got == ["0-0", [], []]
    got = rr.execute_command("XAUTOCLAIM", "s", "g", "a", 0, "(1-1", "COUNT", 1, "JUSTID")
    assert got == ["3-1", ["2-1"], []]


def test_xautoclaim_errors(rr):
    fill(rr, n=1)
    raises(rr, "NOGROUP No such key 's' or consumer group 'g'", "XAUTOCLAIM", "s", "g", "c", 0,
           "0")
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    raises(rr, "ERR COUNT must be > 0", "XAUTOCLAIM", "s", "g", "c", 0, "0", "COUNT", 0)
    raises(rr, SYNTAX, "XAUTOCLAIM", "s", "g", "c", 0, "0", "FOO")
    raises(rr, "ERR Invalid min-idle-time argument for XAUTOCLAIM", "XAUTOCLAIM", "s", "g", "c",
           "x", "0")


# ---------------------------------------------------------------- XINFO, entries-read, lag


def test_xinfo_stream(rr):
    fill(rr, n=3)
    rr.execute_command("XDEL", "s", "2-1")
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    info = info_map(rr.execute_command("XINFO", "STREAM", "s"))
    assert info["length"] == 2
    assert info["last-generated-id"] == "3-1"
    assert info["max-deleted-entry-id"] == "2-1"
    assert info["entries-added"] == 3
    assert info["recorded-first-entry-id"] == "1-1"
    assert info["groups"] == 1
    assert info["first-entry"] == ["1-1", ["n", "1"]]
    assert info["last-entry"] == ["3-1", ["n", "3"]]
    raises(rr, "ERR no such key", "XINFO", "STREAM", "missing")
    rr.execute_command("SET", "str", "v")
    raises(rr, WRONGTYPE, "XINFO", "STREAM", "str")


def test_approximate_trims_take_blocks_of_stream_node_max_entries(rr):
    # Redis's node size decides what `~` may take: whole nodes only, at most LIMIT entries
    # (by default 100 nodes' worth).
    old = rr.execute_command("CONFIG", "GET", "stream-node-max-entries")[1]
    try:
        rr.execute_command("CONFIG", "SET", "stream-node-max-entries", 10)
        pipe = rr.pipeline(transaction=False)
        for i in range(1, 101):
            pipe.execute_command("XADD", "s", "%d-1" % i, "f", "v")
        pipe.execute()
        rr.execute_command("XADD", "s", "MAXLEN", "~", 55, "LIMIT", 30, "*", "f", "v")
        assert rr.execute_command("XLEN", "s") == 71
        rr.execute_command("XADD", "s", "MAXLEN", "~", 55, "LIMIT", 30, "*", "f", "v")
        assert rr.execute_command("XLEN", "s") == 62
        assert rr.execute_command("XTRIM", "s", "MAXLEN", "~", 0, "LIMIT", 9) == 0
        assert rr.execute_command("XTRIM", "s", "MAXLEN", "~", 45) == 10
        info = info_map(rr.execute_command("XINFO", "STREAM", "s"))
        assert info["radix-tree-keys"] == 6  # 52 entries in blocks of 10
    finally:
        rr.execute_command("CONFIG", "SET", "stream-node-max-entries", old)


def test_xinfo_stream_radix_tree_grows_with_the_entries(rr):
    # Redis's tree has a key per node of up to 100 entries; Basalt reports the same shape for
    # entries added in order (Redis's own XDEL fuzz test adds entries until it has 20 keys).
    pipe = rr.pipeline(transaction=False)
    for i in range(1, 251):
        pipe.execute_command("XADD", "s", "%d-1" % i, "n", i)
    pipe.execute()
    info = info_map(rr.execute_command("XINFO", "STREAM", "s"))
    assert info["radix-tree-keys"] == 3
    assert info["radix-tree-nodes"] > info["radix-tree-keys"]
    rr.execute_command("XADD", "e", "MAXLEN", "0", "*", "n", 1)
    assert info_map(rr.execute_command("XINFO", "STREAM", "e"))["radix-tree-keys"] == 0


def test_xinfo_stream_empty_has_null_edges(rr):
    rr.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    info = info_map(rr.execute_command("XINFO", "STREAM", "s"))
    assert info["first-entry"] is None and info["last-entry"] is None
    assert info["recorded-first-entry-id"] == "0-0"


def test_xinfo_stream_full(rr):
    fill(rr, n=3)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", 2, "STREAMS", "s", ">")
    full = info_map(rr.execute_command("XINFO", "STREAM", "s", "FULL", "COUNT", 1))
    assert full["length"] == 3
    assert ids(full["entries"]) == ["1-1"]
    (group,) = full["groups"]
    g = info_map(group)
    assert g["name"] == "g" and g["last-delivered-id"] == "2-1"
    assert g["entries-read"] == 2 and g["lag"] == 1
    assert g["pel-count"] == 2 and len(g["pending"]) == 1
    (consumer,) = g["consumers"]
    cm = info_map(consumer)
    assert cm["name"] == "c" and cm["pel-count"] == 2 and len(cm["pending"]) == 1
    full = info_map(rr.execute_command("XINFO", "STREAM", "s", "FULL"))
    assert len(full["entries"]) == 3
    with pytest.raises(redis.ResponseError):
        rr.execute_command("XINFO", "STREAM", "s", "FULL", "LIMIT", 1)


def test_xinfo_groups_entries_read_and_lag(rr):
    fill(rr, n=5)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    g = info_map(rr.execute_command("XINFO", "GROUPS", "s")[0])
    assert (g["entries-read"], g["lag"]) == (None, 5)
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", 2, "STREAMS", "s", ">")
    g = info_map(rr.execute_command("XINFO", "GROUPS", "s")[0])
    assert (g["consumers"], g["pending"], g["last-delivered-id"]) == (1, 2, "2-1")
    assert (g["entries-read"], g["lag"]) == (2, 3)
    rr.execute_command("XDEL", "s", "4-1")  # a tombstone ahead of the group: lag unknown
    g = info_map(rr.execute_command("XINFO", "GROUPS", "s")[0])
    assert (g["entries-read"], g["lag"]) == (2, None)
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    g = info_map(rr.execute_command("XINFO", "GROUPS", "s")[0])
    assert (g["entries-read"], g["lag"]) == (5, 0)


def test_xgroup_create_entriesread(rr):
    fill(rr, n=5)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "3-1", "ENTRIESREAD", 3)
    g = info_map(rr.execute_command("XINFO", "GROUPS", "s")[0])
    assert (g["entries-read"], g["lag"]) == (3, 2)
    rr.execute_command("XGROUP", "SETID", "s", "g", "$")
    g = info_map(rr.execute_command("XINFO", "GROUPS", "s")[0])
    assert (g["entries-read"], g["lag"]) == (None, 0)


def test_xinfo_consumers(rr):
    fill(rr, n=2)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    (c,) = rr.execute_command("XINFO", "CONSUMERS", "s", "g")
    cm = info_map(c)
    assert cm["name"] == "c" and cm["pending"] == 2 and 0 <= cm["idle"] < 5000
    raises(rr, "NOGROUP No such consumer group 'x' for key name 's'", "XINFO", "CONSUMERS", "s",
           "x")


@pytest.mark.basalt_only  # XINFO CONSUMERS' `inactive` is new in Redis 7.2 (7.0 lacks it)
def test_xinfo_consumers_inactive(rr):
    fill(rr, n=1)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "idle")
    rr.execute_command("XREADGROUP", "GROUP", "g", "busy", "STREAMS", "s", ">")
    by_name = {info_map(c)["name"]: info_map(c)
               for c in rr.execute_command("XINFO", "CONSUMERS", "s", "g")}
    assert by_name["idle"]["inactive"] == -1
    assert 0 <= by_name["busy"]["inactive"] < 5000


def test_xinfo_resp3_maps(server, rr):
    fill(rr, n=1)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    with server.raw() as c:
        c.call("HELLO", "3")
        kind, pairs = c.call("XINFO", "STREAM", "s")
        assert kind == "%" and pairs[0] == (("$", b"length"), (":", 1))
        kind, groups = c.call("XINFO", "GROUPS", "s")
        assert kind == "*" and groups[0][0] == "%"
        assert dict(groups[0][1])[("$", b"entries-read")] == ("_", None)


# ---------------------------------------------------------------- generic key commands


def test_generic_key_commands(rr):
    fill(rr, n=3)
    rr.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rr.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "STREAMS", "s", ">")
    assert rr.execute_command("OBJECT", "ENCODING", "s") == "stream"
    assert rr.execute_command("EXISTS", "s") == 1
    assert rr.execute_command("SCAN", 0, "TYPE", "stream") == ["0", ["s"]]
    assert rr.execute_command("COPY", "s", "t") == 1
    assert rr.execute_command("XRANGE", "t", "-", "+") == rr.execute_command("XRANGE", "s", "-",
                                                                             "+")
    assert rr.execute_command("XPENDING", "t", "g")[0] == 1
    assert rr.execute_command("RENAME", "t", "u") == "OK"
    assert rr.execute_command("XLEN", "u") == 3
    assert rr.execute_command("XPENDING", "u", "g") == [1, "1-1", "1-1", [["c", "1"]]]
    assert rr.execute_command("EXPIRE", "u", 100) == 1
    assert 0 < rr.execute_command("TTL", "u") <= 100
    assert rr.execute_command("DEL", "s", "u") == 2
    assert rr.execute_command("XLEN", "s") == 0
    assert rr.execute_command("XRANGE", "s", "-", "+") == []
    # a new stream under the old name starts empty: no entries, groups or counters of the old one
    add(rr, "s", "1-0")
    assert rr.execute_command("XINFO", "GROUPS", "s") == []
    assert info_map(rr.execute_command("XINFO", "STREAM", "s"))["entries-added"] == 1


def test_expired_stream_is_gone(rr):
    fill(rr, n=2)
    rr.execute_command("PEXPIRE", "s", 50)
    assert wait_until(lambda: rr.execute_command("EXISTS", "s") == 0, timeout=3)
    assert rr.execute_command("XLEN", "s") == 0


def test_streams_in_multi_and_lua(rr):
    pipe_replies = []
    rr.execute_command("MULTI")
    rr.execute_command("XADD", "s", "1-1", "f", "v")
    rr.execute_command("XREAD", "BLOCK", 1000, "STREAMS", "missing", "$")
    rr.execute_command("XLEN", "s")
    pipe_replies = rr.execute_command("EXEC")
    assert pipe_replies == ["1-1", None, 1]
    assert rr.execute_command("EVAL", "return redis.call('XADD', KEYS[1], '2-1', 'a', 'b')", 1,
                              "s") == "2-1"
    assert rr.execute_command("EVAL", "return redis.call('XLEN', KEYS[1])", 1, "s") == 2
    with pytest.raises(redis.ResponseError, match="not allowed with BLOCK option from scripts"):
        rr.execute_command("EVAL", "return redis.call('XREAD', 'BLOCK', 0, 'STREAMS', "
                           "KEYS[1], '$')", 1, "s")


def test_keyspace_notifications(server, r):
    r.config_set("notify-keyspace-events", "Et")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    p.get_message(timeout=1)
    r.execute_command("XADD", "s", "MAXLEN", "1", "1-1", "f", "v")
    r.execute_command("XADD", "s", "MAXLEN", "1", "2-1", "f", "v")
    r.execute_command("XDEL", "s", "2-1")
    r.execute_command("XGROUP", "CREATE", "s", "g", "0")
    r.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "c")
    r.execute_command("XSETID", "s", "5-0")
    events = []
    deadline = time.monotonic() + 3
    while len(events) < 7 and time.monotonic() < deadline:
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            events.append(m["channel"].split(":", 1)[1])
    p.close()
    r.config_set("notify-keyspace-events", "")
    assert events == ["xadd", "xadd", "xtrim", "xdel", "xgroup-create",
                      "xgroup-createconsumer", "xsetid"]


# ---------------------------------------------------------------- blocking


def test_xread_block_woken_by_xadd(server, r, rr):
    add(rr, "s", "1-1")
    t, box = blocking_call(server, "XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r)
    add(rr, "other", "1-1")
    add(rr, "s", "2-1", "k", "v")
    t.join(5)
    assert box["reply"] == [["s", [("2-1", {"k": "v"})]]]
    assert r.info("clients")["blocked_clients"] == 0


def test_xread_block_waits_on_when_the_key_becomes_another_type(server, r, rr):
    t, box = blocking_call(server, "XREAD", "BLOCK", 0, "STREAMS", "s1", "$")
    wait_blocked(r)
    p = rr.pipeline(transaction=True)
    p.execute_command("XADD", "s1", "1-1", "old", "v")
    p.execute_command("DEL", "s1")
    p.execute_command("LPUSH", "s1", "foo", "bar")
    p.execute()
    time.sleep(0.2)
    assert r.info("clients")["blocked_clients"] == 1
    rr.delete("s1")
    add(rr, "s1", "5-1", "new", "v")
    t.join(5)
    assert box["reply"] == [["s1", [("5-1", {"new": "v"})]]]


def test_xread_block_times_out(server, rr):
    t0 = time.monotonic()
    assert rr.execute_command("XREAD", "BLOCK", 200, "STREAMS", "s", "$") is None
    assert 0.15 <= time.monotonic() - t0 < 3
    with server.raw() as c:
        c.call("HELLO", "3")
        assert c.call("XREAD", "BLOCK", "100", "STREAMS", "s", "0") == ("_", None)


def test_xread_block_served_at_once_when_data_exists(rr):
    fill(rr, n=2)
    got = rr.execute_command("XREAD", "BLOCK", 1000, "STREAMS", "s", "1-1")
    assert got == [["s", [["2-1", ["n", "2"]]]]]


def test_xreadgroup_block_woken_by_xadd(server, r, rr):
    rr.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    t, box = blocking_call(server, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s",
                           ">")
    wait_blocked(r)
    add(rr, "s", "3-1", "k", "v")
    t.join(5)
    assert "reply" in box, box
    assert rr.execute_command("XPENDING", "s", "g") == [1, "3-1", "3-1", [["c", "1"]]]


def test_blocked_readers_each_get_the_new_entry(server, r, rr):
    rr.execute_command("XADD", "s", "1-1", "f", "v")
    threads = [blocking_call(server, "XREAD", "BLOCK", 0, "STREAMS", "s", "$") for _ in range(3)]
    wait_blocked(r, 3)
    add(rr, "s", "2-1")
    for t, box in threads:
        t.join(5)
        assert "reply" in box, box
    assert r.info("clients")["blocked_clients"] == 0


def test_xreadgroup_block_unblocked_by_group_destroy(server, r, rr):
    rr.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    t, box = blocking_call(server, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s",
                           ">")
    wait_blocked(r)
    rr.execute_command("XGROUP", "DESTROY", "s", "g")
    t.join(5)
    assert box.get("error", "").startswith("NOGROUP")


def test_group_readers_are_served_in_the_order_they_blocked(start_server, target):
    # One worker, so that the waiters are woken in the order they blocked; across workers
    # Basalt's wake-ups race (the first to run takes the entry), as for the list pops.
    srv = start_server(args={"workers": "1"} if target == "basalt" else None)
    r = srv.client()
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    first, first_box = blocking_call(srv, "XREADGROUP", "GROUP", "g", "c1", "COUNT", 1, "BLOCK",
                                     5000, "STREAMS", "s", ">")
    wait_blocked(r, 1)
    second, second_box = blocking_call(srv, "XREADGROUP", "GROUP", "g", "c2", "COUNT", 1,
                                       "BLOCK", 5000, "STREAMS", "s", ">")
    wait_blocked(r, 2)
    r.execute_command("XADD", "s", "1-1", "f", "v")
    first.join(6)
    assert first_box["reply"] == [["s", [("1-1", {"f": "v"})]]]
    assert int(r.info("clients")["blocked_clients"]) == 1
    r.execute_command("XADD", "s", "2-1", "f", "w")
    second.join(6)
    assert second_box["reply"] == [["s", [("2-1", {"f": "w"})]]]


@pytest.mark.basalt_only  # 7.2 runs the command again (NOGROUP); 7.0 replied -UNBLOCKED
def test_xreadgroup_block_fails_when_the_stream_is_deleted(server, r, rr):
    rr.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    t, box = blocking_call(server, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "s",
                           ">")
    wait_blocked(r)
    rr.execute_command("DEL", "s")
    t.join(5)
    assert box.get("error") == ("NOGROUP No such key 's' or consumer group 'g' in XREADGROUP "
                                "with GROUP option")


@pytest.mark.basalt_only  # INFO's total_blocking_keys_on_nokey is Redis 7.2's (Debian has 7.0)
def test_info_counts_the_keys_whose_deletion_fails_a_blocked_reader(server, r, rr):
    def keys():
        info = r.info("clients")
        return info["total_blocking_keys"], info["total_blocking_keys_on_nokey"]

    lister, _ = blocking_call(server, "BLPOP", "s", 0)
    wait_blocked(r, 1)
    assert keys() == (1, 0)  # BLPOP waits on through a deletion
    rr.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    group, group_box = blocking_call(server, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0,
                                     "STREAMS", "s", ">")
    wait_blocked(r, 2)
    assert keys() == (1, 1)
    rr.execute_command("DEL", "s")
    group.join(5)
    assert group_box.get("error", "").startswith("NOGROUP")
    assert keys() == (1, 0)
    rr.execute_command("RPUSH", "s", "x")
    lister.join(5)
    assert keys() == (0, 0)


@pytest.mark.basalt_only  # 7.2 runs the command again (NOGROUP); 7.0 replied -UNBLOCKED
@pytest.mark.parametrize("flush", ["FLUSHALL", "FLUSHDB"])
def test_a_flush_fails_group_readers_and_keeps_plain_readers_waiting(server, r, rr, flush):
    rr.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    group, group_box = blocking_call(server, "XREADGROUP", "GROUP", "g", "c", "BLOCK", 0,
                                     "STREAMS", "s", ">")
    wait_blocked(r, 1)
    plain, plain_box = blocking_call(server, "XREAD", "BLOCK", 0, "STREAMS", "s", "$")
    wait_blocked(r, 2)
    rr.execute_command(flush)
    group.join(5)
    assert group_box.get("error") == ("NOGROUP No such key 's' or consumer group 'g' in "
                                      "XREADGROUP with GROUP option")
    assert int(r.info("clients")["blocked_clients"]) == 1  # XREAD waits for the stream
    rr.execute_command("XADD", "s", "1-1", "f", "v")
    plain.join(5)
    assert plain_box["reply"] == [["s", [("1-1", {"f": "v"})]]]


# ---------------------------------------------------------------- restart


@pytest.mark.basalt_only  # Redis without persistence (--save '') keeps nothing over a restart
@pytest.mark.parametrize("how", ["restart", "kill9"])
def test_groups_and_pending_survive_restart(start_server, how):
    srv = start_server(args=[("durability", "sync")], persistent=True)
    c = srv.client(callbacks=False)
    for i in range(1, 6):
        c.execute_command("XADD", "s", "%d-1" % i, "n", i)
    c.execute_command("XGROUP", "CREATE", "s", "g", "0")
    c.execute_command("XREADGROUP", "GROUP", "g", "a", "COUNT", 3, "STREAMS", "s", ">")
    c.execute_command("XACK", "s", "g", "2-1")
    c.execute_command("XDEL", "s", "5-1")
    before = (c.execute_command("XRANGE", "s", "-", "+"),
              c.execute_command("XPENDING", "s", "g"),
              c.execute_command("XINFO", "GROUPS", "s"),
              c.execute_command("XINFO", "STREAM", "s"))
    c.close()
    if how == "restart":
        srv.restart()
    else:
        assert srv.kill9() == -9
        srv.start(retries=0)
    c = srv.client(callbacks=False)
    after = (c.execute_command("XRANGE", "s", "-", "+"),
             c.execute_command("XPENDING", "s", "g"),
             c.execute_command("XINFO", "GROUPS", "s"),
             c.execute_command("XINFO", "STREAM", "s"))
    assert after == before
    assert before[1] == [2, "1-1", "3-1", [["a", "2"]]]
    got = c.execute_command("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
    assert ids(got[0][1]) == ["4-1"]
    c.close()


# ---------------------------------------------------------------- replication


def stream_state(c, exact_counters=True):
    groups = c.execute_command("XINFO", "GROUPS", "s")
    if not exact_counters:
        groups = [g[:8] for g in groups]  # up to last-delivered-id
    return (c.execute_command("XRANGE", "s", "-", "+"),
            c.execute_command("XPENDING", "s", "g"),
            groups,
            [e[:2] + e[3:] for e in c.execute_command("XPENDING", "s", "g", "-", "+", 100)])


def test_groups_reach_the_replica_and_a_promoted_replica_continues(start_server, target):
    from test_replication import master_args, replica_args, wait_link_up
    master = start_server(master_args(target), name="master")
    m = master.client(callbacks=False)
    for i in range(1, 5):
        m.execute_command("XADD", "s", "%d-1" % i, "n", i)
    m.execute_command("XGROUP", "CREATE", "s", "g", "0")
    replica = start_server(replica_args(target, master), name="replica")
    wait_link_up(replica)
    m.execute_command("XREADGROUP", "GROUP", "g", "a", "COUNT", 2, "STREAMS", "s", ">")
    m.execute_command("XACK", "s", "g", "1-1")
    m.execute_command("XCLAIM", "s", "g", "b", 0, "2-1", "JUSTID")
    assert m.execute_command("WAIT", 1, 5000) == 1
    r = replica.client(callbacks=False)
    # A Redis 7.0 replica (the --target redis run) loses the group's entries-read: the master
    # propagates XREADGROUP as XCLAIM and XGROUP SETID without ENTRIESREAD. Basalt's replicas
    # apply the master's writes themselves and match it exactly.
    exact = target == "basalt"
    wait_until(lambda: stream_state(r, exact) == stream_state(m, exact), timeout=10)
    assert stream_state(r, exact) == stream_state(m, exact)
    assert r.execute_command("REPLICAOF", "NO", "ONE") == "OK"
    got = r.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert ids(got[0][1]) == ["3-1", "4-1"]
    assert r.execute_command("XPENDING", "s", "g") == [3, "2-1", "4-1", [["b", "1"],
                                                                       ["c", "2"]]]


# ---------------------------------------------------------------- storage


@pytest.mark.basalt_only  # how Basalt's files hold a stream
def test_trimmed_head_leaves_the_files_without_being_asked(r):
    """A trim writes a tombstone per entry; flushed, they make their file deletion-dense, and
    RocksDB's compact-on-deletion collector compacts it without COMPACT, so a queue that trims
    as it adds does not keep its dead entries on disk (docs/encoding.md, Streams)."""
    from test_collection_storage import compact_and_wait, stored_members
    compact_and_wait(r)
    n = 20000
    p = r.pipeline(transaction=False)
    for i in range(1, n + 1):
        p.execute_command("XADD", "q", "%d-1" % i, "f", "v" * 20)
    p.execute()
    compact_and_wait(r)
    assert stored_members(r) == n
    assert r.execute_command("XTRIM", "q", "MAXLEN", 10) == n - 10
    r.execute_command("SAVE")  # flushes the memtables (the trim's tombstones); no compaction runs
    assert wait_until(lambda: stored_members(r) == 10, timeout=30), stored_members(r)
    assert [e[0] for e in r.execute_command("XRANGE", "q", "-", "+")] == [
        "%d-1" % i for i in range(n - 9, n + 1)]
