"""Pub/Sub: SUBSCRIBE/UNSUBSCRIBE/PSUBSCRIBE/PUNSUBSCRIBE, SSUBSCRIBE/SUNSUBSCRIBE,
PUBLISH/SPUBLISH and PUBSUB, in RESP2 (subscribed context) and RESP3 (pushes
mixed with ordinary replies), glob patterns, delivery between connections
(consecutive connections land on different workers: Basalt assigns them round
robin), CLIENT LIST/INFO fields, and client-output-buffer-limit disconnecting
a subscriber that stops reading.

Replies are compared as tagged tuples from resp.RawConn, so the reply type
(array vs push, $-1 vs _) is pinned too; every test also passes with
--target redis."""
import socket
import threading
import time

import pytest

from helpers import arity, wait_until
from resp import RawConn, encode, plain

CONTEXT_ERR = ("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
               "QUIT / RESET are allowed in this context")
DEFAULT_LIMITS = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"


@pytest.fixture(autouse=True)
def no_leftover_subscribers(r):
    """Connections of earlier tests may still be closing on the server side: wait until
    they are gone so that counts and listings below see only this test's clients."""
    assert wait_until(lambda: r.execute_command("CLIENT", "LIST", "TYPE", "pubsub") == "",
                      timeout=5)


def confirm(kind, name, count, push="*"):
    """A (un)subscribe confirmation as RawConn decodes it; name None = nothing to leave."""
    middle = ("$", None) if name is None else ("$", name.encode())
    if name is None and push == ">":
        middle = ("_", None)
    return (push, [("$", kind.encode()), middle, (":", count)])


def message(channel, payload, push="*"):
    return (push, [("$", b"message"), ("$", channel.encode()), ("$", payload.encode())])


def pmessage(pattern, channel, payload, push="*"):
    return (push, [("$", b"pmessage"), ("$", pattern.encode()), ("$", channel.encode()),
                   ("$", payload.encode())])


def smessage(channel, payload, push="*"):
    return (push, [("$", b"smessage"), ("$", channel.encode()), ("$", payload.encode())])


def multi_call(conn, n, *args):
    """Sends one command and reads its n replies (SUBSCRIBE a b c -> 3)."""
    conn.send(*args)
    return [conn.read() for _ in range(n)]


def numsub(r, channel):
    return r.pubsub_numsub(channel)[0][1]


# --------------------------------------------------------------------------
# Subscribing and unsubscribing (RESP2)
# --------------------------------------------------------------------------
def test_subscribe_confirms_each_channel_with_the_running_count(conns):
    c = conns()
    assert multi_call(c, 3, "SUBSCRIBE", "a", "b", "a") == [
        confirm("subscribe", "a", 1), confirm("subscribe", "b", 2), confirm("subscribe", "a", 2)]
    assert multi_call(c, 2, "PSUBSCRIBE", "a*", "b?") == [
        confirm("psubscribe", "a*", 3), confirm("psubscribe", "b?", 4)]
    # Shard channels are counted apart from channels and patterns.
    assert multi_call(c, 2, "SSUBSCRIBE", "s1", "s2") == [
        confirm("ssubscribe", "s1", 1), confirm("ssubscribe", "s2", 2)]
    assert c.call("SUBSCRIBE", "c") == confirm("subscribe", "c", 5)
    assert multi_call(c, 2, "SUNSUBSCRIBE", "s1", "zz") == [
        confirm("sunsubscribe", "s1", 1), confirm("sunsubscribe", "zz", 1)]
    assert multi_call(c, 2, "UNSUBSCRIBE", "a", "zz") == [
        confirm("unsubscribe", "a", 4), confirm("unsubscribe", "zz", 4)]
    # PUNSUBSCRIBE without arguments leaves every pattern, in subscription order.
    assert multi_call(c, 2, "PUNSUBSCRIBE") == [
        confirm("punsubscribe", "a*", 3), confirm("punsubscribe", "b?", 2)]


