#!/usr/bin/env python3
"""Instructions per command of basalt-server, counted by valgrind's callgrind.

Server CPU time on these shared 2-core machines moves by 10-15% between identical runs, which
hides most single changes. The number of instructions the server executes for a fixed workload
moves by about 1%, so this compares builds by that instead: each binary runs under callgrind
with counting off, redis-benchmark fills the data set, counting is switched on for the measured
test alone, and the count is divided by the test's requests. Every thread of the server counts
(workers, flushes, compactions).

Instructions are not time: a change that only removes cached comparisons shows here and may not
show in the rate, and cache misses do not show here at all. Report both.

  tools/bench/instructions.py --test lpop --fill lpush --fill-requests 300000 \\
      --requests 200000 [--pipeline 16] [--clients 50] [--top 15] BINARY [BINARY...]

BINARY defaults to build/basalt-server; the first one given is the baseline of the ratio column.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from benchlib import BASALT, free_port, markdown_table, wait_ready


def benchmark(port, test, requests, pipeline, clients, value_size):
    subprocess.run(
        ["redis-benchmark", "-p", str(port), "-c", str(clients), "-n", str(requests), "-r",
         "1000000", "-P", str(pipeline), "-d", str(value_size), "-t", test, "-q"],
        check=True, stdout=subprocess.DEVNULL)


def callgrind_control(*args):
    subprocess.run(["callgrind_control", *args], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def measure(binary, args):
    """Returns (instructions per request, the dump's path) for one run of `binary`."""
    workdir = tempfile.mkdtemp(prefix="bench-callgrind-")
    port = free_port()
    out = os.path.join(workdir, "callgrind.out")
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + out,
         str(binary), "--port", str(port), "--bind", "127.0.0.1", "--dir",
         os.path.join(workdir, "data"), "--logfile", os.path.join(workdir, "basalt.log")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, proc, timeout=300)
        if args.fill:
            benchmark(port, args.fill, args.fill_requests, 16, args.clients, args.value_size)
        callgrind_control("--instr=on", str(proc.pid))
        benchmark(port, args.test, args.requests, args.pipeline, args.clients, args.value_size)
        callgrind_control("--dump", str(proc.pid))
    finally:
        proc.terminate()
        proc.wait()
    dumps = sorted(glob.glob(out + ".*"))
    if not dumps:
        raise RuntimeError("callgrind wrote no dump for " + str(binary))
    with open(dumps[0]) as f:
        summary = next(int(line.split()[1]) for line in f if line.startswith("summary:"))
    kept = os.path.join(tempfile.gettempdir(),
                        "callgrind.%s.%s" % (os.path.basename(str(binary)), args.test))
    shutil.copy(dumps[0], kept)
    shutil.rmtree(workdir, ignore_errors=True)
    return summary / args.requests, kept


def top_functions(dump, n):
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", dump], check=True,
                          capture_output=True, text=True).stdout
    rows = []
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*([\d.]+)%\)\s+(\S.*)", line)
        if m and "PROGRAM TOTALS" not in line:
            name = m.group(3).rsplit(" [", 1)[0]
            name = name.split("???:", 1)[-1].replace("(anonymous namespace)", "{anon}")
            rows.append("%6s%%  %s" % (m.group(2), name.split("(")[0][:110]))
    return rows[:n]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("binaries", nargs="*", default=[str(BASALT)])
    p.add_argument("--test", required=True, help="a redis-benchmark -t name, e.g. lpop")
    p.add_argument("--fill", help="a redis-benchmark test run first, not counted")
    p.add_argument("--fill-requests", type=int, default=300000)
    p.add_argument("--requests", type=int, default=100000)
    p.add_argument("--pipeline", type=int, default=16)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--value-size", type=int, default=3, help="redis-benchmark -d")
    p.add_argument("--top", type=int, default=0, help="list each binary's costliest functions")
    args = p.parse_args()
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        sys.exit("needs valgrind (apt-get install valgrind)")
    rows, base = [], None
    for binary in args.binaries:
        per_request, dump = measure(binary, args)
        base = base or per_request
        rows.append([binary, args.test.upper(), "%.0f" % per_request,
                     "%.3f" % (per_request / base)])
        if args.top:
            print("%s (%s):" % (binary, dump))
            print("\n".join(top_functions(dump, args.top)))
    print(markdown_table(["binary", "test", "instructions per request", "ratio"], rows))


if __name__ == "__main__":
    main()
