#!/usr/bin/env python3
"""Concurrency stress: many clients on few keys, then a check that the data still adds up.

    tools/stress/concurrency.py [--seconds 30] [--clients 16] [--seed N]
                                [--server build/basalt-server] [--no-replica]

Starts a basalt-server (and, unless --no-replica, a replica of it), and runs client threads
that hit a handful of keys of every type at once: pipelined increments and pushes, pops and
blocking pops, reads of whole collections, moves between keys, RENAME/COPY, TTLs,
MULTI/EXEC with WATCH, scripts, FLUSHDB and SWAPDB, Pub/Sub, and clients killed mid-pipeline.
Few keys and two workers make every command race with others on the same key, which is where
locking and write-group mistakes show. Afterwards it checks:

  * no reply was an error other than the ones the commands define for the situations the
    workload creates (WRONGTYPE, a COPY onto itself, ...);
  * a counter that only this workload increments equals the increments acknowledged;
  * every collection's size (LLEN, SCARD, HLEN, ZCARD) equals the length of a full read, and
    DBSIZE equals the number of keys KEYS finds, in both databases;
  * the replica, once caught up (WAIT), holds exactly the master's data.

Exits non-zero on the first failed check. Needs redis-py (build/venv has it).
"""
import argparse
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPECTED_ERRORS = ("WRONGTYPE", "no such key", "source and destination objects are the same",
                   "not an integer")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(binary, workdir, extra=()):
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1",
                             "--dir", os.path.join(workdir, "data"),
                             "--logfile", os.path.join(workdir, "server.log"), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if redis.Redis(port=port, socket_timeout=1).ping():
                return proc, port
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("server on port %d did not start" % port)


