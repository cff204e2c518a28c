"""Pipelines: many commands sent before any reply is read.

Basalt commits a pipeline's consecutive keyed writes as one RocksDB batch (a "write group",
src/commands/dispatcher.h). These tests pin what a client must still see: every command's own
reply, in order; each command seeing the effect of the ones before it; other clients never
losing an update or seeing a write before its reply exists; errors confined to their command.
Except where marked basalt_only they hold for redis-server too (`--target redis`).
"""
import threading
import time

import pytest

from resp import encode


def pipeline(raw, commands):
    """Sends all commands in one write, then reads one reply per command."""
    raw.send_raw(b"".join(encode(*c) for c in commands))
    return [raw.read() for _ in commands]


def test_each_command_sees_the_writes_before_it(server, r):
    with server.raw() as raw:
        replies = pipeline(raw, [
            ("SET", "n", "1"), ("INCR", "n"), ("GET", "n"), ("INCRBY", "n", "5"),
            ("APPEND", "s", "ab"), ("APPEND", "s", "cd"), ("RPUSH", "l", "a", "b"),
            ("LPOP", "l"), ("HSET", "h", "f", "1"), ("HINCRBY", "h", "f", "2"),
            ("ZADD", "z", "1", "m"), ("ZINCRBY", "z", "2", "m"), ("DEL", "n"), ("EXISTS", "n"),
        ])
    assert replies == [
        ("+", b"OK"), (":", 2), ("$", b"2"), (":", 7),
        (":", 2), (":", 4), (":", 2),
        ("$", b"a"), (":", 1), (":", 3),
        (":", 1), ("$", b"3"), (":", 1), (":", 0),
    ]
    assert r.get("s") == "abcd"
    assert r.lrange("l", 0, -1) == ["b"]
    assert r.dbsize() == 4  # s, l, h, z


def test_an_error_stays_with_its_command(server, r):
    r.set("text", "abc")
    with server.raw() as raw:
        replies = pipeline(raw, [
            ("SET", "a", "1"), ("INCR", "text"), ("LPUSH", "text", "x"), ("SET", "b", "2"),
            ("SET", "c"), ("SET", "d", "4"),
        ])
    assert replies[0] == ("+", b"OK")
    assert replies[1] == ("-", "ERR value is not an integer or out of range")
    assert replies[2][0] == "-" and replies[2][1].startswith("WRONGTYPE")
    assert replies[3] == ("+", b"OK")
    assert replies[4] == ("-", "ERR wrong number of arguments for 'set' command")
    assert replies[5] == ("+", b"OK")
    assert r.mget("a", "b", "c", "d", "text") == ["1", "2", None, "4", "abc"]


def test_select_inside_a_pipeline_switches_database_between_writes(server, r):
    with server.raw() as raw:
        replies = pipeline(raw, [
            ("SET", "k", "db0"), ("SELECT", "1"), ("SET", "k", "db1"), ("INCR", "c"),
            ("SELECT", "0"), ("INCR", "c"), ("INCR", "c"),
        ])
    assert replies == [("+", b"OK"), ("+", b"OK"), ("+", b"OK"), (":", 1), ("+", b"OK"),
                       (":", 1), (":", 2)]
    assert r.get("k") == "db0" and r.get("c") == "2"
    r.execute_command("SELECT", "1")
    assert r.get("k") == "db1" and r.get("c") == "1"
    r.execute_command("SELECT", "0")


