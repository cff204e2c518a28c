#!/usr/bin/env python3
"""Replication benchmark: replica lag under a sustained write load, and full-sync throughput.

    build/venv/bin/python tools/repl_bench.py [--seconds 20] [--dataset-mb 1100]
                                              [--skip-lag] [--skip-fullsync] [--no-redis]

Starts its own servers (build/basalt-server, and /usr/bin/redis-server as the reference) on
free ports with temporary data directories, and removes them afterwards.

Lag: redis-benchmark writes SETs (256-byte values, 16 clients, pipeline 16) to the master
for --seconds. Meanwhile a probe writes a new value to the master every 100 ms and, once the
master acknowledged it, polls the replica until the value is visible there: that delay is the
replication lag a client observes. The replica's INFO (master_lag_seq, master_lag_seconds) is
sampled too. After the load stops, the time until the replica has applied everything is the
catch-up time.

Full sync: the master is loaded with --dataset-mb of incompressible 1000-byte values, then a
new replica is started; the time from its start until it has applied the master's last
write is the full-sync time. Throughput is reported against the bytes the replica received
(Basalt: the checkpoint files) and against the logical data size (both servers).

Prints numbers only; nothing here passes or fails.
"""
import argparse
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import redis

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BASALT = os.environ.get("BASALT_SERVER", os.path.join(ROOT, "build", "basalt-server"))
REDIS = os.environ.get("REDIS_SERVER", "/usr/bin/redis-server")
BENCHMARK = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"


def free_port():
    while True:
        port = random.randint(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue


class Server:
    def __init__(self, kind, extra=()):
        self.kind = kind
        self.root = tempfile.mkdtemp(prefix="repl-bench-%s-" % kind)
        self.dir = os.path.join(self.root, "data")
        os.makedirs(self.dir)
        self.port = free_port()
        if kind == "basalt":
            cmd = [BASALT, "--port", str(self.port), "--dir", self.dir]
        else:
            cmd = [REDIS, "--port", str(self.port), "--dir", self.dir, "--save", "",
                   "--appendonly", "no", "--repl-diskless-sync-delay", "0",
                   "--client-output-buffer-limit", "replica 0 0 0"]
        for k, v in extra:
            cmd += ["--" + k, str(v)]
        self.log = open(os.path.join(self.root, "log"), "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     cwd=self.root)
        deadline = time.monotonic() + 30
        while True:
            try:
                if self.client().ping():
                    break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("%s did not start" % kind)
                time.sleep(0.05)

    def client(self, **kw):
        return redis.Redis(port=self.port, socket_timeout=60, **kw)

    def replication(self):
        return self.client().info("replication")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


def dir_bytes(path):
    total = 0
    for base, _, files in os.walk(path):
        for f in files:
            try:
                total += os.path.getsize(os.path.join(base, f))
            except OSError:
                pass
    return total


def applied_offset(replica):
    info = replica.replication()
    return int(info.get("slave_repl_offset", -1)), info.get("master_link_status")


def wait_caught_up(master, replica, timeout=600):
    """Until the replica has applied the master's latest write; returns seconds waited."""
    start = time.monotonic()
    target = int(master.replication()["master_repl_offset"])
    while time.monotonic() - start < timeout:
        offset, status = applied_offset(replica)
        if status == "up" and offset >= target:
            return time.monotonic() - start
        time.sleep(0.01)
    raise RuntimeError("replica did not catch up within %d s" % timeout)


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100.0))]


