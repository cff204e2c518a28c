"""RDB export and backups: SAVE and BGSAVE write dir/dbfilename as an RDB file that a real
redis-server loads with every key of every database, its expiry and the function libraries;
redis-cli --rdb and PSYNC get the same file; LASTSAVE and INFO persistence follow the saves;
writes during BGSAVE do not show in the file (one snapshot); BACKUP makes a directory a
server starts on."""
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest

from conftest import ServerProcess
from helpers import raises, wait_until

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"

LIBRARY = ("#!lua name=exportlib\n"
           "redis.register_function('export_one', function(keys, args) return 1 end)")

DATABASES = (0, 1, 5, 15)


def populate(c):
    """Every type Basalt serializes, in several databases, with and without expiries, and a
    function library. Returns the connection pool's client for db 0."""
    c.function_load(LIBRARY, replace=True)
    for db in DATABASES:
        c.execute_command("SELECT", db)
        p = "db%d:" % db
        c.set(p + "str", "hello %d" % db)
        c.set(p + "int", 12345 + db)
        c.set(p + "binary", "".join(chr(i) for i in range(300)) * 3)  # NUL, UTF-8
        c.set(p + "big", "x" * 100000)
        c.rpush(p + "list", "a", "b", "", "c" * 300, *["e%d" % i for i in range(500)])
        c.sadd(p + "set", "x", "y", "17", *["m%d" % i for i in range(300)])
        c.sadd(p + "intset", 1, -2, 70000, 2**62)
        c.hset(p + "hash", mapping={"f%d" % i: "v%d" % i for i in range(200)})
        c.hset(p + "hash", "empty", "")
        c.zadd(p + "zset", {"a": 1, "b": -2.5, "c": 1.0 / 3, "inf": float("inf"),
                            "ninf": float("-inf")})
        c.zadd(p + "bigzset", {"z%d" % i: i * 0.25 for i in range(400)})
        c.set(p + "ttl-str", "expiring", px=3_600_000)
        c.rpush(p + "ttl-list", "a", "b")
        c.pexpire(p + "ttl-list", 7_200_000)
        c.set(p + "gone", "soon", px=1)
    c.execute_command("SELECT", 0)
    time.sleep(0.01)  # the `gone` keys expire: they must not be in the file


def snapshot_of(c, db):
    """Every key of `db` with its type, value and expiry (ms, rounded to minutes)."""
    c.execute_command("SELECT", db)
    out = {}
    for key in c.keys("*"):
        t = c.type(key)
        if t == "string":
            v = c.get(key)
        elif t == "list":
            v = c.lrange(key, 0, -1)
        elif t == "set":
            v = sorted(c.smembers(key))
        elif t == "hash":
            v = sorted(c.hgetall(key).items())
        elif t == "zset":
            v = c.zrange(key, 0, -1, withscores=True)
        else:
            v = None
        pttl = c.pttl(key)
        out[key] = (t, v, -1 if pttl < 0 else round(pttl / 60000))
    c.execute_command("SELECT", 0)
    return out


def everything(c):
    data = {db: snapshot_of(c, db) for db in range(16)}
    libraries = []
    for lib in c.function_list(withcode=True):
        fields = dict(zip(lib[::2], lib[1::2]))
        libraries.append((fields["library_name"], fields["library_code"]))
    return data, libraries


def load_in_redis(path, name="load"):
    """A real redis-server started on a copy of the RDB file at `path`."""
    s = ServerProcess("redis", name=name)
    shutil.copy(path, os.path.join(s.dir, "dump.rdb"))
    return s.start()


@pytest.fixture
def loaders():
    started = []

    def load(path):
        s = load_in_redis(path)
        started.append(s)
        return s

    yield load
    for s in started:
        s.cleanup()


def assert_same_data(src, loaded):
    expected = everything(src)
    got = everything(loaded)
    assert got[1] == expected[1]
    for db in range(16):
        assert got[0][db] == expected[0][db], "db %d differs" % db
    assert any(expected[0][db] for db in range(16))


def dump_path(server, c):
    return os.path.join(server.dir, c.config_get("dbfilename")["dbfilename"])


def test_save_writes_a_file_redis_loads(start_server, loaders):
    s = start_server()
    c = s.client()
    populate(c)
    assert s.client(callbacks=False).execute_command("SAVE") == "OK"
    loaded = loaders(dump_path(s, c))
    lc = loaded.client()
    assert_same_data(c, lc)
    for db in DATABASES:
        lc.execute_command("SELECT", db)
        assert lc.exists("db%d:gone" % db) == 0
        assert lc.dbsize() == 12
    assert lc.fcall("export_one", 0) == 1