def test_pipelined_increments_from_many_clients_are_all_counted(server, r):
    """Four connections pipeline INCR and LPUSH on the same keys at once: grouped writes
    hold their keys until they commit, so no update is lost and list lengths add up. Pipelines
    of 200 commands fill groups (64 commands) that go on holding the same keys."""
    clients, rounds, depth = 4, 15, 100
    errors = []

    def work(n):
        try:
            with server.raw() as raw:
                for i in range(rounds):
                    cmds = []
                    for j in range(depth):
                        cmds.append(("INCR", "counter%d" % (j % 3)))
                        cmds.append(("LPUSH", "list", "%d-%d-%d" % (n, i, j)))
                    for kind, _ in pipeline(raw, cmds):
                        if kind != ":":
                            errors.append(kind)
        except Exception as e:  # reported below, not lost in the thread
            errors.append(repr(e))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    total = clients * rounds * depth
    counts = [int(r.get("counter%d" % k)) for k in range(3)]
    assert sum(counts) == total
    assert counts == [clients * rounds * len(range(k, depth, 3)) for k in range(3)]
    assert r.llen("list") == total
    elements = r.lrange("list", 0, -1)
    assert len(set(elements)) == total
    # Each client's pushes are in the list newest first, in the order it sent them.
    for n in range(clients):
        mine = [tuple(map(int, e.split("-")[1:])) for e in elements if e.startswith("%d-" % n)]
        assert mine == sorted(mine, reverse=True)


def test_a_pipelined_write_by_another_client_breaks_watch(server, r):
    with server.raw() as watcher, server.raw() as writer:
        assert watcher.call("WATCH", "w") == ("+", b"OK")
        assert pipeline(writer, [("SET", "x", "1"), ("SET", "w", "2"), ("SET", "y", "3")]) == \
            [("+", b"OK")] * 3
        assert watcher.call("MULTI") == ("+", b"OK")
        assert watcher.call("SET", "w", "from-tx") == ("+", b"QUEUED")
        assert watcher.call("EXEC") == ("*", None)
    assert r.get("w") == "2"


def test_a_transaction_inside_a_pipeline_keeps_its_order(server, r):
    with server.raw() as raw:
        replies = pipeline(raw, [
            ("SET", "t", "1"), ("MULTI",), ("INCR", "t"), ("INCR", "t"), ("EXEC",),
            ("INCR", "t"), ("GET", "t"),
        ])
    assert replies == [("+", b"OK"), ("+", b"OK"), ("+", b"QUEUED"), ("+", b"QUEUED"),
                       ("*", [(":", 2), (":", 3)]), (":", 4), ("$", b"4")]


@pytest.mark.basalt_only
def test_consecutive_pipelined_writes_are_committed_as_one_group(server, r):
    def grouped():
        stats = r.info("stats")
        return int(stats["grouped_write_commits"]), int(stats["grouped_write_commands"])

    commits_before, commands_before = grouped()
    with server.raw() as raw:
        replies = pipeline(raw, [("SET", "g%d" % i, "v") for i in range(20)])
    assert replies == [("+", b"OK")] * 20
    commits, commands = grouped()
    # 20 small commands arrive in one read of the socket: one group of all of them.
    assert (commits - commits_before, commands - commands_before) == (1, 20)
    assert r.dbsize() == 20

    # A read between writes ends the group before it.
    commits_before, commands_before = grouped()
    with server.raw() as raw:
        pipeline(raw, [("SET", "a", "1"), ("SET", "b", "2"), ("GET", "a"), ("SET", "c", "3"),
                       ("SET", "d", "4"), ("SET", "e", "5")])
    commits, commands = grouped()
    assert (commits - commits_before, commands - commands_before) == (2, 5)


@pytest.mark.basalt_only
def test_writes_of_clients_read_in_one_turn_share_a_group(server, r):
    """A worker commits the writes of every client it read in one turn as one batch. A script
    holds the key space while the clients' writes arrive, so each worker finds several of them
    waiting when it can go on; each client sends a single command, so any group of more than
    one command holds different clients' writes."""
    def grouped():
        stats = r.info("stats")
        return int(stats["grouped_write_commits"]), int(stats["grouped_write_commands"])

    # A loop long enough for about a second here. Not a loop on TIME: as in Redis 7.2, a
    # script sees the time frozen at its start.
    iterations = 1000000
    while True:
        start = time.monotonic()
        r.eval("for i = 1, %d do end return 1" % iterations, 0)
        took = time.monotonic() - start
        if took > 0.1:
            break
        iterations *= 4
    busy_one_second = "for i = 1, %d do end return 1" % int(iterations / took)
    commits_before, commands_before = grouped()
    with server.raw() as scripted:
        raws = [server.raw() for _ in range(8)]
        try:
            scripted.send_raw(encode("EVAL", busy_one_second, "0"))
            time.sleep(0.3)  # the script has started and holds the key space
            for i, raw in enumerate(raws):
                raw.send_raw(encode("SET", "turn%d" % i, str(i)))
            assert [raw.read() for raw in raws] == [("+", b"OK")] * len(raws)
        finally:
            for raw in raws:
                raw.close()
        assert scripted.read() == (":", 1)
    commits, commands = grouped()
    assert commits > commits_before
    assert commands - commands_before >= 3
    assert r.mget(["turn%d" % i for i in range(8)]) == [str(i) for i in range(8)]


