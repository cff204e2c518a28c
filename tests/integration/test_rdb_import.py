"""Importing Redis RDB files: a real redis-server fills every type in several databases (with
expiries and a function library) and SAVEs; Basalt loads its dump.rdb with IMPORT RDB and with
`basalt-server --import`, and every key, TTL and function compares equal. Corrupt and
truncated files are refused with an error and leave the keyspace empty."""
import os
import shutil
import struct
import subprocess

import pytest
import redis

from conftest import ServerProcess, basalt_binary
from helpers import wait_until
from rdbgen import crc64, rdb_length, rdb_string
from test_dump_restore import KINDS, fill, read_value

pytestmark = pytest.mark.basalt_only

LIBRARY = "#!lua name=importlib\nredis.register_function('imported', function() return 42 end)"
DBS = (0, 1, 3)


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    """A dump.rdb written by redis-server, and what each database held: {db: {key: (value,
    expire time)}}."""
    src = ServerProcess("redis", name="rdbsrc")
    src.start()
    try:
        expected = {}
        for db in DBS:
            c = src.client(decode_responses=False, db=db)
            for i, kind in enumerate(KINDS):
                fill(c, kind, "db%d:%s" % (db, kind))
                if i % 3 == 0:  # some keys expire, far in the future
                    c.pexpireat("db%d:%s" % (db, kind), 4102444800000 + i)
            c.set("db%d:counter" % db, 12345)
            expected[db] = {k: (read_value(c, k), c.pexpiretime(k)) for k in c.keys("*")}
            c.close()
        c = src.client(decode_responses=False)
        c.function_load(LIBRARY)
        c.save()
        c.close()
        path = tmp_path_factory.mktemp("rdb") / "dump.rdb"
        shutil.copy(os.path.join(src.dir, "dump.rdb"), path)
    finally:
        src.cleanup()
    return str(path), expected


def contents(server):
    out = {}
    for db in range(16):
        c = server.client(decode_responses=False, db=db)
        keys = c.keys("*")
        if keys:
            out[db] = {k: (read_value(c, k), c.pexpiretime(k)) for k in keys}
        assert c.dbsize() == len(keys)
        c.close()
    return out


def assert_imported(server, expected):
    assert contents(server) == expected
    c = server.client()
    assert c.fcall("imported", 0) == 42
    c.close()


def assert_empty(server):
    c = server.client()
    assert all(c.execute_command("SELECT", db) and c.dbsize() == 0 for db in range(16))
    assert c.function_list() == []
    c.close()


@pytest.fixture
def r(server):
    c = server.client(decode_responses=False)
    c.flushall()
    c.function_flush()
    yield c
    c.close()


def test_import_command_loads_every_key(server, r, dump):
    path, expected = dump
    reply = r.execute_command("IMPORT", "RDB", path)
    stats = dict(zip(reply[::2], reply[1::2]))
    assert stats[b"keys"] == sum(len(keys) for keys in expected.values())
    assert stats[b"functions"] == 1
    assert stats[b"bytes"] == os.path.getsize(path)
    assert_imported(server, expected)


def test_import_needs_an_empty_keyspace(server, r, dump):
    r.set("mine", "1")
    with pytest.raises(Exception, match="needs an empty keyspace"):
        r.execute_command("IMPORT", "RDB", dump[0])
    assert r.keys("*") == [b"mine"]


