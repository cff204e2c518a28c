"""ACL users: ACL SETUSER rules and their descriptions, AUTH / HELLO AUTH as a user, NOPERM for
commands, subcommands and keys (with %R~ / %W~ access), MULTI/EXEC, ACL WHOAMI / LIST / USERS /
GETUSER / DELUSER / CAT / DRYRUN / GENPASS / LOG, the ACL file (aclfile, ACL SAVE / LOAD,
start-up) and the default user's link to requirepass. Every expectation was checked against
redis-server 7.0.15 (--target redis)."""
import hashlib
import os

import pytest
import redis

from helpers import exact, raises
from resp import RawConn, plain

WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
NOAUTH = "NOAUTH Authentication required."
NOPERM_KEY = "NOPERM this user has no permissions to access one of the keys used as arguments"
NOPERM_CHANNEL = ("NOPERM this user has no permissions to access one of the channels used as "
                  "arguments")
NO_ACLFILE = ("ERR This Redis instance is not configured to use an ACL file. You may want to "
              "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
              "(assuming you have a Redis configuration file set) in order to store users in "
              "the Redis configuration.")


def noperm_cmd(name):
    return "NOPERM this user has no permissions to run the '%s' command" % name


def sha(password):
    return hashlib.sha256(password.encode()).hexdigest()


@pytest.fixture
def admin(server, r):
    """A client of the default user; the users a test creates are deleted afterwards."""
    r.execute_command("ACL", "LOG", "RESET")
    yield r
    for name in r.execute_command("ACL", "USERS"):
        if name != "default":
            r.execute_command("ACL", "DELUSER", name)
    r.execute_command("ACL", "LOG", "RESET")


def user_client(server, name, password, **kw):
    return server.client(username=name, password=password, **kw)


def getuser(r, name):
    reply = r.execute_command("ACL", "GETUSER", name)
    return dict(zip(reply[::2], reply[1::2]))


# --------------------------------------------------------------------------
# SETUSER and the descriptions
# --------------------------------------------------------------------------
def test_new_user_is_off_without_permissions(admin):
    assert admin.execute_command("ACL", "SETUSER", "alice") == "OK"
    assert admin.execute_command("ACL", "LIST") == [
        "user alice off resetchannels -@all", "user default on nopass ~* &* +@all"]
    assert admin.execute_command("ACL", "USERS") == ["alice", "default"]


@pytest.mark.basalt_only(reason="Redis 7.2 describes command rules as given (carol's -flushall "
                                "+client|id stay); the oracle, 7.0.15, drops the ones implied")
def test_setuser_rules_and_descriptions(admin):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">p1", "~*", "+@read", "-get")
    admin.execute_command("ACL", "SETUSER", "carol", "on", "#" + sha("password"), "%R~r:*",
                          "%W~w:*", "%RW~rw:*", "~x*", "+config|get", "+@all", "-@dangerous",
                          "-flushall", "+client|id")
    admin.execute_command("ACL", "SETUSER", "dave", "+@read", "+@write", "-@all", "+get")
    admin.execute_command("ACL", "SETUSER", "erin", "allkeys", "&news.*", "allcommands",
                          "-@dangerous", "+config|get")
    assert admin.execute_command("ACL", "LIST") == [
        "user alice on #%s ~* resetchannels -@all +@read -get" % sha("p1"),
        "user carol on #%s %%R~r:* %%W~w:* ~rw:* ~x* resetchannels +@all -@dangerous -flushall "
        "+client|id" % sha("password"),
        "user dave off resetchannels -@all +get",
        "user default on nopass ~* &* +@all",
        "user erin off ~* resetchannels &news.* +@all -@dangerous +config|get",
    ]
    assert getuser(admin, "carol") == {
        "flags": ["on"], "passwords": [sha("password")], "commands": "+@all -@dangerous -flushall +client|id",
        "keys": "%R~r:* %W~w:* ~rw:* ~x*", "channels": "", "selectors": []}
    assert getuser(admin, "erin")["channels"] == "&news.*"
    assert admin.execute_command("ACL", "GETUSER", "nobody") is None


