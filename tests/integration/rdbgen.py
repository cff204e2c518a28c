"""Builds Redis DUMP-style payloads for tests: RDB strings, the RDB version footer and the
CRC-64 (Jones polynomial, reflected) that redis-server and Basalt verify. Independent of the
server's own implementation (a bitwise CRC, not a table)."""
import struct

_POLY_REFLECTED = 0x95AC9329AC4BC9B5


def crc64(data, crc=0):
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ _POLY_REFLECTED if crc & 1 else crc >> 1
    return crc


def rdb_length(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + struct.pack(">I", n)


def rdb_string(data):
    return rdb_length(len(data)) + data


def dump_payload(body, version=10):
    """`body` followed by the 2-byte RDB version and the CRC-64 of both."""
    data = body + struct.pack("<H", version)
    return data + struct.pack("<Q", crc64(data))
