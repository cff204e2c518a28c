#!/usr/bin/env python3
"""redis-benchmark against Basalt and a real redis-server, side by side.

Starts the Debian redis-server (persistence off) and basalt-server on free ports, each with its
own temporary directory, and runs redis-benchmark against both in alternating order, round after
round, for every command at each pipeline depth. Prints (and writes) a table of ops/s per
server (the median of the rounds) and the ratio Basalt/Redis: the median of the rounds' own
ratios, each taken between the two servers' runs of one round, with their range beside it.

redis-benchmark's pop tests pop from one fixed key, and LRANGE_100 reads one fixed list, so the
commands run in groups that make every pop and range read meaningful:

  strings:  SET GET INCR MSET        random keys over -r KEYSPACE
  lists:    LPUSH RPUSH LPOP RPOP    pushes n + n elements, then pops them all (no empty pops)
  sets:     SADD HSET SPOP ZADD ZPOPMIN   SPOP/ZPOPMIN follow the adds that filled their key
  lrange:   LRANGE_100               redis-benchmark first fills the list with its own LPUSH pass

Both servers are flushed before each group. Usage:

  tools/bench/redis_bench.py [--rounds 3] [--requests-p1 N] [--requests-p16 N] [--out DIR]
"""

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

COMMANDS = ["SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP", "SADD", "HSET", "SPOP",
            "ZADD", "ZPOPMIN", "LRANGE_100", "MSET"]
GROUPS = [
    ("strings", "set,get,incr,mset"),
    ("lists", "lpush,rpush,lpop,rpop"),
    ("sets", "sadd,hset,spop,zadd,zpopmin"),
    ("lrange", "lrange_100"),
]


def test_name(csv_name):
    """Maps redis-benchmark's CSV test names to ours ("LRANGE_100 (first 100 elements)")."""
    name = csv_name.split(" ")[0].upper()
    if name.startswith("MSET"):
        return "MSET"
    if csv_name.startswith("LPUSH (needed"):
        return None
    return name if name in COMMANDS else None


def run_group(port, tests, pipeline, requests, clients, keyspace):
    cmd = ["redis-benchmark", "-p", str(port), "-c", str(clients), "-n", str(requests),
           "-r", str(keyspace), "-P", str(pipeline), "-t", tests, "--csv"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=3600).stdout
    result = {}
    for row in csv.reader(io.StringIO(out)):
        if not row or row[0] == "test":
            continue
        name = test_name(row[0])
        if name:
            result[name] = float(row[1])
    return result


def run(args):
    servers = {}
    rounds = {p: {"redis": {c: [] for c in COMMANDS}, "basalt": {c: [] for c in COMMANDS}}
              for p in args.pipelines}
    loads = []
    with benchlib.redis_server() as redis, benchlib.basalt_server(args.basalt_option) as basalt:
        servers = {"redis": redis, "basalt": basalt}
        clients = {k: s.client() for k, s in servers.items()}
        for rnd in range(args.rounds):
            for pipeline in args.pipelines:
                requests = args.requests_p1 if pipeline == 1 else args.requests_p16
                for gi, (group, tests) in enumerate(GROUPS):
                    if group not in args.groups:
                        continue
                    # Alternate who goes first so that neither side always meets the same noise.
                    order = ["redis", "basalt"] if (rnd + gi) % 2 == 0 else ["basalt", "redis"]
                    for name in order:
                        clients[name].call("FLUSHALL")
                        loads.append(benchlib.load_average())
                        res = run_group(servers[name].port, tests, pipeline, requests,
                                        args.clients, args.keyspace)
                        for cmd, rps in res.items():
                            rounds[pipeline][name][cmd].append(rps)
                        print("round %d -P %-2d %-7s %-6s %s" % (
                            rnd + 1, pipeline, group, name,
                            " ".join("%s=%.0f" % kv for kv in res.items())), flush=True)
        for c in clients.values():
            c.close()
    return rounds, loads


def paired_ratios(redis_runs, basalt_runs):
    """Basalt/Redis for each round. The two servers of a round run back to back, so a slow
    stretch of the machine (another tenant's build, a hypervisor stall) weighs on both sides of
    that round's ratio, where a ratio of the two medians can pair a fast round of one server
    with a slow round of the other."""
    return [b / r for r, b in zip(redis_runs, basalt_runs) if r]


def report(args, rounds, loads):
    lines = []
    summary = {}
    for pipeline in args.pipelines:
        rows = []
        summary[pipeline] = {}
        for cmd in COMMANDS:
            if not rounds[pipeline]["redis"][cmd]:
                continue
            redis_runs = rounds[pipeline]["redis"][cmd]
            basalt_runs = rounds[pipeline]["basalt"][cmd]
            r = benchlib.median(redis_runs)
            b = benchlib.median(basalt_runs)
            per_round = paired_ratios(redis_runs, basalt_runs)
            ratio = benchlib.median(per_round)
            summary[pipeline][cmd] = {"redis": r, "basalt": b, "ratio": ratio,
                                      "ratio_of_medians": b / r if r else float("nan"),
                                      "round_ratios": per_round}
            target = 0.8 if pipeline == 1 else 0.5
            spread = "%.2f-%.2f" % (min(per_round), max(per_round)) if per_round else "-"
            rows.append([cmd, "%.0f" % r, "%.0f" % b, "%.2f" % ratio, spread,
                         "yes" if ratio >= target else "no"])
        lines.append("### -P %d, %d clients, -r %d, -n %d, median of %d rounds\n" % (
            pipeline, args.clients, args.keyspace,
            args.requests_p1 if pipeline == 1 else args.requests_p16, args.rounds))
        lines.append(benchlib.markdown_table(
            ["command", "redis ops/s", "basalt ops/s", "basalt/redis", "rounds' ratios",
             ">= %.1f" % (0.8 if pipeline == 1 else 0.5)], rows))
        lines.append("")
    lines.append("Load average during the runs: min %.2f, median %.2f, max %.2f (2 cores)." % (
        min(loads), benchlib.median(loads), max(loads)))
    text = "\n".join(lines)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "redis-benchmark.md").write_text(text + "\n")
        with open(out / "redis-benchmark.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["pipeline", "command", "server", "round", "ops_per_sec"])
            for pipeline in args.pipelines:
                for server in ("redis", "basalt"):
                    for cmd in COMMANDS:
                        for i, v in enumerate(rounds[pipeline][server][cmd]):
                            w.writerow([pipeline, cmd, server, i + 1, v])
        (out / "redis-benchmark.json").write_text(json.dumps(
            {"summary": summary, "loads": loads, "args": vars(args)}, indent=1, default=str))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--keyspace", type=int, default=1000000)
    p.add_argument("--requests-p1", type=int, default=100000)
    p.add_argument("--requests-p16", type=int, default=1000000)
    p.add_argument("--pipelines", type=lambda s: [int(x) for x in s.split(",")], default=[1, 16])
    p.add_argument("--groups", type=lambda s: s.split(","),
                   default=[g for g, _ in GROUPS], help="subset of: " + ",".join(
                       g for g, _ in GROUPS))
    p.add_argument("--basalt-option", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   default=[], help="extra basalt-server config (repeatable)")
    p.add_argument("--out", help="directory for redis-benchmark.{md,csv,json}")
    args = p.parse_args()
    args.basalt_option = dict(args.basalt_option)
    start = time.time()
    rounds, loads = run(args)
    report(args, rounds, loads)
    print("took %.0f s" % (time.time() - start))


if __name__ == "__main__":
    main()