def test_unsubscribe_all_and_unsubscribe_from_nothing(conns):
    c = conns()
    multi_call(c, 3, "SUBSCRIBE", "x", "y", "z")
    replies = multi_call(c, 3, "UNSUBSCRIBE")
    # Redis leaves channels in hash order: compare the set of names and the counts.
    assert sorted(plain(rep)[1] for rep in replies) == [b"x", b"y", b"z"]
    assert [plain(rep)[2] for rep in replies] == [2, 1, 0]
    assert c.call("UNSUBSCRIBE") == confirm("unsubscribe", None, 0)
    assert c.call("PUNSUBSCRIBE") == confirm("punsubscribe", None, 0)
    assert c.call("SUNSUBSCRIBE") == confirm("sunsubscribe", None, 0)
    # Out of the subscribed context again: ordinary commands work.
    assert c.call("PING") == ("+", b"PONG")
    # Unsubscribing from names never subscribed is allowed outside the context too.
    assert multi_call(c, 2, "UNSUBSCRIBE", "p", "q") == [
        confirm("unsubscribe", "p", 0), confirm("unsubscribe", "q", 0)]
    assert c.call("PING") == ("+", b"PONG")


def test_punsubscribe_from_nothing_reports_remaining_channels(conns):
    c = conns()
    c.call("SUBSCRIBE", "only")
    assert c.call("PUNSUBSCRIBE") == confirm("punsubscribe", None, 1)
    assert c.call("SUNSUBSCRIBE") == confirm("sunsubscribe", None, 0)


def test_arity_errors(conns, r):
    c = conns()
    for cmd in ("SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE"):
        assert c.call(cmd) == ("-", arity(cmd.lower()))
    assert c.call("PUBLISH", "a") == ("-", arity("publish"))
    assert c.call("SPUBLISH", "a") == ("-", arity("spublish"))
    assert c.call("PUBLISH", "a", "b", "c") == ("-", arity("publish"))


# --------------------------------------------------------------------------
# Publishing
# --------------------------------------------------------------------------
def test_publish_reaches_channel_and_pattern_subscribers(conns, r):
    sub = conns()
    sub.call("SUBSCRIBE", "news")
    multi_call(sub, 2, "PSUBSCRIBE", "n*", "x*")
    assert r.publish("news", "hello") == 2
    assert sub.read() == message("news", "hello")
    assert sub.read() == pmessage("n*", "news", "hello")
    assert r.publish("nothing-here", "m") == 1
    assert sub.read() == pmessage("n*", "nothing-here", "m")
    assert r.publish("other", "m") == 0


def test_publish_counts_every_matching_subscription(conns, r):
    a, b = conns(), conns()
    a.call("SUBSCRIBE", "ch")
    multi_call(a, 2, "PSUBSCRIBE", "c*", "*h")
    b.call("SUBSCRIBE", "ch")
    assert r.publish("ch", "x") == 4
    got = [a.read() for _ in range(3)]
    assert got[0] == message("ch", "x")
    assert sorted(got[1:]) == sorted([pmessage("c*", "ch", "x"), pmessage("*h", "ch", "x")])
    assert b.read() == message("ch", "x")


def test_spublish_reaches_only_shard_subscribers(conns, r):
    sub = conns()
    sub.call("SSUBSCRIBE", "s1")
    sub.call("PSUBSCRIBE", "s*")
    assert r.execute_command("SPUBLISH", "s1", "hi") == 1
    assert sub.read() == smessage("s1", "hi")
    # A plain PUBLISH on the same name reaches the pattern, not the shard subscription.
    assert r.publish("s1", "plain") == 1
    assert sub.read() == pmessage("s*", "s1", "plain")
    assert r.execute_command("SPUBLISH", "s2", "x") == 0


def test_binary_and_large_payloads(conns, r):
    sub = conns()
    channel = b"ch\r\n\x00\xff"
    sub.call("SUBSCRIBE", channel)
    big = bytes(range(256)) * 4096  # 1 MiB
    assert r.publish(channel, big) == 1
    assert sub.read() == ("*", [("$", b"message"), ("$", channel), ("$", big)])


