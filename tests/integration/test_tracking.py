"""Client-side caching: CLIENT TRACKING and its invalidation messages.

Raw connections (resp.RawConn) show the exact pushes and their place among the replies.
Redis 7.0 (Debian's oracle) writes a client's invalidation of its own write before that
command's reply; Redis 7.2, which Basalt follows, writes it after the reply (after EXEC's whole
reply in a transaction): the tests of that order are basalt_only.
"""
import socket
import time

import pytest

import redis
from redis._parsers import _RESP3Parser

from helpers import wait_until

PONG = ("+", b"PONG")
OK = ("+", b"OK")


def invalidate(*keys):
    return (">", [("$", b"invalidate"), ("*", [("$", k.encode()) for k in keys])])


NULL_INVALIDATE = (">", [("$", b"invalidate"), ("_", None)])


def client_id(c):
    return c.call("CLIENT", "ID")[1]


def tracker(conns, *options, resp=3):
    """A connection with tracking on (RESP3 unless resp=2)."""
    c = conns()
    if resp == 3:
        assert c.call("HELLO", "3")[0] == "%"
    assert c.call("CLIENT", "TRACKING", "on", *options) == OK
    return c


def assert_quiet(c, wait=0.3):
    """Nothing is pending for c: PING is answered first and nothing follows it."""
    assert c.call("PING") == PONG
    c.sock.settimeout(wait)
    try:
        data = c.sock.recv(1 << 16)
    except socket.timeout:
        data = b""
    finally:
        c.sock.settimeout(10.0)
    assert c.buf + data == b"", "unexpected data %r" % (c.buf + data)


def error(c, *args):
    reply = c.call(*args)
    assert reply[0] == "-", reply
    return reply[1]


# ---------------------------------------------------------------------------------------------
# default mode


def test_a_read_key_is_invalidated_once_when_another_client_writes_it(conns):
    a = tracker(conns)
    b = conns()
    assert a.call("GET", "k") == ("_", None)
    assert b.call("SET", "k", "1") == OK
    assert a.read() == invalidate("k")
    # Forgotten after the first invalidation: the next write sends nothing.
    assert b.call("SET", "k", "2") == OK
    assert_quiet(a)


def test_only_the_keys_read_are_invalidated(conns):
    a = tracker(conns)
    b = conns()
    b.call("MSET", "k1", "1", "k2", "2", "k3", "3")
    assert a.call("MGET", "k1", "k2")[0] == "*"
    assert b.call("SET", "k3", "x") == OK
    assert_quiet(a)
    assert b.call("DEL", "k1", "k2") == (":", 2)
    assert sorted([a.read(), a.read()]) == sorted([invalidate("k1"), invalidate("k2")])


def test_every_kind_of_write_invalidates(conns):
    a = tracker(conns)
    b = conns()
    b.call("RPUSH", "list", "a", "b")
    b.call("HSET", "hash", "f", "v")
    for cmd in (("LRANGE", "list", "0", "-1"), ("HGET", "hash", "f"), ("EXISTS", "gone")):
        a.call(*cmd)
    b.call("LPOP", "list")
    assert a.read() == invalidate("list")
    b.call("HDEL", "hash", "f")
    assert a.read() == invalidate("hash")
    b.call("SET", "gone", "1")
    assert a.read() == invalidate("gone")


def test_keys_are_tracked_across_databases(conns):
    a = tracker(conns)
    b = conns()
    a.call("GET", "k")
    b.call("SELECT", "3")
    b.call("SET", "k", "v")
    assert a.read() == invalidate("k")


def test_a_resp2_client_without_redirect_gets_nothing(conns):
    a = tracker(conns, resp=2)
    b = conns()
    assert a.call("GET", "k") == ("$", None)
    b.call("SET", "k", "1")
    assert_quiet(a)


def test_noloop_skips_the_clients_own_writes(conns):
    a = tracker(conns, "NOLOOP")
    b = conns()
    a.call("GET", "k")
    assert a.call("SET", "k", "1") == OK
    assert_quiet(a)
    a.call("GET", "k")
    b.call("SET", "k", "2")
    assert a.read() == invalidate("k")