def corruptions(data):
    """(name, bytes) of files that must be refused."""
    yield "bad signature", b"RODIS" + data[5:]
    yield "version 8", data[:5] + b"0008" + data[9:]
    yield "version 12", data[:5] + b"0012" + data[9:]
    for cut in (9, 30, len(data) // 3, len(data) // 2, len(data) - 9, len(data) - 1):
        yield "truncated at %d" % cut, data[:cut]
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x01
    yield "one bit flipped", bytes(flipped)
    yield "garbage after header", data[:9] + b"\x42" * 200


def test_corrupt_files_are_refused_and_leave_nothing(server, r, dump, tmp_path):
    with open(dump[0], "rb") as f:
        data = f.read()
    for name, bad in corruptions(data):
        path = tmp_path / "bad.rdb"
        path.write_bytes(bad)
        with pytest.raises(Exception, match="Bad RDB file|error reading") as err:
            r.execute_command("IMPORT", "RDB", str(path))
        assert "offset" in str(err.value) or "signature" in str(err.value) or \
            "version" in str(err.value), name
        assert_empty(server)
    with pytest.raises(Exception, match="can't open RDB file"):
        r.execute_command("IMPORT", "RDB", str(tmp_path / "missing.rdb"))
    # The server is none the worse: the good file still loads whole.
    r.execute_command("IMPORT", "RDB", dump[0])
    assert_imported(server, dump[1])


def run_import(data_dir, path, *extra):
    return subprocess.run([basalt_binary(), "--dir", data_dir, *extra, "--import", path],
                          capture_output=True, text=True, timeout=120)


def test_command_line_import_then_serve(dump):
    path, expected = dump
    srv = ServerProcess("basalt", name="imported")
    try:
        # In the foreground whatever `daemonize` says (the counts reach stderr), and no pid file.
        pidfile = os.path.join(srv.root, "import.pid")
        done = run_import(srv.dir, path, "--daemonize", "yes", "--pidfile", pidfile)
        assert done.returncode == 0, done.stderr
        assert not os.path.exists(pidfile)
        total = sum(len(keys) for keys in expected.values())
        per_db = " ".join("db%d=%d" % (db, len(expected[db])) for db in DBS)
        assert "%d keys %s;" % (total, per_db) in done.stderr
        assert "1 function libraries" in done.stderr
        srv.start()
        assert_imported(srv, expected)
    finally:
        srv.cleanup()


def test_command_line_import_of_a_corrupt_file_fails_and_leaves_nothing(dump, tmp_path):
    with open(dump[0], "rb") as f:
        data = f.read()
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(data[:len(data) // 2])
    srv = ServerProcess("basalt", name="badimport")
    try:
        done = run_import(srv.dir, str(bad))
        assert done.returncode == 1
        assert "Bad RDB file" in done.stderr
        srv.start()
        assert_empty(srv)
    finally:
        srv.cleanup()


def rdb_file(body, version=10, checksum=True):
    """An RDB file: signature and version, `body`, the EOF opcode and the CRC-64 (0: none)."""
    data = b"REDIS%04d" % version + body + b"\xff"
    return data + struct.pack("<Q", crc64(data) if checksum else 0)


def import_bytes(r, tmp_path, data):
    path = tmp_path / "crafted.rdb"
    path.write_bytes(data)
    reply = r.execute_command("IMPORT", "RDB", str(path))
    return dict(zip(reply[::2], reply[1::2]))


def string_key(name, value):
    return b"\x00" + rdb_string(name) + rdb_string(value)


def test_file_opcodes_expiries_and_module_values(server, r, tmp_path):
    module_value = (b"\x07" + rdb_string(b"modkey") + rdb_length(0x1234) + b"\x02" + rdb_length(5)
                    + b"\x05" + rdb_string(b"abc") + b"\x04" + struct.pack("<d", 1.5) + b"\x03"
                    + struct.pack("<f", 2.5) + b"\x01" + rdb_length(7) + b"\x00")
    module_aux = (b"\xf7" + rdb_length(0x1234) + rdb_length(2) + rdb_length(1) + b"\x05"
                  + rdb_string(b"aux") + b"\x00")
    body = (b"\xfa" + rdb_string(b"redis-ver") + rdb_string(b"7.2.6") + module_aux
            + b"\xfe\x00\xfb" + rdb_length(4) + rdb_length(2)
            + b"\xfc" + struct.pack("<q", 4102444800123) + string_key(b"future-ms", b"1")
            + b"\xfd" + struct.pack("<I", 4102444800) + string_key(b"future-s", b"2")
            + b"\xfc" + struct.pack("<q", 1000) + string_key(b"expired", b"3")
            + b"\xf8" + rdb_length(100) + b"\xf9\x05" + string_key(b"plain", b"4")
            + module_value + b"\xfe\x05" + string_key(b"in-db5", b"5"))
    stats = import_bytes(r, tmp_path, rdb_file(body, version=11, checksum=False))
    assert (stats[b"keys"], stats[b"expired-skipped"], stats[b"module-keys-skipped"]) == (4, 1, 1)
    assert sorted(r.keys("*")) == [b"future-ms", b"future-s", b"plain"]
    assert r.pexpiretime("future-ms") == 4102444800123
    assert r.pexpiretime("future-s") == 4102444800000
    assert r.ttl("plain") == -1
    # IDLE 100 sets the key's last access (maxmemory-policy noeviction keeps idle times).
    assert 100 <= r.object("idletime", "plain") <= 110
    r.select(5)
    assert r.get("in-db5") == b"5"
    assert server.log_tail(200).count("modkey") == 1


def test_redis_7_2_stream_with_active_times(r, tmp_path):
    # RDB_TYPE_STREAM_LISTPACKS_3 (21): one entry, a group whose consumer has an active time.
    lp_entries = listpack([1, 0, 1, b"f", 0, 2, 0, 0, b"v", 4])
    stream = (b"\x15" + rdb_string(b"st") + rdb_length(1) + rdb_string(struct.pack(">QQ", 5, 0))
              + rdb_string(lp_entries) + rdb_length(1) + rdb_length(5) + rdb_length(0)
              + rdb_length(5) + rdb_length(0) + rdb_length(0) + rdb_length(0) + rdb_length(1)
              + rdb_length(1) + rdb_string(b"g") + rdb_length(5) + rdb_length(0) + rdb_length(1)
              + rdb_length(1) + struct.pack(">QQ", 5, 0) + struct.pack("<q", 1111) + rdb_length(3)
              + rdb_length(1) + rdb_string(b"alice") + struct.pack("<q", 2222)
              + struct.pack("<q", 1999) + rdb_length(1) + struct.pack(">QQ", 5, 0))
    import_bytes(r, tmp_path, rdb_file(b"\xfe\x00" + stream, version=11))
    assert r.xrange("st") == [(b"5-0", {b"f": b"v"})]
    full = r.execute_command("XINFO", "STREAM", "st", "FULL")
    group = dict(zip(full[-1][0][::2], full[-1][0][1::2]))
    assert group[b"pending"] == [[b"5-0", b"alice", 1111, 3]]
    consumer = dict(zip(group[b"consumers"][0][::2], group[b"consumers"][0][1::2]))
    assert (consumer[b"seen-time"], consumer[b"active-time"]) == (2222, 1999)


def listpack(items):
    """A listpack of small integers (7-bit) and short strings."""
    out = b""
    for item in items:
        entry = bytes([item]) if isinstance(item, int) else bytes([0x80 | len(item)]) + item
        out += entry + bytes([len(entry)])
    out += b"\xff"
    return struct.pack("<IH", 6 + len(out), len(items)) + out


@pytest.mark.parametrize("body,error", [
    (b"\xfe\x00" + string_key(b"a", b"1") + string_key(b"a", b"2"), "duplicate key 'a' in db 0"),
    (b"\xfe\x10" + string_key(b"a", b"1"), "database 16 beyond the 16 configured"),
    (b"\xfe\x00\x63" + rdb_string(b"a") + b"\x00", "type 99"),
    (b"\xfe\x00\xf6", "pre-GA function format"),
    (b"\xfe\x00\x06" + rdb_string(b"a"), "pre-GA module value"),
])
def test_crafted_bad_files(server, r, tmp_path, body, error):
    r.set("before", "x")
    r.flushall()
    with pytest.raises(Exception, match=error):
        import_bytes(r, tmp_path, rdb_file(body))
    assert_empty(server)


def test_file_larger_than_the_read_window(server, r, tmp_path):
    # The loader reads 8 MB at a time and grows its window only for a value that needs it: a
    # 20 MB file with values of 3 MB (incompressible, beyond the 1 MB refill mark) and many small
    # keys crosses every refill path.
    src = ServerProcess("redis", name="bigrdb")
    src.start()
    try:
        c = src.client(decode_responses=False)
        big = {b"big:%d" % i: os.urandom(3 << 20) for i in range(5)}
        for k, v in big.items():
            c.set(k, v)
        pipe = c.pipeline(transaction=False)
        for i in range(50000):
            pipe.set(b"small:%d" % i, os.urandom(64))
        pipe.execute()
        c.hset(b"wide", mapping={b"f%d" % i: os.urandom(40) for i in range(30000)})
        small = {k: c.get(k) for k in (b"small:0", b"small:24999", b"small:49999")}
        wide = c.hgetall(b"wide")
        c.save()
        c.close()
        path = str(tmp_path / "big.rdb")
        shutil.copy(os.path.join(src.dir, "dump.rdb"), path)
    finally:
        src.cleanup()
    assert os.path.getsize(path) > 20 << 20
    stats = r.execute_command("IMPORT", "RDB", path)
    assert stats[1] == 50006
    assert r.dbsize() == 50006
    for k, v in list(big.items()) + list(small.items()):
        assert r.get(k) == v
    assert r.hgetall(b"wide") == wide
    # The same file through the command line's SST files.
    srv = ServerProcess("basalt", name="bigimport")
    try:
        done = run_import(srv.dir, path)
        assert done.returncode == 0, done.stderr
        srv.start()
        c = srv.client(decode_responses=False)
        assert c.dbsize() == 50006
        for k, v in list(big.items()) + list(small.items()):
            assert c.get(k) == v
        assert c.hgetall(b"wide") == wide
        c.close()
    finally:
        srv.cleanup()


def test_import_command_reaches_replicas(start_server, dump):
    # IMPORT RDB writes through the write-ahead log: a replica receives every key and library.
    path, expected = dump
    master = start_server(name="master")
    replica = start_server([("replicaof", "127.0.0.1 %d" % master.port)], name="replica")
    assert wait_until(lambda: replica.client().info("replication")["master_link_status"] == "up",
                      timeout=20)
    master.client().execute_command("IMPORT", "RDB", path)
    assert wait_until(lambda: contents(replica) == expected, timeout=30, interval=0.2)
    libraries = [dict(zip(lib[::2], lib[1::2])) for lib in replica.client().function_list()]
    assert [lib["library_name"] for lib in libraries] == ["importlib"]


def test_redis_6_stream_gets_the_counters_redis_derives(r, tmp_path):
    # RDB_TYPE_STREAM_LISTPACKS (15) lacks first ID, max deleted ID, entries added, the groups'
    # read counters and consumers' active times: they are derived as Redis 7 derives them.
    lp_entries = listpack([2, 0, 1, b"f", 0, 2, 0, 0, b"v", 4, 2, 1, 0, b"w", 4])
    stream = (b"\x0f" + rdb_string(b"st") + rdb_length(1) + rdb_string(struct.pack(">QQ", 5, 0))
              + rdb_string(lp_entries) + rdb_length(2) + rdb_length(6) + rdb_length(0)
              + rdb_length(1) + rdb_string(b"g") + rdb_length(6) + rdb_length(0)
              + rdb_length(1) + struct.pack(">QQ", 6, 0) + struct.pack("<q", 1111) + rdb_length(1)
              + rdb_length(1) + rdb_string(b"bob") + struct.pack("<q", 2222) + rdb_length(1)
              + struct.pack(">QQ", 6, 0))
    import_bytes(r, tmp_path, rdb_file(b"\xfe\x00" + stream, version=9))
    assert r.xrange("st") == [(b"5-0", {b"f": b"v"}), (b"6-0", {b"f": b"w"})]
    full = r.execute_command("XINFO", "STREAM", "st", "FULL")
    info = dict(zip(full[::2], full[1::2]))
    assert (info[b"entries-added"], info[b"recorded-first-entry-id"]) == (2, b"5-0")
    group = dict(zip(info[b"groups"][0][::2], info[b"groups"][0][1::2]))
    assert (group[b"entries-read"], group[b"lag"]) == (2, 0)
    consumer = dict(zip(group[b"consumers"][0][::2], group[b"consumers"][0][1::2]))
    assert (consumer[b"seen-time"], consumer[b"active-time"]) == (2222, 2222)


@pytest.fixture(scope="module")
def big_dump(tmp_path_factory):
    """A dump.rdb of a million small strings: long enough to import that it can be interrupted
    after the first progress report (every 2 s)."""
    src = ServerProcess("redis", args=[("enable-debug-command", "yes")], name="bigsrc")
    src.start()
    try:
        c = src.client()
        c.execute_command("DEBUG", "POPULATE", 1000000, "k", 24)
        c.save()
        c.close()
        path = tmp_path_factory.mktemp("bigrdb") / "dump.rdb"
        shutil.copy(os.path.join(src.dir, "dump.rdb"), path)
    finally:
        src.cleanup()
    return str(path)


def wait_for_progress(read_log):
    assert wait_until(lambda: "RDB import: " in read_log(), timeout=60), \
        "the import never reported progress"


# Two imports of a million keys and three starts: 22 s under ASan on 2 cores.
@pytest.mark.timeout(240)
def test_import_command_killed_midway_leaves_nothing_after_restart(big_dump):
    """kill -9 while IMPORT RDB has committed part of the file: the restarted server finds the
    import's mark, empties the keyspace (which was empty before the import), says so, and can
    import the file again."""
    srv = ServerProcess("basalt", name="killedimport", persistent=True)
    srv.start()
    try:
        client = srv.raw()
        client.send("IMPORT", "RDB", big_dump)

        def log():
            with open(srv.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        wait_for_progress(log)
        # Meanwhile other clients are answered as a loading Redis answers them.
        other = srv.client(socket_timeout=5)
        assert other.info("persistence")["loading"] == 1
        with pytest.raises(redis.exceptions.BusyLoadingError):
            other.get("key:1")
        other.close()
        srv.kill9()
        assert "RDB import of %s failed" % big_dump not in log()
        client.close()
        srv.start()
        c = srv.client()
        assert "did not finish before the server stopped" in log()
        assert [c.execute_command("SELECT", db) and c.dbsize() for db in range(16)] == [0] * 16
        c.execute_command("SELECT", 0)
        assert c.execute_command("IMPORT", "RDB", big_dump)[1] == 1000000
        assert c.dbsize() == 1000000
        c.close()
        srv.stop()
        srv.start()
        assert srv.client().dbsize() == 1000000
    finally:
        srv.cleanup()


def test_command_line_import_killed_midway_leaves_nothing(big_dump):
    """The same for `basalt-server --import`: killed after its first progress report, it leaves
    no keys and no staging files, and a server started on the directory serves it empty."""
    srv = ServerProcess("basalt", name="killedcli", persistent=True)
    try:
        stderr_path = os.path.join(srv.root, "import.err")
        with open(stderr_path, "wb") as err:
            proc = subprocess.Popen([basalt_binary(), "--dir", srv.dir, "--import", big_dump],
                                    stdout=subprocess.DEVNULL, stderr=err)

        def log():
            with open(stderr_path, "rb") as f:
                return f.read().decode(errors="replace")
        try:
            wait_for_progress(log)
        finally:
            proc.kill()
            proc.wait()
        assert "imported %s (" % big_dump not in log()  # killed before it finished
        srv.start()
        c = srv.client()
        assert [c.execute_command("SELECT", db) and c.dbsize() for db in range(16)] == [0] * 16
        assert not os.path.exists(os.path.join(srv.dir, "import-staging"))
        c.close()
    finally:
        srv.cleanup()
