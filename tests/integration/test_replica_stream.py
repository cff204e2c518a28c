"""The command stream a master sends its replicas, as Redis 7.2 sends it (tests/unit/expire.tcl,
multi.tcl, scripting.tcl, type/{list,zset,set,string}.tcl, integration/replication.tcl).

A raw replica (SYNC, the RDB file skipped, then RESP arrays read one by one) proves, command by
command, that after the RDB the master sends every write as a RESP array, `SELECT <db>` before the
first one and whenever the database changes, and Redis's rewrites: relative TTLs as absolute
`PXAT`/`PEXPIREAT` (an expiry in the past as `DEL`), GETEX as `PEXPIREAT`/`PERSIST`/nothing,
GETDEL as `DEL`, INCRBYFLOAT/HINCRBYFLOAT as `SET ... KEEPTTL`/`HSET`, SPOP as `SREM` (or `DEL`
when it empties the set), the [B]LMPOP/[B]ZMPOP and blocking pops (served at once or after
blocking) as their non-blocking pops, RESTORE with `ABSTTL`, XADD `*` with the generated ID and
XREADGROUP as `XCLAIM`; MULTI/EXEC and scripts as their effects, wrapped in MULTI/EXEC only when
there are two or more; commands without effect send nothing while FLUSHALL/FLUSHDB/PUBLISH are
always sent; keys that expire (found by a command, passed over by SCAN, or by the active
expirer) as `DEL`; `repl-ping-replica-period` sets how often `PING` is sent.

Each stream test ends with a marker write, so a command sent in excess shifts the list and fails
it. Command names are compared case-insensitively (as Redis's assert_replication_stream does),
every other argument exactly; only times and stream IDs the test cannot know are wildcards, and
times are still checked to be near what was asked.

"Migration out": a real redis-server replica (REDIS_SERVER) of the server under test, attached
while a workload runs over every type in several databases, and a second one attached in the
middle of it, end with exactly the master's data (type, value, TTL within a tolerance, stream
entries, groups and pending entries).

Every test also passes with --target redis (Debian's 7.0.15) except those marked basalt_only,
where Redis 7.2's stream differs from 7.0's (each says how).
"""
import os
import signal
import socket
import threading
import time

import pytest
import redis

from conftest import ServerProcess
from helpers import wait_until
from resp import RawConn

STREAM_TIMEOUT = 10.0
SYNC_TIMEOUT = 60.0


# --------------------------------------------------------------------------
# a raw replica
# --------------------------------------------------------------------------
class _Any:
    def __repr__(self):
        return "*"


ANY = _Any()  # one argument, whatever it is


class Near:
    """A millisecond time within `tol` ms of `ms`."""

    def __init__(self, ms, tol=3000):
        self.ms, self.tol = int(ms), tol

    def matches(self, arg):
        try:
            return abs(int(arg) - self.ms) <= self.tol
        except ValueError:
            return False

    def __repr__(self):
        return "~%d(+-%d)" % (self.ms, self.tol)


def now_ms():
    return int(time.time() * 1000)


def _arg_matches(pattern, arg, first):
    if pattern is ANY:
        return True
    if isinstance(pattern, Near):
        return pattern.matches(arg)
    if isinstance(pattern, int):
        pattern = str(pattern)
    if isinstance(pattern, str):
        pattern = pattern.encode()
    if first:
        return pattern.lower() == arg.lower()
    return pattern == arg


def command_matches(pattern, command):
    return len(pattern) == len(command) and all(
        _arg_matches(p, a, i == 0) for i, (p, a) in enumerate(zip(pattern, command)))


def _show_arg(a):
    if isinstance(a, bytes):
        text = a.decode(errors="backslashreplace")
        return text if text.isprintable() and text and " " not in text else repr(a)
    return repr(a) if isinstance(a, str) and (" " in a or not a) else str(a)


def show(command):
    """One line; a run of more than 3 wildcards (or arguments of a long command) is
    shortened."""
    words = [_show_arg(a) for a in command]
    out = []
    for w in words:
        if out and out[-1][0] == w:
            out[-1][1] += 1
        else:
            out.append([w, 1])
    text = " ".join(w if n <= 3 else "%s (x%d)" % (w, n) for w, n in out)
    return text if len(text) <= 200 else text[:200] + "... (%d arguments)" % len(command)


class ReplicationStream(RawConn):
    """A replica on a raw socket, as Redis's attach_to_replication_stream: pings into the stream
    are made rare (repl-ping-replica-period 3600), SYNC is sent, the newline keep-alives sent
    while the RDB is made are skipped, the RDB bulk is read, and from then on each RESP array
    is one command (a list of bytes). PING commands are dropped unless keep_pings: they are
    keep-alives, not effects (the period is only lowered to 3600 s here, and Redis may still
    send one before it applies)."""

    def __init__(self, server, keep_pings=False, ping_period=3600):
        c = server.client()
        try:
            c.config_set("repl-ping-replica-period", ping_period)
        finally:
            c.close()
        super().__init__(server.port, timeout=STREAM_TIMEOUT)
        self.keep_pings = keep_pings
        self.seen = []
        self.sock.sendall(b"*1\r\n$4\r\nSYNC\r\n")
        while True:
            self.buf = self.buf.lstrip(b"\n")
            if self.buf:
                break
            self._fill()
        line = self._line()
        assert line.startswith(b"$"), "SYNC answered %r" % line
        size = int(line[1:])
        while len(self.buf) < size:
            self._fill()
        self.rdb, self.buf = self.buf[:size], self.buf[size:]
        assert self.rdb.startswith(b"REDIS"), self.rdb[:20]

    def _fill(self):
        try:
            chunk = self.sock.recv(1 << 16)
        except socket.timeout:
            raise AssertionError("nothing more in the replication stream after %.0f s; "
                                 "read so far: %s" % (STREAM_TIMEOUT,
                                                      [show(c) for c in self.seen]))
        assert chunk, "the master closed the replication link; read so far: %s" % (
            [show(c) for c in self.seen],)
        self.buf += chunk

    def _bulk(self):
        line = self._line()
        assert line.startswith(b"$"), "expected a bulk string, got %r" % line
        return self._exact(int(line[1:]))

    def next(self):
        """The next command of the stream (PINGs skipped unless keep_pings)."""
        while True:
            line = self._line()
            if not line:
                continue  # a newline keep-alive
            assert line.startswith(b"*"), "not a RESP array in the stream: %r" % line
            command = [self._bulk() for _ in range(int(line[1:]))]
            self.seen.append(command)
            if not self.keep_pings and command and command[0].lower() == b"ping":
                continue
            return command

    def expect(self, *patterns):
        """Reads len(patterns) commands and requires each to match its pattern (a tuple: the
        command name compared case-insensitively, ANY, Near(ms) or an exact argument).
        Returns the commands read."""
        got = []
        stopped = None
        for _ in patterns:
            try:
                got.append(self.next())
            except AssertionError as e:  # nothing more, or the link closed
                stopped = str(e).split(";")[0]
                break
        bad = [i for i, p in enumerate(patterns)
               if i >= len(got) or not command_matches(p, got[i])]
        if bad:
            lines = ["%s %-50s %s" % ("!!" if i in bad else "  ", show(p),
                                      show(got[i]) if i < len(got) else "(%s)" % stopped)
                     for i, p in enumerate(patterns)]
            pytest.fail("replication stream differs (expected | got):\n" + "\n".join(lines),
                        pytrace=False)
        return got