def test_password_rules(admin):
    admin.execute_command("ACL", "SETUSER", "u", "on", ">a", ">b", "#" + sha("c"), "+@all", "~*")
    assert getuser(admin, "u")["passwords"] == [sha("a"), sha("b"), sha("c")]
    admin.execute_command("ACL", "SETUSER", "u", "<a", "!" + sha("b"))
    assert getuser(admin, "u")["passwords"] == [sha("c")]
    admin.execute_command("ACL", "SETUSER", "u", "nopass")
    assert getuser(admin, "u")["flags"] == ["on", "nopass"]
    assert getuser(admin, "u")["passwords"] == []
    admin.execute_command("ACL", "SETUSER", "u", "resetpass")
    assert getuser(admin, "u")["flags"] == ["on"]
    # resetpass leaves no way in, not even an empty password
    with pytest.raises(redis.AuthenticationError, match=exact(WRONGPASS)):
        admin.execute_command("AUTH", "u", "")


def test_setuser_errors(admin):
    def err(text, *rules):
        raises(admin, "ERR Error in ACL SETUSER modifier '%s': %s" % (rules[-1], text),
               "ACL", "SETUSER", "h", *rules)

    err("Unknown command or category name in ACL", "+nosuch")
    err("Unknown command or category name in ACL", "+@nosuch")
    err("Unknown command or category name in ACL", "+config|nosuch")
    err("Syntax error", "bogus")
    err("Syntax error", "%X~a")
    err("Allowing first-arg of a subcommand is not supported", "+acl|whoami|x")
    err("The password hash must be exactly 64 characters and contain only lowercase "
        "hexadecimal characters", "#abc")
    err("The password you are trying to remove from the user does not exist", "<nope")
    err("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
        "not have any effect. Try 'resetkeys' to start with an empty list of patterns",
        "allkeys", "~a")
    err("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and "
        "does not have any effect. Try 'resetchannels' to start with an empty list of channels",
        "allchannels", "&a")
    raises(admin, "ERR Usernames can't contain spaces or null characters",
           "ACL", "SETUSER", "a b", "on")
    raises(admin, "ERR Unmatched parenthesis in acl selector starting at '(+get'.",
           "ACL", "SETUSER", "h", "on", "(+get", "~x")
    raises(admin, "ERR wrong number of arguments for 'acl|setuser' command", "ACL", "SETUSER")
    # none of the failed SETUSERs created the user
    assert admin.execute_command("ACL", "USERS") == ["default"]


def test_setuser_is_all_or_nothing(admin):
    admin.execute_command("ACL", "SETUSER", "u", "on", ">pw", "~k", "+get")
    with pytest.raises(redis.ResponseError):
        admin.execute_command("ACL", "SETUSER", "u", "+set", "~other", "+nosuch")
    assert admin.execute_command("ACL", "LIST")[1] == (
        "user u on #%s ~k resetchannels -@all +get" % sha("pw"))


def test_selectors(server, admin):
    admin.execute_command("ACL", "SETUSER", "sel", "on", "nopass", "+get", "~a*",
                          "(+set", "~b*)")
    assert getuser(admin, "sel")["selectors"] == [
        ["commands", "-@all +set", "keys", "~b*", "channels", ""]]
    u = user_client(server, "sel", "x")
    try:
        assert u.get("a1") is None
        assert u.set("b1", "v") is True
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.set("a1", "v")
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("del"))):
            u.delete("a1")
    finally:
        u.close()


# --------------------------------------------------------------------------
# AUTH, HELLO AUTH, WHOAMI
# --------------------------------------------------------------------------
def test_auth_as_a_user(server, admin):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@all")
    with RawConn(server.port) as c:
        assert c.call("ACL", "WHOAMI") == ("$", b"default")
        assert c.call("AUTH", "alice", "wrong") == ("-", WRONGPASS)
        assert c.call("AUTH", "nobody", "pw") == ("-", WRONGPASS)
        assert c.call("AUTH", "alice", "pw") == ("+", b"OK")
        assert c.call("ACL", "WHOAMI") == ("$", b"alice")
        assert b" user=alice " in c.call("CLIENT", "INFO")[1]
        # a failed AUTH keeps the current user
        assert c.call("AUTH", "alice", "wrong") == ("-", WRONGPASS)
        assert c.call("ACL", "WHOAMI") == ("$", b"alice")
        # RESET goes back to the default user
        assert c.call("RESET") == ("+", b"RESET")
        assert c.call("ACL", "WHOAMI") == ("$", b"default")


