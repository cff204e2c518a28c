#!/usr/bin/env python3
"""Streams on Basalt and on redis-server, side by side (issue 47's performance targets).

Starts the Debian redis-server (persistence off) and basalt-server on free ports and measures,
in rounds that alternate which server goes first:

  xadd       redis-benchmark `XADD s * f v` at -P 1 and -P 16 (50 clients); ops/s.
             Targets: Basalt >= 0.8 x Redis at -P 1, >= 0.5 x Redis at -P 16.
  consumers  a stream pre-filled with N entries, K consumer processes in one group, each
             looping XREADGROUP GROUP g cI COUNT 100 STREAMS s > and XACK of what it got (the
             XACK of one batch travels in the same write as the next read); entries acked per
             second until the stream is drained. Target: Basalt >= 0.5 x Redis.
  trimmed    a stream trimmed by `XADD s MAXLEN 1000 * f v` over 300k entries, then
             XREVRANGE s + - COUNT 2000, which reads down to the head: below it lie the trimmed
             entries (on Basalt, their tombstones until compaction drops them); XREVRANGEs/s.
  queue      a producer (redis-benchmark, one connection, -P 16) adding
             `XADD s MAXLEN ~ 1000 * f v` in steps, while K consumer processes read the head
             through a group (XREADGROUP ... COUNT 100 BLOCK 100) and XACK; the producer's rate
             per step (per million entries with --queue-entries 10000000). Target: a constant
             rate from the first step to the last.
  xrange     (only with --xrange-entries N) a stream of N entries, then XRANGE s <ms> + COUNT 100
             from random points in its middle half on one connection; entries/s and the
             latency of one read (p50, p99). With a large N on Basalt alone
             (--xrange-basalt-only) this reads a stream well beyond memory. With
             --xrange-memory SIZE, Basalt alone also fills such a stream (values of random
             digits, which compress as real payloads do) in a memory cgroup of SIZE (page cache
             included), and for each of --xrange-connections (1,16) restarts, lets the fill's
             compactions finish, and reads it with none of it in the page cache through
             basalt-bench (one read in flight per connection), next to fio's rate for random
             4 KiB reads at as many in flight.

Every figure is also given as the server's own CPU per operation (/proc/<pid>/stat), which a
loaded machine disturbs less than a rate. The Basalt/Redis ratio is the median of the rounds'
own ratios (each between the two servers' runs of one round), with their range. The machine's
1-minute load average is noted with every run. Usage:

  tools/bench/stream_bench.py [--rounds 3] [--xadd-requests 100000] [--consumer-entries 200000]
      [--consumers 4] [--queue-entries 1000000] [--xrange-entries N] [--parts xadd,consumers,queue]
      [--xrange-rounds 1] [--xrange-memory SIZE] [--xrange-connections 1,16] [--out DIR]
"""

import argparse
import csv
import io
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

READ_COUNT = 100


def redis_benchmark(port, command, requests, pipeline, clients, extra=()):
    """ops/s of redis-benchmark running `command` (a list of arguments)."""
    cmd = ["redis-benchmark", "-p", str(port), "-c", str(clients), "-n", str(requests),
           "-P", str(pipeline), "--csv"] + list(extra) + [str(a) for a in command]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=7200).stdout
    for row in csv.reader(io.StringIO(out)):
        if row and row[0] != "test":
            return float(row[1])
    raise RuntimeError("redis-benchmark printed no result: %r" % out)


def fill_stream(server, key, n, value="v", pipeline=64, clients=4):
    """Adds n entries `f value` with automatic IDs through redis-benchmark (fast, in C)."""
    if n > 0:
        redis_benchmark(server.port, ["XADD", key, "*", "f", value], n, pipeline, clients)