@pytest.mark.basalt_only
def test_a_pipeline_of_large_writes_is_read_and_grouped_whole(server, r):
    """libevent's own reading stops at 4 KiB per callback; the connection reads everything that
    arrived, so 16 writes of 1 KiB sent together are one group, not four."""
    def grouped():
        stats = r.info("stats")
        return int(stats["grouped_write_commits"]), int(stats["grouped_write_commands"])

    commits_before, commands_before = grouped()
    with server.raw() as raw:
        replies = pipeline(raw, [("SET", "big%d" % i, "v" * 1024) for i in range(16)])
    assert replies == [("+", b"OK")] * 16
    commits, commands = grouped()
    assert (commits - commits_before, commands - commands_before) == (1, 16)
    assert r.mget(["big%d" % i for i in range(16)]) == ["v" * 1024] * 16


def _rounds_until(seconds):
    """Yields round numbers until `seconds` have passed. Whether two workers' turns overlap is
    up to the scheduler, so the tests that need them to meet retry for a while, not a fixed
    number of rounds: on a loaded 2-core machine a few dozen rounds can all miss."""
    deadline = time.monotonic() + seconds
    rnd = 0
    while rnd == 0 or time.monotonic() < deadline:
        yield rnd
        rnd += 1


def _pipeline_in_threads(server, pipelines):
    """Sends each pipeline on its own new connection, all at once; returns each one's replies.
    Consecutive new connections go to the server's workers in turn."""
    raws = [server.raw() for _ in pipelines]
    replies = [None] * len(pipelines)
    start = threading.Barrier(len(pipelines))

    def run(i):
        start.wait()
        replies[i] = pipeline(raws[i], pipelines[i])

    try:
        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(pipelines))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for raw in raws:
            raw.close()
    return replies


@pytest.mark.basalt_only
def test_writes_handed_to_the_worker_holding_their_key_count_once_and_in_order(server, r):
    """Two clients, one on each worker, pipeline INCRs of one key at the same time. A worker
    whose client's next write needs a key that the other worker's write group holds hands that
    client's commands to the other worker (src/net/worker.h). No INCR may count twice or be
    lost, each client's INCRs must rise in its own order, a GET between them (which runs at
    home) must see the client's own INCR before it and none of its later ones, and a key of its
    own that it writes before the INCRs and reads after them must read back."""
    def delegated():
        return int(r.info("stats")["delegated_write_commands"])

    before = delegated()
    total = 0
    for rnd in _rounds_until(30):
        pipelines = [[("SET", "own%d" % c, str(rnd))] + [("INCR", "hot")] * 1000 +
                     [("GET", "hot")] + [("INCR", "hot")] * 1000 + [("GET", "own%d" % c)]
                     for c in range(2)]
        replies = _pipeline_in_threads(server, pipelines)
        seen = []
        for c, got in enumerate(replies):
            assert got[0] == ("+", b"OK")
            assert got[-1] == ("$", str(rnd).encode())
            middle = got[1001]
            incrs = got[1:1001] + got[1002:-1]
            assert middle[0] == "$" and all(kind == ":" for kind, _ in incrs)
            counts = [value for _, value in incrs]
            assert counts == sorted(counts) and len(set(counts)) == len(counts)
            assert counts[999] <= int(middle[1]) < counts[1000]
            seen += counts
        assert sorted(seen) == list(range(total + 1, total + 4001))
        total += 4000
        if delegated() > before:
            break
    assert int(r.get("hot")) == total
    assert delegated() > before, "the two clients' writes never met in 30 s"