def test_disabled_user_cannot_log_in(server, admin):
    admin.execute_command("ACL", "SETUSER", "bob", "off", ">pw", "~*", "+@all")
    with RawConn(server.port) as c:
        assert c.call("AUTH", "bob", "pw") == ("-", WRONGPASS)
    admin.execute_command("ACL", "SETUSER", "bob", "on")
    with RawConn(server.port) as c:
        assert c.call("AUTH", "bob", "pw") == ("+", b"OK")
        # turning a user off does not log out its connections (as in Redis)
        admin.execute_command("ACL", "SETUSER", "bob", "off")
        assert c.call("PING") == ("+", b"PONG")


def test_hello_auth_as_a_user(server, admin):
    admin.execute_command("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@all")
    with RawConn(server.port) as c:
        assert c.call("HELLO", "3", "AUTH", "alice", "bad") == ("-", WRONGPASS)
        t, pairs = c.call("HELLO", "3", "AUTH", "alice", "pw")
        assert t == "%" and plain(pairs[2][1]) == 3
        assert c.call("ACL", "WHOAMI") == ("$", b"alice")


def test_redis_py_with_username(server, admin):
    admin.execute_command("ACL", "SETUSER", "app", "on", ">s3", "~app:*", "+@all")
    for protocol in (2, 3):
        u = user_client(server, "app", "s3", protocol=protocol)
        try:
            assert u.set("app:1", "v") is True
            assert u.execute_command("ACL", "WHOAMI") == "app"
        finally:
            u.close()
    bad = user_client(server, "app", "nope")
    with pytest.raises(redis.AuthenticationError, match=exact(WRONGPASS)):
        bad.ping()
    bad.close()


# --------------------------------------------------------------------------
# NOPERM: commands, subcommands, categories, keys
# --------------------------------------------------------------------------
def test_categories_and_single_commands(server, admin):
    admin.execute_command("ACL", "SETUSER", "ro", "on", ">pw", "~*", "+@read", "-@dangerous",
                          "+config|get", "-get")
    u = user_client(server, "ro", "pw")
    try:
        assert u.exists("k") == 0
        assert u.mget("a", "b") == [None, None]
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("get"))):
            u.get("k")
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("set"))):
            u.set("k", "v")
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("keys"))):
            u.keys("*")  # @read, but @dangerous too
        assert u.config_get("maxclients") != {}
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("config|set"))):
            u.config_set("maxclients", "100")
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("flushall"))):
            u.flushall()
    finally:
        u.close()
    assert admin.get("k") is None  # nothing was written


def test_all_and_no_commands(server, admin):
    admin.execute_command("ACL", "SETUSER", "u", "on", "nopass", "~*", "allcommands",
                          "-flushall")
    u = user_client(server, "u", "x")
    try:
        assert u.set("k", "v") is True
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("flushall"))):
            u.flushall()
        admin.execute_command("ACL", "SETUSER", "u", "nocommands", "+ping")
        assert u.ping() is True
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("get"))):
            u.get("k")
        # new rules apply to connections already logged in
        admin.execute_command("ACL", "SETUSER", "u", "+@all")
        assert u.get("k") == "v"
    finally:
        u.close()


def test_checks_come_after_command_lookup_and_arity(server, admin):
    admin.execute_command("ACL", "SETUSER", "u", "on", "nopass", "~*", "+ping")
    with RawConn(server.port) as c:
        assert c.call("AUTH", "u", "x") == ("+", b"OK")
        assert c.call("GET") == ("-", "ERR wrong number of arguments for 'get' command")
        assert c.call("NOSUCH")[0] == "-"
        assert c.call("GET", "k") == ("-", noperm_cmd("get"))
        assert c.call("ACL", "WHOAMI") == ("-", noperm_cmd("acl|whoami"))
        # AUTH, HELLO and QUIT need no permission
        assert c.call("AUTH", "u", "x") == ("+", b"OK")
        assert c.call("HELLO", "2")[0] == "*"
        assert c.call("QUIT") == ("+", b"OK")