def random_digits_value(size):
    """A value of about `size` random decimal digits, as redis-benchmark fills it in (each
    __rand_int__ becomes its own 12-digit number): it compresses as real payloads do, where a
    repeated byte would shrink to nothing on disk."""
    return "__rand_int__" * max(size // 12, 1)


class Measured:
    """Wall time and server CPU of one measured stretch."""

    def __init__(self, server):
        self.server = server

    def __enter__(self):
        self.load = benchlib.load_average()
        self.cpu0, self.t0 = self.server.cpu_seconds(), time.time()
        return self

    def __exit__(self, *exc):
        self.secs = time.time() - self.t0
        self.cpu = self.server.cpu_seconds() - self.cpu0


def measure_xadd(server, pipeline, requests, clients):
    c = server.client()
    c.call("FLUSHALL")
    c.close()
    with Measured(server) as m:
        rate = redis_benchmark(server.port, ["XADD", "s", "*", "f", "v"], requests, pipeline,
                               clients)
    return {"rate": rate, "cpu_us": m.cpu * 1e6 / requests, "load": m.load}


def entry_ids(reply):
    """The entry IDs of an XREADGROUP reply for one stream (RESP2), [] for a null reply."""
    if not reply:
        return []
    return [e[0] for e in reply[0][1]]


def consumer_loop(port, name, start, stop, block_ms, result):
    """XREADGROUP COUNT 100 + XACK until the stream is drained (no BLOCK) or, with BLOCK, until
    `stop` is set and a read comes back empty. Puts the number of entries acked on `result`."""
    c = benchlib.Client(port)
    read = ["XREADGROUP", "GROUP", "g", name, "COUNT", READ_COUNT]
    if block_ms:
        read += ["BLOCK", block_ms]
    read += ["STREAMS", "s", ">"]
    acked, ids = 0, []
    start.wait()
    while True:
        if ids:
            ack, reply = c.pipeline([["XACK", "s", "g"] + ids, read])
            acked += ack
        else:
            reply = c.call(*read)
        ids = entry_ids(reply)
        if not ids and (not block_ms or stop.is_set()):
            break
    c.close()
    result.put(acked)


def start_consumers(server, k, block_ms):
    ctx = multiprocessing.get_context("fork")
    start, stop, result = ctx.Event(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=consumer_loop,
                         args=(server.port, "c%d" % i, start, stop, block_ms, result))
             for i in range(k)]
    for p in procs:
        p.start()
    return procs, start, stop, result


def join_consumers(procs, result):
    acked = sum(result.get(timeout=7200) for _ in procs)
    for p in procs:
        p.join()
    return acked


def measure_consumers(server, entries, k):
    c = server.client()
    c.call("FLUSHALL")
    fill_stream(server, "s", entries)
    entries = c.call("XLEN", "s")  # redis-benchmark may send a few more than asked
    c.call("XGROUP", "CREATE", "s", "g", "0")
    c.close()
    time.sleep(0.3)  # let a flush started by the fill settle
    procs, start, _, result = start_consumers(server, k, 0)
    with Measured(server) as m:
        start.set()
        acked = join_consumers(procs, result)
    if acked != entries:
        raise RuntimeError("%s: consumers acked %d of %d entries" % (server.name, acked, entries))
    return {"rate": acked / m.secs, "cpu_us": m.cpu * 1e6 / acked, "load": m.load}


def measure_trimmed_head(server, adds, reads):
    """A stream trimmed by `XADD s MAXLEN 1000` over `adds` entries, then XREVRANGE s + -
    COUNT 2000 (which reads down to the head, past which every trimmed entry once lay); reads
    per second."""
    c = server.client()
    c.call("FLUSHALL")
    redis_benchmark(server.port, ["XADD", "s", "MAXLEN", "1000", "*", "f", "v"], adds, 16, 1)
    with Measured(server) as m:
        for _ in range(reads):
            c.call("XREVRANGE", "s", "+", "-", "COUNT", 2000)
    c.close()
    return {"rate": reads / m.secs, "cpu_us": m.cpu * 1e6 / reads, "load": m.load}