@pytest.mark.basalt_only(reason="Redis 7.2 sends a client's own invalidation after the reply; "
                         "the 7.0 oracle sends it before")
def test_own_write_invalidation_follows_the_reply(conns):
    a = tracker(conns)
    a.call("GET", "k")
    assert a.call("SET", "k", "1") == OK
    assert a.read() == invalidate("k")


# ---------------------------------------------------------------------------------------------
# OPTIN / OPTOUT


def test_optin_tracks_only_the_command_after_caching_yes(conns):
    a = tracker(conns, "OPTIN")
    b = conns()
    a.call("GET", "k1")
    b.call("SET", "k1", "x")
    assert_quiet(a)
    assert a.call("CLIENT", "CACHING", "yes") == OK
    a.call("GET", "k1")
    a.call("GET", "k2")  # CACHING yes covered only the command before
    b.call("SET", "k2", "x")
    assert_quiet(a)
    b.call("SET", "k1", "y")
    assert a.read() == invalidate("k1")


def test_optin_caching_yes_covers_a_whole_transaction(conns):
    a = tracker(conns, "OPTIN")
    b = conns()
    a.call("CLIENT", "CACHING", "yes")
    a.call("MULTI")
    a.call("GET", "k1")
    a.call("GET", "k2")
    assert a.call("EXEC")[0] == "*"
    b.call("SET", "k2", "x")
    assert a.read() == invalidate("k2")


def test_optout_tracks_all_but_the_command_after_caching_no(conns):
    a = tracker(conns, "OPTOUT")
    b = conns()
    assert a.call("CLIENT", "CACHING", "no") == OK
    a.call("GET", "k1")
    a.call("GET", "k2")
    b.call("SET", "k1", "x")
    assert_quiet(a)
    b.call("SET", "k2", "x")
    assert a.read() == invalidate("k2")


# ---------------------------------------------------------------------------------------------
# BCAST


def test_bcast_announces_writes_under_its_prefixes(conns):
    a = tracker(conns, "BCAST", "PREFIX", "user:", "PREFIX", "obj:")
    b = conns()
    b.call("SET", "user:1", "x")
    assert a.read() == invalidate("user:1")
    b.call("SET", "other", "x")
    assert_quiet(a)
    b.call("SET", "obj:9", "x")
    assert a.read() == invalidate("obj:9")


def test_bcast_without_prefix_covers_every_key_and_its_own_writes(conns):
    a = tracker(conns, "BCAST")
    assert a.call("SET", "anything", "1") == OK
    assert a.read() == invalidate("anything")


def test_bcast_noloop_skips_its_own_writes(conns):
    a = tracker(conns, "BCAST", "NOLOOP")
    b = conns()
    assert a.call("SET", "k", "1") == OK
    assert_quiet(a)
    b.call("SET", "k", "2")
    assert a.read() == invalidate("k")


def test_bcast_reads_are_not_remembered(conns, r):
    a = tracker(conns, "BCAST", "PREFIX", "p:")
    a.call("GET", "q:1")
    info = r.info("stats")
    assert info["tracking_total_keys"] == 0
    assert info["tracking_total_prefixes"] == 1


# ---------------------------------------------------------------------------------------------
# REDIRECT


def test_redirect_to_a_resp2_subscriber_sends_pubsub_messages(conns):
    sub = conns()
    sub_id = client_id(sub)
    assert sub.call("SUBSCRIBE", "__redis__:invalidate")[0] == "*"
    a = tracker(conns, "REDIRECT", str(sub_id), resp=2)
    b = conns()
    a.call("GET", "k")
    b.call("SET", "k", "v")
    assert sub.read() == ("*", [("$", b"message"), ("$", b"__redis__:invalidate"),
                                ("*", [("$", b"k")])])
    assert a.call("CLIENT", "GETREDIR") == (":", sub_id)


def test_redirect_to_a_resp3_client_sends_pushes(conns):
    target = conns()
    target.call("HELLO", "3")
    a = tracker(conns, "REDIRECT", str(client_id(target)), resp=2)
    b = conns()
    a.call("GET", "k")
    b.call("SET", "k", "v")
    assert target.read() == invalidate("k")