def test_key_patterns(server, admin):
    admin.execute_command("ACL", "SETUSER", "k", "on", "nopass", "+@all", "~app:*", "~tmp")
    u = user_client(server, "k", "x")
    try:
        assert u.set("app:1", "v") is True
        assert u.mset({"app:2": "x", "tmp": "y"}) is True
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.get("other")
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.mset({"app:3": "x", "other": "y"})
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.rename("app:1", "other")
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.execute_command("ZUNIONSTORE", "app:d", 2, "app:1", "other")
        assert u.dbsize() >= 3  # commands without keys need no pattern
        admin.execute_command("ACL", "SETUSER", "k", "resetkeys", "~other")
        assert u.get("other") is None
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.get("app:1")
        admin.execute_command("ACL", "SETUSER", "k", "allkeys")
        assert u.get("app:1") == "v"
    finally:
        u.close()
    assert admin.get("other") is None
    assert admin.get("app:3") is None  # the refused MSET wrote nothing


def test_read_and_write_key_permissions(server, admin):
    admin.execute_command("ACL", "SETUSER", "rw", "on", "nopass", "+@all", "%R~r:*", "%W~w:*")
    admin.set("r:1", "10")
    u = user_client(server, "rw", "x")
    try:
        assert u.get("r:1") == "10"
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.set("r:1", "v")
        assert u.set("w:1", "5") is True
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.get("w:1")
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.incr("w:1")  # reads and writes
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.set("w:1", "v", get=True)
        assert u.exists("w:1", "r:1") == 2  # existence needs no read right
        assert u.copy("r:1", "w:2") is True
        with pytest.raises(redis.ResponseError, match=exact(NOPERM_KEY)):
            u.copy("w:1", "r:2")
    finally:
        u.close()
    assert admin.get("w:2") == "10"
    assert admin.get("r:1") == "10"


def test_channel_rules_are_kept(admin):
    admin.execute_command("ACL", "SETUSER", "p", "resetchannels", "&news.*", "&chat")
    assert getuser(admin, "p")["channels"] == "&news.* &chat"
    admin.execute_command("ACL", "SETUSER", "p", "allchannels")
    assert getuser(admin, "p")["channels"] == "&*"
    admin.execute_command("ACL", "SETUSER", "p", "resetchannels")
    assert admin.execute_command("ACL", "LIST")[1] == "user p off resetchannels -@all"


def test_channel_permissions(server, admin):
    admin.execute_command("ACL", "SETUSER", "p", "on", "nopass", "+@all", "~k*",
                          "resetchannels", "&news.*", "&alerts")
    with RawConn(server.port) as c:
        assert c.call("AUTH", "p", "x") == ("+", b"OK")
        assert c.call("PUBLISH", "news.sport", "m") == (":", 0)
        assert c.call("PUBLISH", "weather", "m") == ("-", NOPERM_CHANNEL)
        # shard channels are channels, not keys: ~k* does not apply to them
        assert c.call("SPUBLISH", "alerts", "m") == (":", 0)
        assert c.call("SPUBLISH", "other", "m") == ("-", NOPERM_CHANNEL)
        assert c.call("SUBSCRIBE", "news.a", "weather") == ("-", NOPERM_CHANNEL)
        # a pattern must be one of the user's patterns, literally
        assert c.call("PSUBSCRIBE", "news.s*") == ("-", NOPERM_CHANNEL)
        assert c.call("PSUBSCRIBE", "news.*")[0] == "*"
    log = [dict(zip(e[::2], e[1::2])) for e in admin.execute_command("ACL", "LOG")]
    assert [(e["reason"], e["object"]) for e in log][:2] == [
        ("channel", "news.s*"), ("channel", "weather")]


def test_revoking_a_channel_disconnects_its_subscribers(server, admin):
    admin.execute_command("ACL", "SETUSER", "s", "on", "nopass", "+@all", "resetchannels",
                          "&news.*", "&alerts")
    with RawConn(server.port) as sub_news, RawConn(server.port) as sub_alerts:
        for c, channel in ((sub_news, "news.sport"), (sub_alerts, "alerts")):
            assert c.call("AUTH", "s", "x") == ("+", b"OK")
            assert c.call("SUBSCRIBE", channel)[0] == "*"
        # adding channels revokes nothing
        admin.execute_command("ACL", "SETUSER", "s", "&more")
        assert not sub_news.is_closed(timeout=0.3)
        admin.execute_command("ACL", "SETUSER", "s", "resetchannels", "&alerts")
        assert sub_news.is_closed()
        assert admin.publish("alerts", "still here") == 1
        assert sub_alerts.read() == ("*", [("$", b"message"), ("$", b"alerts"),
                                           ("$", b"still here")])


