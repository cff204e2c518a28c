#!/usr/bin/env python3
"""The workload suite: basalt-bench against Basalt in each durability mode, and against Redis.

For each mode (sync, lazy, nosync) a fresh basalt-server is started on a free port with its own
data directory; basalt-bench fills N keys, then runs random reads and the 70/30, 50/50 and 30/70
read/write mixes with C connections (multiplexed by one driver thread unless told otherwise)
and values of V bytes. The pseudo-mode `redis` runs the same phases against a redis-server with
persistence off: what this machine and this driver give an in-memory server, the floor for every
latency figure. The rounds of different modes alternate (sync, lazy, nosync, redis, sync, ...)
so that the machine's noise spreads over all of them.
Writes workload-summary.csv, workload-series.csv, workload.md and, when gnuplot is installed,
PNG charts: throughput over keys loaded, and latency percentiles per mix.

  tools/bench/workload.py [--keys N] [--connections C] [--client-threads T] [--value-size V]
                          [--seconds S] [--modes sync,lazy,nosync,redis] [--rounds R] --out DIR
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

MIX_PHASES = ["read", "mix70", "mix50", "mix30"]
LATENCY_COLUMNS = ["min_us", "rms_us", "p50_us", "p99_us", "p999_us", "p9999_us", "max_us"]


def run_driver(server, label, args, out, phases, extra=()):
    cmd = [str(benchlib.BENCH), "--port", str(server.port), "--keys", str(args.keys),
           "--connections", str(args.connections), "--threads", str(args.client_threads),
           "--value-size", str(args.value_size),
           "--phases", ",".join(phases), "--seconds", str(args.seconds), "--label", label,
           "--summary-csv", str(out / "workload-summary.csv"),
           "--series-csv", str(out / "workload-series.csv"),
           "--interval-ms", str(args.interval_ms), *extra]
    subprocess.run(cmd, check=True, timeout=24 * 3600)


def run(args, out):
    for f in ("workload-summary.csv", "workload-series.csv"):
        (out / f).unlink(missing_ok=True)
    loads = {}
    for rnd in range(args.rounds):
        for mode in args.modes:
            label = "%s-r%d" % (mode, rnd + 1)
            options = {"durability": mode, **args.basalt_option}
            start = (benchlib.redis_server(tmp_root=args.tmp) if mode == "redis" else
                     benchlib.basalt_server(options, tmp_root=args.tmp))
            with start as server:
                loads[label] = benchlib.load_average()
                run_driver(server, label, args, out, ["fill"] + MIX_PHASES,
                           ["--fill-pipeline", str(args.fill_pipeline)])
    return loads


def read_summary(out):
    with open(out / "workload-summary.csv") as f:
        return list(csv.DictReader(f))


def report(args, out, loads):
    rows = read_summary(out)
    table = []
    for mode in args.modes:
        for phase in ["fill"] + MIX_PHASES:
            picked = [r for r in rows if r["label"].startswith(mode + "-") and r["phase"] == phase]
            if not picked:
                continue
            med = {c: benchlib.median([float(r[c]) for r in picked])
                   for c in ["ops_per_sec"] + LATENCY_COLUMNS}
            table.append([mode, phase, "%.0f" % med["ops_per_sec"]] +
                         ["%.0f" % med[c] for c in LATENCY_COLUMNS])
    text = ["### basalt-bench: %d keys, %d connections on %d driver thread(s), %d-byte values, "
            "%gs per phase, median of %d round(s)\n" % (
                args.keys, args.connections, args.client_threads, args.value_size, args.seconds,
                args.rounds),
            "Latencies in microseconds; fill is pipelined %d deep (latency = batch round trip).\n"
            % args.fill_pipeline,
            benchlib.markdown_table(["mode", "phase", "ops/s", "min", "rms", "p50", "p99",
                                     "p99.9", "p99.99", "max"], table),
            "",
            "Load average at the start of each run: " +
            ", ".join("%s %.2f" % kv for kv in loads.items()) + " (2 cores).", ""]
    (out / "workload.md").write_text("\n".join(text))
    print("\n".join(text))
    charts(args, out)


def server_label(mode):
    return "redis-server" if mode == "redis" else "basalt, durability " + mode


def charts(args, out):
    if shutil.which("gnuplot") is None:
        print("gnuplot not installed: no charts (apt-get install gnuplot-nox)")
        return
    series = out / "workload-series.csv"
    labels = ["%s-r1" % m for m in args.modes]
    plots = ", ".join(
        "'%s' using 6:(strcol(1) eq '%s' && strcol(2) eq 'fill' ? $5 : NaN) with lines lw 2 "
        "title '%s'" % (series, label, label.split("-")[0]) for label in labels)
    script = """
set datafile separator ','
set terminal png size 1000,600
set output '%s'
set title 'Fill: throughput over keys loaded (%d-byte values, %d connections, pipeline %d)'
set xlabel 'keys loaded'
set ylabel 'SET ops/s (log scale)'
set logscale y
set key top right
set grid
plot %s
unset logscale y
""" % (out / "fill-throughput.png", args.value_size, args.connections, args.fill_pipeline, plots)
    # Latency percentiles per mix: one cluster of bars per phase, one bar per percentile.
    summary = read_summary(out)
    for mode in args.modes:
        data = out / ("latency-%s.dat" % mode)
        with open(data, "w") as f:
            f.write("phase p50 p99 p99.9 p99.99\n")
            for phase in MIX_PHASES:
                picked = [r for r in summary if r["label"].startswith(mode + "-")
                          and r["phase"] == phase]
                if picked:
                    f.write("%s %s\n" % (phase, " ".join(
                        "%.1f" % benchlib.median([float(r[c]) for r in picked])
                        for c in ["p50_us", "p99_us", "p999_us", "p9999_us"])))
        script += """
set datafile separator whitespace
set output '%s'
set title 'Latency percentiles per mix, %s (%d keys, %d connections, %d-byte values)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set ylabel 'latency (us, log scale)'
set xlabel 'workload (read percentage)'
set key top left
plot for [i=2:5] '%s' using i:xtic(1) title columnhead(i)
unset logscale y
""" % (out / ("latency-%s.png" % mode), server_label(mode), args.keys, args.connections,
       args.value_size, data)
    script_path = out / "charts.gp"
    script_path.write_text(script)
    subprocess.run(["gnuplot", str(script_path)], check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--keys", type=int, default=1000000)
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--client-threads", type=int, default=1,
                   help="driver threads; each multiplexes its share of the connections")
    p.add_argument("--value-size", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--fill-pipeline", type=int, default=16)
    p.add_argument("--interval-ms", type=int, default=1000, help="time series resolution")
    p.add_argument("--modes", default="sync,lazy,nosync,redis",
                   help="Basalt durability modes; 'redis' is redis-server, for reference")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--tmp", default=None, help="parent of the servers' data directories")
    p.add_argument("--basalt-option", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   default=[])
    p.add_argument("--out", required=True)
    args = p.parse_args()
    args.modes = args.modes.split(",")
    args.basalt_option = dict(args.basalt_option)
    if not benchlib.BENCH.exists():
        sys.exit("%s not built (needs libhiredis-dev; run tools/build)" % benchlib.BENCH)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    loads = run(args, out)
    report(args, out, loads)


if __name__ == "__main__":
    main()
