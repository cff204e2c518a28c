"""The workload driver (build/basalt-bench) measures what it claims to.

Its figures go into docs/benchmarks.md, so a driver that skipped keys, double-counted replies or
hid error replies would make every figure wrong without anyone noticing. These tests run it
against the server under test (`--target redis` too) and check its writes and its counts.
"""
import csv
import os
import subprocess

import pytest

from conftest import REPO

BENCH = os.path.join(REPO, "build", "basalt-bench")

pytestmark = pytest.mark.skipif(not os.path.exists(BENCH),
                                reason="build/basalt-bench is built only when libhiredis-dev is "
                                "installed (tools/install-deps installs it)")


def run_bench(server, tmp_path, *args):
    summary = tmp_path / "summary.csv"
    proc = subprocess.run([BENCH, "--port", str(server.port), "--summary-csv", str(summary),
                           *args], capture_output=True, text=True, timeout=120)
    rows = {}
    if summary.exists():
        with open(summary) as f:
            rows = {row["phase"]: row for row in csv.DictReader(f)}
    return proc, rows


def test_fill_writes_every_key_once_and_reads_find_them(start_server, tmp_path):
    server = start_server()
    proc, rows = run_bench(server, tmp_path, "--keys", "3000", "--connections", "6",
                           "--threads", "2", "--value-size", "100", "--fill-pipeline", "16",
                           "--phases", "fill,read", "--ops", "1200", "--seconds", "60")
    assert proc.returncode == 0, proc.stderr
    assert int(rows["fill"]["ops"]) == 3000
    assert int(rows["read"]["ops"]) == 1200  # 200 per connection, each counted once
    assert int(rows["read"]["misses"]) == 0
    assert int(rows["read"]["errors"]) == 0
    r = server.client(decode_responses=False)
    assert r.dbsize() == 3000
    for i in (0, 1, 1499, 2999):
        value = r.get(b"key:%012d" % i)
        assert value is not None and len(value) == 100
    assert r.get(b"key:%012d" % 3000) is None


def test_mix_phase_writes_and_reads_in_the_given_share(start_server, tmp_path):
    server = start_server()
    proc, rows = run_bench(server, tmp_path, "--keys", "500", "--connections", "4",
                           "--value-size", "32", "--phases", "mix30", "--ops", "4000",
                           "--seconds", "60")
    assert proc.returncode == 0, proc.stderr
    mix = rows["mix30"]
    assert int(mix["ops"]) == 4000
    r = server.client()
    stats = r.info("commandstats")
    gets = stats["cmdstat_get"]["calls"]
    sets = stats["cmdstat_set"]["calls"]
    assert gets + sets == 4000
    assert 0.2 < gets / 4000 < 0.4  # 30% reads, drawn at random
    # Reads of keys no SET has written yet miss, and each miss is one GET's.
    assert 0 < int(mix["misses"]) <= gets


def test_error_replies_make_the_driver_fail(start_server, tmp_path):
    server = start_server(args=[("requirepass", "secret")])
    proc, rows = run_bench(server, tmp_path, "--keys", "100", "--connections", "3",
                           "--phases", "fill")
    assert proc.returncode == 1
    assert "NOAUTH" in proc.stderr
    assert int(rows["fill"]["errors"]) > 0