# --------------------------------------------------------------------------
# MULTI / EXEC
# --------------------------------------------------------------------------
def test_denied_command_inside_multi_aborts_exec(server, admin):
    admin.execute_command("ACL", "SETUSER", "m", "on", "nopass", "~k*", "+@read", "+multi",
                          "+exec")
    with RawConn(server.port) as c:
        assert c.call("AUTH", "m", "x") == ("+", b"OK")
        assert c.call("MULTI") == ("+", b"OK")
        assert c.call("GET", "other") == ("-", NOPERM_KEY)
        assert c.call("SET", "k1", "v") == ("-", noperm_cmd("set"))
        assert c.call("GET", "k1") == ("+", b"QUEUED")
        assert c.call("EXEC") == (
            "-", "EXECABORT Transaction discarded because of previous errors.")


def test_rules_changed_between_multi_and_exec(server, admin):
    admin.execute_command("ACL", "SETUSER", "m", "on", "nopass", "~*", "+@all")
    admin.set("k1", "v")
    with RawConn(server.port) as c:
        assert c.call("AUTH", "m", "x") == ("+", b"OK")
        assert c.call("MULTI") == ("+", b"OK")
        assert c.call("GET", "k1") == ("+", b"QUEUED")
        assert c.call("SET", "k2", "v") == ("+", b"QUEUED")
        assert c.call("GET", "k1") == ("+", b"QUEUED")
        admin.execute_command("ACL", "SETUSER", "m", "-set", "resetkeys", "~k1")
        prefix = ("NOPERM ACLs rules changed between the moment the transaction was accumulated "
                  "and the EXEC call. This command is no longer allowed for the following "
                  "reason: ")
        assert c.call("EXEC") == ("*", [
            ("$", b"v"),
            ("-", prefix + "no permission to execute the command or subcommand"),
            ("$", b"v")])
    assert admin.get("k2") is None


# --------------------------------------------------------------------------
# Scripts run with the permissions of the user who called them
# --------------------------------------------------------------------------
def test_scripts_obey_the_callers_acl(server, admin):
    admin.execute_command("ACL", "SETUSER", "lu", "on", "nopass", "~k*", "+@all", "-set")
    u = user_client(server, "lu", "x")
    try:
        with pytest.raises(redis.ResponseError) as denied:
            u.eval("return redis.call('set', 'k', 'v')", 0)
        assert str(denied.value).startswith(
            "ERR The user executing the script can't run this command or subcommand script: ")
        assert u.eval("return redis.pcall('get', 'x')['err']", 0) == (
            "ERR The user executing the script can't access at least one of the keys mentioned "
            "in the command arguments")
        with pytest.raises(redis.ResponseError) as denied:
            u.eval("return redis.call('get', 'x')", 0)
        assert str(denied.value).startswith(
            "ERR The user executing the script can't access at least one of the keys mentioned "
            "in the command arguments script: ")
        assert u.eval("return redis.call('get', 'k1')", 0) is None
        assert u.eval("return redis.acl_check_cmd('get', 'k1')", 0) == 1
        assert u.eval("return redis.acl_check_cmd('get', 'x')", 0) is None
        assert u.eval("return redis.acl_check_cmd('set', 'k1', 'v')", 0) is None
    finally:
        u.close()
    # the default user's scripts may do anything
    assert admin.eval("return redis.call('set', 'x', 'v')", 0) == "OK"
    log = [dict(zip(e[::2], e[1::2])) for e in admin.execute_command("ACL", "LOG")]
    assert [(e["reason"], e["context"], e["object"], e["username"]) for e in log] == [
        ("key", "lua", "x", "lu"), ("command", "lua", "set", "lu")]
    assert log[0]["count"] == 2  # the call and the pcall