def test_publish_inside_multi_is_delivered_after_the_writes_before_it(conns, server, r):
    sub = conns()
    sub.call("SUBSCRIBE", "changes")
    reader = server.client()
    pipe = r.pipeline(transaction=True)
    pipe.set("k", "v1")
    pipe.publish("changes", "k")
    assert pipe.execute() == [True, 1]
    assert sub.read() == message("changes", "k")
    assert reader.get("k") == "v1"
    reader.close()


@pytest.mark.basalt_only  # Redis 7.2's order; the oracle, 7.0, writes it inside the array
def test_subscribe_and_self_publish_inside_exec_raw_bytes(conns):
    c = conns()
    assert c.call("MULTI") == ("+", b"OK")
    assert c.call("SUBSCRIBE", "m1") == ("+", b"QUEUED")
    assert c.call("PUBLISH", "m1", "x") == ("+", b"QUEUED")
    c.send("EXEC")
    # As in Redis 7.2 the message follows the whole EXEC array.
    expected = (b"*2\r\n*3\r\n$9\r\nsubscribe\r\n$2\r\nm1\r\n:1\r\n:1\r\n"
                b"*3\r\n$7\r\nmessage\r\n$2\r\nm1\r\n$1\r\nx\r\n")
    while len(c.buf) < len(expected):
        c._fill()
    assert c.buf == expected
    c.buf = b""
    # EXEC left the client subscribed, hence in the RESP2 subscribed context.
    assert c.call("GET", "x") == ("-", CONTEXT_ERR % "get")


def test_publish_from_a_script_is_delivered(conns, r):
    sub = conns()
    sub.call("SUBSCRIBE", "ch")
    assert r.eval("return redis.call('publish', 'ch', 'from-lua')", 0) == 1
    assert sub.read() == message("ch", "from-lua")
    # Subscribing is refused inside a script (SUBSCRIBE is flagged noscript).
    c = conns()
    t, text = c.call("EVAL", "return redis.call('subscribe', 'ch')", "0")
    assert t == "-" and text.startswith("ERR This Redis command is not allowed from script")


# --------------------------------------------------------------------------
# Glob patterns
# --------------------------------------------------------------------------
PATTERN_CASES = [
    ("*", "anything", True),
    ("*", "", False),  # Redis's matcher never matches an empty channel against "*"
    ("h?llo", "hello", True),
    ("h?llo", "hllo", False),
    ("h*llo", "heeeello", True),
    ("h*llo", "heeeelo", False),
    ("h[ae]llo", "hallo", True),
    ("h[ae]llo", "hillo", False),
    ("h[^e]llo", "hallo", True),
    ("h[^e]llo", "hello", False),
    ("h[a-b]llo", "hbllo", True),
    ("h[a-b]llo", "hcllo", False),
    ("h[b-a]llo", "hallo", True),  # reversed ranges are swapped
    ("x[^a-c]", "xd", True),
    ("x[^a-c]", "xb", False),
    ("h\\*llo", "h*llo", True),
    ("h\\*llo", "hello", False),
    ("\\?", "?", True),
    ("\\?", "a", False),
    ("[\\]]", "]", True),
    ("a[bc", "ab", True),  # an unterminated class ends with the pattern
    ("a[bc", "ad", False),
    ("user:*:name", "user:42:name", True),
    ("user:*:name", "user:42:mail", False),
    ("*a*b*c*", "xxaxxbxxcxx", True),
    ("*a*b*c*", "xxaxxcxxbxx", False),
    ("CASE", "case", False),
]


def test_pattern_matching_follows_redis(conns, r):
    sub = conns()
    for pattern, channel, matches in PATTERN_CASES:
        sub.call("PSUBSCRIBE", pattern)
        got = r.publish(channel, "m")
        assert got == (1 if matches else 0), (pattern, channel)
        if matches:
            assert sub.read() == pmessage(pattern, channel, "m"), (pattern, channel)
        assert sub.call("PUNSUBSCRIBE", pattern) == confirm("punsubscribe", pattern, 0)