# ---------------------------------------------------------------------------------------------
def measure_lag(kind, seconds):
    master = Server(kind)
    replica = Server(kind, [("replicaof", "127.0.0.1 %d" % master.port)])
    try:
        mc, rc = master.client(), replica.client()
        while applied_offset(replica)[1] != "up":
            time.sleep(0.05)
        stop = threading.Event()
        probes, info_lag_seq, info_lag_s = [], [], []

        def probe():
            i = 0
            while not stop.is_set():
                i += 1
                mc.set("probe", i)
                acked = time.monotonic()
                while rc.get("probe") != str(i).encode():
                    time.sleep(0.0005)
                probes.append((time.monotonic() - acked) * 1000)
                if kind == "basalt":
                    info = replica.replication()
                    info_lag_seq.append(int(info["master_lag_seq"]))
                    info_lag_s.append(float(info["master_lag_seconds"]))
                time.sleep(0.1)

        before = mc.info("stats")["total_commands_processed"]
        bench = subprocess.Popen([BENCHMARK, "-p", str(master.port), "-t", "set", "-n",
                                  "1000000000", "-r", "10000000", "-d", "256", "-P", "16", "-c",
                                  "16", "-q"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        start = time.monotonic()
        t = threading.Thread(target=probe)
        t.start()
        time.sleep(seconds)
        bench.send_signal(signal.SIGINT)
        bench.wait()
        elapsed = time.monotonic() - start
        stop.set()
        t.join()
        writes = mc.info("stats")["total_commands_processed"] - before
        catch_up = wait_caught_up(master, replica)
        print("  %-6s writes %8.0f ops/s | lag p50 %7.1f ms  p90 %7.1f ms  p99 %7.1f ms  "
              "max %7.1f ms (%d probes) | catch-up after load %.2f s"
              % (kind, writes / elapsed, percentile(probes, 50), percentile(probes, 90),
                 percentile(probes, 99), max(probes), len(probes), catch_up))
        if info_lag_seq:
            print("         INFO on the replica: master_lag_seq p50 %d max %d, "
                  "master_lag_seconds p50 %.3f max %.3f"
                  % (percentile(info_lag_seq, 50), max(info_lag_seq),
                     percentile(info_lag_s, 50), max(info_lag_s)))
        return writes / elapsed, percentile(probes, 50)
    finally:
        replica.stop()
        master.stop()


def load_dataset(server, megabytes, value_size=1000):
    """Incompressible values: slices of a random pool at random offsets."""
    pool = os.urandom(1 << 22)
    keys = megabytes * (1 << 20) // value_size
    c = server.client()
    rng = random.Random(1)
    pipe = c.pipeline(transaction=False)
    for i in range(keys):
        off = rng.randrange(len(pool) - value_size)
        pipe.set(b"data:%09d" % i, pool[off:off + value_size])
        if i % 2000 == 1999:
            pipe.execute()
    pipe.execute()
    return keys * value_size


def measure_full_sync(kind, megabytes):
    master = Server(kind)
    replica = None
    try:
        t0 = time.monotonic()
        logical = load_dataset(master, megabytes)
        load_s = time.monotonic() - t0
        if kind == "basalt":
            master.client().execute_command("SAVE")
        start = time.monotonic()
        replica = Server(kind, [("replicaof", "127.0.0.1 %d" % master.port)])
        wait_caught_up(master, replica)
        sync_s = time.monotonic() - start
        shipped = dir_bytes(replica.dir) if kind == "basalt" else None
        line = "  %-6s %6.0f MiB logical loaded in %.0f s | full sync %.1f s: %.1f MiB/s logical" % (
            kind, logical / 2**20, load_s, sync_s, logical / 2**20 / sync_s)
        if shipped is not None:
            line += ", %.1f MiB/s of checkpoint files (%.0f MiB on disk)" % (
                shipped / 2**20 / sync_s, shipped / 2**20)
        print(line)
        return logical / 2**20 / sync_s
    finally:
        if replica is not None:
            replica.stop()
        master.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=20, help="duration of the write load")
    ap.add_argument("--dataset-mb", type=int, default=1100, help="full-sync data set size")
    ap.add_argument("--skip-lag", action="store_true")
    ap.add_argument("--skip-fullsync", action="store_true")
    ap.add_argument("--no-redis", action="store_true", help="skip the redis-server reference")
    args = ap.parse_args()
    kinds = ["basalt"] + ([] if args.no_redis or not os.path.exists(REDIS) else ["redis"])
    print("machine: %d CPUs; servers and load generator share them" % os.cpu_count())
    if not args.skip_lag:
        print("Replication lag under sustained writes (%d s of SET -d 256 -P 16 -c 16):"
              % args.seconds)
        results = {k: measure_lag(k, args.seconds) for k in kinds}
        if "redis" in results:
            print("  basalt/redis: write throughput %.2fx, median lag %.2fx"
                  % (results["basalt"][0] / results["redis"][0],
                     results["basalt"][1] / results["redis"][1]))
    if not args.skip_fullsync:
        print("Full sync of a new replica (%d MiB of 1000-byte incompressible values):"
              % args.dataset_mb)
        results = {k: measure_full_sync(k, args.dataset_mb) for k in kinds}
        if "redis" in results:
            print("  basalt/redis: full-sync logical throughput %.2fx"
                  % (results["basalt"] / results["redis"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