def test_a_gone_redirect_client_breaks_the_redirect(conns, r):
    target = conns()
    target_id = client_id(target)
    a = tracker(conns, "REDIRECT", str(target_id))
    a_id = client_id(a)
    b = conns()
    target.close()
    assert wait_until(lambda: "id=%d " % target_id not in r.execute_command("CLIENT", "LIST"))
    a.call("GET", "k")
    b.call("SET", "k", "v")
    assert a.read() == (">", [("$", b"tracking-redir-broken"), (":", target_id)])
    info = a.call("CLIENT", "TRACKINGINFO")
    flags = dict((k[1], v) for k, v in info[1])[b"flags"]
    assert ("$", b"broken_redirect") in flags[1]
    line = r.execute_command("CLIENT", "LIST", "ID", a_id)
    assert " flags=tR " in line


# ---------------------------------------------------------------------------------------------
# flushes, expiry, transactions, scripts


def test_flushall_and_flushdb_send_a_null_invalidation_to_every_tracking_client(conns):
    a = tracker(conns)
    bcast = tracker(conns, "BCAST", "PREFIX", "x")
    b = conns()
    b.call("FLUSHALL")
    assert a.read() == NULL_INVALIDATE
    assert bcast.read() == NULL_INVALIDATE
    b.call("FLUSHDB")
    assert a.read() == NULL_INVALIDATE


@pytest.mark.basalt_only(reason="Redis 7.2 sends a client's own flush invalidation after the "
                         "reply; the 7.0 oracle sends it before")
def test_own_flush_invalidation_follows_the_reply(conns):
    a = tracker(conns)
    a.send("FLUSHALL")
    a.send("PING")
    assert a.read() == OK
    assert a.read() == NULL_INVALIDATE
    assert a.read() == PONG


def test_flush_reaches_a_resp2_redirect_as_a_null_message(conns):
    sub = conns()
    sub_id = client_id(sub)
    sub.call("SUBSCRIBE", "__redis__:invalidate")
    tracker(conns, "REDIRECT", str(sub_id), resp=2)
    conns().call("FLUSHALL")
    assert sub.read() == ("*", [("$", b"message"), ("$", b"__redis__:invalidate"), ("$", None)])


def test_flush_forgets_every_tracked_key(conns, r):
    a = tracker(conns)
    a.call("GET", "k")
    r.flushall()
    assert a.read() == NULL_INVALIDATE
    r.set("k", "v")
    assert_quiet(a)


def test_a_flush_empties_the_table_when_no_client_tracks_any_more(conns, r):
    a = tracker(conns)
    a.call("GET", "k1")
    a.call("GET", "k2")
    assert a.call("CLIENT", "TRACKING", "off") == OK
    assert r.info("stats")["tracking_total_items"] == 2  # ids go lazily, as in Redis
    r.flushall()
    stats = r.info("stats")
    assert (stats["tracking_total_keys"], stats["tracking_total_items"]) == (0, 0)


def test_the_table_beyond_its_limit_forgets_keys_with_an_invalidation(conns, r):
    a = tracker(conns)
    for key in ("k1", "k2", "k3"):
        assert a.call("GET", key) == ("_", None)
    try:
        # Lowering the limit forgets keys at once, as Redis's cron does.
        assert r.config_set("tracking-table-max-keys", 2)
        first = a.read()
        assert first[0] == ">" and first[1][0] == ("$", b"invalidate")
        forgotten = [k for _, k in first[1][1][1]]
        assert len(forgotten) == 1 and forgotten[0] in (b"k1", b"k2", b"k3")
        assert r.info("stats")["tracking_total_keys"] == 2
        # A read beyond the limit forgets another key; a write to a forgotten key sends nothing.
        assert a.call("GET", "k4") == ("_", None)
        second = a.read()
        assert second[0] == ">" and len(second[1][1][1]) == 1
        assert r.info("stats")["tracking_total_keys"] == 2
        r.set(forgotten[0], "v")
        assert_quiet(a)
    finally:
        r.config_set("tracking-table-max-keys", 1000000)