# --------------------------------------------------------------------------
# The RESP2 subscribed context
# --------------------------------------------------------------------------
def test_resp2_subscribed_context_allows_only_pubsub_ping_quit_reset(conns):
    c = conns()
    c.call("SUBSCRIBE", "a")
    assert c.call("GET", "x") == ("-", CONTEXT_ERR % "get")
    assert c.call("CLIENT", "LIST") == ("-", CONTEXT_ERR % "client|list")
    assert c.call("MULTI") == ("-", CONTEXT_ERR % "multi")
    assert c.call("HELLO", "3") == ("-", CONTEXT_ERR % "hello")
    assert c.call("PUBLISH", "a", "b") == ("-", CONTEXT_ERR % "publish")
    # Name and arity are checked first, as in Redis.
    assert c.call("FOO") == ("-", "ERR unknown command 'FOO', with args beginning with: ")
    assert c.call("CLIENT") == ("-", arity("client"))
    # PING answers in the shape of a message: ["pong", argument or ""].
    assert c.call("PING") == ("*", [("$", b"pong"), ("$", b"")])
    assert c.call("PING", "hi") == ("*", [("$", b"pong"), ("$", b"hi")])
    assert c.call("PING", "a", "b") == ("-", arity("ping"))
    assert c.call("PSUBSCRIBE", "p*") == confirm("psubscribe", "p*", 2)
    assert c.call("UNSUBSCRIBE", "a") == confirm("unsubscribe", "a", 1)
    assert c.call("GET", "x") == ("-", CONTEXT_ERR % "get")  # still has a pattern
    assert c.call("PUNSUBSCRIBE", "p*") == confirm("punsubscribe", "p*", 0)
    assert c.call("GET", "x") == ("$", None)


def test_ssubscribe_alone_enters_the_subscribed_context(conns):
    c = conns()
    c.call("SSUBSCRIBE", "s")
    assert c.call("GET", "x") == ("-", CONTEXT_ERR % "get")
    c.call("SUNSUBSCRIBE")
    assert c.call("GET", "x") == ("$", None)


def test_reset_leaves_every_subscription(conns, r):
    c = conns()
    c.call("SUBSCRIBE", "a")
    c.call("PSUBSCRIBE", "a*")
    c.call("SSUBSCRIBE", "s")
    assert c.call("RESET") == ("+", b"RESET")  # no unsubscribe confirmations
    assert c.call("GET", "x") == ("$", None)
    assert numsub(r, "a") == 0
    assert r.execute_command("PUBSUB", "NUMPAT") == 0
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "s") == ["s", 0]
    assert r.publish("a", "m") == 0


def test_quit_and_disconnect_remove_the_subscriber(conns, r):
    c = conns()
    c.call("SUBSCRIBE", "q")
    assert c.call("QUIT") == ("+", b"OK")
    assert c.is_closed(timeout=5)
    assert wait_until(lambda: numsub(r, "q") == 0)
    d = conns()
    multi_call(d, 2, "SUBSCRIBE", "gone", "gone2")
    d.call("PSUBSCRIBE", "go*")
    d.close()
    assert wait_until(lambda: r.publish("gone", "m") == 0)
    assert numsub(r, "gone2") == 0
    assert r.execute_command("PUBSUB", "NUMPAT") == 0


# --------------------------------------------------------------------------
# RESP3
# --------------------------------------------------------------------------
@pytest.mark.basalt_only  # Redis 7.2 sends its own message after the reply; the oracle, 7.0, before
def test_resp3_pushes_mix_with_ordinary_replies(conns, r):
    c = conns()
    c.call("HELLO", "3")
    assert c.call("SUBSCRIBE", "a") == confirm("subscribe", "a", 1, push=">")
    assert c.call("PSUBSCRIBE", "a*") == confirm("psubscribe", "a*", 2, push=">")
    assert c.call("SET", "k", "v") == ("+", b"OK")
    assert c.call("GET", "k") == ("$", b"v")
    assert c.call("PING") == ("+", b"PONG")
    assert r.publish("a", "from-other") == 2
    assert c.read() == message("a", "from-other", push=">")
    assert c.read() == pmessage("a*", "a", "from-other", push=">")
    # Its own message arrives right after the PUBLISH reply, as in Redis 7.2.
    c.send("PUBLISH", "a", "self")
    assert c.read() == (":", 2)
    assert c.read() == message("a", "self", push=">")
    assert c.read() == pmessage("a*", "a", "self", push=">")
    assert c.call("UNSUBSCRIBE") == confirm("unsubscribe", "a", 1, push=">")
    assert c.call("PUNSUBSCRIBE") == confirm("punsubscribe", "a*", 0, push=">")
    assert c.call("UNSUBSCRIBE") == confirm("unsubscribe", None, 0, push=">")
    assert c.call("SSUBSCRIBE", "s") == confirm("ssubscribe", "s", 1, push=">")
    assert r.execute_command("SPUBLISH", "s", "x") == 1
    assert c.read() == smessage("s", "x", push=">")