def measure_queue(server, entries, step, k, pipeline):
    c = server.client()
    c.call("FLUSHALL")
    c.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    procs, start, stop, result = start_consumers(server, k, 100)
    start.set()
    steps = []
    with Measured(server) as m:
        done = 0
        while done < entries:
            n = min(step, entries - done)
            load = benchlib.load_average()
            with Measured(server) as s:
                rate = redis_benchmark(server.port, ["XADD", "s", "MAXLEN", "~", 1000, "*", "f",
                                                     "v"], n, pipeline, 1)
            done += n
            steps.append({"upto": done, "rate": rate, "cpu_us": s.cpu * 1e6 / n, "load": load})
            print("  %-6s queue %9d entries: %8.0f XADD/s  %6.2f us CPU/XADD  load %.2f" % (
                server.name, done, rate, s.cpu * 1e6 / n, load), flush=True)
        stop.set()
        acked = join_consumers(procs, result)
    length = c.call("XLEN", "s")
    c.close()
    rates = [x["rate"] for x in steps]
    return {"rate": benchlib.median(rates), "first": rates[0], "last": rates[-1],
            "min": min(rates), "max": max(rates), "steps": steps, "acked": acked,
            "xlen": length, "cpu_us": m.cpu * 1e6 / entries, "load": m.load}


