"""Minimal raw RESP2/RESP3 client used where redis-py would hide details.

Replies are decoded into *tagged* tuples so that two servers can be
compared exactly, including the reply type:

    ('+', b'OK')        simple string
    ('-', 'ERR ...')    error (decoded text)
    (':', 42)           integer
    ('$', b'..')        bulk string, ('$', None) for the nil bulk
    ('*', [...])        array, ('*', None) for the nil array
    ('_', None)         RESP3 null
    (',', '1.5')        RESP3 double (raw text)
    ('#', True)         RESP3 boolean
    ('%', [(k, v)...])  RESP3 map (list of pairs, order kept)
    ('~', [...])        RESP3 set
    ('>', [...])        RESP3 push
    ('(', 123)          RESP3 big number
    ('=', b'txt:..')    RESP3 verbatim string
"""
import socket


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        elif isinstance(a, float):
            a = repr(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class ConnectionClosed(Exception):
    pass


class RawConn:
    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- sending -------------------------------------------------------
    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, *args):
        self.sock.sendall(encode(*args))

    def call(self, *args):
        self.send(*args)
        return self.read()

    # ---- receiving -----------------------------------------------------
    def _fill(self):
        try:
            chunk = self.sock.recv(1 << 16)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            raise ConnectionClosed("connection closed by server")
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read_line(self):
        """One raw reply line without parsing (e.g. b'+PONG')."""
        return self._line()

    def read(self):
        line = self._line()
        t, rest = chr(line[0]), line[1:]
        if t == "+":
            return ("+", rest)
        if t == "-":
            return ("-", rest.decode())
        if t == ":":
            return (":", int(rest))
        if t == "(":
            return ("(", int(rest))
        if t == ",":
            return (",", rest.decode())
        if t == "#":
            return ("#", rest == b"t")
        if t == "_":
            return ("_", None)
        if t in "$=!":
            n = int(rest)
            if n < 0:
                return ("$", None)
            return ("$" if t == "$" else t, self._exact(n))
        if t in "*~>":
            n = int(rest)
            if n < 0:
                return (t, None)
            return (t, [self.read() for _ in range(n)])
        if t == "%" or t == "|":
            n = int(rest)
            return (t, [(self.read(), self.read()) for _ in range(n)])
        raise ValueError("bad reply type byte %r in %r" % (t, line))

    def is_closed(self, timeout=2.0):
        """True when the server closed the connection (EOF) within timeout."""
        old = self.sock.gettimeout()
        self.sock.settimeout(timeout)
        try:
            while True:
                try:
                    chunk = self.sock.recv(1 << 16)
                except ConnectionResetError:
                    return True
                if not chunk:
                    return True
                self.buf += chunk
        except socket.timeout:
            return False
        finally:
            self.sock.settimeout(old)


def plain(reply):
    """Strip the type tags: errors become ('ERR', text), the rest python."""
    t, v = reply
    if t in "*~>" and v is not None:
        return [plain(x) for x in v]
    if t == "%":
        return {plain(k): plain(x) for k, x in v}
    return v
