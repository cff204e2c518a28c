#!/usr/bin/env python3
"""How long this machine takes a busy core away: the floor under every tail-latency figure.

Runs one process per core, pinned, each reading the monotonic clock in a tight loop for S
seconds, and counts the gaps between two consecutive reads that exceed 0.5 ms: time in which
that process did not run (the kernel's other threads and interrupts, other tenants of the
machine, the hypervisor). A server whose cores are all busy loses the same time; when such gaps
recur more than once per 10,000 requests, they set its p99.99 however fast it is. Writes
stalls.md with a histogram of the gaps per core.

  tools/bench/stalls.py [--seconds S] --out DIR
"""

import argparse
import multiprocessing
import os
import time
from pathlib import Path

BUCKET_NS = 500_000  # 0.5 ms


def spin(core, seconds, queue):
    os.sched_setaffinity(0, {core})
    now = time.perf_counter_ns
    end = now() + int(seconds * 1e9)
    gaps = {}
    last = now()
    while last < end:
        t = now()
        if t - last >= BUCKET_NS:
            bucket = (t - last) // BUCKET_NS
            gaps[bucket] = gaps.get(bucket, 0) + 1
        last = t
    queue.put((core, gaps))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=spin, args=(c, args.seconds, queue)) for c in cores]
    for proc in procs:
        proc.start()
    results = dict(queue.get() for _ in procs)
    for proc in procs:
        proc.join()

    buckets = sorted({b for gaps in results.values() for b in gaps})
    lines = ["### Stalls: %d cores busy for %g s\n" % (len(cores), args.seconds),
             "Gaps a pinned, spinning process saw between two clock reads, per core.\n",
             "| gap (ms) | " + " | ".join("core %d" % c for c in cores) + " |",
             "| --- |" + " --- |" * len(cores)]
    for b in buckets:
        lines.append("| %.1f-%.1f | " % (b / 2, b / 2 + 0.5) +
                     " | ".join(str(results[c].get(b, 0)) for c in cores) + " |")
    over2 = sum(n for gaps in results.values() for b, n in gaps.items() if b >= 4)
    lost = sum(n * (b + 0.5) / 2 for gaps in results.values() for b, n in gaps.items())
    lines.append("\nGaps of 2 ms or more: %d (%.1f per core-minute); time lost in gaps: about "
                 "%.0f ms per core-minute.\n" % (
                     over2, over2 * 60 / (args.seconds * len(cores)),
                     lost * 60 / (args.seconds * len(cores))))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "stalls.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
