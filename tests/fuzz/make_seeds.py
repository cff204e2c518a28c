#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/): short, valid and
deliberately broken inputs that give libFuzzer every framing path and every command family to
start from. Run it again after changing the lists; the files are committed."""
import hashlib
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def stream(*commands):
    return b"".join(resp(*c) for c in commands)


READER_SEEDS = [
    # (selector byte: bit 0 = unauthenticated, bit 1 = 64-byte bulk limit) + stream
    b"\x00" + resp("PING"),
    b"\x00" + resp("SET", "key", "value") + resp("GET", "key"),
    b"\x00" + b"PING\r\n" + b"SET a b\n" + b'SET "quoted \\x41\\n" \'single \\\' quote\'\r\n',
    b"\x00" + b"*0\r\n*-1\r\n\r\n" + resp("ECHO", ""),
    b"\x00" + b"*2\r\n$4\r\nECHO\r\n$3\r\nab",                       # cut in a bulk
    b"\x00" + b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$-1\r\n",              # negative bulk length
    b"\x00" + b"*1\r\n+PING\r\n",                                     # expected '$'
    b"\x00" + b"*abc\r\n",                                            # bad multibulk count
    b"\x00" + b"*99999999999\r\n",                                    # multibulk over the cap
    b"\x00" + b"*1\r\n$99999999999\r\n",                              # bulk over the limit
    b"\x00" + b'SET "unbalanced\r\n',
    b"\x00" + b"SET 'a'b\r\n",                                        # closing quote then text
    b"\x01" + b"*11\r\n" + b"$1\r\na\r\n" * 11,                      # unauthenticated limits
    b"\x01" + b"*1\r\n$20000\r\n",
    b"\x02" + resp("SET", "k", "x" * 65),                            # over the small bulk limit
    b"\x00" + b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\r\n",                   # bad bulk terminator
    b"\x00" + b"\x00\x01\x02 \t\x7f\xff\n",
]

COMMAND_SEEDS = {
    "strings": stream(("SET", "s", "v", "EX", "100"), ("GET", "s"), ("APPEND", "s", "x" * 5000),
                      ("GETRANGE", "s", "-10", "-1"), ("SETRANGE", "s", "6000", "y"),
                      ("INCRBYFLOAT", "f", "1.5e3"), ("INCR", "n"), ("DECRBY", "n", "7"),
                      ("MSET", "a", "1", "b", "2"), ("MGET", "a", "b", "zz"),
                      ("GETEX", "a", "PERSIST"), ("GETDEL", "b"), ("SETNX", "a", "3"),
                      ("STRLEN", "s"), ("LCS", "a", "s")),
    "keys": stream(("SET", "k", "v"), ("EXPIRE", "k", "100", "NX"), ("TTL", "k"), ("PERSIST", "k"),
                   ("RENAME", "k", "k2"), ("COPY", "k2", "k3", "DB", "1"), ("MOVE", "k3", "2"),
                   ("KEYS", "k*"), ("SCAN", "0", "MATCH", "*", "COUNT", "5", "TYPE", "string"),
                   ("TYPE", "k2"), ("OBJECT", "ENCODING", "k2"), ("RANDOMKEY",),
                   ("SWAPDB", "0", "1"), ("SELECT", "1"), ("DBSIZE",), ("DEL", "k2", "nope"),
                   ("EXISTS", "k2"), ("TOUCH", "k2"), ("UNLINK", "k2")),
    "hash": stream(("HSET", "h", "a", "1", "b", "x" * 5000), ("HGETALL", "h"),
                   ("HINCRBY", "h", "a", "5"), ("HINCRBYFLOAT", "h", "a", "0.5"),
                   ("HSETNX", "h", "c", "3"), ("HMGET", "h", "a", "zz"), ("HKEYS", "h"),
                   ("HVALS", "h"), ("HLEN", "h"), ("HSTRLEN", "h", "b"),
                   ("HRANDFIELD", "h", "-5", "WITHVALUES"), ("HSCAN", "h", "0"),
                   ("HDEL", "h", "a", "b", "c")),
    "set": stream(("SADD", "s1", "a", "b", "c"), ("SADD", "s2", "b", "d"),
                  ("SINTER", "s1", "s2"), ("SUNIONSTORE", "s3", "s1", "s2"),
                  ("SDIFF", "s1", "s2"), ("SPOP", "s1", "2"), ("SRANDMEMBER", "s3", "-10"),
                  ("SMOVE", "s3", "s1", "d"), ("SMEMBERS", "s1"), ("SMISMEMBER", "s1", "a", "q"),
                  ("SINTERCARD", "2", "s1", "s2", "LIMIT", "1"), ("SSCAN", "s3", "0")),
    "list": stream(("RPUSH", "l", "a", "b", "c"), ("LPUSH", "l", "z"), ("LRANGE", "l", "0", "-1"),
                   ("LINSERT", "l", "BEFORE", "b", "x"), ("LSET", "l", "1", "y"),
                   ("LPOS", "l", "c", "RANK", "-1"), ("LTRIM", "l", "1", "-2"),
                   ("LMOVE", "l", "l2", "LEFT", "RIGHT"), ("LREM", "l", "0", "a"),
                   ("LPOP", "l", "2"), ("BLPOP", "empty", "0"), ("BRPOP", "l2", "0.01"),
                   ("BLMOVE", "l2", "l", "RIGHT", "LEFT", "0"), ("LMPOP", "2", "l", "l2", "LEFT")),
    "zset": stream(("ZADD", "z", "1", "a", "2.5", "b", "-inf", "c"), ("ZINCRBY", "z", "3", "a"),
                   ("ZRANGE", "z", "(1", "+inf", "BYSCORE", "LIMIT", "0", "2"),
                   ("ZRANGE", "z", "[a", "(c", "BYLEX"), ("ZRANK", "z", "b"),
                   ("ZREVRANGEBYSCORE", "z", "+inf", "-inf", "WITHSCORES"),
                   ("ZUNIONSTORE", "u", "2", "z", "z", "WEIGHTS", "1", "2", "AGGREGATE", "MAX"),
                   ("ZPOPMIN", "z"), ("ZRANDMEMBER", "u", "-3", "WITHSCORES"),
                   ("ZREMRANGEBYRANK", "u", "0", "0"), ("BZPOPMAX", "nothing", "0"),
                   ("ZMSCORE", "u", "a", "q"), ("ZSCAN", "u", "0")),
    "stream": stream(("XADD", "x", "MAXLEN", "~", "5", "1-*", "f", "v"), ("XADD", "x", "2-1", "a", "b"),
                     ("XRANGE", "x", "(1-0", "+", "COUNT", "2"), ("XREVRANGE", "x", "+", "-"),
                     ("XGROUP", "CREATE", "x", "g", "0", "MKSTREAM"),
                     ("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "x", ">"),
                     ("XPENDING", "x", "g", "IDLE", "0", "-", "+", "10", "c"),
                     ("XCLAIM", "x", "g", "d", "0", "1-0", "FORCE", "JUSTID"),
                     ("XAUTOCLAIM", "x", "g", "c", "0", "0", "COUNT", "3"), ("XACK", "x", "g", "1-0"),
                     ("XDEL", "x", "2-1"), ("XTRIM", "x", "MINID", "=", "2"),
                     ("XREAD", "BLOCK", "0", "STREAMS", "x", "$"),
                     ("XINFO", "STREAM", "x", "FULL", "COUNT", "2"), ("XINFO", "GROUPS", "x"),
                     ("XSETID", "x", "9-0", "ENTRIESADDED", "9", "MAXDELETEDID", "2-1"),
                     ("XGROUP", "DESTROY", "x", "g")),
    "bitmap": stream(("SETBIT", "b", "100000", "1"), ("GETBIT", "b", "7"), ("BITCOUNT", "b"),
                     ("BITPOS", "b", "1", "0", "-1", "BIT"), ("BITOP", "XOR", "c", "b", "b"),
                     ("BITFIELD", "b", "SET", "i8", "#3", "-5", "INCRBY", "u4", "0", "20",
                      "OVERFLOW", "FAIL", "GET", "u4", "0")),
    "transactions": stream(("WATCH", "w"), ("MULTI",), ("SET", "w", "1"), ("INCR", "w"),
                           ("FLUSHDB",), ("SET", "after", "1"), ("EXEC",), ("MULTI",),
                           ("NOSUCH",), ("EXEC",), ("MULTI",), ("DISCARD",), ("UNWATCH",)),
    "server": stream(("PING", "x"), ("ECHO", "e"), ("HELLO", "3"), ("HGETALL", "missing"),
                     ("INFO", "everything"), ("CONFIG", "GET", "*max*"), ("CLIENT", "SETNAME", "fz"),
                     ("CLIENT", "LIST"), ("CLIENT", "INFO"), ("COMMAND", "INFO", "get"),
                     ("COMMAND", "GETKEYS", "MSET", "a", "1"), ("SLOWLOG", "GET", "2"),
                     ("TIME",), ("DBSIZE",), ("FLUSHALL",), ("RESET",), ("SHUTDOWN", "NOSAVE"),
                     ("QUIT",)),
}

# Object bodies (no footer) for fuzz_dump_payload: one of each encoding RESTORE reads, the
# first two as redis-server 7.0.15 dumped them (an LZF-compressed listpack quicklist, an
# intset).
DUMP_SEEDS = {
    "quicklist2": bytes.fromhex("120102c32a406a1b6a00000007008161020501df9c02c3e802f290eefe04"
                                "f4001a711802201a0309e04678e03c000148ff"),
    "intset": bytes.fromhex("0b140400000003000000ffffffff0300000070110100"),
    "string": b"\x00\x03abc",
    "string-int": b"\x00\xc1\x39\x30",
    "list": b"\x01\x02\x01a\x01b",
    "set": b"\x02\x02\x01a\x01b",
    "hash": b"\x04\x01\x01f\x01v",
    "zset2": b"\x05\x01\x01m" + bytes(6) + b"\xf0\x3f",
    "zset-old": b"\x03\x01\x01m\x031.5",
    "set-listpack": b"\x14\x0c\x0c\x00\x00\x00\x02\x00\x81a\x02\x05\x01\xff",
    "hash-listpack": b"\x10\x0d\x0d\x00\x00\x00\x02\x00\x81f\x02\x81v\x02\xff",
    "hash-ziplist": b"\x0d\x11\x11\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01f\x03\x01v\xff",
}


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    for data in READER_SEEDS:
        write("resp_reader", hashlib.sha1(data).hexdigest()[:16], data)
    for name, data in COMMAND_SEEDS.items():
        write("commands", name, data)
        write("resp_reader", "cmd-" + name, b"\x00" + data)
    for name, data in DUMP_SEEDS.items():
        write("dump_payload", name, data)


if __name__ == "__main__":
    main()