def test_bgsave_lastsave_and_info_persistence(start_server, loaders):
    s = start_server()
    c = s.client()
    populate(c)
    before = c.info("persistence")
    lastsave = c.lastsave()
    time.sleep(1.1)  # LASTSAVE has a resolution of one second
    assert s.client(callbacks=False).execute_command("BGSAVE") == "Background saving started"
    assert wait_until(lambda: c.info("persistence")
                      ["rdb_bgsave_in_progress"] == 0, timeout=30)
    after = c.info("persistence")
    assert after["rdb_last_bgsave_status"] == "ok"
    assert after["rdb_saves"] == before["rdb_saves"] + 1
    assert after["rdb_last_bgsave_time_sec"] >= 0
    assert after["rdb_current_bgsave_time_sec"] == -1
    assert c.lastsave() > lastsave
    assert after["rdb_last_save_time"] == int(c.lastsave().timestamp())
    loaded = loaders(dump_path(s, c))
    assert_same_data(c, loaded.client())


def test_bgsave_inside_multi_is_scheduled_and_holds_the_transaction(start_server, loaders):
    s = start_server()
    c = s.client()
    c.set("before", "1")
    p = s.client(callbacks=False).pipeline(transaction=True)
    p.set("in-tx", "1")
    p.execute_command("BGSAVE")
    p.set("after-bgsave-in-tx", "2")
    assert p.execute()[1] == "Background saving scheduled"
    # Redis starts a scheduled save from its cron (within ~100 ms); wait for the file.
    path = dump_path(s, c)
    assert wait_until(lambda: os.path.exists(path), timeout=10)
    assert wait_until(lambda: c.info("persistence")
                      ["rdb_bgsave_in_progress"] == 0, timeout=30)
    lc = loaders(path).client()
    assert sorted(lc.keys("*")) == ["after-bgsave-in-tx", "before", "in-tx"]


def test_bgsave_syntax_and_save_errors(start_server):
    s = start_server()
    c = s.client()
    raises(c, "ERR syntax error", "BGSAVE", "NOW")
    raises(c, "ERR syntax error", "BGSAVE", "SCHEDULE", "X")


def test_dbfilename_names_the_file_and_is_no_path(start_server, loaders):
    s = start_server(args={"enable-protected-configs": "yes"})
    c = s.client()
    c.set("k", "v")
    raises(c, "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - "
              "dbfilename can't be a path, just a filename",
           "CONFIG", "SET", "dbfilename", "../x.rdb")
    assert c.config_set("dbfilename", "other.rdb")
    c.execute_command("SAVE")
    path = os.path.join(s.dir, "other.rdb")
    assert os.path.exists(path)
    assert loaders(path).client().get("k") == "v"


def counters_move_in_step(c, stop, rounds):
    """Keeps moving two keys that sort far apart in one transaction, so any file not taken at
    one moment would hold them unequal."""
    p = c.pipeline(transaction=True)
    while not stop.is_set():
        p.incr("aaa-first")
        p.incr("zzz-last")
        p.lpush("list-grows", "x")
        p.sadd("set-grows", rounds[0])
        p.execute()
        rounds[0] += 1


def test_writes_during_bgsave_do_not_break_the_file(start_server, loaders):
    s = start_server()
    c = s.client()
    c.set("aaa-first", 0)
    c.set("zzz-last", 0)
    pipe = c.pipeline(transaction=False)
    for i in range(60000):
        pipe.set("pad:%06d" % i, "v" * 50)
        if i % 5000 == 4999:
            pipe.execute()
    pipe.execute()
    stop = threading.Event()
    rounds = [0]
    writer_client = s.client()
    writer = threading.Thread(target=counters_move_in_step, args=(writer_client, stop, rounds))
    writer.start()
    try:
        time.sleep(0.2)
        started = rounds[0]
        assert c.bgsave()
        assert wait_until(lambda: c.info("persistence")
                          ["rdb_bgsave_in_progress"] == 0, timeout=60)
        time.sleep(0.2)
    finally:
        stop.set()
        writer.join()
        writer_client.close()
    assert rounds[0] > started  # writes went on meanwhile
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    lc = loaders(dump_path(s, c)).client()
    first, last = lc.get("aaa-first"), lc.get("zzz-last")
    assert first == last and int(first) > 0
    assert lc.llen("list-grows") == int(first)
    assert lc.scard("set-grows") == int(first)
    assert lc.dbsize() == 60004
    assert int(first) < int(c.get("aaa-first"))  # the file is of a moment before the end