@pytest.mark.basalt_only
def test_pops_handed_to_the_worker_holding_their_key_take_each_member_once(server, r):
    """As above, with ZPOPMIN from one sorted set: every member is popped by exactly one of the
    two clients, and each client's pops come in rising score order."""
    def delegated():
        return int(r.info("stats")["delegated_write_commands"])

    before = delegated()
    for _ in _rounds_until(30):
        r.zadd("queue", {"m%05d" % i: i for i in range(4000)})
        replies = _pipeline_in_threads(server, [[("ZPOPMIN", "queue")] * 2400] * 2)
        popped = []
        for got in replies:
            members = [value[0][1] for kind, value in got if value]
            scores = [int(value[1][1]) for kind, value in got if value]
            assert scores == sorted(scores)
            popped += members
        assert sorted(popped) == [b"m%05d" % i for i in range(4000)]
        assert r.exists("queue") == 0
        if delegated() > before:
            break
    assert delegated() > before, "the two clients' pops never met in 30 s"


@pytest.mark.basalt_only
def test_a_client_whose_writes_go_to_another_worker_moves_there_whole(server, r):
    """Two clients, one on each worker, pipeline INCRs of one key until a client whose writes
    were handed to the other worker (worker-move-hand-overs, 1 here) has moved there
    (src/net/worker.h). No INCR may count twice or be lost, and each client's INCRs rise. With
    an odd number of moves in all, exactly one of the two clients is away from the worker that
    created it. A moved client keeps its session (name, selected database, id), and what other
    threads send it through the worker that created it reaches it on its new one: a script's
    reply (from the offload thread), the wake-up of a blocked pop, a published message, and
    CLIENT KILL. Both clients are checked."""
    def moved():
        return int(r.info("stats")["moved_connections"])

    r.config_set("worker-move-hand-overs", 1)
    before = moved()
    raws = [server.raw() for _ in range(2)]
    try:
        ids = []
        for c, raw in enumerate(raws):
            assert raw.call("CLIENT", "SETNAME", "mover%d" % c) == ("+", b"OK")
            assert raw.call("SELECT", "5") == ("+", b"OK")
            ids.append(raw.call("CLIENT", "ID")[1])
        total = 0
        for _ in _rounds_until(30):
            start = threading.Barrier(len(raws))
            counts = [[] for _ in raws]

            def run(c):
                start.wait()
                for _ in range(20):
                    counts[c] += [v for _, v in pipeline(raws[c], [("INCR", "hot")] * 64)]

            threads = [threading.Thread(target=run, args=(c,)) for c in range(len(raws))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for mine in counts:
                assert mine == sorted(mine)
            everyone = sorted(v for mine in counts for v in mine)
            assert everyone == list(range(total + 1, total + len(raws) * 1280 + 1))
            total += len(raws) * 1280
            if (moved() - before) % 2 == 1:
                break
        assert (moved() - before) % 2 == 1, "no client stayed moved in 30 s"
        r5 = server.client(db=5)
        assert int(r5.get("hot")) == total and r.get("hot") is None
        script = "return redis.call('INCR', KEYS[1])"
        for c, raw in enumerate(raws):
            assert raw.call("CLIENT", "GETNAME") == ("$", b"mover%d" % c)
            assert raw.call("CLIENT", "ID") == (":", ids[c])
            assert raw.call("EVAL", script, "1", "hot") == (":", total + c + 1)
            raw.send("BLPOP", "wake%d" % c, "0")
        time.sleep(0.2)
        for c, raw in enumerate(raws):
            r5.rpush("wake%d" % c, "x")
            assert raw.read() == ("*", [("$", b"wake%d" % c), ("$", b"x")])
            assert raw.call("SUBSCRIBE", "news%d" % c)[0] == "*"
            assert r5.publish("news%d" % c, "hello") == 1
            assert raw.read() == ("*", [("$", b"message"), ("$", b"news%d" % c),
                                        ("$", b"hello")])
            assert r.client_kill_filter(_id=ids[c]) == 1
            assert raw.is_closed()
    finally:
        for raw in raws:
            raw.close()
        r.config_set("worker-move-hand-overs", 4)