# --------------------------------------------------------------------------
# DELUSER, CAT, DRYRUN, GENPASS, LOG
# --------------------------------------------------------------------------
def test_deluser_disconnects_the_users_clients(server, admin):
    admin.execute_command("ACL", "SETUSER", "gone", "on", ">pw", "~*", "+@all")
    admin.execute_command("ACL", "SETUSER", "stays", "on", ">pw", "~*", "+@all")
    with RawConn(server.port) as c1, RawConn(server.port) as c2:
        assert c1.call("AUTH", "gone", "pw") == ("+", b"OK")
        assert c2.call("AUTH", "stays", "pw") == ("+", b"OK")
        assert admin.execute_command("ACL", "DELUSER", "gone", "nosuch") == 1
        assert c1.is_closed()
        assert c2.call("PING") == ("+", b"PONG")
    raises(admin, "ERR The 'default' user cannot be removed", "ACL", "DELUSER", "stays",
           "default")
    assert "stays" in admin.execute_command("ACL", "USERS")


def test_acl_cat(admin):
    assert admin.execute_command("ACL", "CAT") == [
        "keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
        "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
        "dangerous", "connection", "transaction", "scripting"]
    read = admin.execute_command("ACL", "CAT", "read")
    assert {"get", "mget", "hgetall", "zrange", "object|encoding"} <= set(read)
    assert "set" not in read and "object|help" not in read
    dangerous = admin.execute_command("ACL", "CAT", "DANGEROUS")
    assert {"flushall", "keys", "config|set", "client|kill", "acl|setuser"} <= set(dangerous)
    assert "config|help" not in dangerous and "acl|whoami" not in dangerous
    raises(admin, "ERR Unknown category 'bogus'", "ACL", "CAT", "bogus")


def test_acl_dryrun(admin):
    admin.execute_command("ACL", "SETUSER", "d", "%R~r:*", "+get", "+config|get")
    assert admin.execute_command("ACL", "DRYRUN", "d", "get", "r:1") == "OK"
    assert admin.execute_command("ACL", "DRYRUN", "d", "set", "r:1", "v") == (
        "This user has no permissions to run the 'set' command")
    assert admin.execute_command("ACL", "DRYRUN", "d", "get", "w:1") == (
        "This user has no permissions to access the 'w:1' key")
    assert admin.execute_command("ACL", "DRYRUN", "d", "config", "set", "a", "b") == (
        "This user has no permissions to run the 'config|set' command")
    raises(admin, "ERR User 'nobody' not found", "ACL", "DRYRUN", "nobody", "get", "k")
    raises(admin, "ERR Command 'nosuch' not found", "ACL", "DRYRUN", "d", "nosuch")
    raises(admin, "ERR wrong number of arguments for 'set' command", "ACL", "DRYRUN", "d", "set")


def test_acl_genpass(admin):
    p = admin.execute_command("ACL", "GENPASS")
    assert len(p) == 64 and int(p, 16) >= 0
    assert p != admin.execute_command("ACL", "GENPASS")
    assert len(admin.execute_command("ACL", "GENPASS", 5)) == 2
    assert len(admin.execute_command("ACL", "GENPASS", 4096)) == 1024
    text = ("ERR ACL GENPASS argument must be the number of bits for the output password, a "
            "positive number up to 4096")
    raises(admin, text, "ACL", "GENPASS", 0)
    raises(admin, text, "ACL", "GENPASS", 4097)
    raises(admin, "ERR value is not an integer or out of range", "ACL", "GENPASS", "x")


def test_acl_log(server, admin):
    admin.execute_command("ACL", "SETUSER", "l", "on", ">pw", "~k*", "+get", "+multi")
    with RawConn(server.port) as c:
        assert c.call("AUTH", "l", "bad") == ("-", WRONGPASS)
        assert c.call("AUTH", "l", "pw") == ("+", b"OK")
        assert c.call("SET", "k", "v") == ("-", noperm_cmd("set"))
        assert c.call("SET", "k", "v") == ("-", noperm_cmd("set"))
        assert c.call("GET", "other") == ("-", NOPERM_KEY)
        assert c.call("MULTI") == ("+", b"OK")
        assert c.call("CLIENT", "ID") == ("-", noperm_cmd("client|id"))
    log = [dict(zip(e[::2], e[1::2])) for e in admin.execute_command("ACL", "LOG")]
    summary = [(e["count"], e["reason"], e["context"], e["object"], e["username"]) for e in log]
    assert summary == [
        (1, "command", "multi", "client|id", "l"),
        (1, "key", "toplevel", "other", "l"),
        (2, "command", "toplevel", "set", "l"),
        (1, "auth", "toplevel", "AUTH", "l"),
    ]
    assert "cmd=" in log[0]["client-info"] and float(log[0]["age-seconds"]) >= 0
    assert len(admin.execute_command("ACL", "LOG", 2)) == 2
    assert admin.execute_command("ACL", "LOG", "RESET") == "OK"
    assert admin.execute_command("ACL", "LOG") == []


