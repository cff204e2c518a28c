"""MONITOR: the line format (time, database, client address or "lua", arguments quoted
as Redis's sdscatrepr), what is shown (commands after they ran, MULTI/EXEC as Redis 7.2
shows them, a script's calls after its EVAL, a blocked command once, no administrative
commands, AUTH/HELLO secrets redacted), that a monitor is refused the keyspace but may
PING, QUIT and RESET, the 'O' flag in CLIENT LIST, and delivery across workers in the
order the commands ran on a shared key (consecutive connections land on different
workers: Basalt assigns them round robin). Every test also passes with --target redis."""
import re
import threading

import pytest

from resp import RawConn

LINE = re.compile(rb"^\+(\d+)\.(\d{6}) \[(\d+) ([^\]]+)\] (.*)$")


def monitor(conns):
    m = conns()
    assert m.call("MONITOR") == ("+", b"OK")
    return m


def next_line(m):
    """(db, source, argument text) of the next monitor line."""
    raw = m.read_line()
    match = LINE.match(raw)
    assert match, raw
    return int(match.group(3)), match.group(4).decode(), match.group(5).decode()


def own_addr(c):
    info = c.call("CLIENT", "INFO")[1].decode()
    return re.search(r"\baddr=(\S+)", info).group(1)


def test_monitor_line_names_time_db_client_and_arguments(conns):
    c = conns()
    addr = own_addr(c)
    m = monitor(conns)
    assert c.call("SET", "foo", "bar") == ("+", b"OK")
    assert c.call("GET", "foo") == ("$", b"bar")
    assert next_line(m) == (0, addr, '"SET" "foo" "bar"')
    assert next_line(m) == (0, addr, '"GET" "foo"')


def test_monitor_shows_the_database_after_select(conns):
    c = conns()
    addr = own_addr(c)
    m = monitor(conns)
    c.call("SELECT", "3")
    c.call("PING")
    assert next_line(m) == (3, addr, '"SELECT" "3"')
    assert next_line(m) == (3, addr, '"PING"')


def test_monitor_escapes_arguments_like_sdscatrepr(conns):
    m = monitor(conns)
    c = conns()
    c.call("SET", b'q"b\\s\n\r\t\x07\x08\x01\xff\x7f~', "v")
    assert next_line(m)[2] == r'"SET" "q\"b\\s\n\r\t\a\b\x01\xff\x7f~" "v"'


def test_monitor_timestamp_is_now(conns):
    import time
    m = monitor(conns)
    c = conns()
    before = time.time()
    c.call("PING")
    raw = m.read_line()
    after = time.time()
    stamp = float(b".".join(LINE.match(raw).group(1, 2)))
    assert before - 1 <= stamp <= after + 1


def test_monitor_shows_script_calls_after_the_eval(conns):
    c = conns()
    addr = own_addr(c)
    m = monitor(conns)
    c.call("EVAL", "redis.call('set', KEYS[1], ARGV[1]); return redis.call('get', KEYS[1])",
           "1", "k", "v")
    assert next_line(m) == (
        0, addr,
        '"EVAL" "redis.call(\'set\', KEYS[1], ARGV[1]); return redis.call(\'get\', KEYS[1])" '
        '"1" "k" "v"')
    assert next_line(m) == (0, "lua", '"set" "k" "v"')
    assert next_line(m) == (0, "lua", '"get" "k"')


def test_monitor_multi_exec_order(conns):
    m = monitor(conns)
    c = conns()
    assert c.call("MULTI") == ("+", b"OK")
    assert c.call("SET", "foo", "bar") == ("+", b"QUEUED")
    assert c.call("INCR", "n") == ("+", b"QUEUED")
    assert c.call("EXEC")[0] == "*"
    assert next_line(m)[2] == '"MULTI"'
    assert next_line(m)[2] == '"SET" "foo" "bar"'
    assert next_line(m)[2] == '"INCR" "n"'
    assert next_line(m)[2] == '"EXEC"'
    # A transaction aborted by a bad command: MULTI, then only EXEC.
    c.call("MULTI")
    assert c.call("NOSUCHCOMMAND")[0] == "-"
    assert c.call("EXEC")[1].startswith("EXECABORT")
    assert next_line(m)[2] == '"MULTI"'
    assert next_line(m)[2] == '"EXEC"'