def test_redis_cli_rdb_downloads_a_file_redis_loads(start_server, loaders, tmp_path):
    s = start_server()
    c = s.client()
    populate(c)
    out = tmp_path / "cli.rdb"
    done = subprocess.run([REDIS_CLI, "-p", str(s.port), "--rdb", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "Transfer finished with success" in done.stderr + done.stdout
    assert_same_data(c, loaders(str(out)).client())
    assert c.ping()  # the server goes on serving


def read_line(sock, buf):
    while b"\r\n" not in buf:
        chunk = sock.recv(4096)
        assert chunk, "connection closed"
        buf += chunk
    line, _, rest = buf.partition(b"\r\n")
    return line, rest


def read_command(sock, buf):
    """One command (a RESP array of bulk strings) of a replication stream; newline
    keep-alives are skipped."""
    line, buf = read_line(sock, buf.lstrip(b"\n"))
    while not line:
        line, buf = read_line(sock, buf.lstrip(b"\n"))
    assert line.startswith(b"*"), line
    args = []
    for _ in range(int(line[1:])):
        line, buf = read_line(sock, buf)
        assert line.startswith(b"$"), line
        n = int(line[1:])
        while len(buf) < n + 2:
            chunk = sock.recv(65536)
            assert chunk, "connection closed"
            buf += chunk
        args.append(buf[:n])
        buf = buf[n + 2:]
    return args, buf


def test_psync_gets_a_full_resync_and_the_link_stays_open(start_server, tmp_path, loaders):
    s = start_server()
    c = s.client()
    c.set("k", "v")
    c.rpush("l", "a", "b")
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    try:
        sock.sendall(b"*3\r\n$8\r\nREPLCONF\r\n$14\r\nlistening-port\r\n$4\r\n7299\r\n")
        line, buf = read_line(sock, b"")
        assert line == b"+OK"
        sock.sendall(b"*3\r\n$5\r\nPSYNC\r\n$1\r\n?\r\n$2\r\n-1\r\n")
        line, buf = read_line(sock, buf)
        words = line.split()
        assert words[0] == b"+FULLRESYNC"
        assert len(words[1]) == 40 and all(ch in b"0123456789abcdef" for ch in words[1])
        assert int(words[2]) >= 0
        buf = buf.lstrip(b"\n")  # keep-alives while the file is made
        while not buf.startswith(b"$"):
            buf += sock.recv(4096)
            buf = buf.lstrip(b"\n")
        line, buf = read_line(sock, buf)
        size = int(line[1:])
        while len(buf) < size:
            chunk = sock.recv(65536)
            assert chunk
            buf += chunk
        rdb, buf = buf[:size], buf[size:]  # the file, then the stream (no CRLF between)
        assert rdb.startswith(b"REDIS00")
        path = tmp_path / "psync.rdb"
        path.write_bytes(rdb)
        lc = loaders(str(path)).client()
        assert lc.get("k") == "v" and lc.lrange("l", 0, -1) == ["a", "b"]
        # The link stays open, other clients are served meanwhile, and their writes follow
        # the file as commands (test_replica_stream.py pins the stream itself).
        assert c.set("k2", "v2")
        commands = []
        while len(commands) < 2:
            command, buf = read_command(sock, buf)
            if command != [b"PING"]:  # keep-alives, whatever their period
                commands.append(command)
        assert [commands[0][0].upper(), commands[0][1]] == [b"SELECT", b"0"]
        assert [commands[1][0].upper()] + commands[1][1:] == [b"SET", b"k2", b"v2"]
    finally:
        sock.close()
    assert c.ping()


def test_replconf_rejects_unknown_options(start_server):
    s = start_server()
    c = s.client()
    raises(c, "ERR Unrecognized REPLCONF option: nosuch", "REPLCONF", "nosuch", "1")
    raises(c, "ERR syntax error", "REPLCONF", "listening-port")
    assert c.execute_command("REPLCONF", "listening-port", "6380", "capa", "eof") in ("OK", True)


@pytest.mark.basalt_only
def test_backup_makes_a_directory_a_server_starts_on(start_server, tmp_path):
    s = start_server()
    c = s.client()
    populate(c)
    expected = everything(c)
    backup = tmp_path / "backup"
    assert c.execute_command("BACKUP", str(backup)) in ("OK", True)
    raises(c, "ERR backup directory '%s' already exists" % backup, "BACKUP", str(backup))
    info = c.info("persistence")
    assert info["backups"] == 1 and info["backup_last_status"] == "ok"
    assert info["backup_last_time"] >= int(time.time()) - 60
    c.set("after-backup", "1")  # not in the backup
    b = start_server(args={"dir": str(backup)}, name="from-backup")
    bc = b.client()
    assert bc.exists("after-backup") == 0
    got = everything(bc)
    assert got[1] == expected[1]
    for db in range(16):
        assert got[0][db] == expected[0][db], "db %d differs" % db
    assert bc.fcall("export_one", 0) == 1


def test_a_stream_with_its_groups_is_saved(start_server, loaders):
    s = start_server()
    c = s.client()
    c.set("plain", "1")
    c.xadd("stream", {"f": "v"}, id="1-1")
    c.xadd("stream", {"f": "w"}, id="2-1")
    c.xgroup_create("stream", "g", id="0")
    c.xreadgroup("g", "alice", {"stream": ">"}, count=1)
    c.execute_command("SAVE")
    lc = loaders(dump_path(s, c)).client()
    assert lc.get("plain") == "1"
    assert lc.xrange("stream") == [("1-1", {"f": "v"}), ("2-1", {"f": "w"})]
    groups = lc.xinfo_groups("stream")
    assert [(g["name"], g["pending"], g["last-delivered-id"]) for g in groups] == [("g", 1, "1-1")]
    assert lc.xpending("stream", "g")["consumers"] == [{"name": "alice", "pending": 1}]


def test_flushall_with_save_points_saves_the_empty_data_set(start_server, loaders):
    # Redis saves after FLUSHALL when save points are configured, so a restart from the file
    # does not bring the flushed keys back; without save points the file stays as it was.
    s = start_server(args=[("save", "3600 1")])
    c = s.client()
    c.mset({"a": "1", "b": "2"})
    assert c.save()
    path = dump_path(s, c)
    c.set("c", "3")
    assert c.flushall()
    assert c.info("persistence")["rdb_changes_since_last_save"] == 0
    assert loaders(path).client().dbsize() == 0
    c.config_set("save", "")
    c.mset({"a": "1", "b": "2"})
    assert c.save()
    c.flushall()
    assert loaders(path).client().dbsize() == 2


def test_flushall_keeps_a_running_background_save_from_replacing_its_file(start_server,
                                                                          loaders):
    s = start_server(args=[("save", "3600 1")])
    c = s.client()
    for batch in range(200):
        c.mset({"key:%d:%d" % (batch, i): "v" * 20 for i in range(1000)})
    rr = s.client(callbacks=False)
    assert rr.execute_command("BGSAVE") == "Background saving started"
    time.sleep(0.05)  # the save has its snapshot (a Redis child has forked) and writes on
    p = rr.pipeline(transaction=False)
    p.execute_command("INFO", "persistence")
    p.execute_command("FLUSHALL")
    info, flushed = p.execute()
    assert "rdb_bgsave_in_progress:1" in info  # or this test could not fail
    assert flushed == "OK"
    assert wait_until(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=60)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert loaders(dump_path(s, c)).client().dbsize() == 0


def test_one_background_save_at_a_time(start_server, loaders):
    s = start_server()
    c = s.client()
    for batch in range(200):
        c.mset({"key:%d:%d" % (batch, i): "v" * 20 for i in range(1000)})
    rr = s.client(callbacks=False)
    p = rr.pipeline(transaction=False)
    p.execute_command("BGSAVE")
    p.execute_command("BGSAVE")
    p.execute_command("BGSAVE", "SCHEDULE")
    p.execute_command("SAVE")
    p.execute_command("INFO", "persistence")
    first, second, scheduled, save, info = p.execute(raise_on_error=False)
    assert first == "Background saving started"
    assert str(second) == "ERR Background save already in progress"
    assert str(scheduled) == "ERR Background save already in progress"
    assert str(save) == "ERR Background save already in progress"
    assert "rdb_bgsave_in_progress:1" in info
    assert "rdb_current_bgsave_time_sec:0" in info
    assert wait_until(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=60)
    assert loaders(dump_path(s, c)).client().dbsize() == 200000