# --------------------------------------------------------------------------
# The default user and requirepass
# --------------------------------------------------------------------------
def test_default_user_follows_requirepass(start_server):
    s = start_server(args=[("requirepass", "first")])
    with RawConn(s.port) as c:
        assert c.call("AUTH", "first") == ("+", b"OK")
        assert c.call("ACL", "LIST") == ("*", [
            ("$", b"user default on #%s ~* &* +@all" % sha("first").encode())])
        assert c.call("CONFIG", "SET", "requirepass", "second") == ("+", b"OK")
        assert plain(c.call("ACL", "GETUSER", "default"))[3] == [sha("second").encode()]
    with RawConn(s.port) as c:
        assert c.call("PING") == ("-", NOAUTH)
        assert c.call("AUTH", "first") == ("-", WRONGPASS)
        assert c.call("AUTH", "default", "second") == ("+", b"OK")
        # the default user is an ACL user like any other
        assert c.call("ACL", "SETUSER", "default", ">third") == ("+", b"OK")
        assert c.call("CONFIG", "SET", "requirepass", "") == ("+", b"OK")
        assert c.call("ACL", "LIST") == ("*", [("$", b"user default on nopass ~* &* +@all")])
    with RawConn(s.port) as c:
        assert c.call("PING") == ("+", b"PONG")  # no password needed any more


def test_dropping_the_password_lifts_the_unauthenticated_limits(start_server):
    s = start_server(args=[("requirepass", "pw")])
    with RawConn(s.port) as waiting, RawConn(s.port) as admin:
        assert waiting.call("PING") == ("-", NOAUTH)
        assert admin.call("AUTH", "pw") == ("+", b"OK")
        assert admin.call("CONFIG", "SET", "requirepass", "") == ("+", b"OK")
        # no password needed any more: neither NOAUTH nor the 10-argument limit of
        # unauthenticated clients applies to the connection that never logged in
        pairs = [x for i in range(10) for x in ("k%d" % i, "v")]
        assert waiting.call("MSET", *pairs) == ("+", b"OK")
        assert waiting.call("ACL", "WHOAMI") == ("$", b"default")


def test_disabled_default_user_requires_auth(start_server):
    s = start_server()
    with RawConn(s.port) as c:
        assert c.call("ACL", "SETUSER", "admin", "on", ">pw", "~*", "&*", "+@all") == (
            "+", b"OK")
        assert c.call("ACL", "SETUSER", "default", "off") == ("+", b"OK")
        assert c.call("PING") == ("+", b"PONG")  # already logged in
    with RawConn(s.port) as c:
        assert c.call("PING") == ("-", NOAUTH)
        assert c.call("AUTH", "default", "") == ("-", WRONGPASS)
        assert c.call("AUTH", "admin", "pw") == ("+", b"OK")
        assert c.call("PING") == ("+", b"PONG")


def test_client_kill_user(server, admin):
    admin.execute_command("ACL", "SETUSER", "victim", "on", ">pw", "~*", "+@all")
    with RawConn(server.port) as c:
        assert c.call("AUTH", "victim", "pw") == ("+", b"OK")
        assert admin.execute_command("CLIENT", "KILL", "USER", "victim") == 1
        assert c.is_closed()
    raises(admin, "ERR No such user 'nobody'", "CLIENT", "KILL", "USER", "nobody")


# --------------------------------------------------------------------------
# The ACL file
# --------------------------------------------------------------------------
def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


def test_acl_save_and_load_without_a_file(admin):
    raises(admin, NO_ACLFILE, "ACL", "SAVE")
    raises(admin, NO_ACLFILE, "ACL", "LOAD")


