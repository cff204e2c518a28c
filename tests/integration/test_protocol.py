"""RESP framing over raw sockets: malformed input must get Redis' exact
protocol error and a closed connection, without disturbing other clients
or stored data."""
import socket
import struct
import threading

import pytest

from resp import RawConn, encode

PROTO = b"-ERR Protocol error: "


@pytest.fixture
def sentinel(server, r):
    """Data written before each bad input; checked to be intact after."""
    r.set("sentinel", "intact")
    r.execute_command("SET", "ttl-sentinel", "x", "EX", 1000)
    return r


def assert_server_healthy(server, r):
    with RawConn(server.port) as c:
        assert c.call("PING") == ("+", b"PONG")
        assert c.call("GET", "sentinel") == ("$", b"intact")
    assert r.get("sentinel") == "intact"
    assert 0 < r.ttl("ttl-sentinel") <= 1000
    assert r.dbsize() >= 2


def expect_error_and_close(server, data, error_line):
    with RawConn(server.port) as c:
        c.send_raw(data)
        assert c.read_line() == error_line
        assert c.is_closed(timeout=5), "server kept the connection open"


BAD_INPUTS = [
    (b"*1\r\n$abc\r\n", b"invalid bulk length"),
    (b"*1\r\n$-1\r\n", b"invalid bulk length"),
    (b"*1\r\n$ 3\r\nabc\r\n", b"invalid bulk length"),
    (b"*1\r\n$+3\r\nabc\r\n", b"invalid bulk length"),
    (b"*1\r\n$536870913\r\n", b"invalid bulk length"),  # > default 512mb limit
    (b"*abc\r\n", b"invalid multibulk length"),
    (b"*+1\r\n$4\r\nPING\r\n", b"invalid multibulk length"),
    (b"*01\r\n$4\r\nPING\r\n", b"invalid multibulk length"),
    (b"*2147483648\r\n", b"invalid multibulk length"),
    (b"*1\r\nx3\r\nfoo\r\n", b"expected '$', got 'x'"),
    (b"*2\r\n$4\r\nECHO\r\n:1\r\n", b"expected '$', got ':'"),
    # the offending byte is '\r'; error texts have \r and \n turned into spaces
    (b"*1\r\n\r\n", b"expected '$', got ' '"),
    (b'ECHO "abc\r\n', b"unbalanced quotes in request"),
    (b"ECHO 'abc\r\n", b"unbalanced quotes in request"),
    (b'ECHO "a"b\r\n', b"unbalanced quotes in request"),
    (b'"\r\n', b"unbalanced quotes in request"),
    (b"x" * 70000, b"too big inline request"),
    (b"*" + b"1" * 70000, b"too big mbulk count string"),
    (b"*1\r\n$" + b"1" * 70000, b"too big bulk count string"),
]


@pytest.mark.parametrize("data,error", BAD_INPUTS,
                         ids=[repr(d[:20]) for d, _ in BAD_INPUTS])
def test_bad_framing_errors_and_closes(server, sentinel, data, error):
    expect_error_and_close(server, data, PROTO + error)
    assert_server_healthy(server, sentinel)


def test_commands_before_bad_frame_are_answered(server, sentinel):
    with RawConn(server.port) as c:
        c.send_raw(encode("SET", "before", "1") + encode("PING") + b"*1\r\n$abc\r\n"
                   + encode("SET", "after", "1"))
        assert c.read() == ("+", b"OK")
        assert c.read() == ("+", b"PONG")
        assert c.read_line() == PROTO + b"invalid bulk length"
        assert c.is_closed(timeout=5)
    assert sentinel.get("before") == "1"
    assert sentinel.exists("after") == 0  # nothing after the bad frame runs
    assert_server_healthy(server, sentinel)


def test_inline_then_bad_frame(server, sentinel):
    with RawConn(server.port) as c:
        c.send_raw(b"PING\r\n*1\r\n$abc\r\n")
        assert c.read() == ("+", b"PONG")
        assert c.read_line() == PROTO + b"invalid bulk length"
        assert c.is_closed(timeout=5)


def test_tolerated_oddities(server, sentinel):
    with RawConn(server.port) as c:
        # negative and zero multibulk counts are skipped silently
        c.send_raw(b"*-5\r\n*0\r\n" + encode("PING"))
        assert c.read() == ("+", b"PONG")
        # empty lines between commands are ignored
        c.send_raw(b"\r\n\r\n" + encode("PING") + b"\r\n")
        assert c.read() == ("+", b"PONG")
        # a first byte other than '*' starts an inline command
        c.send_raw(b"+PING\r\n")
        assert c.read() == ("-", "ERR unknown command '+PING', with args beginning with: ")
        # an empty command name is an unknown command, not a protocol error
        c.send_raw(b"*2\r\n$0\r\n\r\n$1\r\na\r\n")
        assert c.read() == ("-", "ERR unknown command '', with args beginning with: 'a' ")
        assert c.call("PING") == ("+", b"PONG")
    assert_server_healthy(server, sentinel)