def test_hello_2_while_subscribed_enters_the_resp2_context(conns):
    c = conns()
    c.call("HELLO", "3")
    c.call("SUBSCRIBE", "a")
    assert c.call("HELLO", "2")[0] == "*"
    assert c.call("PING") == ("*", [("$", b"pong"), ("$", b"")])
    assert c.call("HELLO", "3") == ("-", CONTEXT_ERR % "hello")


def test_redis_py_resp3_pubsub_client(server, r):
    r3 = server.client(protocol=3)
    p = r3.pubsub()
    p.subscribe("py")
    assert p.get_message(timeout=5)["type"] == "subscribe"
    assert r.publish("py", "hi") == 1
    m = p.get_message(timeout=5)
    assert (m["type"], m["channel"], m["data"]) == ("message", "py", "hi")
    p.close()
    r3.close()


# --------------------------------------------------------------------------
# Across connections and workers
# --------------------------------------------------------------------------
def test_many_publishers_and_subscribers_keep_per_publisher_order(server, conns, r):
    """Six connections made one after another are spread over the workers; each
    subscriber must get every message of each publisher, in that publisher's order."""
    subscribers = [conns() for _ in range(4)]
    for i, s in enumerate(subscribers):
        if i % 2:
            s.call("PSUBSCRIBE", "load:*")
        else:
            multi_call(s, 2, "SUBSCRIBE", "load:1", "load:2")
    n = 300
    counts = {}

    def publish(name):
        c = RawConn(server.port)
        c.sock.sendall(b"".join(encode("PUBLISH", name, str(i)) for i in range(n)))
        counts[name] = [c.read() for _ in range(n)]
        c.close()

    threads = [threading.Thread(target=publish, args=(ch,)) for ch in ("load:1", "load:2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert all(counts[ch] == [(":", 4)] * n for ch in ("load:1", "load:2"))
    for s in subscribers:
        seen = {"load:1": [], "load:2": []}
        for _ in range(2 * n):
            kind, items = s.read()
            fields = [v for _, v in items]
            seen[fields[-2].decode()].append(int(fields[-1]))
        assert seen == {"load:1": list(range(n)), "load:2": list(range(n))}


# --------------------------------------------------------------------------
# PUBSUB introspection, INFO, CLIENT LIST
# --------------------------------------------------------------------------
def test_pubsub_introspection(conns, r):
    a, b = conns(), conns()
    multi_call(a, 2, "SUBSCRIBE", "news.tech", "news.art")
    b.call("SUBSCRIBE", "news.tech")
    multi_call(a, 2, "PSUBSCRIBE", "p*", "q*")
    b.call("PSUBSCRIBE", "p*")
    multi_call(b, 2, "SSUBSCRIBE", "s1", "s2")
    assert sorted(r.execute_command("PUBSUB", "CHANNELS")) == ["news.art", "news.tech"]
    assert r.execute_command("PUBSUB", "CHANNELS", "*tech") == ["news.tech"]
    assert r.execute_command("PUBSUB", "CHANNELS", "zz*") == []
    assert r.execute_command("PUBSUB", "NUMSUB", "news.tech", "news.art", "none") == [
        "news.tech", 2, "news.art", 1, "none", 0]
    assert r.execute_command("PUBSUB", "NUMSUB") == []
    assert r.execute_command("PUBSUB", "NUMPAT") == 2  # distinct patterns
    assert sorted(r.execute_command("PUBSUB", "SHARDCHANNELS")) == ["s1", "s2"]
    assert r.execute_command("PUBSUB", "SHARDCHANNELS", "*1") == ["s1"]
    assert r.execute_command("PUBSUB", "SHARDNUMSUB", "s1", "s3") == ["s1", 1, "s3", 0]
    assert r.execute_command("PUBSUB", "SHARDNUMSUB") == []
    stats = r.info("stats")
    assert (stats["pubsub_channels"], stats["pubsub_patterns"],
            stats["pubsubshard_channels"]) == (2, 2, 2)


def test_pubsub_numsub_is_an_array_in_resp3(conns, r):
    c = conns()
    c.call("HELLO", "3")
    assert c.call("PUBSUB", "NUMSUB", "x") == ("*", [("$", b"x"), (":", 0)])


def test_pubsub_errors_and_help(conns):
    c = conns()
    assert c.call("PUBSUB") == ("-", arity("pubsub"))
    assert c.call("PUBSUB", "FOO") == ("-", "ERR unknown subcommand 'FOO'. Try PUBSUB HELP.")
    assert c.call("PUBSUB", "CHANNELS", "a", "b") == (
        "-", "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. "
        "Try PUBSUB HELP.")
    assert c.call("PUBSUB", "shardchannels", "a", "b") == (
        "-", "ERR unknown subcommand or wrong number of arguments for 'shardchannels'. "
        "Try PUBSUB HELP.")
    assert c.call("PUBSUB", "NUMPAT", "x") == ("-", arity("pubsub|numpat"))
    t, lines = c.call("PUBSUB", "HELP")
    assert t == "*" and len(lines) == 14
    assert lines[0] == ("+", b"PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")


def _fields(line):
    return dict(f.split("=", 1) for f in line.strip().split(" "))


def test_client_list_shows_subscriptions_and_type_filters(conns, r):
    c = conns()
    multi_call(c, 2, "SUBSCRIBE", "a", "b")
    c.call("PSUBSCRIBE", "x*")
    c.call("SSUBSCRIBE", "s")
    lines = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").strip().split("\n")
    assert len(lines) == 1
    f = _fields(lines[0])
    assert (f["flags"], f["sub"], f["psub"], f["ssub"]) == ("P", "2", "1", "1")
    normal = r.execute_command("CLIENT", "LIST", "TYPE", "normal")
    assert all(_fields(line)["flags"] != "P" for line in normal.strip().split("\n"))
    assert f["id"] not in [_fields(line)["id"] for line in normal.strip().split("\n")]
    c.call("RESET")
    assert r.execute_command("CLIENT", "LIST", "TYPE", "pubsub") == ""
    mine = _fields(r.execute_command("CLIENT", "LIST", "ID", f["id"]))
    assert (mine["flags"], mine["sub"], mine["psub"], mine["ssub"]) == ("N", "0", "0", "0")


def test_client_kill_type_pubsub(conns, r):
    c = conns()
    c.call("SUBSCRIBE", "k")
    assert r.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == 1
    assert c.is_closed(timeout=5)
    assert r.execute_command("CLIENT", "KILL", "TYPE", "master") == 0
    with pytest.raises(Exception, match="^ERR Unknown client type 'foo'$"):
        r.execute_command("CLIENT", "KILL", "TYPE", "foo")
    assert r.ping()


def test_command_info_flags(rr):
    info = rr.execute_command("COMMAND", "INFO", "subscribe", "publish")
    assert info[0][0] == "subscribe" and info[0][1] == -2
    assert {"pubsub", "noscript", "loading", "stale"} <= set(info[0][2])
    assert info[1][1] == 3 and {"pubsub", "fast"} <= set(info[1][2])


# --------------------------------------------------------------------------
# client-output-buffer-limit
# --------------------------------------------------------------------------
@pytest.fixture
def restore_limits(r):
    yield
    r.config_set("client-output-buffer-limit", DEFAULT_LIMITS)


def test_output_buffer_limit_config(r, restore_limits):
    assert r.config_get("client-output-buffer-limit") == {
        "client-output-buffer-limit": DEFAULT_LIMITS}
    assert r.config_set("client-output-buffer-limit", "pubsub 1mb 512kb 10 replica 1 2 3")
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == \
        "normal 0 0 0 slave 1 2 3 pubsub 1048576 524288 10"
    prefix = ("ERR CONFIG SET failed (possibly related to argument "
              "'client-output-buffer-limit') - ")
    for value, reason in [
            ("pubsub 1mb", "Wrong number of arguments in buffer limit configuration."),
            ("foo 1 1 1", "Invalid client class specified in buffer limit configuration."),
            ("master 1 1 1", "Invalid client class specified in buffer limit configuration."),
            ("pubsub x 1 1", "Error in hard, soft or soft_seconds setting in buffer limit "
                             "configuration."),
            ("pubsub 1 1 -1", "Error in hard, soft or soft_seconds setting in buffer limit "
                              "configuration.")]:
        with pytest.raises(Exception, match="^" + prefix.replace("(", r"\(").replace(
                ")", r"\)") + reason.replace(".", r"\.") + "$"):
            r.config_set("client-output-buffer-limit", value)
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == \
        "normal 0 0 0 slave 1 2 3 pubsub 1048576 524288 10"


def stalled_subscriber(port, channel):
    """A raw socket with a tiny receive window that subscribes and never reads."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(encode("SUBSCRIBE", channel))
    return s


def publish_until_dropped(r, channel, payload, limit=2000):
    """Publishes until nobody receives; returns the receiver counts seen."""
    counts = []
    for _ in range(limit):
        counts.append(r.publish(channel, payload))
        if counts[-1] == 0:
            break
    return counts


def pubsub_omem(r):
    info = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub")
    return int(_fields(info)["omem"]) if info else None


def test_stalled_subscriber_hits_the_hard_limit_and_is_disconnected(server, r,
                                                                    restore_limits):
    r.config_set("client-output-buffer-limit", "pubsub 1mb 0 0")
    s = stalled_subscriber(server.port, "stall")
    try:
        assert wait_until(lambda: numsub(r, "stall") == 1)
        counts = publish_until_dropped(r, "stall", "x" * 65536)
        # It receives (in the server's eyes) until its unsent output passes 1 MB, on top of
        # what the kernel's socket buffers hold; then it is gone.
        assert counts[0] == 1 and counts[-1] == 0 and set(counts) == {0, 1}
        assert wait_until(lambda: r.execute_command("CLIENT", "LIST", "TYPE", "pubsub") == "")
        assert numsub(r, "stall") == 0
        # The stalled socket ends with EOF once what was sent before the close is read.
        s.settimeout(10)
        while s.recv(1 << 16):
            pass
    finally:
        s.close()
    # The server is healthy and new subscribers are served.
    assert r.set("after", "ok") and r.get("after") == "ok"
    with RawConn(server.port) as fresh:
        fresh.call("SUBSCRIBE", "stall")
        assert r.publish("stall", "again") == 1
        assert fresh.read() == message("stall", "again")


def test_soft_limit_disconnects_only_after_its_seconds(server, r, restore_limits):
    r.config_set("client-output-buffer-limit", "pubsub 0 256kb 1")
    s = stalled_subscriber(server.port, "soft")
    payload = "y" * (256 * 1024)
    try:
        assert wait_until(lambda: numsub(r, "soft") == 1)
        # Past the soft limit it is not closed at once, unlike with a hard limit ...
        crossed = False
        for _ in range(100):
            r.publish("soft", payload)
            if (pubsub_omem(r) or 0) >= 256 * 1024:
                crossed = True
                break
        assert crossed and numsub(r, "soft") == 1
        # ... but once it has stayed over it for more than a second, a message closes it.
        deadline = time.monotonic() + 10
        while numsub(r, "soft") and time.monotonic() < deadline:
            r.publish("soft", payload)
            time.sleep(0.1)
        assert numsub(r, "soft") == 0
        assert r.ping()
    finally:
        s.close()


def test_normal_class_limit_closes_a_client_that_does_not_read_its_replies(server, r,
                                                                          restore_limits):
    r.set("big", "z" * (256 * 1024))
    r.config_set("client-output-buffer-limit", "normal 1mb 0 0")
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", server.port))
    try:
        # 200 pipelined GETs of 256 KiB: far more than the limit plus the socket buffers.
        s.sendall(encode("GET", "big") * 200)
        received = 0
        s.settimeout(10)
        while True:
            try:
                chunk = s.recv(1 << 16)
            except ConnectionResetError:  # closed with requests still unread: a reset
                break
            if not chunk:
                break
            received += len(chunk)
        assert received < 200 * 256 * 1024  # closed before all replies were written
    finally:
        s.close()
    r.config_set("client-output-buffer-limit", DEFAULT_LIMITS)
    assert r.get("big") == "z" * (256 * 1024)


def test_idle_timeout_spares_subscribers(start_server):
    srv = start_server({"timeout": 1})
    sub = srv.raw()
    sub.call("SUBSCRIBE", "idle")
    idle = srv.raw()
    idle.call("PING")
    assert idle.is_closed(timeout=5)
    assert not sub.is_closed(timeout=0.5)
    c = srv.client()
    assert c.publish("idle", "still here") == 1
    assert sub.read() == message("idle", "still here")
    c.close()
    sub.close()


@pytest.mark.basalt_only
def test_publish_without_replicas_writes_nothing(r):
    """PUBLISH records messages in the WAL only for replicas; with none connected it costs no
    write (and, with durability sync, no fsync). test_replication covers delivery to replicas."""
    sub = r.pubsub()
    sub.subscribe("ch")
    assert sub.get_message(timeout=5)["type"] == "subscribe"
    before = r.info("rocksdb")["wal_bytes"]
    for i in range(50):
        assert r.publish("ch", "x" * 1000) == 1
    assert r.info("rocksdb")["wal_bytes"] == before
    got = [sub.get_message(timeout=5) for _ in range(50)]
    assert all(m is not None and m["data"] == "x" * 1000 for m in got)
    sub.close()


def test_publish_and_pubsub_see_a_subscription_sent_before_them_on_another_connection(conns):
    """A client that sends SUBSCRIBE on one connection and then, without waiting for the
    confirmation, PUBLISH or PUBSUB NUMSUB on another (go-redis's Subscribe does) finds the
    subscription counted, as one Redis thread runs the SUBSCRIBE first; likewise an UNSUBSCRIBE
    sent first is no longer counted. The two connections are served by different workers;
    without the ordering a few hundred rounds miss some."""
    subscriber, publisher = conns(), conns()
    for c in (subscriber, publisher):
        assert c.call("PING") == ("+", b"PONG")
    missed = []
    for i in range(300):
        channel = "race:%d" % i
        subscriber.send("SUBSCRIBE", channel)
        received = publisher.call("PUBLISH", channel, "m")
        if received != (":", 1):
            missed.append(("publish", i))
        subscriber.read()  # the confirmation
        if received == (":", 1):
            subscriber.read()  # the message
        subscriber.send("UNSUBSCRIBE", channel)
        if publisher.call("PUBSUB", "NUMSUB", channel)[1][1] != (":", 0):
            missed.append(("numsub after unsubscribe", i))
        subscriber.read()
        subscriber.send("SUBSCRIBE", channel)
        if publisher.call("PUBSUB", "NUMSUB", channel)[1][1] != (":", 1):
            missed.append(("numsub", i))
        subscriber.read()
        subscriber.send("UNSUBSCRIBE", channel)
        subscriber.read()
        # A PUBLISH queued in a transaction runs at EXEC, which waits the same way.
        subscriber.send("SUBSCRIBE", channel)
        for command in (("MULTI",), ("PUBLISH", channel, "t"), ("EXEC",)):
            publisher.send(*command)
        received = [publisher.read() for _ in range(3)][2]
        if received != ("*", [(":", 1)]):
            missed.append(("publish in a transaction", i))
        subscriber.read()
        if received == ("*", [(":", 1)]):
            subscriber.read()
        subscriber.send("UNSUBSCRIBE", channel)
        subscriber.read()
    assert missed == []
