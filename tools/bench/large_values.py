#!/usr/bin/env python3
"""Large-value write test: load, then overwrite every key, with key-value separation on and off.

For each value size, two fresh basalt-servers (`rocksdb.enable-blob-files yes`, then `no`; the
order alternates between sizes) are loaded with enough keys for --dataset bytes of values, and
then every key is overwritten once with new values. Reports for each phase the throughput and,
from INFO rocksdb, the write amplification

    (flush bytes + compaction bytes, blob files included) / flush bytes

measured from just before the phase until its memtables are flushed (SAVE) and background
compaction has settled. Throughput is reported as seen by the client and sustained (over the
phase plus the time it takes to settle), so leaving compaction debt behind does not count as
speed. After the overwrite, a full compaction with blob garbage collection of
every blob file (blob-gc-age-cutoff 1.0) runs, and the space amplification is

    bytes on disk in the data directory / (keys x value size)

Values above 4000 bytes are stored as 64 KiB segments in the `subkey` column family, so a large
SET is one metadata entry plus one or more segments; with separation on, segments go to blob files.

  tools/bench/large_values.py [--sizes 16384,131072] [--dataset 8g] [--tmp DIR] --out DIR
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

COUNTERS = ["flush_write_bytes", "compact_write_bytes", "compact_read_bytes", "blob_write_bytes",
            "blob_gc_relocated_bytes", "wal_bytes", "stall_micros"]


def counters(client):
    info = client.info("rocksdb")
    return {k: int(info.get(k, 0)) for k in COUNTERS}, info


def settle(client, timeout=3600):
    """Flushes the memtables and waits until RocksDB has no compaction running or pending."""
    client.call("SAVE")
    deadline = time.time() + timeout
    quiet = 0
    while time.time() < deadline:
        info = client.info("rocksdb")
        pending = sum(int(v) for k, v in info.items() if k.endswith("_pending_compaction_bytes"))
        busy = int(info["running_compactions"]) + int(info["manual_compaction_running"])
        quiet = quiet + 1 if busy == 0 and pending == 0 else 0
        if quiet >= 3:
            return
        time.sleep(0.5)


def write_amp(before, after):
    flush = after["flush_write_bytes"] - before["flush_write_bytes"]
    compact = after["compact_write_bytes"] - before["compact_write_bytes"]
    return (flush + compact) / flush if flush else float("nan"), flush, compact


def fill(server, args, size, keys, seed, label):
    start = time.time()
    subprocess.run([str(benchlib.BENCH), "--port", str(server.port), "--keys", str(keys),
                    "--connections", str(args.connections), "--value-size", str(size),
                    "--phases", "fill", "--fill-pipeline", str(args.pipeline),
                    "--value-seed", str(seed), "--label", label, "--summary-csv",
                    str(Path(args.out) / "large-values-driver.csv")],
                   check=True, timeout=24 * 3600)
    return time.time() - start


def one_run(args, size, blobs):
    keys = max(1, args.dataset // size)
    label = "%dKiB-blob-%s" % (size // 1024, blobs)
    result = {"value_size": size, "blob_files": blobs, "keys": keys, "load_avg": []}
    # No replica follows these servers: keep no archived WAL (repl-wal-*), which would otherwise
    # count in the space amplification until RocksDB trims the archive (every 10 minutes).
    options = {"rocksdb.enable-blob-files": blobs, "durability": "lazy",
               "repl-wal-ttl": "0", "repl-wal-size-limit": "0"}
    options.update(args.option)
    with benchlib.basalt_server(options, tmp_root=args.tmp) as server:
        c = server.client()
        data_dir = os.path.join(server.dir, "data")
        for phase, seed in (("load", 0), ("overwrite", 1000)):
            before, _ = counters(c)
            result["load_avg"].append(benchlib.load_average())
            secs = fill(server, args, size, keys, seed, "%s-%s" % (label, phase))
            client_mb_s = keys * size / secs / 2**20
            settle_start = time.time()
            settle(c)
            settle_secs = time.time() - settle_start
            # Sustained: until the phase's data is flushed and its compaction debt paid, so a
            # configuration cannot look fast by leaving its compactions for later.
            sustained_mb_s = keys * size / (secs + settle_secs) / 2**20
            after, _ = counters(c)
            wa, flush, compact = write_amp(before, after)
            result[phase] = {"seconds": secs, "settle_seconds": settle_secs,
                             "ops_per_sec": keys / secs, "mib_per_sec": client_mb_s,
                             "sustained_mib_per_sec": sustained_mb_s,
                             "write_amp": wa, "flush_bytes": flush, "compact_bytes": compact,
                             "stall_micros": after["stall_micros"] - before["stall_micros"],
                             "disk_bytes": benchlib.dir_bytes(data_dir)}
            print("%s %s: %.1f s (+%.1f s to settle), %.0f ops/s, %.1f MiB/s (sustained %.1f), "
                  "write amp %.2f (flush %.2f GiB, compaction %.2f GiB)" % (
                      label, phase, secs, settle_secs, keys / secs, client_mb_s, sustained_mb_s,
                      wa, flush / 2**30, compact / 2**30), flush=True)
        # Garbage-collect every blob file and compact everything, then measure the space.
        c.call("CONFIG", "SET", "rocksdb.blob-gc-age-cutoff", "1.0")
        c.call("COMPACT")
        time.sleep(1)
        settle(c)
        live = keys * size
        disk = benchlib.dir_bytes(data_dir)
        _, info = counters(c)
        stored = sum(int(v) for k, v in info.items()
                     if k.endswith("_sst_bytes")
                     or (k.endswith("_blob_bytes") and not k.endswith("_live_blob_bytes")))
        result["after_gc"] = {"disk_bytes": disk, "sst_and_blob_bytes": stored,
                              "live_bytes": live, "space_amp": disk / live,
                              "space_amp_files": stored / live}
        print("%s after GC: %.2f GiB on disk for %.2f GiB of values: space amp %.2f" % (
            label, disk / 2**30, live / 2**30, disk / live), flush=True)
        c.close()
    return result


def report(args, results):
    rows = []
    for size in args.sizes:
        runs = [r for r in results if r["value_size"] == size]
        for r in runs:
            rows.append(["%d KiB" % (size // 1024), r["blob_files"], r["keys"],
                         "%.0f" % r["load"]["mib_per_sec"], "%.2f" % r["load"]["write_amp"],
                         "%.0f" % r["overwrite"]["mib_per_sec"],
                         "%.0f" % r["overwrite"]["sustained_mib_per_sec"],
                         "%.0f" % r["overwrite"]["ops_per_sec"],
                         "%.2f" % r["overwrite"]["write_amp"],
                         "%.2f" % r["after_gc"]["space_amp"],
                         "%.1f" % (r["overwrite"]["stall_micros"] / 1e6),
                         " ".join("%.1f" % x for x in r["load_avg"])])
        if len(runs) < 2:
            continue
        on, off = (next(r for r in runs if r["blob_files"] == b) for b in ("yes", "no"))
        rows.append(["%d KiB" % (size // 1024), "on/off", "", "%.2fx" % (
            on["load"]["mib_per_sec"] / off["load"]["mib_per_sec"]), "", "%.2fx" % (
            on["overwrite"]["mib_per_sec"] / off["overwrite"]["mib_per_sec"]), "%.2fx" % (
            on["overwrite"]["sustained_mib_per_sec"] /
            off["overwrite"]["sustained_mib_per_sec"]), "", "", "", "", ""])
    extra = "".join(", %s %s" % kv for kv in args.option.items())
    text = "\n".join([
        "### Large values: %.1f GiB per run, %d connections, pipeline %d, durability lazy%s\n" % (
            args.dataset / 2**30, args.connections, args.pipeline, extra),
        benchlib.markdown_table(
            ["value", "blob files", "keys", "load MiB/s", "load WA", "overwrite MiB/s",
             "overwrite sustained MiB/s", "overwrite ops/s", "overwrite WA", "space amp after GC", "overwrite stall s",
             "load avg"], rows), ""])
    print(text)
    out = Path(args.out)
    (out / "large-values.md").write_text(text)
    (out / "large-values.json").write_text(json.dumps(results, indent=1))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="16384,131072")
    p.add_argument("--dataset", default="8g", help="bytes of values per run (k/m/g suffix)")
    p.add_argument("--connections", type=int, default=4)
    p.add_argument("--pipeline", type=int, default=4)
    p.add_argument("--tmp", default=None, help="parent of the servers' data directories")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a config key for both servers, e.g. rocksdb.blob-gc-age-cutoff=0.1")
    p.add_argument("--blobs", default="yes,no", help="runs with blob files on, off or both: yes, no or yes,no")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    args.sizes = [benchlib.parse_size(s) for s in args.sizes.split(",")]
    args.option = dict(o.split("=", 1) for o in args.option)
    args.dataset = benchlib.parse_size(args.dataset)
    if not benchlib.BENCH.exists():
        sys.exit("%s not built (needs libhiredis-dev; run tools/build)" % benchlib.BENCH)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "large-values-driver.csv").unlink(missing_ok=True)
    results = []
    for i, size in enumerate(args.sizes):
        order = ("yes", "no") if i % 2 == 0 else ("no", "yes")
        for blobs in (b for b in order if b in args.blobs.split(",")):
            results.append(one_run(args, size, blobs))
    report(args, results)


if __name__ == "__main__":
    main()