MARKER = ("set", "marker", "end")


def marker(c):
    """A write after the commands under test: the stream must reach it with nothing else."""
    c.execute_command("SET", "marker", "end")


@pytest.fixture(scope="module")
def master(start_module_server):
    return start_module_server(args={"enable-debug-command": "yes"})


@pytest.fixture
def c(master):
    cl = master.client()
    cl.flushall()
    cl.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    yield cl
    cl.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    cl.config_set("repl-ping-replica-period", 3600)
    cl.close()


@pytest.fixture
def stream(master, c):
    made = []

    def attach(**kw):
        s = ReplicationStream(master, **kw)
        made.append(s)
        return s

    yield attach
    for s in made:
        s.close()


@pytest.fixture
def raw(master, c):
    made = []

    def make(db=0):
        conn = RawConn(master.port)
        made.append(conn)
        if db:
            assert conn.call("SELECT", db) == ("+", b"OK")
        return conn

    yield make
    for conn in made:
        conn.close()


def wait_blocked(c, n):
    assert wait_until(lambda: int(c.info("clients")["blocked_clients"]) == n, timeout=10), \
        "expected %d blocked clients, have %s" % (n, c.info("clients")["blocked_clients"])


# --------------------------------------------------------------------------
# the stream itself
# --------------------------------------------------------------------------
def test_the_stream_starts_with_select_and_follows_the_database(c, stream, raw):
    s = stream()
    c.set("a", "1")
    one = raw(db=1)
    assert one.call("SET", "b", "2") == ("+", b"OK")
    assert one.call("SET", "c", "3") == ("+", b"OK")
    c.rpush("l", "x", "y")
    marker(c)
    s.expect(("select", "0"), ("set", "a", "1"),
             ("select", "1"), ("set", "b", "2"), ("set", "c", "3"),
             ("select", "0"), ("rpush", "l", "x", "y"), MARKER)


def test_ping_period_sets_how_often_ping_is_sent(c, stream):
    """With repl-ping-replica-period 1, PINGs (without SELECT, nothing else) come about once a
    second."""
    s = stream(keep_pings=True, ping_period=1)
    s.expect(("ping",))
    first = time.monotonic()
    s.expect(("ping",), ("ping",))
    assert 1.5 <= time.monotonic() - first <= 4.0


def test_ttls_are_sent_as_absolute_times(c, stream):
    """expire.tcl: SET EX/PX/EXAT/PXAT, SETEX, PSETEX as SET ... PXAT <ms> (an upper-case PXAT
    here: 7.2 sends a PXAT as the client wrote it, 7.0 rewrites it; see the next test);
    EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT as PEXPIREAT (options kept), one in the past as DEL;
    RESTORE with a relative TTL with ABSTTL."""
    c.set("foo5", "bar")
    payload = c.dump("foo5")
    c.delete("foo5")
    s = stream()
    t = now_ms()
    sec = t // 1000
    c.execute_command("SET", "foo1", "bar", "EX", 200)
    c.execute_command("SET", "foo1", "bar", "PX", 100000)
    c.execute_command("SET", "foo1", "bar", "EXAT", sec + 100)
    c.execute_command("SET", "foo1", "bar", "PXAT", t + 100000)
    c.execute_command("SETEX", "foo1", 100, "bar")
    c.execute_command("PSETEX", "foo1", 100000, "bar")
    c.execute_command("SET", "foo2", "bar")
    c.execute_command("EXPIRE", "foo2", 100)
    c.execute_command("PEXPIRE", "foo2", 100000)
    c.execute_command("EXPIRE", "foo2", 1000, "GT")
    c.execute_command("SET", "foo3", "bar")
    c.execute_command("EXPIREAT", "foo3", sec + 100)
    c.execute_command("PEXPIREAT", "foo3", sec * 1000 + 100000)
    c.execute_command("EXPIREAT", "foo3", sec - 100)
    c.execute_command("SET", "foo4", "bar")
    c.execute_command("PEXPIRE", "foo4", -1)
    c.execute_command("RESTORE", "foo6", 100000, payload)
    c.execute_command("RESTORE", "foo7", t + 100000, payload, "ABSTTL")
    marker(c)
    s.expect(("select", "0"),
             ("set", "foo1", "bar", "PXAT", Near(t + 200000)),
             ("set", "foo1", "bar", "PXAT", Near(t + 100000)),
             ("set", "foo1", "bar", "PXAT", (sec + 100) * 1000),
             ("set", "foo1", "bar", "PXAT", t + 100000),
             ("set", "foo1", "bar", "PXAT", Near(t + 100000)),
             ("set", "foo1", "bar", "PXAT", Near(t + 100000)),
             ("set", "foo2", "bar"),
             ("pexpireat", "foo2", Near(t + 100000)),
             ("pexpireat", "foo2", Near(t + 100000)),
             ("pexpireat", "foo2", Near(t + 1000000), "GT"),
             ("set", "foo3", "bar"),
             ("pexpireat", "foo3", (sec + 100) * 1000),
             ("pexpireat", "foo3", sec * 1000 + 100000),
             ("del", "foo3"),
             ("set", "foo4", "bar"),
             ("del", "foo4"),
             ("restore", "foo6", Near(t + 100000), payload, "ABSTTL"),
             ("restore", "foo7", t + 100000, payload, "ABSTTL"),
             MARKER)


@pytest.mark.basalt_only  # 7.0 rewrites SET ... PXAT as SET ... PXAT <ms> (upper case) too
def test_set_pxat_is_sent_verbatim_and_set_get_without_get(c, stream):
    """expire.tcl ({set foo1 bar pxat *}): SET with PXAT is sent as the client wrote it;
    t_string.c: SET ... GET is sent without GET."""
    s = stream()
    t = now_ms() + 100000
    c.execute_command("set", "foo1", "bar", "pxat", t)
    assert c.set("foo1", "new", get=True) == "bar"
    marker(c)
    s.expect(("select", "0"), ("set", "foo1", "bar", "pxat", t), ("set", "foo1", "new"),
             MARKER)


def test_restore_of_an_already_expired_payload_is_sent_as_del(c, stream):
    """dump.tcl: RESTORE ... ABSTTL with a time in the past stores nothing; with REPLACE over
    an existing key it is sent as DEL of that key (lazyfree-lazy-server-del no)."""
    c.set("src", "value")
    payload = c.dump("src")
    c.set("key1", "old")
    s = stream()
    past = now_ms() - 5000
    assert c.execute_command("RESTORE", "key1", past, payload, "REPLACE", "ABSTTL") in (
        "OK", True)
    assert c.execute_command("RESTORE", "key2", past, payload, "ABSTTL") in ("OK", True)
    assert c.exists("key1", "key2") == 0
    marker(c)
    s.expect(("select", "0"), ("del", "key1"), MARKER)


