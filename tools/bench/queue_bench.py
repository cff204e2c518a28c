#!/usr/bin/env python3
"""Queue workloads on Basalt and on redis-server, side by side: server CPU per command.

Each pattern fills one key, then sends pipelines of `pairs` (producer, consumer) pairs over one
connection, so a queue's length stays level while the consumer keeps popping where the
producer adds:

  list         LPUSH q x            + RPOP q      (a FIFO work queue)
  zset-rising  ZADD pq <n+1> m<n>   + ZPOPMIN pq  (scheduled jobs: rising timestamps)
  zset-random  ZADD pq <random> m   + ZPOPMIN pq  (a priority queue: most adds land below the
                                                   point the pops have reached)
  stream       XADD s MAXLEN ~ <fill> * f x + XREADGROUP GROUP g c COUNT 1 NOACK STREAMS s >
                                                  (a trimmed log read through a consumer group)

A disk-backed server's pops leave tombstones where the queue used to start; these patterns show
whether later pops step over them. The figure is the server's own CPU time (/proc/<pid>/stat)
divided by the commands, which a busy 2-core machine disturbs less than the client's rate.
The two servers alternate within each round; the table gives medians and the ratio
Basalt / Redis (higher means Basalt costs more).

  tools/bench/queue_bench.py [--rounds 3] [--pairs 1,16] [--fill 20000] [--commands 64000]
"""

import argparse
import random
import sys
import time
from pathlib import Path

from benchlib import basalt_server, load_average, markdown_table, median, redis_server

PATTERNS = ("list", "zset-rising", "zset-random", "stream")


def fill(client, pattern, n, rnd):
    for start in range(0, n, 1000):
        chunk = range(start, min(n, start + 1000))
        if pattern == "list":
            client.call("RPUSH", "q", *["v%d" % i for i in chunk])
        elif pattern == "stream":
            for i in chunk:
                client.call("XADD", "s", "*", "f", "v%d" % i)
        else:
            args = []
            for i in chunk:
                score = i if pattern == "zset-rising" else rnd.randrange(10 ** 6)
                args += [score, "f%d" % i]
            client.call("ZADD", "pq", *args)


def pair(pattern, i, rnd, fill_n):
    if pattern == "list":
        return [["LPUSH", "q", "x"], ["RPOP", "q"]]
    if pattern == "stream":
        return [["XADD", "s", "MAXLEN", "~", fill_n, "*", "f", "x"],
                ["XREADGROUP", "GROUP", "g", "c", "COUNT", 1, "NOACK", "STREAMS", "s", ">"]]
    score = (10 ** 6 + i) if pattern == "zset-rising" else rnd.randrange(10 ** 6)
    return [["ZADD", "pq", score, "m%d" % rnd.randrange(10 ** 6)], ["ZPOPMIN", "pq"]]


def measure(server, pattern, pairs, fill_n, commands, seed):
    """Server CPU microseconds per command and client-side commands per second."""
    rnd = random.Random(seed)
    c = server.client()
    c.call("FLUSHALL")
    fill(c, pattern, fill_n, rnd)
    if pattern == "stream":
        c.call("XGROUP", "CREATE", "s", "g", "0")
    time.sleep(0.3)  # let a flush started by the fill settle
    cpu0, t0, sent, i = server.cpu_seconds(), time.time(), 0, 0
    while sent < commands:
        batch = []
        for _ in range(pairs):
            batch += pair(pattern, i, rnd, fill_n)
            i += 1
        c.pipeline(batch)
        sent += len(batch)
    cpu, secs = server.cpu_seconds() - cpu0, time.time() - t0
    c.close()
    return cpu * 1e6 / sent, sent / secs


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--pairs", default="1,16", help="comma-separated pipeline sizes, in pairs")
    p.add_argument("--fill", type=int, default=20000, help="members before the pairs start")
    p.add_argument("--commands", type=int, default=64000, help="commands per measurement")
    p.add_argument("--patterns", default=",".join(PATTERNS))
    p.add_argument("--out", default=None, help="directory for queue.md")
    args = p.parse_args()
    patterns = [x for x in args.patterns.split(",") if x]
    results = {}  # (pattern, pairs, server) -> [(cpu_us, ops)]
    with basalt_server() as basalt, redis_server() as redis:
        for r in range(args.rounds):
            for pattern in patterns:
                for pairs in [int(x) for x in args.pairs.split(",")]:
                    for server in (basalt, redis) if r % 2 == 0 else (redis, basalt):
                        res = measure(server, pattern, pairs, args.fill, args.commands, r)
                        results.setdefault((pattern, pairs, server.name), []).append(res)
                        print("round %d %-12s P%-3d %-6s %7.2f us/cmd %9.0f cmd/s" % (
                            r + 1, pattern, pairs, server.name, res[0], res[1]), flush=True)
    rows = []
    for pattern in patterns:
        for pairs in [int(x) for x in args.pairs.split(",")]:
            b = results[(pattern, pairs, "basalt")]
            rd = results[(pattern, pairs, "redis")]
            bc, rc = median([x[0] for x in b]), median([x[0] for x in rd])
            bo, ro = median([x[1] for x in b]), median([x[1] for x in rd])
            rows.append([pattern, pairs, "%.2f" % bc, "%.2f" % rc, "%.2f" % (bc / rc),
                         "%.0f" % bo, "%.0f" % ro, "%.2f" % (bo / ro)])
    table = markdown_table(
        ["pattern", "pairs per pipeline", "Basalt CPU us/cmd", "Redis CPU us/cmd",
         "CPU ratio", "Basalt cmd/s", "Redis cmd/s", "rate ratio"], rows)
    text = "%s\n\nfill %d, %d commands per measurement, %d rounds, load %.2f\n" % (
        table, args.fill, args.commands, args.rounds, load_average())
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "queue.md").write_text(text)


if __name__ == "__main__":
    sys.exit(main())