def test_aclfile_loaded_at_startup_and_saved(start_server, tmp_path):
    path = str(tmp_path / "users.acl")
    write(path, "user default on nopass ~* &* +@all\n"
                "user alice on #%s ~app:* resetchannels -@all +@read\n" % sha("pw"))
    s = start_server(args=[("aclfile", path)])
    admin = s.client()
    try:
        assert admin.execute_command("ACL", "USERS") == ["alice", "default"]
        alice = s.client(username="alice", password="pw")
        assert alice.get("app:1") is None
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("set"))):
            alice.set("app:1", "v")
        alice.close()
        admin.execute_command("ACL", "SETUSER", "bob", "on", ">b", "%W~w:*", "+set")
        admin.execute_command("ACL", "DELUSER", "alice")
        assert admin.execute_command("ACL", "SAVE") == "OK"
        assert read(path) == ("user bob on #%s %%W~w:* resetchannels -@all +set\n"
                              "user default on nopass ~* &* +@all\n" % sha("b"))
    finally:
        admin.close()
    # the saved users are there after a restart
    s.restart()
    bob = s.client(username="bob", password="b")
    try:
        assert bob.set("w:1", "v") is True
        with pytest.raises(redis.ResponseError, match=exact(noperm_cmd("get"))):
            bob.get("w:1")
    finally:
        bob.close()
    admin = s.client()
    try:
        assert admin.execute_command("ACL", "USERS") == ["bob", "default"]
    finally:
        admin.close()


def test_acl_load_replaces_users_and_logs_out_theirs(start_server, tmp_path):
    path = str(tmp_path / "users.acl")
    write(path, "user bob on >pw ~* +@all\n")
    s = start_server(args=[("aclfile", path)])
    with RawConn(s.port) as admin, RawConn(s.port) as bob:
        assert bob.call("AUTH", "bob", "pw") == ("+", b"OK")
        write(path, "user default on nopass ~* &* +@all\nuser carl on >c ~* +@all\n")
        assert admin.call("ACL", "LOAD") == ("+", b"OK")
        assert admin.call("ACL", "USERS") == ("*", [("$", b"carl"), ("$", b"default")])
        assert bob.is_closed()  # its user object was replaced, as in Redis
        assert admin.call("PING") == ("+", b"PONG")  # default's clients stay


def test_acl_load_errors_change_nothing(start_server, tmp_path):
    path = str(tmp_path / "users.acl")
    write(path, "user default on nopass ~* &* +@all\nuser bob on >pw ~* +@all\n")
    s = start_server(args=[("aclfile", path)])
    admin = s.client()
    try:
        write(path, "user default on nopass ~* &* +@all\n"
                    "bad line\n"
                    "user zed on +nosuch\n"
                    "user zed off\n"
                    "user pw on #123\n")
        expected = ("ERR {p}:2 should start with user keyword followed by the username. "
                    "{p}:3: Error in applying operation '+nosuch': Unknown command or category "
                    "name in ACL. WARNING: Duplicate user 'zed' found on line 4. "
                    "{p}:5: The password hash must be exactly 64 characters and contain only "
                    "lowercase hexadecimal characters. WARNING: ACL errors detected, no change "
                    "to the previously active ACL rules was performed").format(p=path)
        raises(admin, expected, "ACL", "LOAD")
        assert admin.execute_command("ACL", "USERS") == ["bob", "default"]
    finally:
        admin.close()


@pytest.mark.basalt_only  # redis-server 7.0.15 crashes on this file
def test_acl_load_reports_an_unmatched_selector_parenthesis(start_server, tmp_path):
    path = str(tmp_path / "users.acl")
    write(path, "user bob on >pw ~* +@all\n")
    s = start_server(args=[("aclfile", path)])
    admin = s.client()
    try:
        write(path, "user sel on (+get ~x\n")
        raises(admin, "ERR %s:1: Unmatched parenthesis in selector definition.WARNING: ACL errors "
               "detected, no change to the previously active ACL rules was performed" % path,
               "ACL", "LOAD")
        assert admin.execute_command("ACL", "USERS") == ["bob", "default"]
    finally:
        admin.close()


def test_bad_aclfile_stops_startup(target, tmp_path):
    from conftest import ServerProcess
    path = str(tmp_path / "users.acl")
    write(path, "user alice on +nosuch\n")
    s = ServerProcess(target, args=[("aclfile", path)], name="badacl")
    try:
        with pytest.raises(RuntimeError, match="exited with code 1"):
            s.start(retries=0)
        assert "Unknown command or category name in ACL" in s.log_tail()
    finally:
        s.cleanup()