def test_inline_commands(server, r):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        f = s.makefile("rb")
        s.sendall(b"PING\r\n")
        assert f.readline() == b"+PONG\r\n"
        s.sendall(b"ping hello\n")  # bare \n works too
        assert f.readline() == b"$5\r\n" and f.readline() == b"hello\r\n"
        s.sendall(b'SET k "a b\\x41"\r\nGET k\r\n')
        assert f.readline() == b"+OK\r\n"
        assert f.readline() == b"$4\r\n" and f.readline() == b"a bA\r\n"
        s.sendall(b"SET q 'it''s'\r\n")  # adjacent quotes are not allowed
        assert f.readline() == b"-ERR Protocol error: unbalanced quotes in request\r\n"
    with RawConn(server.port) as c:
        c.send_raw(b"\r\n\r\n   \r\nSET a  1\r\nGET a\r\n")  # blank lines ignored
        assert c.read() == ("+", b"OK")
        assert c.read() == ("$", b"1")


def test_inline_quoting_rules(server, sentinel):
    with RawConn(server.port) as c:
        c.send_raw(b'ECHO "a\\nb"\r\n')
        assert c.read() == ("$", b"a\nb")
        c.send_raw(b'ECHO ""\r\n')
        assert c.read() == ("$", b"")
        c.send_raw(b"ECHO a\\x41b\r\n")  # escapes only inside quotes
        assert c.read() == ("$", b"a\\x41b")
        c.send_raw(b'ECHO "\\x41\\x00z"\r\n')
        assert c.read() == ("$", b"A\x00z")
        c.send_raw(b"ECHO 'it\\'s'\r\n")
        assert c.read() == ("$", b"it's")


def test_command_split_across_many_writes(server, sentinel):
    data = encode("SET", "split", "v" * 1000) + encode("GET", "split")
    with RawConn(server.port) as c:
        for i in range(0, len(data), 7):
            c.send_raw(data[i:i + 7])
        assert c.read() == ("+", b"OK")
        assert c.read() == ("$", b"v" * 1000)


# --------------------------------------------------------------------------
# proto-max-bulk-len
# --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_bulk_server(start_module_server):
    return start_module_server(args=[("proto-max-bulk-len", "1mb")], name="bulk")


def test_proto_max_bulk_len(small_bulk_server):
    s = small_bulk_server
    with RawConn(s.port) as c:
        assert c.call("CONFIG", "GET", "proto-max-bulk-len") == (
            "*", [("$", b"proto-max-bulk-len"), ("$", b"1048576")])
        assert c.call("SET", "k", "x" * 1048576) == ("+", b"OK")
    # one byte over: rejected at the length header, before any payload
    expect_error_and_close(s, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n",
                           PROTO + b"invalid bulk length")
    with RawConn(s.port) as c:
        assert c.call("STRLEN", "k") == (":", 1048576)
        too_big = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
        assert c.call("APPEND", "k", "x") == ("-", too_big)
        assert c.call("SETRANGE", "k", "1048576", "x") == ("-", too_big)
        assert c.call("SETRANGE", "k2", "2000000", "x") == ("-", too_big)
        assert c.call("EXISTS", "k2") == (":", 0)


# --------------------------------------------------------------------------
# disconnects
# --------------------------------------------------------------------------
def test_client_disconnects_mid_pipeline(server, sentinel):
    stop = threading.Event()
    working = threading.Event()  # the worker's INCRs run while the others disconnect
    errors = []
    done = []

    def worker():
        try:
            with RawConn(server.port) as c:
                n = 0
                while not stop.is_set() and n < 20000:
                    assert c.call("INCR", "worker") == (":", n + 1)
                    n += 1
                    working.set()
                done.append(n)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
        finally:
            working.set()

    t = threading.Thread(target=worker)
    t.start()
    try:
        assert working.wait(10)
        for i in range(20):
            s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            # a batch of complete commands, then half of one, then vanish
            s.sendall(b"".join(encode("SET", "dc%d" % j, "v") for j in range(200))
                      + b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$100\r\nabc")
            if i % 2:
                # close without reading: replies pile up, RST may follow
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
    finally:
        stop.set()
        t.join(30)
    assert not errors, errors
    assert done and done[0] > 0
    assert sentinel.get("worker") == str(done[0])
    assert sentinel.exists("half") == 0
    assert_server_healthy(server, sentinel)


def test_client_disconnects_with_unread_large_replies(server, sentinel):
    sentinel.set("big", "x" * (1 << 20))
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(encode("GET", "big") * 50)  # ~50 MiB of replies never read
    s.close()
    assert_server_healthy(server, sentinel)
    assert sentinel.strlen("big") == 1 << 20
