"""CLIENT subcommands of Redis 7.2: SETINFO (validation, lib-name=/lib-ver= in CLIENT
LIST and CLIENT INFO), NO-EVICT and NO-TOUCH (the e and T flags), REPLY ON|OFF|SKIP (which
leave (un)subscribe confirmations alone),
PAUSE/UNPAUSE and UNBLOCK, and HELP. SETINFO and NO-TOUCH are Redis 7.2 commands: the
oracle is Redis 7.0, so those tests are basalt_only; the rest also pass with
--target redis."""
import re
import threading
import time

import pytest

from resp import RawConn, encode
from helpers import parse_info, wait_until

SEVEN_TWO = "7.2 command, oracle is 7.0"


def info_fields(c):
    line = c.call("CLIENT", "INFO")[1].decode().strip()
    return line, dict(f.split("=", 1) for f in line.split(" "))


@pytest.mark.basalt_only(reason=SEVEN_TWO)
def test_setinfo_shows_in_client_info_and_list(conns):
    c = conns()
    assert c.call("CLIENT", "SETINFO", "LIB-NAME", "redis-py") == ("+", b"OK")
    assert c.call("CLIENT", "SETINFO", "lib-ver", "5.0.1") == ("+", b"OK")
    line, fields = info_fields(c)
    assert fields["lib-name"] == "redis-py" and fields["lib-ver"] == "5.0.1"
    # 7.2's order: the two fields close the line, after resp=.
    assert line.endswith(" resp=2 lib-name=redis-py lib-ver=5.0.1")
    listed = RawConn.call(conns(), "CLIENT", "LIST")[1].decode()
    assert re.search(r"resp=2 lib-name=redis-py lib-ver=5\.0\.1$", listed, re.M)
    # An empty value clears the field.
    assert c.call("CLIENT", "SETINFO", "lib-name", "") == ("+", b"OK")
    assert info_fields(c)[1]["lib-name"] == ""


@pytest.mark.basalt_only(reason=SEVEN_TWO)
def test_setinfo_errors(conns):
    c = conns()
    assert c.call("CLIENT", "SETINFO", "lib-color", "red") == \
        ("-", "ERR Unrecognized option 'lib-color'")
    assert c.call("CLIENT", "SETINFO", "LIB-NAME", "a b") == \
        ("-", "ERR LIB-NAME cannot contain spaces, newlines or special characters.")
    assert c.call("CLIENT", "SETINFO", "lib-ver", "1\n") == \
        ("-", "ERR lib-ver cannot contain spaces, newlines or special characters.")
    assert c.call("CLIENT", "SETINFO", "lib-ver")[0] == "-"
    assert info_fields(c)[1]["lib-ver"] == ""


@pytest.mark.basalt_only(reason=SEVEN_TWO)
def test_no_touch_flag(conns):
    c = conns()
    assert c.call("CLIENT", "NO-TOUCH", "on") == ("+", b"OK")
    assert "T" in info_fields(c)[1]["flags"]
    assert c.call("CLIENT", "NO-TOUCH", "off") == ("+", b"OK")
    assert info_fields(c)[1]["flags"] == "N"
    assert c.call("CLIENT", "NO-TOUCH", "maybe") == ("-", "ERR syntax error")


def test_no_evict_flag(conns):
    c = conns()
    assert c.call("CLIENT", "NO-EVICT", "ON") == ("+", b"OK")
    assert info_fields(c)[1]["flags"] == "e"
    assert c.call("CLIENT", "NO-EVICT", "off") == ("+", b"OK")
    assert info_fields(c)[1]["flags"] == "N"
    assert c.call("CLIENT", "NO-EVICT", "1") == ("-", "ERR syntax error")


def test_reply_off_silences_until_on(conns):
    c = conns()
    c.send("CLIENT", "REPLY", "OFF")
    c.send("SET", "k", "1")
    c.send("INCR", "k")
    c.send("GET", "k")
    assert c.call("CLIENT", "REPLY", "ON") == ("+", b"OK")
    assert c.call("GET", "k") == ("$", b"2")


def test_reply_skip_silences_the_next_command_only(conns):
    c = conns()
    c.send("CLIENT", "REPLY", "SKIP")
    c.send("SET", "k", "v")
    assert c.call("GET", "k") == ("$", b"v")
    # SKIP twice in a row: the second SKIP is itself skipped and skips the command after it.
    c.send("CLIENT", "REPLY", "SKIP")
    c.send("CLIENT", "REPLY", "SKIP")
    c.send("PING", "one")
    assert c.call("PING", "two") == ("$", b"two")
    assert c.call("CLIENT", "REPLY", "maybe") == ("-", "ERR syntax error")