class Workload:
    def __init__(self, port, seconds, seed):
        self.port, self.seed = port, seed
        self.stop = time.time() + seconds
        self.errors = []
        self.increments = 0
        self.lock = threading.Lock()

    def client(self):
        return redis.Redis(port=self.port, socket_timeout=30, decode_responses=True)

    def run(self, clients):
        threads = [threading.Thread(target=self.worker, args=(i,)) for i in range(clients)]
        threads.append(threading.Thread(target=self.subscriber))
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def worker(self, index):
        r = self.client()
        rnd = random.Random(self.seed * 1000 + index)
        while time.time() < self.stop:
            try:
                self.step(r, rnd)
            except redis.ResponseError as e:
                if not any(text in str(e) for text in EXPECTED_ERRORS):
                    with self.lock:
                        self.errors.append(str(e))

    def counted(self, n):
        with self.lock:
            self.increments += n

    def step(self, r, rnd):
        k, other = "k%d" % rnd.randrange(8), "k%d" % rnd.randrange(8)
        op = rnd.randrange(22)
        if op == 0:
            p = r.pipeline(transaction=False)
            for _ in range(rnd.randrange(1, 32)):
                p.incr("counter")
                p.lpush("l%d" % rnd.randrange(3), "x")
            self.counted(len(p.execute()) // 2)
        elif op == 1:
            r.lpop("l%d" % rnd.randrange(3), rnd.randrange(1, 4))
        elif op == 2:
            r.blpop(["l%d" % rnd.randrange(3)], timeout=0.02)
        elif op == 3:
            r.lrange("l%d" % rnd.randrange(3), 0, 10)
        elif op == 4:
            r.lmove("l%d" % rnd.randrange(3), "l%d" % rnd.randrange(3), "LEFT", "RIGHT")
        elif op == 5:
            r.sadd("s%d" % rnd.randrange(3), *[rnd.randrange(200) for _ in range(4)])
        elif op == 6:
            r.spop("s%d" % rnd.randrange(3), rnd.randrange(1, 3))
        elif op == 7:
            r.smembers("s%d" % rnd.randrange(3))
        elif op == 8:
            r.hset("h%d" % rnd.randrange(3), mapping={"f%d" % rnd.randrange(50): "v"})
        elif op == 9:
            r.hdel("h%d" % rnd.randrange(3), "f%d" % rnd.randrange(50))
        elif op == 10:
            r.hgetall("h%d" % rnd.randrange(3))
        elif op == 11:
            r.zadd("z%d" % rnd.randrange(3), {"m%d" % rnd.randrange(50): rnd.random()})
        elif op == 12:
            r.zpopmin("z%d" % rnd.randrange(3))
        elif op == 13:
            r.zrange("z%d" % rnd.randrange(3), 0, -1, withscores=True)
        elif op == 14:
            r.set(k, "v", px=rnd.randrange(1, 50))
        elif op == 15:
            r.rename(k, other) if r.exists(k) else None
        elif op == 16:
            r.copy(k, other, replace=True)
        elif op == 17:
            with r.pipeline() as p:
                try:
                    p.watch("counter")
                    p.multi()
                    p.incr("counter")
                    p.execute()
                    self.counted(1)
                except redis.WatchError:
                    pass
        elif op == 18:
            r.eval("return redis.call('incr', KEYS[1])", 1, "counter")
            self.counted(1)
        elif op == 19:
            r.publish("channel", "m")
        elif op == 20:
            self.killed_mid_pipeline(r, rnd)
        else:
            # Whole-database commands on databases 1 and 2 only, so the counter stays exact.
            r.execute_command("SELECT", 1)
            r.rpush("d1", "x")
            r.sadd("d1s", rnd.randrange(20))
            if rnd.random() < 0.05:
                r.flushdb() if rnd.random() < 0.5 else r.swapdb(1, 2)
            r.execute_command("SELECT", 0)

    def killed_mid_pipeline(self, r, rnd):
        victim = self.client()
        victim.client_setname("victim")
        p = victim.pipeline(transaction=False)
        for _ in range(20):
            p.set("v%d" % rnd.randrange(100), "y")
        try:
            ids = [c["id"] for c in r.client_list() if c.get("name") == "victim"]
            if ids and rnd.random() < 0.5:
                r.client_kill_filter(_id=ids[0])
            p.execute()
        except redis.ConnectionError:
            pass
        finally:
            victim.close()

    def subscriber(self):
        pubsub = self.client().pubsub()
        pubsub.subscribe("channel")
        while time.time() < self.stop:
            pubsub.get_message(timeout=0.1)
        pubsub.close()


def snapshot(port, db):
    r = redis.Redis(port=port, db=db, decode_responses=True)
    data, problems = {}, []
    # DBSIZE counts keys whose TTL passed until the expirer removes them (as Redis's does);
    # KEYS does not list them. Give the expirer a few seconds to reach the workload's last ones.
    deadline = time.time() + 5
    while True:
        keys = r.keys("*")
        if r.dbsize() == len(keys) or time.time() > deadline:
            break
        time.sleep(0.1)
    if r.dbsize() != len(keys):
        problems.append("db %d: DBSIZE %d but KEYS finds %d" % (db, r.dbsize(), len(keys)))
    for k in keys:
        kind = r.type(k)
        if kind == "string":
            data[k] = r.get(k)
        elif kind == "list":
            data[k] = r.lrange(k, 0, -1)
            size = r.llen(k)
        elif kind == "set":
            data[k] = sorted(r.smembers(k))
            size = r.scard(k)
        elif kind == "hash":
            data[k] = sorted(r.hgetall(k).items())
            size = r.hlen(k)
        elif kind == "zset":
            data[k] = r.zrange(k, 0, -1, withscores=True)
            size = r.zcard(k)
        if kind in ("list", "set", "hash", "zset") and size != len(data[k]):
            problems.append("db %d: %s %s has size %d but %d members" % (db, kind, k, size,
                                                                        len(data[k])))
    return data, problems


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seed", type=int, default=random.randrange(1 << 30))
    p.add_argument("--server", default=os.path.join(ROOT, "build", "basalt-server"))
    p.add_argument("--no-replica", action="store_true")
    args = p.parse_args()
    root = tempfile.mkdtemp(prefix="basalt-stress-")
    procs = []
    try:
        master, port = start_server(args.server, os.path.join(root, "master"))
        procs.append(master)
        replica_port = None
        if not args.no_replica:
            replica, replica_port = start_server(
                args.server, os.path.join(root, "replica"), ["--replicaof", "127.0.0.1 %d" % port])
            procs.append(replica)
        workload = Workload(port, args.seconds, args.seed)
        workload.run(args.clients)
        failures = ["error reply: %s" % e for e in sorted(set(workload.errors))]
        r = redis.Redis(port=port, decode_responses=True)
        if int(r.get("counter") or 0) != workload.increments:
            failures.append("counter is %s, %d increments were acknowledged" %
                            (r.get("counter"), workload.increments))
        if replica_port is not None and r.execute_command("WAIT", 1, 10000) != 1:
            failures.append("the replica did not catch up within 10 s")
        for db in (0, 1, 2):
            data, problems = snapshot(port, db)
            failures += problems
            if replica_port is not None:
                replica_data, _ = snapshot(replica_port, db)
                differ = sorted(k for k in set(data) | set(replica_data)
                                if data.get(k) != replica_data.get(k)
                                and not k.startswith("k"))  # TTL'd keys expire on their own
                if differ:
                    failures.append("db %d: replica differs on %s" % (db, differ[:5]))
        print("seed %d, %d clients, %.0f s: %d increments, %d failures" %
              (args.seed, args.clients, args.seconds, workload.increments, len(failures)))
        for f in failures:
            print("  " + f)
        sys.exit(1 if failures else 0)
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
