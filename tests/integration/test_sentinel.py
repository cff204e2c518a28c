"""High availability with the real redis-sentinel (Debian's package).

Three sentinels watch a master with two replicas, each server started on a config file so that
Sentinel's reconfiguration (REPLICAOF + CONFIG REWRITE inside MULTI) is written back to it. A
client that finds the master through redis-py's Sentinel support keeps writing, each write
acknowledged only when WAIT 1 0 says a replica has it; the master is killed with kill -9;
Sentinel promotes a replica; the old master, restarted on its own config file, is turned into a
replica of the new one. No acknowledged write may be missing on the new master, and the config
file Sentinel made the old master rewrite must start both Basalt and redis-server as a replica.

The same test runs against redis-server with --target redis."""
import os
import shutil
import subprocess
import tempfile
import threading
import time

import pytest
import redis
import redis.sentinel

from conftest import REDIS_SERVER, ServerProcess, basalt_binary, free_port
from helpers import parse_info, wait_until

# Sentinel's own timers set the pace (a second to see a master down, the election, then its
# periodic INFO to notice the old master back): each wait below may take up to
# FAILOVER_TIMEOUT, so the suite's 60 s per test would cut a slow but healthy run short, and
# hide the failing assertion's diagnosis (the roles and Sentinel's log) if one is not.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(480)]

REDIS_SENTINEL = os.environ.get("REDIS_SENTINEL", "/usr/bin/redis-sentinel")
MASTER_NAME = "basaltha"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT = 60.0
# Sentinel turns a returning old master into a replica only after two of its INFO rounds to
# replicas (every 10 s) at least 8 s apart, each after the instance answers pings again; the
# replica then syncs. Under the sanitizer build on a busy 2-core machine that has run past 60 s.
CONVERT_TIMEOUT = 150.0


class ConfiguredServer(ServerProcess):
    """A server started on a config file of its own (port, bind, dir and, for a replica,
    replicaof), so that CONFIG REWRITE has a file to write."""

    def __init__(self, kind, name, replicaof=None):
        super().__init__(kind, name=name)
        self.config_path = os.path.join(self.root, "server.conf")
        lines = ["port %d" % self.port, "bind 127.0.0.1", "dir %s" % self.dir]
        if kind == "redis":
            lines += ['save ""', "appendonly no", "repl-diskless-sync-delay 0"]
        if replicaof is not None:
            lines.append("replicaof 127.0.0.1 %d" % replicaof)
        with open(self.config_path, "w") as f:
            f.write("# written by test_sentinel\n" + "\n".join(lines) + "\n")

    def command_line(self):
        binary = basalt_binary() if self.kind == "basalt" else REDIS_SERVER
        return [binary, self.config_path]


class Sentinel:
    """One redis-sentinel process watching MASTER_NAME."""

    def __init__(self, master_port, index):
        self.root = tempfile.mkdtemp(prefix="basalt-it-sentinel-%d-" % index)
        self.port = free_port()
        self.config_path = os.path.join(self.root, "sentinel.conf")
        with open(self.config_path, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndir %s\n" % (self.port, self.root))
            f.write("sentinel monitor %s 127.0.0.1 %d 2\n" % (MASTER_NAME, master_port))
            f.write("sentinel down-after-milliseconds %s %d\n" % (MASTER_NAME, DOWN_AFTER_MS))
            f.write("sentinel failover-timeout %s 10000\n" % MASTER_NAME)
            f.write("sentinel parallel-syncs %s 1\n" % MASTER_NAME)
        self.log = open(os.path.join(self.root, "sentinel.log"), "wb")
        self.proc = subprocess.Popen([REDIS_SENTINEL, self.config_path], stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def client(self):
        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True,
                           socket_timeout=5)

    def switches(self):
        """Sentinel's failover decisions, from its log: which master it saw down, whom it
        promoted, whom it told to follow."""
        events = ("+odown", "+switch-master", "+convert-to-slave", "+promoted-slave")
        with open(os.path.join(self.root, "sentinel.log"), "rb") as f:
            return [line for line in f.read().decode(errors="replace").splitlines()
                    if any(e in line for e in events)]

    def log_tail(self, n=30):
        with open(os.path.join(self.root, "sentinel.log"), "rb") as f:
            return "\n".join(f.read().decode(errors="replace").splitlines()[-n:])

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


def role(server):
    c = server.client()
    try:
        return c.execute_command("ROLE")
    except redis.ConnectionError:
        return None
    finally:
        c.close()


def replication_info(server):
    c = server.client(callbacks=False)
    try:
        return parse_info(c.execute_command("INFO", "replication"))["replication"]
    finally:
        c.close()


class AcknowledgedWriter(threading.Thread):
    """Writes key i = i through the master Sentinel names, retrying across the failover; a
    write counts as acknowledged only when WAIT 1 0 reports at least one replica."""

    def __init__(self, sentinel_ports):
        super().__init__(daemon=True)
        sentinel = redis.sentinel.Sentinel([("127.0.0.1", p) for p in sentinel_ports],
                                           socket_timeout=5)
        self.master = sentinel.master_for(MASTER_NAME, socket_timeout=5, decode_responses=True)
        self.acknowledged = []
        self.errors = 0
        self.stopping = threading.Event()

    def run(self):
        i = 0
        while not self.stopping.is_set():
            try:
                self.master.set("k%d" % i, i)
                if self.master.execute_command("WAIT", 1, 0) >= 1:
                    self.acknowledged.append(i)
                i += 1
            except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError,
                    redis.sentinel.MasterNotFoundError):
                # The master is down or was just demoted: ask Sentinel again and retry the
                # same key, so that a write that failed is never counted.
                self.errors += 1
                time.sleep(0.05)
            time.sleep(0.002)

    def stop(self):
        self.stopping.set()
        self.join(30)
        assert not self.is_alive(), "the writer is stuck"