def test_keyspace_commands_are_sent_as_they_are(c, stream):
    """RENAME, MOVE, COPY ... DB, SWAPDB, DEL, UNLINK, PERSIST and SETRANGE/APPEND go to the
    replica as the client sent them (SWAPDB with the stream's database unchanged)."""
    s = stream()
    c.set("a", "1")
    c.rename("a", "b")
    c.move("b", 1)
    c.set("c", "x", ex=100)
    c.copy("c", "d", destination_db=2)
    c.execute_command("SWAPDB", 1, 2)
    c.append("c", "yz")
    c.setrange("c", 1, "Q")
    c.persist("c")
    c.set("e", "1")
    c.delete("c", "nokey")
    c.unlink("e")
    marker(c)
    s.expect(("select", "0"), ("set", "a", "1"), ("rename", "a", "b"), ("move", "b", "1"),
             ("set", "c", "x", "PXAT", ANY), ("copy", "c", "d", "DB", "2"),
             ("swapdb", "1", "2"), ("append", "c", "yz"), ("setrange", "c", "1", "Q"),
             ("persist", "c"), ("set", "e", "1"), ("del", "c", "nokey"), ("unlink", "e"),
             MARKER)


def test_getex_and_getdel_are_sent_as_pexpireat_persist_del_or_nothing(c, stream):
    """expire.tcl and type/string.tcl: GETEX EX/PX/EXAT/PXAT as PEXPIREAT, PERSIST as PERSIST
    (nothing when there is no TTL to remove), plain GETEX as nothing, GETEX to a past time and
    GETDEL as DEL; GETSET as SET."""
    s = stream()
    t = now_ms()
    sec = t // 1000
    c.execute_command("SET", "foo", "bar", "EX", 100)
    assert c.execute_command("GETEX", "foo", "PERSIST") == "bar"
    assert c.execute_command("GETEX", "foo", "PERSIST") == "bar"  # no TTL left: nothing
    assert c.execute_command("GETEX", "foo") == "bar"
    c.execute_command("GETEX", "foo", "EX", 200)
    c.execute_command("GETEX", "foo", "PX", 200000)
    c.execute_command("GETEX", "foo", "EXAT", sec + 100)
    c.execute_command("GETEX", "foo", "PXAT", t + 100000)
    assert c.execute_command("GETEX", "foo", "EXAT", sec - 100) == "bar"
    assert c.execute_command("GETEX", "foo", "EX", 100) is None  # gone: nothing
    c.set("bar", "1")
    assert c.execute_command("GETDEL", "bar") == "1"
    assert c.execute_command("GETDEL", "bar") is None
    assert c.execute_command("GETSET", "baz", "new") is None
    marker(c)
    s.expect(("select", "0"),
             ("set", "foo", "bar", "PXAT", Near(t + 100000)),
             ("persist", "foo"),
             ("pexpireat", "foo", Near(t + 200000)),
             ("pexpireat", "foo", Near(t + 200000)),
             ("pexpireat", "foo", (sec + 100) * 1000),
             ("pexpireat", "foo", t + 100000),
             ("del", "foo"),
             ("set", "bar", "1"),
             ("del", "bar"),
             ("set", "baz", "new"),
             MARKER)


def test_float_increments_are_sent_as_their_results(c, stream):
    """INCRBYFLOAT as SET key <value> KEEPTTL, HINCRBYFLOAT as HSET key field <value>, with the
    value the client got (scripting.tcl: also from Lua)."""
    c.set("f", "10.5")
    c.hset("h", "x", "1")
    s = stream()
    assert c.incrbyfloat("f", 0.1) == 10.6
    assert c.execute_command("INCRBYFLOAT", "new", "3.0e3") == 3000
    assert c.execute_command("HINCRBYFLOAT", "h", "x", "2.5") == 3.5
    assert c.execute_command("HINCRBYFLOAT", "h", "y", "-1.25") == -1.25
    c.eval("return redis.call('incrbyfloat', KEYS[1], 1)", 1, "lua")
    marker(c)
    s.expect(("select", "0"),
             ("set", "f", "10.6", "KEEPTTL"),
             ("set", "new", "3000", "KEEPTTL"),
             ("hset", "h", "x", "3.5"),
             ("hset", "h", "y", "-1.25"),
             ("set", "lua", "1", "KEEPTTL"),
             MARKER)


def test_spop_without_count_is_sent_as_srem_of_the_member(c, stream):
    """scripting.tcl: SPOP key as SREM key <the popped member>, also from Lua; nothing when
    the set is missing; the last member's SPOP is an SREM too."""
    c.sadd("s", "a", "b", "c")
    s = stream()
    popped = [c.spop("s"), c.eval("return redis.call('spop', KEYS[1])", 1, "s"), c.spop("s")]
    assert sorted(popped) == ["a", "b", "c"] and c.exists("s") == 0
    assert c.spop("s") is None
    marker(c)
    s.expect(("select", "0"),
             ("srem", "s", popped[0]), ("srem", "s", popped[1]), ("srem", "s", popped[2]),
             MARKER)


def test_spop_with_a_count_that_empties_the_set_is_sent_as_del(c, stream):
    """set.tcl code path #1 (lazyfree-lazy-server-del no, the default): DEL."""
    c.sadd("s1", *range(5))
    c.sadd("s2", *range(65))
    s = stream()
    assert len(c.spop("s1", 5)) == 5
    assert len(c.spop("s2", 100)) == 65
    assert c.spop("s3", 3) == []
    marker(c)
    s.expect(("select", "0"), ("del", "s1"), ("del", "s2"), MARKER)


@pytest.mark.basalt_only  # 7.0 sends one SREM per member, wrapped in MULTI/EXEC; 7.2 batches
def test_spop_with_a_count_is_sent_as_one_srem_of_the_popped_members(c, stream):
    """Redis 7.2's spopWithCountCommand: SREM key m1 m2 ... (batches of 1024), whichever of its
    two strategies picks the members (few popped out of many, or most of the set)."""
    c.sadd("few", *range(100))
    c.sadd("most", *["m%d" % i for i in range(10)])
    s = stream()
    few = c.spop("few", 3)
    most = c.spop("most", 9)  # 1 left: 1 * SPOP_MOVE_STRATEGY_MUL (5) <= 9
    marker(c)
    got = s.expect(("select", "0"), ("srem", "few", ANY, ANY, ANY),
                   ("srem", "most") + (ANY,) * 9, MARKER)
    assert sorted(got[1][2:]) == sorted(m.encode() for m in few)
    assert sorted(got[2][2:]) == sorted(m.encode() for m in most)


@pytest.mark.basalt_only  # 7.0 sends one SREM per member, wrapped in MULTI/EXEC; 7.2 batches
def test_spop_of_more_than_1024_members_is_sent_as_srems_of_1024_in_multi(c, stream):
    """Redis 7.2 sends SREMs of at most 1024 members; two of them are two effects of one
    command, so they come wrapped in MULTI/EXEC."""
    c.sadd("big", *range(3000))
    c.set("before", "1")
    s = stream()
    c.set("start", "1")
    popped = c.spop("big", 2000)
    marker(c)
    got = s.expect(("select", "0"), ("set", "start", "1"), ("multi",),
                   ("srem", "big") + (ANY,) * 1024, ("srem", "big") + (ANY,) * 976,
                   ("exec",), MARKER)
    assert sorted(got[3][2:] + got[4][2:]) == sorted(m.encode() for m in popped)