def test_reply_off_silences_grouped_writes_and_errors(conns):
    c = conns()
    c.send("CLIENT", "REPLY", "OFF")
    c.send_raw(b"".join(encode("RPUSH", "l", str(i)) for i in range(50)) + encode("NOSUCH"))
    assert c.call("CLIENT", "REPLY", "ON") == ("+", b"OK")
    assert c.call("LLEN", "l") == (":", 50)


def test_reply_off_and_skip_do_not_silence_subscribe_confirmations(conns):
    c, publisher = conns(), conns()
    c.send("CLIENT", "REPLY", "OFF")
    c.send("SUBSCRIBE", "ch")
    assert c.read() == ("*", [("$", b"subscribe"), ("$", b"ch"), (":", 1)])
    c.send("PSUBSCRIBE", "p*")
    assert c.read() == ("*", [("$", b"psubscribe"), ("$", b"p*"), (":", 2)])
    assert publisher.call("PUBLISH", "px", "hello") == (":", 1)
    assert c.read() == ("*", [("$", b"pmessage"), ("$", b"p*"), ("$", b"px"), ("$", b"hello")])
    c.send("UNSUBSCRIBE")
    assert c.read() == ("*", [("$", b"unsubscribe"), ("$", b"ch"), (":", 1)])
    c.send("PUNSUBSCRIBE")
    assert c.read() == ("*", [("$", b"punsubscribe"), ("$", b"p*"), (":", 0)])
    c.send("SET", "k", "v")  # silenced as before
    assert c.call("CLIENT", "REPLY", "ON") == ("+", b"OK")
    assert c.call("GET", "k") == ("$", b"v")
    # SKIP is used up by the SUBSCRIBE, whose confirmation still comes.
    c.send("CLIENT", "REPLY", "SKIP")
    c.send("SUBSCRIBE", "ch")
    assert c.read() == ("*", [("$", b"subscribe"), ("$", b"ch"), (":", 1)])
    assert c.call("PING") == ("*", [("$", b"pong"), ("$", b"")])


def test_client_help_lists_the_subcommands(conns):
    c = conns()
    kind, lines = c.call("CLIENT", "HELP")
    text = [line[1].decode() for line in lines]
    for sub in ("REPLY (ON|OFF|SKIP)", "PAUSE <timeout> [WRITE|ALL]", "UNPAUSE",
                "UNBLOCK <clientid> [TIMEOUT|ERROR]", "NO-EVICT (ON|OFF)"):
        assert sub in text


def client_id(c):
    return c.call("CLIENT", "ID")[1]


def test_pause_write_holds_writes_and_serves_reads(conns):
    admin, writer, reader = conns(), conns(), conns()
    assert admin.call("CLIENT", "PAUSE", "100000", "WRITE") == ("+", b"OK")
    try:
        writer.send("SET", "k", "1")
        writer.send("INCR", "k")
        assert reader.call("GET", "k") == ("$", None)
        assert reader.call("EVAL_RO", "return 7", "0") == (":", 7)
        # A may-replicate command waits too.
        reader.send("PUBLISH", "ch", "x")
        time.sleep(0.2)
        assert writer.buf == b"" and reader.buf == b""
    finally:
        assert admin.call("CLIENT", "UNPAUSE") == ("+", b"OK")
    assert writer.read() == ("+", b"OK")
    assert writer.read() == (":", 2)
    assert reader.read() == (":", 0)
    assert reader.call("GET", "k") == ("$", b"2")


def blocked_clients(c):
    kind, text = c.call("INFO", "clients")
    return int(parse_info(text.decode())["clients"]["blocked_clients"])


def test_clients_held_by_a_pause_count_as_blocked(conns):
    admin, writer, reader = conns(), conns(), conns()
    assert admin.call("CLIENT", "PAUSE", "100000", "WRITE") == ("+", b"OK")
    try:
        assert reader.call("GET", "k") == ("$", None)
        writer.send("SET", "k", "1")
        assert wait_until(lambda: blocked_clients(admin) == 1, timeout=5)
        # A read is served, not held: still one.
        assert reader.call("GET", "k") == ("$", None)
        assert blocked_clients(admin) == 1
    finally:
        assert admin.call("CLIENT", "UNPAUSE") == ("+", b"OK")
    assert writer.read() == ("+", b"OK")
    assert blocked_clients(admin) == 0


def test_pause_all_holds_everything_until_it_ends(conns):
    admin, other = conns(), conns()
    start = time.time()
    assert admin.call("CLIENT", "PAUSE", "400", "ALL") == ("+", b"OK")
    assert other.call("PING") == ("+", b"PONG")
    assert time.time() - start >= 0.35
    assert admin.call("SET", "after", "pause") == ("+", b"OK")


