"""CLIENT PAUSE WRITE as Redis 7.2 has it (tests/unit/pause.tcl): what it holds (writes,
PUBLISH, PFCOUNT, EVAL/EVALSHA/FCALL of scripts and functions that may write, an EXEC of such)
and what it lets through (reads, admin commands, EVAL/EVALSHA of `#!lua flags=no-writes`
scripts, EVAL_RO/EVALSHA_RO, FCALL_RO, FCALL of a no-writes function, an EXEC of such, a
command with the wrong number of arguments), an ALL pause not weakened by a later WRITE one,
the longer end kept, a pause set inside MULTI starting after EXEC, and expired keys not
deleted meanwhile. Every test also passes with --target redis."""
import time

from helpers import parse_info, wait_until

NO_WRITES_FUNCTION = """#!lua name=pauselib
redis.register_function{function_name='ro_f', callback=function() return 'hello' end,
                        flags={'no-writes'}}
redis.register_function('rw_f', function() return 'written' end)
"""


def info(c, section):
    kind, text = c.call("INFO", section)
    return parse_info(text.decode())[section]


def blocked_clients(c):
    return int(info(c, "clients")["blocked_clients"])


def wait_blocked(c, n):
    assert wait_until(lambda: blocked_clients(c) == n, timeout=10), blocked_clients(c)


def pause_write(admin, ms=100000):
    assert admin.call("CLIENT", "PAUSE", str(ms), "WRITE") == ("+", b"OK")


def unpause(admin):
    assert admin.call("CLIENT", "UNPAUSE") == ("+", b"OK")


def test_reads_and_admin_commands_are_not_held(conns):
    admin, reader = conns(), conns()
    pause_write(admin)
    try:
        assert reader.call("GET", "foo") == ("$", None)
        assert reader.call("PING") == ("+", b"PONG")
        assert reader.call("INFO", "server")[0] == "$"
        assert blocked_clients(admin) == 0
    finally:
        unpause(admin)


def test_a_write_pause_does_not_weaken_a_running_all_pause(conns):
    admin, reader = conns(), conns()
    start = time.monotonic()
    assert admin.call("CLIENT", "PAUSE", "600", "ALL") == ("+", b"OK")
    assert admin.call("CLIENT", "PAUSE", "20", "WRITE") == ("+", b"OK")
    time.sleep(0.1)
    # The ALL pause, and its end, stay: even a read waits for it.
    assert reader.call("GET", "foo") == ("$", None)
    assert time.monotonic() - start >= 0.55


def test_a_shorter_pause_keeps_the_longer_end(conns):
    admin, writer = conns(), conns()
    pause_write(admin, 60000)
    try:
        pause_write(admin, 10)
        time.sleep(0.1)
        writer.send("SET", "foo", "bar")
        wait_blocked(admin, 1)
    finally:
        unpause(admin)
    assert writer.read() == ("+", b"OK")


def test_pfcount_and_publish_are_held(conns):
    admin, counter, publisher = conns(), conns(), conns()
    assert admin.call("PFADD", "pause-hll", "test") == (":", 1)
    pause_write(admin)
    try:
        counter.send("PFCOUNT", "pause-hll")
        wait_blocked(admin, 1)
        publisher.send("PUBLISH", "foo", "bar")
        wait_blocked(admin, 2)
    finally:
        unpause(admin)
    assert counter.read() == (":", 1)
    assert publisher.read() == (":", 0)


def test_read_and_admin_transactions_are_not_held(conns):
    admin, c = conns(), conns()
    assert admin.call("SET", "FOO", "BAR") == ("+", b"OK")
    pause_write(admin)
    try:
        assert c.call("MULTI") == ("+", b"OK")
        assert c.call("PING") == ("+", b"QUEUED")
        assert c.call("GET", "FOO") == ("+", b"QUEUED")
        assert c.call("EXEC") == ("*", [("+", b"PONG"), ("$", b"BAR")])
        assert blocked_clients(admin) == 0
    finally:
        unpause(admin)