def test_the_active_expirer_invalidates_an_expired_key(conns):
    a = tracker(conns)
    b = conns()
    b.call("SET", "k", "v", "PX", "100")
    assert a.call("GET", "k") == ("$", b"v")
    # Nobody reads the key again: the active expirer's deletion sends the invalidation.
    assert a.read() == invalidate("k")


def test_a_lookup_that_finds_a_key_expired_invalidates_it(conns, r):
    r.config_set("hz", 1)  # keep the active expirer from getting there first
    try:
        a = tracker(conns)
        b = conns()
        b.call("SET", "k", "v", "PX", "50")
        assert a.call("GET", "k") == ("$", b"v")
        time.sleep(0.1)
        assert b.call("GET", "k") == ("$", None)
        assert a.read() == invalidate("k")
    finally:
        r.config_set("hz", 10)


def test_writes_in_a_transaction_invalidate_once_after_exec(conns):
    a = tracker(conns)
    b = conns()
    a.call("GET", "k")
    b.call("MULTI")
    b.call("SET", "k", "1")
    b.call("INCR", "k")
    assert b.call("EXEC") == ("*", [OK, (":", 2)])
    assert a.read() == invalidate("k")
    assert_quiet(a)


@pytest.mark.basalt_only(reason="Redis 7.2 sends the invalidations of a transaction's own "
                         "writes after EXEC's reply; the 7.0 oracle inside it")
def test_own_writes_in_a_transaction_are_invalidated_after_execs_reply(conns):
    a = tracker(conns)
    a.call("MGET", "k1", "k2")
    a.call("MULTI")
    a.call("SET", "k1", "1")
    a.call("SET", "k2", "2")
    assert a.call("EXEC") == ("*", [OK, OK])
    assert a.read() == invalidate("k1")
    assert a.read() == invalidate("k2")


def test_reads_in_a_transaction_are_tracked(conns):
    a = tracker(conns)
    b = conns()
    a.call("MULTI")
    a.call("GET", "k")
    a.call("EXEC")
    b.call("SET", "k", "v")
    assert a.read() == invalidate("k")


def test_a_key_read_after_its_write_in_one_transaction_stays_tracked(conns):
    a = tracker(conns, "NOLOOP")
    b = conns()
    a.call("MULTI")
    a.call("SET", "k", "1")
    a.call("GET", "k")
    assert a.call("EXEC") == ("*", [OK, ("$", b"1")])
    assert_quiet(a)
    b.call("SET", "k", "2")
    assert a.read() == invalidate("k")


def test_script_writes_invalidate(conns):
    a = tracker(conns)
    b = conns()
    a.call("GET", "k")
    assert b.call("EVAL", "redis.call('set', KEYS[1], 'x') return 1", "1", "k") == (":", 1)
    assert a.read() == invalidate("k")


def test_keys_a_script_reads_are_tracked_for_its_caller(conns):
    a = tracker(conns)
    b = conns()
    assert a.call("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k") == ("_", None)
    b.call("SET", "k", "v")
    assert a.read() == invalidate("k")


# ---------------------------------------------------------------------------------------------
# introspection and errors


def test_trackinginfo_and_getredir(conns):
    c = conns()
    c.call("HELLO", "3")
    off = ("%", [(("$", b"flags"), ("~", [("$", b"off")])), (("$", b"redirect"), (":", -1)),
                 (("$", b"prefixes"), ("*", []))])
    assert c.call("CLIENT", "TRACKINGINFO") == off
    assert c.call("CLIENT", "GETREDIR") == (":", -1)
    c.call("CLIENT", "TRACKING", "on", "OPTIN", "NOLOOP")
    c.call("CLIENT", "CACHING", "yes")
    assert c.call("CLIENT", "TRACKINGINFO") == (
        "%", [(("$", b"flags"),
               ("~", [("$", b"on"), ("$", b"optin"), ("$", b"caching-yes"), ("$", b"noloop")])),
              (("$", b"redirect"), (":", 0)), (("$", b"prefixes"), ("*", []))])
    assert c.call("CLIENT", "GETREDIR") == (":", 0)
    c.call("CLIENT", "TRACKING", "off")
    other = client_id(conns())
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b", "PREFIX", "a", "REDIRECT",
           str(other))
    assert c.call("CLIENT", "TRACKINGINFO") == (
        "%", [(("$", b"flags"), ("~", [("$", b"on"), ("$", b"bcast")])),
              (("$", b"redirect"), (":", other)),
              (("$", b"prefixes"), ("*", [("$", b"a"), ("$", b"b")]))])
    assert c.call("CLIENT", "GETREDIR") == (":", other)
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "OPTOUT")
    c.call("CLIENT", "CACHING", "no")
    flags = c.call("CLIENT", "TRACKINGINFO")[1][0][1]
    assert flags == ("~", [("$", b"on"), ("$", b"optout"), ("$", b"caching-no")])