def test_lmpop_and_zmpop_are_sent_as_pops_with_a_count(c, stream):
    """list.tcl/zset.tcl: LMPOP as LPOP|RPOP key <n popped>, ZMPOP as ZPOPMIN|ZPOPMAX key <n>;
    nothing when every key is empty; plain ZPOPMIN/LPOP as they are."""
    s = stream()
    c.lpush("mylist", "a", "b", "c")
    c.execute_command("LMPOP", 1, "mylist", "LEFT", "COUNT", 1)
    c.execute_command("LMPOP", 1, "mylist", "RIGHT")
    c.execute_command("LMPOP", 2, "mylist", "mylist2", "LEFT", "COUNT", 10)
    assert c.execute_command("LMPOP", 2, "mylist", "mylist2", "LEFT", "COUNT", 10) is None
    c.rpush("mylist2", 1, 2, 3)
    c.execute_command("LMPOP", 2, "mylist", "mylist2", "RIGHT", "COUNT", 2)
    c.zadd("myzset", {"one": 1, "two": 2, "three": 3})
    c.execute_command("ZMPOP", 1, "myzset", "MIN")
    c.execute_command("ZMPOP", 1, "myzset", "MAX", "COUNT", 1)
    c.execute_command("ZMPOP", 2, "myzset", "myzset2", "MIN", "COUNT", 10)
    assert c.execute_command("ZMPOP", 2, "myzset", "myzset2", "MAX", "COUNT", 10) is None
    c.zadd("myzset2", {"a": 1, "b": 2, "c": 3})
    c.execute_command("ZPOPMIN", "myzset2")
    c.execute_command("ZPOPMAX", "myzset2", 5)
    c.execute_command("LPOP", "mylist2")
    marker(c)
    s.expect(("select", "0"),
             ("lpush", "mylist", "a", "b", "c"),
             ("lpop", "mylist", "1"),
             ("rpop", "mylist", "1"),
             ("lpop", "mylist", "1"),
             ("rpush", "mylist2", "1", "2", "3"),
             ("rpop", "mylist2", "2"),
             ("zadd", "myzset", "1", "one", "2", "two", "3", "three"),
             ("zpopmin", "myzset", "1"),
             ("zpopmax", "myzset", "1"),
             ("zpopmin", "myzset", "1"),
             ("zadd", "myzset2", "1", "a", "2", "b", "3", "c"),
             ("zpopmin", "myzset2"),
             ("zpopmax", "myzset2", "5"),
             ("lpop", "mylist2"),
             MARKER)


def test_blocking_pops_served_at_once_are_sent_as_pops(c, stream):
    """BLPOP/BRPOP as LPOP/RPOP key, BLMPOP as LPOP|RPOP key <n>, BLMOVE as LMOVE,
    BRPOPLPUSH as RPOPLPUSH, BZPOPMIN/MAX as ZPOPMIN/MAX key, BZMPOP as ZPOPMIN|ZPOPMAX key
    <n>, when the key has elements already."""
    c.rpush("l", "a", "b", "c", "d", "e", "f")
    c.zadd("z", {"m%d" % i: i for i in range(6)})
    s = stream()
    assert c.blpop(["l"], 0) == ("l", "a")
    assert c.brpop(["l"], 0) == ("l", "f")
    c.execute_command("BLMPOP", 0, 2, "nolist", "l", "LEFT", "COUNT", 1)
    c.execute_command("BLMOVE", "l", "dst", "RIGHT", "LEFT", 0)
    c.execute_command("BRPOPLPUSH", "l", "dst", 0)
    c.execute_command("BLMPOP", 0, 1, "l", "RIGHT", "COUNT", 10)
    c.execute_command("BZPOPMIN", "z", 0)
    c.execute_command("BZPOPMAX", "z", 0)
    c.execute_command("BZMPOP", 0, 1, "z", "MIN")
    c.execute_command("BZMPOP", 0, 1, "z", "MAX", "COUNT", 10)
    marker(c)
    s.expect(("select", "0"),
             ("lpop", "l"),
             ("rpop", "l"),
             ("lpop", "l", "1"),
             ("lmove", "l", "dst", "RIGHT", "LEFT"),
             ("rpoplpush", "l", "dst"),
             ("rpop", "l", "1"),
             ("zpopmin", "z"),
             ("zpopmax", "z"),
             ("zpopmin", "z", "1"),
             ("zpopmax", "z", "3"),  # m2 m3 m4 were left
             MARKER)


def test_blocking_pops_served_after_blocking_are_sent_as_pops(c, stream, raw):
    """list.tcl/zset.tcl (BLMPOP/BZMPOP propagate as pop with count): the write that serves a
    blocked client, then the pop it was served, as when it is served at once; a blocking pop
    that times out sends nothing. (BLMOVE's directions are given in lower case: 7.2 re-runs
    the blocked command and keeps the client's words, 7.0 sends its own lower-case ones.)"""
    s = stream()

    def blocked(*command):
        conn = raw()
        conn.send(*command)
        wait_blocked(c, 1)
        return conn

    b = blocked("BLPOP", "q", 0)
    c.rpush("q", "x")
    assert b.read() == ("*", [("$", b"q"), ("$", b"x")])
    b = blocked("BRPOP", "q", 0)
    c.lpush("q", "y")
    assert b.read() == ("*", [("$", b"q"), ("$", b"y")])
    b = blocked("BLMOVE", "q", "dst", "left", "right", 0)
    c.rpush("q", "z")
    assert b.read() == ("$", b"z")
    b = blocked("BRPOPLPUSH", "q", "dst", 0)
    c.rpush("q", "w")
    assert b.read() == ("$", b"w")
    b = blocked("BLMPOP", 0, 2, "q", "q2", "LEFT", "COUNT", 5)
    c.rpush("q2", "1", "2", "3")
    assert b.read()[0] == "*"
    b = blocked("BZPOPMIN", "zq1", 0)
    c.zadd("zq1", {"a": 1, "b": 2})
    assert b.read() == ("*", [("$", b"zq1"), ("$", b"a"), ("$", b"1")])
    b = blocked("BZPOPMAX", "zq2", 0)
    c.zadd("zq2", {"c": 3, "d": 4})
    assert b.read() == ("*", [("$", b"zq2"), ("$", b"d"), ("$", b"4")])
    b = blocked("BZMPOP", 0, 1, "zq3", "MIN", "COUNT", 10)
    c.zadd("zq3", {"e": 5, "f": 6})
    assert b.read()[0] == "*"
    b = blocked("BLMPOP", 0, 1, "q4", "RIGHT")
    c.rpush("q4", "r", "s")
    assert b.read()[0] == "*"
    assert c.blpop(["empty"], 0.01) is None
    marker(c)
    s.expect(("select", "0"),
             ("rpush", "q", "x"), ("lpop", "q"),
             ("lpush", "q", "y"), ("rpop", "q"),
             ("rpush", "q", "z"), ("lmove", "q", "dst", "left", "right"),
             ("rpush", "q", "w"), ("rpoplpush", "q", "dst"),
             ("rpush", "q2", "1", "2", "3"), ("lpop", "q2", "3"),
             ("zadd", "zq1", "1", "a", "2", "b"), ("zpopmin", "zq1"),
             ("zadd", "zq2", "3", "c", "4", "d"), ("zpopmax", "zq2"),
             ("zadd", "zq3", "5", "e", "6", "f"), ("zpopmin", "zq3", "2"),
             ("rpush", "q4", "r", "s"), ("rpop", "q4", "1"),
             MARKER)