def test_a_write_transaction_is_held(conns):
    admin, c = conns(), conns()
    assert c.call("MULTI") == ("+", b"OK")
    assert c.call("SET", "FOO", "BAR") == ("+", b"QUEUED")
    pause_write(admin)
    try:
        c.send("EXEC")
        wait_blocked(admin, 1)
    finally:
        unpause(admin)
    assert c.read() == ("*", [("+", b"OK")])


def test_scripts_that_may_write_are_held(conns):
    admin, plain, shebang, by_sha, unknown_sha = conns(), conns(), conns(), conns(), conns()
    sha = admin.call("SCRIPT", "LOAD", "#!lua\nreturn 3")[1].decode()
    pause_write(admin)
    try:
        plain.send("EVAL", "return 1", "0")
        # A shebang without flags declares a script that may write.
        shebang.send("EVAL", "#!lua\n    return 1\n", "0")
        by_sha.send("EVALSHA", sha, "0")
        # An unknown script may write: its EVALSHA waits, then fails.
        unknown_sha.send("EVALSHA", "0" * 40, "0")
        wait_blocked(admin, 4)
    finally:
        unpause(admin)
    assert plain.read() == (":", 1)
    assert shebang.read() == (":", 1)
    assert by_sha.read() == (":", 3)
    assert unknown_sha.read() == ("-", "NOSCRIPT No matching script. Please use EVAL.")


def test_functions_that_may_write_are_held(conns):
    admin, writer, unknown = conns(), conns(), conns()
    assert admin.call("FUNCTION", "LOAD", "REPLACE", NO_WRITES_FUNCTION) == ("$", b"pauselib")
    pause_write(admin)
    try:
        writer.send("FCALL", "rw_f", "0")
        unknown.send("FCALL", "no_such_function", "0")
        wait_blocked(admin, 2)
    finally:
        unpause(admin)
    # The held calls run once the pause ends; the library goes only after they have run.
    try:
        assert writer.read() == ("$", b"written")
        assert unknown.read() == ("-", "ERR Function not found")
    finally:
        admin.call("FUNCTION", "DELETE", "pauselib")


def test_read_only_scripts_and_functions_are_not_held(conns):
    admin, c = conns(), conns()
    assert admin.call("SET", "x", "y") == ("+", b"OK")
    assert admin.call("FUNCTION", "LOAD", "REPLACE", NO_WRITES_FUNCTION) == ("$", b"pauselib")
    pause_write(admin)
    try:
        body = "#!lua flags=no-writes\n    return 'unique script %f'\n" % time.time()
        # Not in the script cache yet: the flags come from the body's shebang.
        assert c.call("EVAL", body, "0")[0] == "$"
        # Cached by now.
        assert c.call("EVAL", body, "0")[0] == "$"
        assert c.call("EVAL_RO", "return redis.call('GeT', 'x')..' unique script'", "1", "x") \
            == ("$", b"y unique script")
        sha = c.call("SCRIPT", "LOAD", "#!lua flags=no-writes\n    return 2\n")[1]
        assert c.call("EVALSHA", sha, "0") == (":", 2)
        assert c.call("EVALSHA_RO", sha, "0") == (":", 2)
        assert c.call("FCALL", "ro_f", "0") == ("$", b"hello")
        assert c.call("FCALL_RO", "ro_f", "0") == ("$", b"hello")
        assert blocked_clients(admin) == 0
    finally:
        unpause(admin)
        admin.call("FUNCTION", "DELETE", "pauselib")


def test_read_only_scripts_in_a_transaction_are_not_held(conns):
    admin, c = conns(), conns()
    pause_write(admin)
    try:
        assert c.call("MULTI") == ("+", b"OK")
        assert c.call("EVAL", "#!lua flags=no-writes\n    return 12\n", "0") == ("+", b"QUEUED")
        assert c.call("EVAL", "#!lua flags=no-writes\n    return 13\n", "0") == ("+", b"QUEUED")
        assert c.call("EXEC") == ("*", [(":", 12), (":", 13)])
        assert blocked_clients(admin) == 0
    finally:
        unpause(admin)


