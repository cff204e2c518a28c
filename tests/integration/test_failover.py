"""FAILOVER: the coordinated hand-over from a master to one of its replicas, with Redis 7.2's
arguments, errors and INFO state. Writes are held while the master waits for a replica to
catch up; TIMEOUT and ABORT end the wait and release them. Every test also runs against
redis-server (--target redis)."""
import os
import signal
import time

import pytest
import redis

from helpers import raises, wait_until
from resp import RawConn
from test_replication import (SYNC_TIMEOUT, info_repl, master_args, replica_args, wait_link_up,
                              wait_synced, write_every_type)


def failover_state(server):
    return info_repl(server)["master_failover_state"]


def test_failover_arguments_and_errors(start_server, target):
    a = start_server(master_args(target), name="a")
    ca = a.client()
    assert failover_state(a) == "no-failover"
    raises(ca, "ERR FAILOVER requires connected replicas.", "FAILOVER")
    raises(ca, "ERR No failover in progress.", "FAILOVER", "ABORT")
    raises(ca, "ERR FAILOVER timeout must be greater than 0", "FAILOVER", "TIMEOUT", "0")
    raises(ca, "ERR value is not an integer or out of range", "FAILOVER", "TIMEOUT", "x")
    raises(ca, "ERR syntax error", "FAILOVER", "NOW")
    raises(ca, "ERR syntax error", "FAILOVER", "FORCE", "FORCE")
    raises(ca, "ERR syntax error", "FAILOVER", "TO", "127.0.0.1")
    b = start_server(replica_args(target, a), name="b")
    wait_link_up(b)
    raises(b.client(), "ERR FAILOVER is not valid when server is a replica.", "FAILOVER")
    raises(ca, "ERR FAILOVER target HOST and PORT is not a replica.",
           "FAILOVER", "TO", "127.0.0.1", "1")
    raises(ca, "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
           "FAILOVER", "TO", "127.0.0.1", str(b.port), "FORCE")
    raises(ca, "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
           "FAILOVER", "TIMEOUT", "100", "FORCE")
    assert failover_state(a) == "no-failover"


@pytest.mark.parametrize("to", [False, True], ids=["any-replica", "to-target"])
def test_failover_hands_the_master_role_to_the_replica(start_server, target, to):
    a = start_server(master_args(target), name="a")
    b = start_server(replica_args(target, a), name="b")
    ca, cb = a.client(), b.client()
    wait_link_up(b)
    write_every_type(a)
    ca.set("last", "before")
    expected = wait_synced(a, b)
    args = ["FAILOVER"] + (["TO", "127.0.0.1", str(b.port)] if to else [])
    assert ca.execute_command(*args) == "OK"
    assert wait_until(lambda: cb.execute_command("ROLE")[0] == "master", timeout=SYNC_TIMEOUT)
    assert wait_until(lambda: ca.execute_command("ROLE")[:3] == ["slave", "127.0.0.1", b.port],
                      timeout=SYNC_TIMEOUT)
    assert wait_until(lambda: failover_state(a) == "no-failover", timeout=SYNC_TIMEOUT)
    wait_link_up(a)
    assert wait_synced(b, a) == expected  # nothing was lost on the way
    with pytest.raises(redis.ResponseError, match="^READONLY"):
        ca.set("k", "v")
    cb.set("after", "on-b")
    assert cb.execute_command("WAIT", 1, 5000) == 1
    assert ca.get("after") == "on-b"


def test_writes_are_held_while_waiting_and_released_by_the_timeout(start_server, target):
    a = start_server(master_args(target), name="a")
    b = start_server(replica_args(target, a), name="b")
    ca = a.client()
    wait_link_up(b)
    ca.set("k", "0")
    wait_synced(a, b)
    os.kill(b.proc.pid, signal.SIGSTOP)  # the replica acknowledges nothing from now on
    try:
        ca.set("k", "1")  # ahead of every replica now
        assert ca.execute_command("FAILOVER", "TIMEOUT", "1500") == "OK"
        assert failover_state(a) == "waiting-for-sync"
        raises(ca, "ERR FAILOVER already in progress.", "FAILOVER")
        raises(ca, "ERR REPLICAOF not allowed while failing over.",
               "REPLICAOF", "127.0.0.1", str(b.port))
        writer = RawConn(a.port)
        writer.send("SET", "k", "2")
        writer.sock.settimeout(0.5)
        with pytest.raises(OSError):  # held: no reply yet
            writer.sock.recv(1)
        assert ca.get("k") == "1"  # reads are served meanwhile
        assert wait_until(lambda: failover_state(a) == "no-failover", timeout=10)
        writer.sock.settimeout(10)
        assert writer.read() == ("+", b"OK")  # released when the failover gave up
        assert ca.get("k") == "2"
        assert ca.execute_command("ROLE")[0] == "master"
        writer.close()
    finally:
        os.kill(b.proc.pid, signal.SIGCONT)


def test_abort_ends_the_wait_and_releases_the_writes(start_server, target):
    a = start_server(master_args(target), name="a")
    b = start_server(replica_args(target, a), name="b")
    ca = a.client()
    wait_link_up(b)
    os.kill(b.proc.pid, signal.SIGSTOP)
    try:
        ca.set("k", "1")
        assert ca.execute_command("FAILOVER") == "OK"
        writer = RawConn(a.port)
        writer.send("INCR", "counter")
        time.sleep(0.3)
        assert failover_state(a) == "waiting-for-sync"
        assert ca.execute_command("FAILOVER", "ABORT") == "OK"
        assert failover_state(a) == "no-failover"
        writer.sock.settimeout(10)
        assert writer.read() == (":", 1)
        assert ca.execute_command("ROLE")[0] == "master"
        writer.close()
    finally:
        os.kill(b.proc.pid, signal.SIGCONT)