def sentinel_master_port(sentinels):
    try:
        addr = sentinels[0].client().execute_command(
            "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
    except redis.ConnectionError:
        return None
    return int(addr[1]) if addr else None


def test_sentinel_fails_over_and_turns_the_old_master_into_a_replica(target):
    if not os.path.exists(REDIS_SENTINEL):
        pytest.fail("redis-sentinel not found at %s (tools/install-deps installs it)"
                    % REDIS_SENTINEL, pytrace=False)
    servers, sentinels, writer = [], [], None
    try:
        master = ConfiguredServer(target, "master").start()
        servers.append(master)
        for n in range(2):
            servers.append(ConfiguredServer(target, "replica%d" % n, replicaof=master.port).start())
        replicas = servers[1:]
        for r in replicas:
            assert wait_until(lambda: replication_info(r).get("master_link_status") == "up",
                              timeout=30, interval=0.1), replication_info(r)
        sentinels = [Sentinel(master.port, n) for n in range(3)]
        # Each sentinel must know both replicas (from the master's INFO) and the other
        # sentinels (from hello messages) before a failover can be agreed on.
        for s in sentinels:
            def ready(s=s):
                try:
                    c = s.client()
                    return (len(c.execute_command("SENTINEL", "REPLICAS", MASTER_NAME)) == 2 and
                            len(c.execute_command("SENTINEL", "SENTINELS", MASTER_NAME)) == 2)
                except redis.ConnectionError:
                    return False
            assert wait_until(ready, timeout=30, interval=0.2), s.log_tail()

        writer = AcknowledgedWriter([s.port for s in sentinels])
        writer.start()
        assert wait_until(lambda: len(writer.acknowledged) >= 200, timeout=30, interval=0.05)

        master.kill9()
        assert wait_until(lambda: sentinel_master_port(sentinels) not in (None, master.port),
                          timeout=FAILOVER_TIMEOUT, interval=0.2), sentinels[0].log_tail()
        new_port = sentinel_master_port(sentinels)
        promoted = next(r for r in replicas if r.port == new_port)
        assert wait_until(lambda: (role(promoted) or [None])[0] == "master", timeout=30)

        # The writer goes on through the new master.
        acknowledged_before = len(writer.acknowledged)
        assert wait_until(lambda: len(writer.acknowledged) >= acknowledged_before + 200,
                          timeout=FAILOVER_TIMEOUT, interval=0.1), \
            "no acknowledged write after the failover\n" + sentinels[0].log_tail()

        # The old master comes back on its own config file; Sentinel makes it a replica of the
        # new master and has it rewrite that file.
        # Sentinel may fail over once more meanwhile (a master slow to answer pings for
        # down-after-milliseconds counts as down): what must hold is that the old master, and
        # every other server, ends up a replica of the master Sentinel names then.
        master.start(retries=0)

        def settled():
            current = sentinel_master_port(sentinels)
            return current not in (None, master.port) and all(
                (role(s) or [None])[0] == "slave" and role(s)[2] == current
                for s in servers if s.port != current)
        assert wait_until(settled, timeout=CONVERT_TIMEOUT, interval=0.2), (
            sentinel_master_port(sentinels), [(s.port, role(s)) for s in servers],
            sentinels[0].switches(), sentinels[0].log_tail())
        new_port = sentinel_master_port(sentinels)
        promoted = next(s for s in servers if s.port == new_port)

        writer.stop()
        acknowledged = writer.acknowledged
        c = promoted.client()
        values = c.mget(["k%d" % i for i in acknowledged])
        c.close()
        lost = [i for i, v in zip(acknowledged, values) if v != str(i)]
        assert not lost, "%d acknowledged writes lost, first %s" % (len(lost), lost[:5])

        # Sentinel's rewrite of the old master's file says, in Redis's syntax, whose replica it
        # is; both servers read it back as a replica of the new master.
        with open(master.config_path) as f:
            rewritten = f.read()
        assert "replicaof 127.0.0.1 %d" % new_port in rewritten, rewritten
        master.stop()
        for kind in ("basalt", "redis"):
            again = ConfiguredServer(kind, "reread-" + kind)
            shutil.copy(master.config_path, again.config_path)
            again.port = master.port  # the rewritten file names the old master's port
            again.dir = master.dir
            servers.append(again)
            again.start(retries=0)
            assert wait_until(lambda: (role(again) or [None])[0] == "slave" and
                              role(again)[2] == new_port, timeout=30, interval=0.1), role(again)
            again.stop()
    finally:
        if writer is not None and writer.is_alive():
            writer.stopping.set()
        for s in sentinels:
            s.cleanup()
        for s in servers:
            s.cleanup()
