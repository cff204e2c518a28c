"""Small helpers shared by the integration tests."""
import re
import threading
import time

import pytest
import redis


def exact(text):
    """Regex for pytest.raises(match=...) that matches the whole error text.

    The clients built by conftest keep the full server error text in the
    exception (e.g. 'ERR syntax error', not redis-py's stripped
    'syntax error'), so the error code prefix is pinned too."""
    return "^" + re.escape(text) + "$"


def wait_until(pred, timeout=2.0, interval=0.02):
    """Poll pred() until it is truthy; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def parse_info(text):
    """INFO text -> {section_name_lower: {key: value_str}}."""
    sections = {}
    cur = sections.setdefault(None, {})
    for line in text.split("\r\n"):
        if not line:
            continue
        if line.startswith("# "):
            cur = sections.setdefault(line[2:].strip().lower(), {})
            continue
        k, _, v = line.partition(":")
        cur[k] = v
    if not sections[None]:
        del sections[None]
    return sections


def parse_kv(s, sep=","):
    """'keys=1,expires=0,avg_ttl=0' -> dict."""
    return dict(item.split("=", 1) for item in s.split(sep) if item)


def arity(cmd):
    """Redis' wrong-arity text; cmd is lower case ('config|get' for subcommands)."""
    return "ERR wrong number of arguments for '%s' command" % cmd


def raises(r, text, *args):
    """Run a command through redis-py and require exactly this error text."""
    with pytest.raises(redis.ResponseError, match=exact(text)):
        r.execute_command(*args)


def run_clients(server, threads, per_thread, fn):
    """Runs fn(client, thread, i) for i < per_thread on `threads` clients at once; fails with
    the exceptions any of them raised."""
    errors = []

    def run(t):
        c = server.client()
        try:
            for i in range(per_thread):
                fn(c, t, i)
        except Exception as e:  # surfaced below
            errors.append(e)
        finally:
            c.close()

    ts = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