def test_trackinginfo_in_resp2_is_a_flat_array(rr):
    assert rr.execute_command("CLIENT", "TRACKINGINFO") == ["flags", ["off"], "redirect", -1,
                                                            "prefixes", []]


def test_client_list_flags_and_redir(conns, r):
    a = tracker(conns, resp=2)
    line = r.execute_command("CLIENT", "LIST", "ID", client_id(a))
    assert " flags=t " in line and " redir=0 " in line
    target = client_id(conns())
    a.call("CLIENT", "TRACKING", "off")
    a.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(target))
    line = r.execute_command("CLIENT", "LIST", "ID", client_id(a))
    assert " flags=tB " in line and " redir=%d " % target in line
    a.call("CLIENT", "TRACKING", "off")
    line = r.execute_command("CLIENT", "LIST", "ID", client_id(a))
    assert " flags=N " in line and " redir=-1 " in line


def test_info_counts_clients_keys_items_and_prefixes(conns, r):
    def stats():
        info = r.info()
        return (info["tracking_clients"], info["tracking_total_keys"],
                info["tracking_total_items"], info["tracking_total_prefixes"])

    assert stats() == (0, 0, 0, 0)
    a = tracker(conns)
    b = tracker(conns)
    tracker(conns, "BCAST", "PREFIX", "x", "PREFIX", "y")
    a.call("MGET", "k1", "k2")
    b.call("GET", "k1")
    assert stats() == (3, 2, 3, 2)
    r.set("k1", "v")
    assert stats() == (3, 1, 1, 2)


def test_reset_and_close_turn_tracking_off(conns, r):
    a = tracker(conns)
    b = tracker(conns, "BCAST")
    assert a.call("RESET") == ("+", b"RESET")
    assert a.call("CLIENT", "GETREDIR") == (":", -1)
    b.close()
    assert wait_until(lambda: r.info("clients")["tracking_clients"] == 0)
    assert r.info("stats")["tracking_total_prefixes"] == 0