def test_multi_exec_is_sent_wrapped_only_with_two_or_more_effects(c, stream, raw):
    """multi.tcl: one write in MULTI is sent alone; several are wrapped in MULTI/EXEC without
    the reads; an empty transaction, one of reads only and one whose write has no effect send
    nothing; PUBLISH in MULTI is sent alone; SELECT inside the transaction is sent inside."""
    c.set("foo", "value1")
    s = stream()
    c.set("before", "1")  # the stream's SELECT 0 is sent here, outside any MULTI
    t = raw()
    for cmds in ([("SET", "foo", "bar")],
                 [("SET", "a", "1"), ("GET", "a"), ("SET", "b", "2"), ("GET", "b"),
                  ("INCR", "n")],
                 [],
                 [("GET", "foo"), ("EXISTS", "foo")],
                 [("DEL", "missing")],
                 [("PUBLISH", "ch", "msg")],
                 [("SET", "x", "0"), ("SELECT", "1"), ("SET", "x", "1"), ("GET", "x"),
                  ("SELECT", "2"), ("SET", "x", "2"), ("SELECT", "0")]):
        assert t.call("MULTI") == ("+", b"OK")
        for cmd in cmds:
            assert t.call(*cmd) == ("+", b"QUEUED")
        kind, replies = t.call("EXEC")
        assert kind == "*" and len(replies) == len(cmds), replies
    marker(c)
    s.expect(("select", "0"), ("set", "before", "1"),
             ("set", "foo", "bar"),
             ("multi",), ("set", "a", "1"), ("set", "b", "2"), ("incr", "n"), ("exec",),
             ("publish", "ch", "msg"),
             ("multi",), ("set", "x", "0"), ("select", "1"), ("set", "x", "1"),
             ("select", "2"), ("set", "x", "2"), ("exec",),
             ("select", "0"), MARKER)


@pytest.mark.basalt_only  # 7.0 sends SELECT before MULTI; 7.2 sends MULTI first (dbid -1)
def test_multi_exec_sends_multi_before_the_first_select(c, stream, raw):
    """multi.tcl (multiple commands with SELECT): MULTI, then the SELECT of the first command's
    database inside the transaction."""
    s = stream()
    t = raw()
    assert t.call("MULTI") == ("+", b"OK")
    for cmd in (("SELECT", "1"), ("SET", "foo", "bar"), ("GET", "foo"), ("SELECT", "2"),
                ("SET", "foo2", "bar2"), ("SELECT", "3"), ("SET", "foo3", "bar3"),
                ("SELECT", "0")):
        assert t.call(*cmd) == ("+", b"QUEUED")
    assert t.call("EXEC")[0] == "*"
    marker(c)
    s.expect(("multi",), ("select", "1"), ("set", "foo", "bar"),
             ("select", "2"), ("set", "foo2", "bar2"),
             ("select", "3"), ("set", "foo3", "bar3"), ("exec",),
             ("select", "0"), MARKER)


def test_xreadgroup_in_multi_is_sent_as_xclaims_in_multi(c, stream):
    """multi.tcl (MULTI propagation of XREADGROUP): XADD with the IDs given, XGROUP CREATE as
    it is, then the XCLAIMs of both XREADGROUPs in one MULTI/EXEC."""
    c.set("before", "1")
    s = stream()
    ids = [c.xadd("mystream", {"foo%d" % i: "bar"}, id="%d-1" % (i + 1)) for i in range(3)]
    c.xgroup_create("mystream", "mygroup", 0)
    p = c.pipeline(transaction=True)
    p.xreadgroup("mygroup", "consumer1", {"mystream": ">"}, count=2)
    p.xreadgroup("mygroup", "consumer1", {"mystream": ">"})
    p.execute()
    marker(c)
    t = now_ms()
    xclaim = lambda i: ("xclaim", "mystream", "mygroup", "consumer1", "0", ids[i], "TIME",
                        Near(t), "RETRYCOUNT", "1", "FORCE", "JUSTID", "LASTID", ids[i])
    s.expect(("select", "0"),
             ("xadd", "mystream", "1-1", "foo0", "bar"),
             ("xadd", "mystream", "2-1", "foo1", "bar"),
             ("xadd", "mystream", "3-1", "foo2", "bar"),
             ("xgroup", "CREATE", "mystream", "mygroup", "0"),
             ("multi",), xclaim(0), xclaim(1), xclaim(2), ("exec",),
             MARKER)


def test_xadd_star_is_sent_with_the_generated_id_and_xreadgroup_as_xclaim(c, stream):
    """XADD * as XADD with the ID the client got; one entry read by XREADGROUP as one XCLAIM
    (no MULTI), two as two in MULTI/EXEC; NOACK as XGROUP CREATECONSUMER + XGROUP SETID with
    ENTRIESREAD; XACK as it is."""
    s = stream()
    id1 = c.xadd("st", {"f": "v1"})
    id2 = c.execute_command("XADD", "st", "*", "f", "v2")
    id3 = c.xadd("st", {"f": "v3"})
    c.execute_command("XGROUP", "CREATE", "st", "g", "0")
    c.xreadgroup("g", "alice", {"st": ">"}, count=1)
    c.xreadgroup("g", "alice", {"st": ">"}, count=2)
    assert c.xack("st", "g", id1) == 1
    c.xadd("st", {"f": "v4"}, id="9999999999999-0")
    c.xreadgroup("g", "bob", {"st": ">"}, noack=True)
    marker(c)
    t = now_ms()
    xclaim = lambda i, who="alice": ("xclaim", "st", "g", who, "0", i, "TIME", Near(t),
                                     "RETRYCOUNT", "1", "FORCE", "JUSTID", "LASTID", i)
    s.expect(("select", "0"),
             ("xadd", "st", id1, "f", "v1"),
             ("xadd", "st", id2, "f", "v2"),
             ("xadd", "st", id3, "f", "v3"),
             ("xgroup", "CREATE", "st", "g", "0"),
             xclaim(id1),
             ("multi",), xclaim(id2), xclaim(id3), ("exec",),
             ("xack", "st", "g", id1),
             ("xadd", "st", "9999999999999-0", "f", "v4"),
             ("multi",), ("xgroup", "CREATECONSUMER", "st", "g", "bob"),
             ("xgroup", "SETID", "st", "g", "9999999999999-0", "ENTRIESREAD", "4"),
             ("exec",),
             MARKER)