def read_xrange(server, reads, seed):
    """`reads` XRANGEs of COUNT 100 from random points in the middle half of stream `s`."""
    c = server.client()
    first = int(c.call("XRANGE", "s", "-", "+", "COUNT", 1)[0][0].split(b"-")[0])
    last = int(c.call("XREVRANGE", "s", "+", "-", "COUNT", 1)[0][0].split(b"-")[0])
    rnd = random.Random(seed)
    lat, got = [], 0
    with Measured(server) as m:
        for _ in range(reads):
            ms = rnd.randint(first + (last - first) // 4, first + 3 * (last - first) // 4)
            t = time.perf_counter()
            reply = c.call("XRANGE", "s", ms, "+", "COUNT", READ_COUNT)
            lat.append(time.perf_counter() - t)
            got += len(reply)
    c.close()
    lat.sort()
    return {"rate": got / m.secs, "reads_per_s": reads / m.secs,
            "p50_us": lat[len(lat) // 2] * 1e6,
            "p99_us": lat[min(len(lat) - 1, len(lat) * 99 // 100)] * 1e6,
            "cpu_us": m.cpu * 1e6 / max(got, 1), "load": m.load}


def measure_xrange(server, entries, reads, value_size, seed):
    c = server.client()
    c.call("FLUSHALL")
    c.close()
    fill_stream(server, "s", entries, "x" * value_size)
    time.sleep(0.3)
    return read_xrange(server, reads, seed)


def wait_compactions_settled(server, timeout=3600):
    """Seconds until Basalt runs no compaction and estimates none pending (INFO rocksdb)."""
    c = server.client()
    start = time.time()
    settled = 0
    while time.time() - start < timeout:
        info = c.info("rocksdb")
        pending = sum(int(v) for k, v in info.items() if k.endswith("_pending_compaction_bytes"))
        settled = settled + 1 if pending == 0 and info.get("running_compactions") == "0" else 0
        if settled == 3:
            break
        time.sleep(1)
    c.close()
    return time.time() - start


def driver_xrange(server, connections, seconds, workdir):
    """basalt-bench's xrange phase: XRANGE s <ms> + COUNT 100 from random milliseconds of the
    middle half, one request in flight per connection, for `seconds`. Returns reads/s, p50 and
    p99 per read (us)."""
    summary = os.path.join(workdir, "xrange-%d.csv" % connections)
    subprocess.run([str(benchlib.BENCH), "--port", str(server.port), "--phases", "xrange",
                    "--stream", "s", "--xrange-count", str(READ_COUNT),
                    "--connections", str(connections), "--seconds", str(seconds),
                    "--label", "xrange-%d" % connections, "--summary-csv", summary],
                   check=True, stdout=subprocess.DEVNULL)
    with open(summary) as f:
        row = list(csv.DictReader(f))[-1]
    return float(row["ops_per_sec"]), float(row["p50_us"]), float(row["p99_us"])


def measure_xrange_beyond_memory(args):
    """Basalt alone in a memory cgroup of --xrange-memory (page cache included): fills the
    stream, then, for each of --xrange-connections, reads it from a freshly started server with
    none of the data in the page cache (basalt-bench, one read in flight per connection), next
    to the disk's own rate at the same number of reads in flight (fio, 4 KiB random direct
    reads at that queue depth). The reads start once the compactions that the fill left to do
    have run (their time is reported), and with the data evicted from the page cache again
    after them."""
    cgroup = benchlib.MemoryCgroup(benchlib.parse_size(args.xrange_memory), "stream-bench")
    workdir = tempfile.mkdtemp(prefix="bench-xrange-", dir=args.tmp)
    data = os.path.join(workdir, "data")
    try:
        with benchlib.basalt_server(args.basalt_option, args.tmp, data_dir=data,
                                    cgroup=cgroup) as server:
            t = time.time()
            redis_benchmark(server.port,
                            ["XADD", "s", "*", "f", random_digits_value(args.xrange_value_size)],
                            args.xrange_entries, 64, 4, extra=["-r", "1000000000000"])
            fill_secs = time.time() - t
        result = {"fill_secs": fill_secs, "runs": []}
        for connections in args.xrange_connections:
            _, fio_iops, fio_p50, fio_p99 = benchlib.fio_random_reads(
                os.path.join(workdir, "fio.dat"), args.xrange_fio_file, args.xrange_fio_seconds,
                connections)
            benchlib.drop_cached_data(cgroup, data)
            with benchlib.basalt_server(args.basalt_option, args.tmp, data_dir=data,
                                        cgroup=cgroup) as server:
                settle_secs = wait_compactions_settled(server)
                result.setdefault("settle_secs", settle_secs)
                benchlib.evict_from_page_cache(data)
                reads, p50, p99 = driver_xrange(server, connections, args.xrange_seconds, workdir)
            result["runs"].append({"connections": connections, "reads_per_s": reads,
                                   "p50_us": p50, "p99_us": p99, "fio_iops": fio_iops,
                                   "fio_p50_us": fio_p50, "fio_p99_us": fio_p99})
        result["data_bytes"] = benchlib.dir_bytes(data)
        return result
    finally:
        cgroup.remove()
        shutil.rmtree(workdir, ignore_errors=True)


def run(args):
    parts = args.parts
    results = {}  # (part, server) -> [result per round]

    def note(part, server, res, r):
        results.setdefault((part, server.name), []).append(res)
        print("round %d %-16s %-6s %10.0f /s  %6.2f us CPU  load %.2f" % (
            r + 1, part, server.name, res["rate"], res["cpu_us"], res["load"]), flush=True)

    with benchlib.redis_server(args.tmp) as redis, \
            benchlib.basalt_server(args.basalt_option, args.tmp) as basalt:
        for r in range(args.rounds):
            order = (basalt, redis) if r % 2 == 0 else (redis, basalt)
            if "xadd" in parts:
                for p in (1, 16):
                    n = args.xadd_requests * (4 if p == 16 else 1)
                    for server in order:
                        note("xadd -P %d" % p, server, measure_xadd(server, p, n, 50), r)
            if "consumers" in parts:
                for server in order:
                    note("consumers", server,
                         measure_consumers(server, args.consumer_entries, args.consumers), r)
            if "trimmed" in parts:
                for server in order:
                    note("trimmed head", server, measure_trimmed_head(server, 300000, 50), r)
            if "queue" in parts and r < args.queue_rounds:
                step = args.queue_step or max(args.queue_entries // 10, 1)
                for server in order:
                    note("queue", server, measure_queue(server, args.queue_entries, step,
                                                        args.consumers, args.queue_pipeline), r)
            if args.xrange_entries and r < args.xrange_rounds:
                for server in order:
                    if server is redis and args.xrange_basalt_only:
                        continue
                    note("xrange", server, measure_xrange(server, args.xrange_entries,
                                                          args.xrange_reads,
                                                          args.xrange_value_size, r), r)
    if args.xrange_memory:
        results[("xrange beyond memory", "basalt")] = [measure_xrange_beyond_memory(args)]
    return results


TARGETS = {"xadd -P 1": 0.8, "xadd -P 16": 0.5, "consumers": 0.5}


def report(args, results):
    lines = []
    rows = []
    loads = [x["load"] for runs in results.values() for x in runs if "load" in x]
    for part in ("xadd -P 1", "xadd -P 16", "consumers", "trimmed head", "queue", "xrange"):
        b, rd = results.get((part, "basalt"), []), results.get((part, "redis"), [])
        if not b:
            continue
        bo = benchlib.median([x["rate"] for x in b])
        bc = benchlib.median([x["cpu_us"] for x in b])
        if rd:
            ro = benchlib.median([x["rate"] for x in rd])
            rc = benchlib.median([x["cpu_us"] for x in rd])
            ratios = [x["rate"] / y["rate"] for x, y in zip(b, rd)]
            ratio = "%.2f (%.2f-%.2f)" % (benchlib.median(ratios), min(ratios), max(ratios))
            target = TARGETS.get(part)
            met = ("yes" if benchlib.median(ratios) >= target else "no") if target else "-"
            rows.append([part, "%.0f" % ro, "%.0f" % bo, ratio, "%.2f" % rc, "%.2f" % bc,
                         ">= %.1f: %s" % (target, met) if target else "-"])
        else:
            rows.append([part, "-", "%.0f" % bo, "-", "-", "%.2f" % bc, "-"])
    units = ("ops/s: XADDs (xadd, queue producer; queue: median of the steps), entries acked "
             "(consumers), XREVRANGEs (trimmed head), entries read (xrange); CPU: server "
             "microseconds per op or entry")
    lines.append("### Streams, %d rounds, per-round ratios Basalt/Redis\n" % args.rounds)
    lines.append(benchlib.markdown_table(
        ["workload", "Redis ops/s", "Basalt ops/s", "Basalt/Redis (range)", "Redis CPU us",
         "Basalt CPU us", "target"], rows))
    lines.append("\n%s.\n" % units)
    for server in ("redis", "basalt"):
        for i, q in enumerate(results.get(("queue", server), [])):
            lines.append("Queue, %s, round %d: %d entries, producer XADD/s per %d entries: %s; "
                         "consumers acked %d, XLEN at the end %d.\n" % (
                             server, i + 1, args.queue_entries, q["steps"][0]["upto"],
                             ", ".join("%.0f" % s["rate"] for s in q["steps"]), q["acked"],
                             q["xlen"]))
    for server in ("redis", "basalt"):
        for i, x in enumerate(results.get(("xrange", server), [])):
            lines.append("XRANGE, %s, round %d: %d entries of %d bytes, %d reads of COUNT %d: "
                         "%.0f entries/s, p50 %.0f us, p99 %.0f us per read.\n" % (
                             server, i + 1, args.xrange_entries, args.xrange_value_size,
                             args.xrange_reads, READ_COUNT, x["rate"], x["p50_us"],
                             x["p99_us"]))
    for x in results.get(("xrange beyond memory", "basalt"), []):
        lines.append(
            "XRANGE beyond memory, basalt: %d entries of %d random digits (%.2f GiB on disk, "
            "filled in %.0f s, compactions settled %.0f s after a restart) in a %s memory "
            "cgroup, read by a restarted server with none of it in the page cache, "
            "XRANGE COUNT %d from random points of the middle half for %d s, next to fio's "
            "4 KiB random direct reads at as many in flight:\n" % (
                args.xrange_entries, args.xrange_value_size, x["data_bytes"] / (1 << 30),
                x["fill_secs"], x["settle_secs"], args.xrange_memory, READ_COUNT,
                args.xrange_seconds))
        lines.append(benchlib.markdown_table(
            ["connections", "XRANGE reads/s", "entries/s", "p50 us", "p99 us", "fio reads/s",
             "fio p50 us", "XRANGE reads / fio reads"],
            [[str(r["connections"]), "%.0f" % r["reads_per_s"],
              "%.0f" % (r["reads_per_s"] * READ_COUNT), "%.0f" % r["p50_us"],
              "%.0f" % r["p99_us"], "%.0f" % r["fio_iops"], "%.0f" % r["fio_p50_us"],
              "%.2f" % (r["reads_per_s"] / r["fio_iops"])] for r in x["runs"]]))
        lines.append("")
    if loads:
        lines.append("Load average (1 min) at the runs: min %.2f, median %.2f, max %.2f (%d "
                     "cores)." % (min(loads), benchlib.median(loads), max(loads), os.cpu_count()))
    text = "\n".join(lines)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "streams.md").write_text(text + "\n")
        (out / "streams.json").write_text(json.dumps(
            {"results": {"%s/%s" % k: v for k, v in results.items()}, "args": vars(args)},
            indent=1, default=str))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--parts", type=lambda s: s.split(","),
                   default=["xadd", "consumers", "trimmed", "queue"],
                   help="subset of: xadd,consumers,trimmed,queue (xrange runs with "
                        "--xrange-entries)")
    p.add_argument("--xadd-requests", type=int, default=100000,
                   help="XADDs at -P 1 (four times as many at -P 16)")
    p.add_argument("--consumer-entries", type=int, default=200000)
    p.add_argument("--consumers", type=int, default=4, help="consumer processes")
    p.add_argument("--queue-entries", type=int, default=1000000)
    p.add_argument("--queue-step", type=int, default=0,
                   help="entries per reported producer rate (default: a tenth of the queue)")
    p.add_argument("--queue-pipeline", type=int, default=16)
    p.add_argument("--queue-rounds", type=int, default=1, help="rounds that run the queue")
    p.add_argument("--xrange-entries", type=int, default=0)
    p.add_argument("--xrange-reads", type=int, default=2000)
    p.add_argument("--xrange-value-size", type=int, default=100)
    p.add_argument("--xrange-rounds", type=int, default=1)
    p.add_argument("--xrange-basalt-only", action="store_true")
    p.add_argument("--xrange-memory", default=None,
                   help="also read the stream of --xrange-entries on Basalt alone, confined "
                        "to a memory cgroup of this size (e.g. 1g; needs root and fio)")
    p.add_argument("--xrange-connections", type=lambda v: [int(n) for n in v.split(",")],
                   default=[1, 16], help="connections reading beyond memory, one run each")
    p.add_argument("--xrange-seconds", type=int, default=20,
                   help="seconds of reading per run beyond memory")
    p.add_argument("--xrange-fio-file", default="4g", help="size of fio's file")
    p.add_argument("--xrange-fio-seconds", type=int, default=15)
    p.add_argument("--basalt-option", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   default=[], help="extra basalt-server config (repeatable)")
    p.add_argument("--tmp", default=None, help="parent of the servers' data directories")
    p.add_argument("--out", help="directory for streams.{md,json}")
    args = p.parse_args()
    args.basalt_option = dict(args.basalt_option)
    start = time.time()
    results = run(args)
    report(args, results)
    print("took %.0f s" % (time.time() - start))


if __name__ == "__main__":
    main()