def test_tracking_errors(conns):
    c = conns()
    cid = client_id(c)
    assert error(c, "CLIENT", "TRACKING", "on", "PREFIX", "a") == \
        "ERR PREFIX option requires BCAST mode to be enabled"
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "ab") == \
        "ERR Prefix 'a' overlaps with another provided prefix 'ab'. " \
        "Prefixes for a single client must not overlap."
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "OPTIN") == \
        "ERR OPTIN and OPTOUT are not compatible with BCAST"
    assert error(c, "CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT") == \
        "ERR You can't specify both OPTIN mode and OPTOUT mode"
    assert error(c, "CLIENT", "TRACKING", "on", "REDIRECT", "999999") == \
        "ERR The client ID you want redirect to does not exist"
    assert error(c, "CLIENT", "TRACKING", "on", "REDIRECT", "abc") == \
        "ERR value is not an integer or out of range"
    assert error(c, "CLIENT", "TRACKING", "on", "REDIRECT", str(cid), "REDIRECT", str(cid)) == \
        "ERR A client can only redirect to a single other client"
    assert error(c, "CLIENT", "TRACKING", "maybe") == "ERR syntax error"
    assert error(c, "CLIENT", "TRACKING", "on", "FOO") == "ERR syntax error"
    assert error(c, "CLIENT", "TRACKING", "on", "PREFIX") == "ERR syntax error"
    assert error(c, "CLIENT", "TRACKING") == \
        "ERR wrong number of arguments for 'client|tracking' command"
    assert error(c, "CLIENT", "CACHING", "yes") == \
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN " \
        "or OPTOUT mode enabled"
    # Nothing above turned tracking on.
    assert c.call("CLIENT", "GETREDIR") == (":", -1)
    c.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a")
    assert error(c, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab") == \
        "ERR Prefix 'ab' overlaps with an existing prefix 'a'. " \
        "Prefixes for a single client must not overlap."
    assert error(c, "CLIENT", "TRACKING", "on") == \
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, " \
        "and then re-enabling it with a different mode."
    assert error(c, "CLIENT", "CACHING", "yes") == \
        "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
    c.call("CLIENT", "TRACKING", "off")
    c.call("CLIENT", "TRACKING", "on", "OPTIN")
    assert error(c, "CLIENT", "TRACKING", "on", "OPTOUT") == \
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, " \
        "and then re-enabling it with a different mode."
    assert error(c, "CLIENT", "CACHING", "no") == \
        "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
    assert error(c, "CLIENT", "CACHING", "maybe") == "ERR syntax error"
    assert error(c, "CLIENT", "GETREDIR", "x") == \
        "ERR wrong number of arguments for 'client|getredir' command"


def test_redis_py_resp3_connection_sees_invalidations(server, r):
    pushes = []
    conn = redis.Connection(host="127.0.0.1", port=server.port, protocol=3,
                            decode_responses=True, parser_class=_RESP3Parser)
    try:
        conn.connect()
        conn._parser.set_invalidation_push_handler(pushes.append)
        conn.send_command("CLIENT", "TRACKING", "on")
        assert conn.read_response() == "OK"
        conn.send_command("GET", "k")
        assert conn.read_response() is None
        r.set("k", "v")

        def ping_sees_push():
            conn.send_command("PING")
            assert conn.read_response() == "PONG"  # the push before it goes to the handler
            return pushes

        assert wait_until(ping_sees_push)
        assert pushes == [["invalidate", ["k"]]]
    finally:
        conn.disconnect()


# ---------------------------------------------------------------------------------------------
# replicas


def test_a_replicas_tracking_clients_hear_of_their_masters_writes(start_server, target):
    from resp import RawConn
    extra = [("repl-diskless-sync-delay", "0")] if target == "redis" else []
    master = start_server(extra, name="master")
    replica = start_server([("replicaof", "127.0.0.1 %d" % master.port)] + extra,
                           name="replica")
    m = master.client()
    rc = replica.client()
    assert wait_until(lambda: rc.info("replication").get("master_link_status") == "up",
                      timeout=30)
    m.set("k", "v0")
    assert wait_until(lambda: rc.get("k") == "v0", timeout=10)
    a = RawConn(replica.port)
    try:
        a.call("HELLO", "3")
        assert a.call("CLIENT", "TRACKING", "on") == OK
        assert a.call("GET", "k") == ("$", b"v0")
        m.set("k", "v1")
        assert a.read() == invalidate("k")
        assert a.call("GET", "k") == ("$", b"v1")
        m.flushall()
        assert a.read() == NULL_INVALIDATE
        # The master's expirer deletes the key; the replica applies the deletion.
        m.set("t", "x", px=300)
        assert wait_until(lambda: rc.exists("t"), timeout=10)
        assert a.call("GET", "t") == ("$", b"x")
        assert a.read() == invalidate("t")
    finally:
        a.close()


def test_clients_on_every_worker_get_each_invalidation_once(conns, server):
    """Tracking clients and writers spread over the workers: every tracked key written by
    concurrent writers reaches every reader exactly once."""
    import threading
    keys = ["key:%d" % i for i in range(40)]
    readers = [tracker(conns) for _ in range(6)]
    for c in readers:
        assert c.call("MGET", *keys)[0] == "*"

    def write(part):
        w = server.client()
        try:
            for _ in range(3):  # only the first write of each key is tracked
                for key in keys[part::4]:
                    w.set(key, "v")
        finally:
            w.close()

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in readers:
        got = []
        for _ in keys:
            push = c.read()
            assert push[0] == ">" and push[1][0] == ("$", b"invalidate")
            got.extend(k[1].decode() for k in push[1][1][1])
        assert sorted(got) == sorted(keys)
        assert_quiet(c)