def test_scripts_are_sent_as_their_effects(c, stream):
    """scripting.tcl and multi.tcl: a script's writes (rewritten as outside scripts) in
    MULTI/EXEC when two or more, alone when one, nothing when it only reads; EVAL inside
    MULTI the same; FCALL like EVAL."""
    c.function_load("#!lua name=lib\n"
                    "redis.register_function('two', function(keys, args)\n"
                    "  redis.call('set', keys[1], args[1])\n"
                    "  redis.call('expire', keys[1], 100)\n"
                    "end)\n"
                    "redis.register_function('one', function(keys, args)\n"
                    "  return redis.call('lpush', keys[1], args[1])\n"
                    "end)")
    c.mset({"a": "1", "b": "2"})
    c.set("before", "1")
    s = stream()
    c.set("start", "1")  # the stream's SELECT 0 is sent here
    t = now_ms()
    c.eval("redis.call('set', KEYS[1], 'v'); redis.call('incr', KEYS[2]);"
           "redis.call('get', KEYS[1])", 2, "k1", "n")
    c.eval("return redis.call('mget', 'a', 'b')", 0)
    c.eval("redis.call('expire', KEYS[1], 100)", 1, "k1")
    c.eval("redis.call('del', 'missing'); return redis.call('set', KEYS[1], 'x', 'NX')",
           1, "k1")
    p = c.pipeline(transaction=True)
    p.eval("redis.call('set', KEYS[1], 'bar')", 1, "bar")
    p.execute()
    c.fcall("two", 1, "fk", "fv")
    c.fcall("one", 1, "fl", "e")
    marker(c)
    s.expect(("select", "0"), ("set", "start", "1"),
             ("multi",), ("set", "k1", "v"), ("incr", "n"), ("exec",),
             ("pexpireat", "k1", Near(t + 100000)),
             ("set", "bar", "bar"),
             ("multi",), ("set", "fk", "fv"), ("pexpireat", "fk", Near(t + 100000)),
             ("exec",),
             ("lpush", "fl", "e"),
             MARKER)


@pytest.mark.basalt_only  # 7.0 sends SELECT before the MULTI that wraps a script's effects
def test_a_scripts_select_is_sent_inside_its_multi(c, stream):
    """A script that writes in two databases: MULTI, SELECT, the write, SELECT, the write,
    EXEC."""
    s = stream()
    c.eval("redis.call('select', 1); redis.call('set', 'x', 1);"
           "redis.call('select', 2); redis.call('set', 'x', 2)", 0)
    marker(c)
    s.expect(("multi",), ("select", "1"), ("set", "x", "1"), ("select", "2"),
             ("set", "x", "2"), ("exec",), ("select", "0"), MARKER)


def test_commands_without_effect_send_nothing(c, stream):
    """DEL of a missing key, SET NX on an existing key, SET XX on a missing one, reads, pops
    and removals that find nothing, EXPIRE of a missing key, PERSIST without a TTL, and
    SCRIPT LOAD / SCRIPT FLUSH send nothing."""
    c.set("foo", "bar")
    c.sadd("s", "a")
    c.set("before", "1")
    s = stream()
    c.set("start", "1")
    assert c.delete("missing") == 0
    assert c.set("foo", "other", nx=True) is None
    assert c.set("nokey", "v", xx=True) is None
    assert c.get("foo") == "bar" and c.exists("foo") == 1 and c.dbsize() >= 1
    assert c.lpop("nolist") is None
    assert c.srem("s", "zz") == 0
    assert c.hdel("nohash", "f") == 0
    assert c.zrem("nozset", "m") == 0
    assert c.expire("missing", 10) is False
    assert c.persist("foo") is False
    assert c.execute_command("GETEX", "foo") == "bar"
    c.script_load("return 1")
    c.script_flush()
    c.eval("return redis.call('get', 'foo')", 0)
    marker(c)
    s.expect(("select", "0"), ("set", "start", "1"), MARKER)


def test_flushall_flushdb_and_publish_are_always_sent(c, stream):
    """replication.tcl (FLUSHDB / FLUSHALL should replicate): sent even when there is nothing to
    flush, also from a script; PUBLISH with no subscriber is sent too."""
    s = stream()
    c.set("key", "value")
    c.flushdb()
    c.set("key", "value2")
    c.flushall()
    c.flushdb()
    c.flushdb()
    c.eval("redis.call('flushdb')", 0)
    c.flushall()
    c.flushall()
    c.eval("redis.call('flushall')", 0)
    assert c.publish("nobody", "hello") == 0
    marker(c)
    s.expect(("select", "0"),
             ("set", "key", "value"), ("flushdb",), ("set", "key", "value2"), ("flushall",),
             ("flushdb",), ("flushdb",), ("flushdb",),
             ("flushall",), ("flushall",), ("flushall",),
             ("publish", "nobody", "hello"),
             MARKER)


def _set_expired(c, *keys):
    """Each key holds a value whose 1 ms TTL has passed (with the active expirer off)."""
    for key in keys:
        c.set(key, "bar", px=1)
    time.sleep(0.05)


def test_a_key_found_expired_is_sent_as_del_and_the_read_is_not(c, stream):
    """expire.tcl (Redis should not propagate the read command on lazy expire): GET of an
    expired key sends DEL key, and nothing for the GET; SCAN/RANDOMKEY passing over expired
    keys send one DEL each, not wrapped in MULTI/EXEC."""
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    _set_expired(c, "foo")
    s = stream()
    assert c.get("foo") is None
    c.set("x", "1")
    _set_expired(c, "foo1", "foo2")
    cursor = "0"
    while True:
        cursor, _ = c.execute_command("SCAN", cursor)
        if cursor in ("0", 0, b"0"):
            break
    marker(c)
    got = s.expect(("select", "0"), ("del", "foo"), ("set", "x", "1"),
                   ("set", "foo1", "bar", "PXAT", ANY), ("set", "foo2", "bar", "PXAT", ANY),
                   ("del", ANY), ("del", ANY), MARKER)
    assert sorted([got[5][1], got[6][1]]) == [b"foo1", b"foo2"]


def test_a_write_on_an_expired_key_sends_the_del_then_the_write_in_multi(c, stream):
    """7.2 propagates a lazy-expiry DEL with the command that found the key: both in one
    MULTI/EXEC (two effects of one command)."""
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    c.set("before", "1")
    s = stream()
    c.set("start", "1")
    _set_expired(c, "k")
    assert c.lpush("k", "a") == 1
    marker(c)
    s.expect(("select", "0"), ("set", "start", "1"), ("set", "k", "bar", "PXAT", ANY),
             ("multi",), ("del", "k"), ("lpush", "k", "a"), ("exec",), MARKER)


def test_a_key_the_active_expirer_deletes_is_sent_as_del(c, stream):
    s = stream()
    c.set("k", "bar", px=100)
    c.set("keep", "1")
    assert wait_until(lambda: c.dbsize() == 1 and c.execute_command("RANDOMKEY") == "keep",
                      timeout=10), "the active expirer did not delete k"
    marker(c)
    s.expect(("select", "0"), ("set", "k", "bar", "PXAT", ANY), ("set", "keep", "1"),
             ("del", "k"), MARKER)