def test_pause_write_ends_by_itself(conns):
    admin, writer = conns(), conns()
    start = time.time()
    assert admin.call("CLIENT", "PAUSE", "300", "WRITE") == ("+", b"OK")
    assert writer.call("SET", "k", "v") == ("+", b"OK")
    assert time.time() - start >= 0.25


def test_pause_stops_active_expiry(conns):
    c = conns()
    assert c.call("SET", "k", "v", "PX", "100") == ("+", b"OK")
    assert c.call("CLIENT", "PAUSE", "100000", "WRITE") == ("+", b"OK")
    try:
        time.sleep(0.6)
        assert c.call("DBSIZE") == (":", 1)
    finally:
        c.call("CLIENT", "UNPAUSE")
    deadline = time.time() + 5
    while c.call("DBSIZE") != (":", 0) and time.time() < deadline:
        time.sleep(0.05)
    assert c.call("DBSIZE") == (":", 0)


def test_pause_errors(conns):
    c = conns()
    assert c.call("CLIENT", "PAUSE", "soon") == \
        ("-", "ERR timeout is not an integer or out of range")
    assert c.call("CLIENT", "PAUSE", "-1") == ("-", "ERR timeout is negative")
    assert c.call("CLIENT", "PAUSE", "10", "READS") == \
        ("-", "ERR CLIENT PAUSE mode must be WRITE or ALL")
    assert c.call("CLIENT", "UNPAUSE") == ("+", b"OK")


def test_unblock_timeout_and_error(conns):
    admin, blocked = conns(), conns()
    bid = client_id(blocked)
    assert admin.call("CLIENT", "UNBLOCK", str(bid)) == (":", 0)
    blocked.send("BLPOP", "nolist", "0")
    deadline = time.time() + 5
    while admin.call("CLIENT", "UNBLOCK", str(bid)) != (":", 1):
        assert time.time() < deadline
        time.sleep(0.02)
    assert blocked.read() == ("*", None)
    blocked.send("BZPOPMIN", "nozset", "0")
    while admin.call("CLIENT", "UNBLOCK", str(bid), "ERROR") != (":", 1):
        assert time.time() < deadline
        time.sleep(0.02)
    assert blocked.read() == ("-", "UNBLOCKED client unblocked via CLIENT UNBLOCK")
    assert blocked.call("PING") == ("+", b"PONG")
    assert admin.call("CLIENT", "UNBLOCK", str(bid), "NOW") == \
        ("-", "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    assert admin.call("CLIENT", "UNBLOCK", "x")[0] == "-"


def test_reply_off_silences_scripts_and_blocked_commands(conns):
    c, pusher = conns(), conns()
    c.send("CLIENT", "REPLY", "SKIP")
    c.send("EVAL", "return 'script'", "0")
    c.send("CLIENT", "REPLY", "SKIP")
    c.send("BLPOP", "bl", "0")
    time.sleep(0.2)
    pusher.call("RPUSH", "bl", "x")
    assert c.call("PING", "after") == ("$", b"after")
    assert pusher.call("LLEN", "bl") == (":", 0)
    c.send("CLIENT", "REPLY", "OFF")
    c.send("BLPOP", "bl", "0.1")
    time.sleep(0.3)
    assert c.call("CLIENT", "REPLY", "ON") == ("+", b"OK")


@pytest.mark.basalt_only(reason="7.2 re-runs a woken pop through the pause check and holds it "
                                "(blocked.c: processCommandAndResetClient); the oracle 7.0 "
                                "serves it")
def test_pause_write_holds_the_wake_up_of_a_blocked_pop(conns):
    admin, blocked, reader = conns(), conns(), conns()
    blocked.send("BLPOP", "bl", "0")
    bid = client_id(reader)  # a round trip: the BLPOP is parked by now on its worker
    time.sleep(0.1)
    assert admin.call("MULTI") == ("+", b"OK")
    admin.call("RPUSH", "bl", "x")
    admin.call("CLIENT", "PAUSE", "100000", "WRITE")
    try:
        assert admin.call("EXEC") == ("*", [(":", 1), ("+", b"OK")])
        time.sleep(0.3)
        # The element is still there: the pop waits for the pause like any write.
        assert reader.call("LLEN", "bl") == (":", 1)
        assert blocked.buf == b""
    finally:
        assert admin.call("CLIENT", "UNPAUSE") == ("+", b"OK")
    assert blocked.read() == ("*", [("$", b"bl"), ("$", b"x")])
    assert bid > 0
