"""kill -9 at random moments under write load (tools/crash/crashtest.py):
acknowledged writes survive (sync; lazy: all but the last second), no write
or MULTI/EXEC is half applied, stored sizes match member counts.

CI runs 5 iterations here; the full run (20+) is a tool whose last result is
in docs/reliability.md. The checker itself is tested on made-up data, so a
harness that could not notice a loss would fail here too."""
import os
import random
import sys

import pytest

from conftest import basalt_binary

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools", "crash"))
import crashtest  # noqa: E402

pytestmark = pytest.mark.basalt_only


def test_five_kill9_iterations_alternating_sync_and_lazy():
    seed = int(os.environ.get("CRASHTEST_SEED", random.randrange(1 << 30)))
    lines = []
    totals = crashtest.run(basalt_binary(), iterations=5, mode="both", writers=2, seed=seed,
                           max_run=1.0, log=lines.append)
    print("\n".join(lines))
    assert totals["iterations"] == 5
    assert totals["verified"] > 0
    # sync iterations must keep everything; lazy ones may only lose the last second.
    assert totals["verified"] + totals["lost_lazy"] == totals["acknowledged"]


def writer_with(ops):
    w = crashtest.Writer(port=0, ns="w0:", seq_start=0, seed=1)
    w.ops = ops
    return w


def acked(op, at):
    op.acked_at = at
    return op


def tx_op(seq):
    rng = random.Random(0)
    while True:  # make_op picks the kind at random; draw until it is a transaction
        op = crashtest.make_op("w0:", seq, rng)
        if op.kind == "tx":
            return op


def test_checker_rejects_a_half_applied_transaction():
    op = acked(tx_op(0), 1.0)
    full = {}
    crashtest.apply_op(full, op, "w0:")
    assert crashtest.verify_writer(writer_with([op]), {}, full, float("inf"), 2.0)[1] == 1
    half = dict(full)
    del half["w0:txl"]  # the RPUSH of the block is missing
    with pytest.raises(AssertionError, match="not the effect of any prefix"):
        crashtest.verify_writer(writer_with([op]), {}, half, float("inf"), 2.0)


def test_checker_rejects_a_lost_acknowledged_write():
    first = acked(crashtest.Op("set", 0, "w0:str:0", None, "a", []), 1.0)
    second = acked(crashtest.Op("set", 1, "w0:str:1", None, "b", []), 1.5)
    stored = {"w0:str:0": "a"}
    with pytest.raises(AssertionError, match="acknowledged 0.500 s before the kill is lost"):
        crashtest.verify_writer(writer_with([first, second]), {}, stored, float("inf"), 2.0)
    # lazy: a loss inside the window is allowed and counted
    must_before = 2.0 - crashtest.LAZY_WINDOW - crashtest.LAZY_SLACK
    _, survived, lost = crashtest.verify_writer(writer_with([first, second]), {}, stored,
                                                must_before, 2.0)
    assert (survived, lost) == (1, 1)


def test_checker_rejects_a_write_without_its_predecessor():
    first = acked(crashtest.Op("rpush", 0, "w0:l0", None, "a", []), 1.0)
    second = acked(crashtest.Op("rpush", 1, "w0:l0", None, "b", []), 1.1)
    with pytest.raises(AssertionError, match="not the effect of any prefix"):
        crashtest.verify_writer(writer_with([first, second]), {}, {"w0:l0": ["b"]}, 0.0, 2.0)