# --------------------------------------------------------------------------
# migration out: real redis-server replicas of the server under test
# --------------------------------------------------------------------------
@pytest.fixture
def redis_replicas():
    """Factory: a real redis-server started as a replica of `master`; stopped after the test."""
    made = []

    def make(master, name):
        s = ServerProcess("redis", args=[("replicaof", ("127.0.0.1", str(master.port))),
                                         ("repl-diskless-load", "disabled")], name=name)
        made.append(s)
        return s.start()

    yield make
    for s in made:
        s.cleanup()


def full_dump(server):
    """Every key of every database: (type, value, PTTL or -1). Stream values carry the entries,
    every group (name, consumers, pending, last-delivered-id), its consumers (name, pending)
    and its pending entries (id, consumer, delivery count). entries-read and lag are left out:
    a Redis 7.0 replica does not keep entries-read exactly (XCLAIM ... LASTID moves last-id
    without it)."""
    out = {}
    for db in range(16):
        c = server.client(db=db, decode_responses=False, callbacks=False)
        try:
            cursor = b"0"
            keys = set()
            while True:
                cursor, batch = c.execute_command("SCAN", cursor, "COUNT", 1000)
                keys.update(batch)
                if cursor == b"0":
                    break
            for key in keys:
                kind = c.execute_command("TYPE", key)
                if kind == b"string":
                    value = c.execute_command("GET", key)
                elif kind == b"hash":
                    flat = c.execute_command("HGETALL", key)
                    value = sorted(zip(flat[::2], flat[1::2]))
                elif kind == b"list":
                    value = c.execute_command("LRANGE", key, 0, -1)
                elif kind == b"set":
                    value = sorted(c.execute_command("SMEMBERS", key))
                elif kind == b"zset":
                    value = c.execute_command("ZRANGE", key, 0, -1, "WITHSCORES")
                elif kind == b"stream":
                    groups = []
                    for g in c.execute_command("XINFO", "GROUPS", key):
                        info = dict(zip(g[::2], g[1::2]))
                        name = info[b"name"]
                        consumers = sorted(
                            (d[b"name"], d[b"pending"]) for d in
                            (dict(zip(x[::2], x[1::2])) for x in
                             c.execute_command("XINFO", "CONSUMERS", key, name)))
                        pending = [(p[0], p[1], p[3]) for p in
                                   c.execute_command("XPENDING", key, name, "-", "+", 10000)]
                        groups.append((name, {"consumers": info[b"consumers"],
                                              "pending": info[b"pending"],
                                              "last-delivered-id": info[b"last-delivered-id"],
                                              "consumer list": consumers,
                                              "pending entries": pending}))
                    value = {"entries": c.execute_command("XRANGE", key, "-", "+"),
                             "groups": dict(groups)}
                else:
                    continue  # expired between SCAN and TYPE
                out[(db, key)] = (kind, value, c.execute_command("PTTL", key))
        finally:
            c.close()
    return out