def test_write_scripts_in_a_transaction_are_held(conns):
    admin, shebang, plain = conns(), conns(), conns()
    assert shebang.call("MULTI") == ("+", b"OK")
    assert shebang.call("EVAL", "#!lua\n    return 12\n", "0") == ("+", b"QUEUED")
    assert plain.call("MULTI") == ("+", b"OK")
    assert plain.call("EVAL", "return 13", "0") == ("+", b"QUEUED")
    pause_write(admin, 60000)
    try:
        shebang.send("EXEC")
        plain.send("EXEC")
        wait_blocked(admin, 2)
    finally:
        unpause(admin)
    assert shebang.read() == ("*", [(":", 12)])
    assert plain.read() == ("*", [(":", 13)])


def test_read_only_scripts_cannot_publish(conns):
    c = conns()
    kind, text = c.call("EVAL_RO", "return redis.call('publish','ch','msg')", "0")
    assert kind == "-"
    assert text.startswith("ERR Write commands are not allowed from read-only scripts. script:")
    kind, text = c.call("EVAL", "#!lua flags=no-writes\nreturn redis.call('publish','ch','msg')",
                        "0")
    assert kind == "-"
    assert text.startswith("ERR Write commands are not allowed from read-only scripts. script:")
    assert c.call("EVAL", "return redis.call('publish','ch','msg')", "0") == (":", 0)


def test_several_held_clients_all_run_after_unpause(conns):
    admin, reader = conns(), conns()
    clients = [conns() for _ in range(3)]
    pause_write(admin, 60000)
    try:
        for i, client in enumerate(clients):
            client.send("APPEND", "appended", str(i))
            wait_blocked(admin, i + 1)
    finally:
        unpause(admin)
    # Each ran once (held clients of different workers may run in any order).
    assert sorted(client.read() for client in clients) == [(":", 1), (":", 2), (":", 3)]
    assert sorted(reader.call("GET", "appended")[1]) == sorted(b"012")


def test_a_wrong_number_of_arguments_is_answered_at_once(conns):
    admin, c = conns(), conns()
    pause_write(admin)
    try:
        assert c.call("SET", "FOO") == \
            ("-", "ERR wrong number of arguments for 'set' command")
    finally:
        unpause(admin)


def test_expired_keys_are_not_deleted_during_a_pause(conns):
    admin = conns()
    expired = int(info(admin, "stats")["expired_keys"])
    assert admin.call("MULTI") == ("+", b"OK")
    admin.call("SET", "foo{t}", "bar", "PX", "10")
    admin.call("SET", "bar{t}", "foo", "PX", "10")
    admin.call("CLIENT", "PAUSE", "50000", "WRITE")
    try:
        assert admin.call("EXEC") == ("*", [("+", b"OK")] * 3)
        # Logically expired, but neither read nor the active expirer deletes them.
        assert wait_until(lambda: admin.call("GET", "foo{t}") == ("$", None) and
                          admin.call("GET", "bar{t}") == ("$", None), timeout=5)
        time.sleep(0.3)
        assert int(info(admin, "stats")["expired_keys"]) == expired
        assert admin.call("DBSIZE") == (":", 2)
    finally:
        unpause(admin)


def test_a_pause_set_in_a_transaction_starts_after_it(conns):
    admin, writer = conns(), conns()
    assert admin.call("MULTI") == ("+", b"OK")
    admin.call("SET", "FOO1{t}", "BAR")
    admin.call("CLIENT", "PAUSE", "60000", "WRITE")
    admin.call("SET", "FOO2{t}", "BAR")
    try:
        assert admin.call("EXEC") == ("*", [("+", b"OK")] * 3)
        writer.send("SET", "FOO3{t}", "BAR")
        wait_blocked(admin, 1)
        assert admin.call("GET", "FOO1{t}") == ("$", b"BAR")
        assert admin.call("GET", "FOO2{t}") == ("$", b"BAR")
        assert admin.call("GET", "FOO3{t}") == ("$", None)
    finally:
        unpause(admin)
    assert writer.read() == ("+", b"OK")