def test_monitor_redacts_auth_and_hello_secrets(conns):
    m = monitor(conns)
    c = conns()
    assert c.call("AUTH", "not-real")[0] == "-"
    assert c.call("AUTH", "someone", "not-a-password")[0] == "-"
    assert c.call("HELLO", "3", "AUTH", "someone", "not-a-password")[0] == "-"
    assert c.call("HELLO", "2", "SETNAME", "auth", "AUTH", "x", "y")[0] == "-"
    assert next_line(m)[2] == '"AUTH" "(redacted)"'
    assert next_line(m)[2] == '"AUTH" "(redacted)" "(redacted)"'
    assert next_line(m)[2] == '"HELLO" "3" "AUTH" "(redacted)" "(redacted)"'
    assert next_line(m)[2] == '"HELLO" "2" "SETNAME" "auth" "AUTH" "(redacted)" "(redacted)"'


def test_monitor_hides_administrative_and_refused_commands(conns):
    m = monitor(conns)
    c = conns()
    c.call("CONFIG", "GET", "maxclients")
    c.call("CLIENT", "LIST")
    c.call("GET")  # wrong arity: refused before it runs
    c.call("NOSUCHCOMMAND")
    c.call("CLIENT", "ID")  # not an administrative subcommand
    c.call("ECHO", "marker")
    assert next_line(m)[2] == '"CLIENT" "ID"'
    assert next_line(m)[2] == '"ECHO" "marker"'


def test_monitor_shows_a_blocked_command_once(conns):
    m = monitor(conns)
    b = conns()
    c = conns()
    b.send("BLPOP", "mylist", "0")
    # Wait until it is parked: the monitor shows it as it first runs.
    assert next_line(m)[2] == '"BLPOP" "mylist" "0"'
    c.call("LPUSH", "mylist", "1")
    assert b.read() == ("*", [("$", b"mylist"), ("$", b"1")])
    c.call("LPUSH", "mylist", "2")
    assert next_line(m)[2] == '"LPUSH" "mylist" "1"'
    assert next_line(m)[2] == '"LPUSH" "mylist" "2"'


def test_monitor_client_is_refused_the_keyspace(conns):
    m = monitor(conns)
    assert m.call("GET", "foo") == ("-", "ERR Replica can't interact with the keyspace")
    assert m.call("SET", "foo", "bar") == ("-", "ERR Replica can't interact with the keyspace")
    assert m.call("PUBLISH", "ch", "x") == ("-", "ERR Replica can't interact with the keyspace")
    assert m.call("PING") == ("+", b"PONG")
    # Its own PING is fed to it too, after the reply.
    assert next_line(m)[2] == '"PING"'
    info = RawConn.call(conns(), "CLIENT", "LIST")[1].decode()
    mine = [line for line in info.splitlines() if "cmd=ping" in line]
    assert len(mine) == 1 and re.search(r"\bflags=O\b", mine[0])
    assert m.call("QUIT") == ("+", b"OK")
    assert m.is_closed()


def test_monitor_ends_with_reset(conns):
    m = monitor(conns)
    assert m.call("RESET") == ("+", b"RESET")
    c = conns()
    c.call("SET", "after", "reset")
    # No longer monitoring: the key space is open again and no line arrives.
    assert m.call("GET", "after") == ("$", b"reset")


def test_monitor_in_multi_is_refused(conns):
    c = conns()
    c.call("MULTI")
    assert c.call("MONITOR") == ("+", b"QUEUED")
    assert c.call("EXEC") == ("*", [("-", "ERR MONITOR isn't allowed for DENY BLOCKING client")])


def test_monitors_on_several_workers_see_one_order_of_a_shared_key(conns):
    monitors = [monitor(conns) for _ in range(3)]
    writers = [conns() for _ in range(4)]
    per_writer = 100

    def write(i, c):
        for j in range(per_writer):
            assert c.call("APPEND", "shared", "%d:%d," % (i, j))[0] == ":"

    threads = [threading.Thread(target=write, args=(i, c)) for i, c in enumerate(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = conns().call("GET", "shared")[1].decode()
    order = final.split(",")[:-1]
    assert len(order) == 4 * per_writer
    for m in monitors:
        seen = []
        while len(seen) < len(order):
            _, _, args = next_line(m)
            if args.startswith('"APPEND" "shared"'):
                seen.append(args.split('"')[5][:-1])
        assert seen == order



def test_monitor_redacts_migrate_credentials(server, conns):
    """MIGRATE's AUTH password and AUTH2 username and password, as Redis 7.2 redacts them."""
    m = monitor(conns)
    c = conns()
    port = str(server.port)
    for extra in ([], ["AUTH", "secret"], ["AUTH2", "user", "secret"]):
        c.call("MIGRATE", "127.0.0.1", port, "nokey", "0", "1000", *extra)
    head = '"MIGRATE" "127.0.0.1" "%s" "nokey" "0" "1000"' % port
    assert next_line(m)[2] == head
    assert next_line(m)[2] == head + ' "AUTH" "(redacted)"'
    assert next_line(m)[2] == head + ' "AUTH2" "(redacted)" "(redacted)"'