def first_difference(a, b, path=()):
    """Where two dump values first differ: the path of indexes and both sides (shortened)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=repr):
            if k not in a or k not in b:
                return "at %s: %s only on the %s" % (list(path), k,
                                                     "master" if k in a else "replica")
            if a[k] != b[k]:
                return first_difference(a[k], b[k], path + (k,))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, path + (i,))
        if len(a) != len(b):
            return "at %s: %d items | %d items (first extra: %r)" % (
                list(path), len(a), len(b), (a[len(b)] if len(a) > len(b) else b[len(a)]))
    short = lambda v: repr(v) if len(repr(v)) <= 300 else repr(v)[:300] + "..."
    return "at %s: %s | %s" % (list(path), short(a), short(b))


def without_ttls(d):
    return {k: (kind, value, ttl > 0) for k, (kind, value, ttl) in d.items()}


def compare_data(master, replica, name):
    """Polls until the replica's data equals the master's (without TTL values), then compares
    the TTLs within 2 s. Returns (master's dump, None) or (None, what differs)."""
    expected = without_ttls(full_dump(master))
    got = {}

    def caught_up():
        got.clear()
        got.update(without_ttls(full_dump(replica)))
        return got == expected

    if not wait_until(caught_up, timeout=SYNC_TIMEOUT, interval=0.2):
        missing = sorted(set(expected) - set(got))[:10]
        extra = sorted(set(got) - set(expected))[:10]
        differ = ["%s: %s" % (k, first_difference(expected[k], got[k]))
                  for k in sorted(set(expected) & set(got)) if expected[k] != got[k]][:10]
        return None, ("%s did not catch up with the master in %.0f s: missing %s, extra %s, "
                      "differ (master | replica):\n%s"
                      % (name, SYNC_TIMEOUT, missing, extra, "\n".join(differ)))
    m, r = full_dump(master), full_dump(replica)
    if m.keys() != r.keys():
        return None, "%s: keys differ: %s" % (name, sorted(set(m) ^ set(r))[:10])
    far = [(k, m[k][2], r[k][2]) for k in m if m[k][2] > 0 and abs(m[k][2] - r[k][2]) > 2000]
    if far:
        return None, "%s: TTLs differ by more than 2 s (key, master, replica): %s" % (name, far)
    return m, None


def info_replication(server):
    c = server.client()
    try:
        return c.info("replication")
    finally:
        c.close()


def wait_replica_online(master, replica):
    def ok():
        return info_replication(replica).get("master_link_status") == "up"

    assert wait_until(ok, timeout=SYNC_TIMEOUT, interval=0.1), \
        "replica did not connect:\n--- replica log ---\n%s\n--- master log ---\n%s" % (
            replica.log_tail(), master.log_tail())


def workload(master, phase):
    """Writes over every type in databases 0-3: strings with TTLs (EX, PX, EXPIRE, GETEX,
    PERSIST, short ones that expire), INCRBYFLOAT/HINCRBYFLOAT, lists with blocking pops served
    after blocking and BLMOVE, sets with SPOP (with and without a count), hashes, zsets with
    ZPOPMIN/ZMPOP/BZPOPMIN, streams with XADD */XREADGROUP/XACK/XCLAIM, EVAL, MULTI, SELECT in
    MULTI, and a FLUSHDB of database 3."""
    p = "p%d:" % phase
    c = master.client()
    dbs = {db: master.client(db=db) for db in (1, 2, 3)}
    try:
        for i in range(30):
            c.set(p + "s%d" % i, "v%d" % i)
        c.set(p + "ex", "1", ex=1000)
        c.set(p + "px", "2", px=2_000_000)
        c.setex(p + "setex", 500, "3")
        c.set(p + "persist", "4", ex=300)
        c.persist(p + "persist")
        c.expire(p + "s1", 700)
        c.execute_command("GETEX", p + "s2", "EX", 800)
        c.execute_command("GETDEL", p + "s3")
        c.set(p + "short", "x", px=50)
        c.set(p + "f", "1.5")
        for _ in range(10):
            c.incrbyfloat(p + "f", 0.1)
            c.hincrbyfloat(p + "h", "fl", 1.25)
        c.hset(p + "h", mapping={"f%d" % i: i for i in range(20)})
        c.hdel(p + "h", "f3")
        c.rpush(p + "l", *range(40))
        c.lpop(p + "l", 3)
        c.execute_command("LMPOP", 1, p + "l", "RIGHT", "COUNT", 2)
        c.execute_command("LMOVE", p + "l", p + "l2", "LEFT", "RIGHT")
        c.sadd(p + "set", *["m%d" % i for i in range(50)])
        c.spop(p + "set")
        c.spop(p + "set", 5)
        c.sadd(p + "small", "a", "b")
        c.spop(p + "small", 10)
        c.zadd(p + "z", {"z%d" % i: i * 1.5 for i in range(30)})
        c.zpopmin(p + "z", 2)
        c.zpopmax(p + "z")
        c.execute_command("ZMPOP", 1, p + "z", "MIN", "COUNT", 3)
        c.zincrby(p + "z", 0.25, "z10")
        # blocking pops served after blocking
        for command, serve in ((("BLPOP", p + "bq", 0), lambda: c.rpush(p + "bq", "a", "b")),
                               (("BLMOVE", p + "bq2", p + "bdst", "RIGHT", "LEFT", 0),
                                lambda: c.rpush(p + "bq2", "x", "y")),
                               (("BLMPOP", 0, 1, p + "bq3", "LEFT", "COUNT", 2),
                                lambda: c.rpush(p + "bq3", 1, 2, 3)),
                               (("BZPOPMIN", p + "bz", 0), lambda: c.zadd(p + "bz", {"a": 1,
                                                                                     "b": 2}))):
            with RawConn(master.port) as conn:
                conn.send(*command)
                wait_blocked(c, 1)
                serve()
                assert conn.read()[0] in "*$"
        # streams
        ids = [c.xadd(p + "st", {"i": i}) for i in range(20)]
        c.xgroup_create(p + "st", "g", 0)
        c.xreadgroup("g", "alice", {p + "st": ">"}, count=5)
        c.xreadgroup("g", "bob", {p + "st": ">"}, count=3)
        c.xack(p + "st", "g", ids[0], ids[1])
        c.xclaim(p + "st", "g", "carol", 0, [ids[2]])
        c.xreadgroup("g", "dave", {p + "st": ">"}, count=2, noack=True)
        c.xgroup_create(p + "st", "g2", "$")
        c.xadd(p + "st", {"late": 1}, maxlen=100, approximate=False)
        # scripts and transactions
        c.eval("redis.call('set', KEYS[1], ARGV[1]); redis.call('expire', KEYS[1], 600);"
               "redis.call('rpush', KEYS[2], 'a', 'b'); redis.call('spop', KEYS[3])",
               3, p + "lua", p + "lual", p + "set", "scripted")
        tx = c.pipeline(transaction=True)
        tx.incr(p + "ctr").incrbyfloat(p + "ctrf", 2.5).hset(p + "txh", "a", "b")
        tx.execute()
        with RawConn(master.port) as conn:
            assert conn.call("MULTI") == ("+", b"OK")
            for cmd in (("SET", p + "tx0", "0"), ("SELECT", "2"), ("SET", p + "tx2", "2"),
                        ("SELECT", "1"), ("RPUSH", p + "tx1", "1")):
                assert conn.call(*cmd) == ("+", b"QUEUED")
            assert conn.call("EXEC")[0] == "*"
        # other databases; database 3 is flushed
        for db, d in dbs.items():
            d.mset({p + "db%d:%d" % (db, i): i for i in range(10)})
            d.set(p + "ttl", "t", ex=900)
            d.zadd(p + "dbz", {"a": db})
        dbs[3].flushdb()
        dbs[3].set(p + "after-flush", "yes")
        dbs[2].delete(p + "db2:0")
        time.sleep(0.06)  # p:short's 50 ms pass: the expirer or a lookup deletes it
        assert c.get(p + "short") is None
    finally:
        c.close()
        for d in dbs.values():
            d.close()


@pytest.mark.timeout(300)
def test_redis_replicas_end_with_the_masters_data(start_server, target, redis_replicas):
    args = {"repl-diskless-sync-delay": "0"} if target == "redis" else None
    master = start_server(args, name="master")
    workload(master, 0)
    first = redis_replicas(master, "replica1")
    wait_replica_online(master, first)
    workload(master, 1)
    # The second replica is attached while phase 2 is being written: its full sync and the
    # start of its stream meet in the middle of the workload.
    errors = []

    def phase2():
        try:
            workload(master, 2)
        except Exception as e:  # reported below
            errors.append(e)

    writer = threading.Thread(target=phase2)
    writer.start()
    second = redis_replicas(master, "replica2")
    writer.join(120)
    assert not writer.is_alive() and not errors, errors
    wait_replica_online(master, second)
    workload(master, 3)
    data, first_error = compare_data(master, first, "the first replica")
    _, second_error = compare_data(master, second, "the second replica")
    errors = [e for e in (first_error, second_error) if e]
    if errors:
        pytest.fail("\n".join(errors), pytrace=False)
    kinds = {kind for kind, _, _ in data.values()}
    assert kinds == {b"string", b"hash", b"list", b"set", b"zset", b"stream"}, kinds
    assert {db for db, _ in data} == {0, 1, 2, 3}
    assert any(ttl > 0 for _, _, ttl in data.values())
    # Keys written after both replicas are attached only reach them by the stream.
    assert (0, b"p3:lua") in data and data[(0, b"p3:lua")][2] > 0
    assert (3, b"p3:db3:0") not in data and (3, b"p3:after-flush") in data
    # The master lists both replicas, as Redis does for any replica that synced.
    info = info_replication(master)
    assert int(info.get("connected_slaves", 0)) == 2, info


def refused_for_too_few_replicas(c, key):
    try:
        c.set(key, "v")
        return False
    except redis.ResponseError as e:
        assert str(e).startswith("NOREPLICAS"), e
        return True


@pytest.mark.timeout(120)
def test_wait_and_min_replicas_count_a_redis_replica(start_server, redis_replicas):
    """WAIT counts a Redis replica once its acknowledged offset covers the client's last write,
    and not before: a stopped replica acknowledges nothing; a write made before the replica
    attached is in its file. min-replicas-to-write counts it while it acknowledges."""
    master = start_server(name="master")
    c = master.client()
    c.set("before", "attach")
    replica = redis_replicas(master, "replica")
    wait_replica_online(master, replica)
    assert c.execute_command("WAIT", 1, 10000) == 1
    r = replica.client()
    c.set("k", "1")
    assert c.execute_command("WAIT", 1, 10000) == 1
    assert r.get("k") == "1"  # acknowledged means applied
    assert c.execute_command("WAIT", 2, 200) == 1  # the timeout replies with the count

    os.kill(replica.proc.pid, signal.SIGSTOP)
    try:
        c.set("k", "2")
        assert c.execute_command("WAIT", 1, 1500) == 0
    finally:
        os.kill(replica.proc.pid, signal.SIGCONT)
    assert c.execute_command("WAIT", 1, 10000) == 1
    assert r.get("k") == "2"

    c.config_set("min-replicas-max-lag", 2)
    c.config_set("min-replicas-to-write", 1)
    assert c.set("with", "replica")
    replica.stop()
    assert wait_until(lambda: refused_for_too_few_replicas(c, "without"), timeout=30,
                      interval=0.1)
    c.config_set("min-replicas-to-write", 0)
