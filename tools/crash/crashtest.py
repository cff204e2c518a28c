#!/usr/bin/env python3
"""Crash-consistency harness: kill -9 a busy basalt-server, restart it, check the data.

    tools/crash/crashtest.py [--iterations 20] [--mode sync|lazy|both] [--writers 2]
                             [--seed N] [--server build/basalt-server] [--keep]

Each iteration starts the server on the same data directory (durability `sync`, `lazy`, or
alternating with `both`), runs writer clients that do SETs (new keys, plus one key they keep
overwriting), HSET fields, RPUSHes, ZADDs, SADDs, XADDs and MULTI/EXEC blocks touching six keys of
those kinds, one at a time or pipelined up to 8 at once, records every acknowledged write with the time its reply arrived, and SIGKILLs the
server at a random moment. After the restart it checks, per writer:

  * the stored data is exactly what the writer's first k writes produce, for some k (the
    writes it sent before the kill, in order, the last few possibly unacknowledged): no write
    is half applied (in particular no MULTI/EXEC), and none survives without its predecessors;
  * `sync`: every acknowledged write is among them;
    `lazy`: every write acknowledged more than one second (plus LAZY_SLACK for the duration of
    the background fsync itself) before the kill is among them;

and, for the whole database, that every collection's stored size (HLEN, LLEN, ZCARD, SCARD)
equals its member count (HKEYS, LRANGE, ZRANGE, SMEMBERS, XRANGE) and DBSIZE equals the number of keys
SCAN finds. Lost writes (lazy mode only) are removed from the model and the next iteration
continues on the same data. Needs only the Python standard library; exits non-zero on the
first inconsistency, printing it and the server's log tail. docs/reliability.md records the
last full run.
"""
import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LAZY_WINDOW = 1.0  # seconds: the documented bound on what `lazy` may lose
BURST_SIZES = (1, 1, 1, 2, 4, 8)  # writes a writer pipelines at once
LAZY_SLACK = 0.5   # the background sync runs once a second and itself takes time


# ---------------------------------------------------------------------------------------------
# A minimal RESP client: no retries, no reconnects, so an interrupted write stays interrupted.
# ---------------------------------------------------------------------------------------------
class ServerGone(Exception):
    pass


class ReplyError(Exception):
    pass


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port, timeout=30.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise ServerGone(str(e))

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def _fill(self):
        try:
            chunk = self.sock.recv(1 << 16)
        except OSError as e:
            raise ServerGone(str(e))
        if not chunk:
            raise ServerGone("connection closed")
        self.buf += chunk

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return ReplyError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ValueError("unexpected reply %r" % line)

    def call(self, *args):
        return self.pipeline([args])[0]

    def pipeline(self, commands):
        self.send(b"".join(encode(*c) for c in commands))
        replies = [self.read() for _ in commands]
        for r in replies:
            if isinstance(r, ReplyError):
                raise r
        return replies


