"""Shared machinery of the differential tests (test_diff*.py and test_differential.py).

A DiffPair holds matching raw connections ("slots") to the server under test and to a real
redis-server (the oracle). send() gives a command to both through the same slot and returns
both replies; the test decides what equality means (exact by default, normalized where a reply
may legitimately differ, as each file documents). On a mismatch, fail() shows the seed, the
step and the last commands, which is what a reproduction needs. The `diff_pair` fixture in
conftest.py makes them.
"""
import pytest

from resp import RawConn, encode


class WeightedGen:
    """Base of the random command generators: a subclass sets self.r (a random.Random) and
    self.gens, a list of (weight, method) pairs; pick() calls one method, chosen by weight."""

    def pick(self):
        x = self.r.uniform(0, sum(w for w, _ in self.gens))
        for w, f in self.gens:
            x -= w
            if x <= 0:
                return f()
        return self.gens[-1][1]()


def shown(args):
    """Arguments as the failure history shows them: long values abbreviated."""
    return [a if not isinstance(a, (str, bytes)) or len(a) < 40 else "<%d bytes>" % len(a)
            for a in args]


def short(reply):
    text = repr(reply)
    return text if len(text) < 300 else text[:300] + "..."


class DiffPair:
    def __init__(self, test_port, oracle_port, seed, slots=1, resp3_slots=()):
        self.slots = []
        for i in range(slots):
            conns = (RawConn(test_port), RawConn(oracle_port))
            if i in resp3_slots:
                for c in conns:
                    assert c.call("HELLO", "3")[0] == "%"
            self.slots.append(conns)
        self.seed = seed
        self.history = []

    def close(self):
        for conns in self.slots:
            for c in conns:
                c.close()

    def tested(self, slot=0):
        return self.slots[slot][0]

    def oracle(self, slot=0):
        return self.slots[slot][1]

    def note(self, text):
        self.history.append(text)

    def send(self, args, slot=0, tag=""):
        """The command on both servers through `slot`; returns (tested reply, oracle reply)."""
        self.note(tag + " ".join(map(repr, shown(args))))
        t, o = self.slots[slot]
        return t.call(*args), o.call(*args)

    def fail(self, msg):
        tail = "\n".join("  %s" % (h,) for h in self.history[-25:])
        pytest.fail("seed=%d step=%d: %s\nlast commands:\n%s"
                    % (self.seed, len(self.history), msg, tail), pytrace=False)

    def mismatch(self, args, a, b):
        self.fail("reply mismatch for %r\n  server under test: %s\n  redis oracle:      %s"
                  % (shown(args), short(a), short(b)))

    def pipeline(self, commands, slot=0):
        """All of `commands` sent to both servers in one write before any reply is read (so
        that Basalt runs its writes in one write group); requires identical replies."""
        t, o = self.slots[slot]
        payload = b"".join(encode(*c) for c in commands)
        t.send_raw(payload)
        o.send_raw(payload)
        for c in commands:
            self.note("(pipelined) " + " ".join(map(repr, shown(c))))
            a, b = t.read(), o.read()
            if a != b:
                self.mismatch(c, a, b)

    def call(self, args, slot=0, tag=""):
        """send() and require identical replies; returns the tested server's reply."""
        a, b = self.send(args, slot, tag)
        if a != b:
            self.mismatch(args, a, b)
        return a