# ---------------------------------------------------------------------------------------------
# The server process
# ---------------------------------------------------------------------------------------------
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self, binary, root):
        self.binary = binary
        self.dir = os.path.join(root, "data")
        self.log_path = os.path.join(root, "server.log")
        self.port = free_port()
        self.proc = None

    def start(self, durability):
        cmd = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
               "--durability", durability]
        with open(self.log_path, "ab") as log:
            log.write(("\n=== %s\n" % " ".join(cmd)).encode())
            log.flush()
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited with %s during start-up\n%s"
                                   % (self.proc.returncode, self.log_tail()))
            try:
                c = Conn(self.port, timeout=1)
                ok = c.call("PING") == "PONG"
                c.close()
                if ok:
                    return
            except (OSError, ServerGone):
                pass
            time.sleep(0.02)
        raise RuntimeError("server not ready after 30 s\n" + self.log_tail())

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill9()

    def log_tail(self, n=30):
        try:
            with open(self.log_path, "rb") as f:
                return "\n".join(f.read().decode(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"


# ---------------------------------------------------------------------------------------------
# Writers and their model
# ---------------------------------------------------------------------------------------------
class Op:
    """One write: `commands` are sent together (a MULTI/EXEC block is one Op)."""
    __slots__ = ("kind", "seq", "key", "member", "value", "commands", "acked_at")

    def __init__(self, kind, seq, key, member, value, commands):
        self.kind, self.seq, self.key = kind, seq, key
        self.member, self.value, self.commands = member, value, commands
        self.acked_at = None


def tx_keys(ns):
    return {"str": ns + "tx:%d", "hash": ns + "txh", "list": ns + "txl", "zset": ns + "txz",
            "set": ns + "txs", "count": ns + "txc"}


def make_op(ns, seq, rng):
    pad = "x" * (6000 if rng.random() < 0.1 else rng.randint(0, 40))  # some segmented values
    value = "%d:%s" % (seq, pad)
    roll = rng.random()
    if roll < 0.22:
        key = ns + "str:%d" % seq
        return Op("set", seq, key, None, value, [("SET", key, value)])
    if roll < 0.30:
        key = ns + "ctr"
        return Op("counter", seq, key, None, seq, [("SET", key, seq)])
    if roll < 0.50:
        key, field = ns + "h%d" % rng.randrange(20), "f%d" % seq
        return Op("hset", seq, key, field, value, [("HSET", key, field, value)])
    if roll < 0.65:
        key = ns + "l%d" % rng.randrange(10)
        return Op("rpush", seq, key, None, value, [("RPUSH", key, value)])
    if roll < 0.77:
        key, member = ns + "z%d" % rng.randrange(10), "m%d" % seq
        score = rng.randint(-1000000, 1000000)
        return Op("zadd", seq, key, member, score, [("ZADD", key, score, member)])
    if roll < 0.88:
        key, member = ns + "s%d" % rng.randrange(10), "m%d" % seq
        return Op("sadd", seq, key, member, None, [("SADD", key, member)])
    if roll < 0.93:
        # A writer's sequence numbers only grow, so they make valid explicit IDs in its streams.
        key, entry_id = ns + "x%d" % rng.randrange(5), "%d-1" % seq
        return Op("xadd", seq, key, entry_id, value, [("XADD", key, entry_id, "f", value)])
    k = tx_keys(ns)
    commands = [("MULTI",), ("SET", k["str"] % seq, value), ("HSET", k["hash"], "f%d" % seq, seq),
                ("RPUSH", k["list"], seq), ("ZADD", k["zset"], seq, "m%d" % seq),
                ("SADD", k["set"], "m%d" % seq), ("INCR", k["count"]), ("EXEC",)]
    return Op("tx", seq, k["str"] % seq, None, value, commands)


def apply_op(state, op, ns):
    """The effect of one write on a {key: value} model (strings, dicts, lists, sets)."""
    if op.kind in ("set", "counter"):
        state[op.key] = str(op.value)
    elif op.kind == "hset":
        state.setdefault(op.key, {})[op.member] = op.value
    elif op.kind == "rpush":
        state.setdefault(op.key, []).append(op.value)
    elif op.kind == "zadd":
        state.setdefault(op.key, {})[op.member] = float(op.value)
    elif op.kind == "sadd":
        state.setdefault(op.key, set()).add(op.member)
    elif op.kind == "xadd":
        state.setdefault(op.key, []).append((op.member, op.value))
    else:
        k, seq = tx_keys(ns), op.seq
        state[op.key] = op.value
        state.setdefault(k["hash"], {})["f%d" % seq] = str(seq)
        state.setdefault(k["list"], []).append(str(seq))
        state.setdefault(k["zset"], {})["m%d" % seq] = float(seq)
        state.setdefault(k["set"], set()).add("m%d" % seq)
        state[k["count"]] = str(int(state.get(k["count"], "0")) + 1)


def op_present(stored, op):
    """Whether the write's own effect is visible in the stored data."""
    v = stored.get(op.key)
    if op.kind in ("set", "tx"):
        return v == op.value
    if op.kind == "counter":
        return v is not None and int(v) >= op.value
    if op.kind == "hset":
        return isinstance(v, dict) and v.get(op.member) == op.value
    if op.kind == "rpush":
        return isinstance(v, list) and op.value in v
    if op.kind == "zadd":
        return isinstance(v, dict) and v.get(op.member) == float(op.value)
    if op.kind == "xadd":
        return isinstance(v, list) and (op.member, op.value) in v
    return isinstance(v, set) and op.member in v


class Writer(threading.Thread):
    def __init__(self, port, ns, seq_start, seed):
        super().__init__(daemon=True)
        self.port, self.ns, self.seq = port, ns, seq_start
        self.rng = random.Random(seed)
        self.ops = []  # sent this iteration, in order; the last few may be unacknowledged
        self.error = None

    def run(self):
        try:
            conn = Conn(self.port)
        except OSError:
            return
        try:
            while True:
                # Some writes go out as a pipeline of several, which the server commits in
                # groups: the prefix property below must hold for those too.
                burst = []
                for _ in range(self.rng.choice(BURST_SIZES)):
                    burst.append(make_op(self.ns, self.seq, self.rng))
                    self.seq += 1
                self.ops.extend(burst)
                conn.send(b"".join(encode(*c) for op in burst for c in op.commands))
                for op in burst:
                    replies = [conn.read() for _ in op.commands]
                    bad = [r for r in replies if isinstance(r, ReplyError)]
                    if bad:
                        self.error = "%s -> %s" % (op.commands, bad[0])
                        return
                    op.acked_at = time.monotonic()
        except ServerGone:
            pass
        finally:
            conn.close()


# ---------------------------------------------------------------------------------------------
# Verification
# ---------------------------------------------------------------------------------------------
READERS = {"string": ("GET",), "hash": ("HGETALL",), "list": ("LRANGE", 0, -1),
           "zset": ("ZRANGE", 0, -1, "WITHSCORES"), "set": ("SMEMBERS",),
           "stream": ("XRANGE", "-", "+")}
SIZES = {"hash": "HLEN", "list": "LLEN", "zset": "ZCARD", "set": "SCARD", "stream": "XLEN"}


def scan_keys(conn):
    keys, cursor = [], "0"
    while True:
        cursor, batch = conn.call("SCAN", cursor, "COUNT", 1000)
        keys.extend(batch)
        if cursor == "0":
            return keys


def read_database(conn):
    """{key: value} of the whole database, checking each collection's size on the way."""
    keys = scan_keys(conn)
    if len(set(keys)) != len(keys):
        raise AssertionError("SCAN returned a key twice")
    dbsize = conn.call("DBSIZE")
    if dbsize != len(keys):
        raise AssertionError("DBSIZE is %d but SCAN finds %d keys" % (dbsize, len(keys)))
    stored = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        types = conn.pipeline([("TYPE", k) for k in chunk])
        commands = []
        for k, t in zip(chunk, types):
            commands.append(READERS[t][:1] + (k,) + READERS[t][1:])
            commands.append((SIZES.get(t, "STRLEN"), k))
        replies = conn.pipeline(commands)
        for i, (k, t) in enumerate(zip(chunk, types)):
            value, size = replies[2 * i], replies[2 * i + 1]
            if t == "hash":
                value = dict(zip(value[::2], value[1::2]))
            elif t == "zset":
                value = {m: float(s) for m, s in zip(value[::2], value[1::2])}
            elif t == "set":
                value = set(value)
            elif t == "stream":
                value = [(entry_id, fields[1]) for entry_id, fields in value]
            if t != "string" and size != len(value):
                raise AssertionError("%s %r: stored size %d but %d members"
                                     % (t, k, size, len(value)))
            stored[k] = value
    return stored


def describe_difference(expected, stored):
    for k in sorted(set(expected) | set(stored)):
        if expected.get(k) != stored.get(k):
            return "key %r: expected %.200r, stored %.200r" % (k, expected.get(k), stored.get(k))
    return "no difference"


def verify_writer(writer, base_state, stored, must_before, kill_time):
    """Checks one writer's namespace; returns (surviving ops, lost acknowledged ops)."""
    ns_stored = {k: v for k, v in stored.items() if k.startswith(writer.ns)}
    ops = writer.ops
    survived = 0
    while survived < len(ops) and op_present(ns_stored, ops[survived]):
        survived += 1
    expected = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in base_state.items()}
    for op in ops[:survived]:
        apply_op(expected, op, writer.ns)
    if expected != ns_stored:
        raise AssertionError("%s: the data is not the effect of any prefix of the writes "
                             "(%d of %d survive): %s"
                             % (writer.ns, survived, len(ops), describe_difference(expected,
                                                                                  ns_stored)))
    lost = [op for op in ops[survived:] if op.acked_at is not None]
    late = [op for op in lost if op.acked_at < must_before]
    if late:
        op = late[0]
        raise AssertionError("%s: write #%d %s acknowledged %.3f s before the kill is lost"
                             % (writer.ns, op.seq, op.commands, kill_time - op.acked_at))
    return expected, survived, len(lost)


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------
def run(binary, iterations, mode, writers=2, seed=None, max_run=1.5, log=print, keep=False):
    """Returns a summary dict; raises AssertionError on an inconsistency."""
    seed = seed if seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    root = tempfile.mkdtemp(prefix="basalt-crashtest-")
    server = Server(binary, root)
    states = [{} for _ in range(writers)]
    seqs = [0] * writers
    totals = {"iterations": 0, "acknowledged": 0, "verified": 0, "lost_lazy": 0, "seed": seed}
    log("crashtest: seed %d, %d iterations, mode %s, %d writers, data in %s"
        % (seed, iterations, mode, writers, server.dir))
    try:
        previous = None  # (writers, durability, kill time) of the iteration to check
        for it in range(iterations):
            durability = mode if mode != "both" else ("sync", "lazy")[it % 2]
            server.start(durability)
            if previous:
                check_all(server, *previous, states, totals, log, it)
            workers = [Writer(server.port, "w%d:" % w, seqs[w], rng.randrange(1 << 30))
                       for w in range(writers)]
            for w in workers:
                w.start()
            time.sleep(rng.uniform(0.2, max_run))
            kill_time = time.monotonic()
            server.kill9()
            for i, w in enumerate(workers):
                w.join(30)
                if w.error:
                    raise AssertionError("%s: a write failed: %s" % (w.ns, w.error))
                seqs[i] = w.seq
            totals["acknowledged"] += sum(1 for w in workers for op in w.ops if op.acked_at)
            totals["iterations"] = it + 1
            previous = (workers, durability, kill_time)
        server.start(previous[1])
        check_all(server, *previous, states, totals, log, iterations)
        server.stop()
    except BaseException:
        log("--- server log tail (%s) ---\n%s" % (server.log_path, server.log_tail()))
        server.kill9()
        raise
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    log("crashtest: PASS: %(iterations)d iterations, %(acknowledged)d acknowledged writes, "
        "%(verified)d verified, %(lost_lazy)d lost within lazy's window (seed %(seed)d)" % totals)
    return totals


def check_all(server, workers, durability, kill_time, states, totals, log, it):
    """Verifies the data left by the previous iteration's writers (killed in `durability`)."""
    must_before = float("inf") if durability == "sync" else kill_time - LAZY_WINDOW - LAZY_SLACK
    conn = Conn(server.port)
    try:
        stored = read_database(conn)
    finally:
        conn.close()
    verified = lost = 0
    for i, w in enumerate(workers):
        states[i], survived, lost_here = verify_writer(w, states[i], stored, must_before,
                                                       kill_time)
        verified += sum(1 for op in w.ops[:survived] if op.acked_at)
        lost += lost_here
    namespaced = sum(1 for k in stored if any(k.startswith(w.ns) for w in workers))
    if namespaced != len(stored):
        raise AssertionError("the database holds %d keys no writer wrote"
                             % (len(stored) - namespaced))
    totals["verified"] += verified
    totals["lost_lazy"] += lost
    log("  iteration %d (%s): %d writes sent, %d acknowledged writes verified, %d lost, "
        "%d keys" % (it, durability, sum(len(w.ops) for w in workers), verified, lost,
                     len(stored)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--mode", choices=("sync", "lazy", "both"), default="both")
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--max-run", type=float, default=1.5,
                    help="longest time (s) the writers run before the kill")
    ap.add_argument("--server", default=os.environ.get("BASALT_SERVER")
                    or os.path.join(ROOT, "build", "basalt-server"))
    ap.add_argument("--keep", action="store_true", help="keep the data dir and log")
    args = ap.parse_args()
    try:
        run(args.server, args.iterations, args.mode, args.writers, args.seed, args.max_run,
            keep=args.keep)
    except AssertionError as e:
        print("crashtest: FAIL: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
