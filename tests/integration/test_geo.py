"""Geo commands (Redis 7.0 semantics) on top of sorted sets: GEOADD, GEOPOS, GEODIST, GEOHASH,
GEOSEARCH, GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and the _RO variants.

Expected numbers are redis-server 7.0.15's (the suite also runs with --target redis); seeded
random streams compared reply by reply with a real redis-server are in test_diff_geo_hll.py.
"""
import pytest

from helpers import arity, raises

SYNTAX = "ERR syntax error"
NOT_FLOAT = "ERR value is not a valid float"
NOT_INT = "ERR value is not an integer or out of range"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
UNIT = "ERR unsupported unit provided. please use M, KM, FT, MI"
NO_MEMBER = "ERR could not decode requested zset member"

PALERMO = (13.361389, 38.115556)
CATANIA = (15.087269, 37.502669)


@pytest.fixture
def sicily(rr):
    rr.execute_command("GEOADD", "Sicily", *PALERMO, "Palermo", *CATANIA, "Catania")
    return rr


def test_geoadd_stores_geohash_scores(sicily):
    assert sicily.execute_command("ZRANGE", "Sicily", 0, -1, "WITHSCORES") == [
        "Palermo", "3479099956230698", "Catania", "3479447370796909"]
    assert sicily.execute_command("TYPE", "Sicily") == "zset"
    assert sicily.execute_command("ZCARD", "Sicily") == 2
    # The extreme corners of the valid area.
    assert sicily.execute_command("GEOADD", "c", 180, 85.05112878, "ne", -180, -85.05112878,
                                  "sw") == 2
    assert sicily.execute_command("ZMSCORE", "c", "ne", "sw") == ["13510798882111488", "0"]


def test_geoadd_flags(sicily):
    r = sicily
    assert r.execute_command("GEOADD", "Sicily", "NX", 13.5, 38, "Palermo", 14, 37, "New") == 1
    assert r.execute_command("ZSCORE", "Sicily", "Palermo") == "3479099956230698"
    assert r.execute_command("GEOADD", "Sicily", "XX", 13.5, 38, "Palermo", 1, 1, "Other") == 0
    assert r.execute_command("ZSCORE", "Sicily", "Palermo") != "3479099956230698"
    assert r.execute_command("ZSCORE", "Sicily", "Other") is None
    assert r.execute_command("GEOADD", "Sicily", "CH", 13.6, 38, "Palermo", 2, 2, "Two") == 2
    assert r.execute_command("GEOADD", "Sicily", "CH", 2, 2, "Two") == 0  # same place
    assert r.execute_command("GEOADD", "missing", "XX", 1, 1, "a") == 0
    assert r.execute_command("EXISTS", "missing") == 0
    # the same member twice: the last position wins, counted once
    assert r.execute_command("GEOADD", "d", 1, 1, "m", 2, 2, "m") == 1
    assert r.execute_command("GEOPOS", "d", "m") == [["2.00000256299972534", "2.0000001856465488"]]


def test_geoadd_errors(sicily):
    r = sicily
    raises(r, "ERR invalid longitude,latitude pair 200.000000,100.000000",
           "GEOADD", "Sicily", 200, 100, "x")
    raises(r, "ERR invalid longitude,latitude pair inf,0.000000", "GEOADD", "Sicily", "inf", 0, "x")
    raises(r, "ERR invalid longitude,latitude pair 0.000000,-85.051129",
           "GEOADD", "Sicily", 0, -85.0511288, "x")
    raises(r, NOT_FLOAT, "GEOADD", "Sicily", "abc", 0, "x")
    raises(r, NOT_FLOAT, "GEOADD", "Sicily", 0, "1,5", "x")
    # every element is checked before anything is written
    raises(r, "ERR invalid longitude,latitude pair 0.000000,100.000000",
           "GEOADD", "Sicily", 1, 1, "ok", 0, 100, "x")
    assert r.execute_command("ZSCORE", "Sicily", "ok") is None
    raises(r, SYNTAX, "GEOADD", "Sicily", "NX", "XX", 1, 1, "x")
    raises(r, SYNTAX, "GEOADD", "Sicily", "CH", "CH", "CH")
    raises(r, SYNTAX, "GEOADD", "Sicily", "GT", 1, 1, "x")
    raises(r, SYNTAX, "GEOADD", "Sicily", 1, 1, "x", 2)
    raises(r, arity("geoadd"), "GEOADD", "Sicily", 1, 1)
    r.execute_command("SET", "str", "v")
    raises(r, WRONGTYPE, "GEOADD", "str", 1, 1, "x")
    # coordinates are checked before the key's type
    raises(r, NOT_FLOAT, "GEOADD", "str", "x", 1, "x")


def test_geopos_geohash_geodist(sicily):
    r = sicily
    assert r.execute_command("GEOPOS", "Sicily", "Palermo", "nope") == [
        ["13.36138933897018433", "38.11555639549629859"], None]
    assert r.execute_command("GEOPOS", "nokey", "a") == [None]
    assert r.execute_command("GEOPOS", "Sicily") == []
    assert r.execute_command("GEOHASH", "Sicily", "Palermo", "Catania", "nope") == [
        "sqc8b49rny0", "sqdtr74hyu0", None]
    assert r.execute_command("GEOHASH", "nokey", "a") == [None]
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Catania") == "166274.1516"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Catania", "km") == "166.2742"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Catania", "MI") == "103.3182"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Catania", "ft") == "545518.8700"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "Palermo") == "0.0000"
    assert r.execute_command("GEODIST", "Sicily", "Palermo", "nope") is None
    assert r.execute_command("GEODIST", "nokey", "a", "b") is None


def test_point_read_errors(sicily):
    r = sicily
    raises(r, UNIT, "GEODIST", "Sicily", "Palermo", "Catania", "parsec")
    raises(r, UNIT, "GEODIST", "nokey", "a", "b", "parsec")  # the unit is checked first
    raises(r, SYNTAX, "GEODIST", "Sicily", "Palermo", "Catania", "km", "x")
    r.execute_command("SET", "str", "v")
    for args in (["GEOPOS", "str", "a"], ["GEOHASH", "str", "a"], ["GEODIST", "str", "a", "b"]):
        raises(r, WRONGTYPE, *args)
    raises(r, arity("geopos"), "GEOPOS")
    raises(r, arity("geohash"), "GEOHASH")
    raises(r, arity("geodist"), "GEODIST", "Sicily", "a")


def test_members_with_scores_no_geoadd_makes(rr):
    # Redis converts any score to cell bits with a C cast; the replies follow from that.
    rr.execute_command("ZADD", "z", -1, "neg", 2.5, "frac", 1e19, "huge", "inf", "pinf")
    assert rr.execute_command("GEOPOS", "z", "neg", "frac", "huge", "pinf") == [
        ["180", "85.0511287799999991"],
        ["-179.99999195337295532", "-85.05112751263942528"],
        ["180", "85.0511287799999991"],
        ["-179.99999731779098511", "-85.05112751263942528"]]
    assert rr.execute_command("GEOHASH", "z", "frac") == ["00bh0hbj200"]


def test_georadius(sicily):
    r = sicily
    assert r.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km") == ["Palermo", "Catania"]
    assert r.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km", "ASC") == [
        "Catania", "Palermo"]
    assert r.execute_command("GEORADIUS", "Sicily", 15, 37, 100, "km") == ["Catania"]
    assert r.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km", "WITHDIST", "WITHCOORD",
                             "WITHHASH", "DESC") == [
        ["Palermo", "190.4424", 3479099956230698,
         ["13.36138933897018433", "38.11555639549629859"]],
        ["Catania", "56.4413", 3479447370796909,
         ["15.08726745843887329", "37.50266842333162032"]]]
    assert r.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km", "COUNT", 1) == ["Catania"]
    assert r.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km", "COUNT", 1, "DESC") == [
        "Palermo"]
    assert r.execute_command("GEORADIUS", "nokey", 15, 37, 200, "km") == []
    assert r.execute_command("GEORADIUS_RO", "Sicily", 15, 37, 200, "km", "WITHDIST", "ASC") == [
        ["Catania", "56.4413"], ["Palermo", "190.4424"]]


def test_georadiusbymember(sicily):
    r = sicily
    assert r.execute_command("GEORADIUSBYMEMBER", "Sicily", "Palermo", 200, "km", "WITHDIST") == [
        ["Palermo", "0.0000"], ["Catania", "166.2742"]]
    assert r.execute_command("GEORADIUSBYMEMBER_RO", "Sicily", "Catania", 100, "km") == ["Catania"]
    raises(r, NO_MEMBER, "GEORADIUSBYMEMBER", "Sicily", "nope", 100, "km")
    # a missing key answers empty before the member or the radius is looked at
    assert r.execute_command("GEORADIUSBYMEMBER", "nokey", "nope", "x", "parsec") == []


def test_geosearch(sicily):
    r = sicily
    r.execute_command("GEOADD", "Sicily", 12.758489, 38.788135, "edge1", 17.241510, 38.788135,
                      "edge2")
    assert r.execute_command("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km",
                             "ASC") == ["Catania", "Palermo"]
    assert r.execute_command("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km",
                             "ASC", "WITHCOORD", "WITHDIST") == [
        ["Catania", "56.4413", ["15.08726745843887329", "37.50266842333162032"]],
        ["Palermo", "190.4424", ["13.36138933897018433", "38.11555639549629859"]],
        ["edge2", "279.7403", ["17.24151045083999634", "38.78813451624225195"]],
        ["edge1", "279.7405", ["12.7584877610206604", "38.78813451624225195"]]]
    assert r.execute_command("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", 1, "m",
                             "WITHDIST") == [["Palermo", "0.0000"]]
    assert r.execute_command("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km",
                             "COUNT", 2) == ["Catania", "Palermo"]
    found = r.execute_command("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 400, 400,
                              "km", "COUNT", 1, "ANY")
    assert len(found) == 1
    assert r.execute_command("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", 1, "km") == []


def test_search_replies_in_resp3(server, sicily):
    with server.raw() as c:
        c.call("HELLO", "3")
        assert c.call("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 100, "km",
                      "WITHCOORD", "WITHDIST", "WITHHASH") == ("*", [("*", [
                          ("$", b"Catania"), ("$", b"56.4413"), (":", 3479447370796909),
                          ("*", [(",", "15.08726745843887329"), (",", "37.50266842333162032")])])])
        assert c.call("GEOPOS", "Sicily", "nope") == ("*", [("_", None)])
        assert c.call("GEODIST", "Sicily", "Palermo", "Catania") == ("$", b"166274.1516")


def test_store_variants(sicily):
    r = sicily
    r.execute_command("SET", "dst", "old")
    r.execute_command("EXPIRE", "dst", 100)
    assert r.execute_command("GEORADIUS", "Sicily", 15, 37, 200, "km", "STORE", "dst") == 2
    assert r.execute_command("TYPE", "dst") == "zset"
    assert r.execute_command("TTL", "dst") == -1  # replaced, TTL gone
    assert r.execute_command("ZRANGE", "dst", 0, -1, "WITHSCORES") == [
        "Palermo", "3479099956230698", "Catania", "3479447370796909"]
    assert r.execute_command("GEORADIUSBYMEMBER", "Sicily", "Palermo", 200, "km",
                             "STOREDIST", "d2") == 2
    assert r.execute_command("ZRANGE", "d2", 0, -1, "WITHSCORES") == [
        "Palermo", "0", "Catania", "166.27415156960032"]
    assert r.execute_command("GEOSEARCHSTORE", "d3", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS",
                             200, "km", "ASC", "COUNT", 1, "STOREDIST") == 1
    assert r.execute_command("ZRANGE", "d3", 0, -1, "WITHSCORES") == ["Catania",
                                                                      "56.441257870158204"]
    # nothing found: the destination is deleted
    assert r.execute_command("GEOSEARCHSTORE", "d3", "Sicily", "FROMLONLAT", 0, 0, "BYRADIUS",
                             1, "km") == 0
    assert r.execute_command("EXISTS", "d3") == 0
    assert r.execute_command("GEOSEARCHSTORE", "d2", "nokey", "FROMLONLAT", 0, 0, "BYRADIUS",
                             1, "km") == 0
    assert r.execute_command("EXISTS", "d2") == 0
    # the source itself as destination
    assert r.execute_command("GEORADIUS", "Sicily", 15, 37, 100, "km", "STORE", "Sicily") == 1
    assert r.execute_command("ZRANGE", "Sicily", 0, -1) == ["Catania"]


def test_search_errors(sicily):
    r = sicily
    gs = ["GEOSEARCH", "Sicily"]
    raises(r, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH",
           *gs, "BYRADIUS", 1, "km", "ASC", "WITHDIST")
    raises(r, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch",
           "geosearch", "Sicily", "BYRADIUS", 1, "km", "ASC", "WITHDIST")
    raises(r, "ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH",
           *gs, "FROMMEMBER", "Palermo", "ASC", "WITHDIST", "WITHHASH")
    raises(r, SYNTAX, *gs, "FROMLONLAT", 15, 37, "FROMMEMBER", "Palermo", "BYRADIUS", 1, "km")
    raises(r, SYNTAX, *gs, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "BYBOX", 1, 1, "km")
    raises(r, SYNTAX, *gs, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "STORE", "x")
    raises(r, SYNTAX, *gs, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "STOREDIST")
    raises(r, SYNTAX, *gs, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "BOGUS")
    raises(r, NO_MEMBER, *gs, "FROMMEMBER", "nope", "BYRADIUS", 1, "km")
    raises(r, "ERR the ANY argument requires COUNT argument",
           *gs, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "ANY")
    raises(r, "ERR COUNT must be > 0", *gs, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "COUNT", 0)
    raises(r, NOT_INT, *gs, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "COUNT", "x")
    raises(r, "ERR need numeric radius", *gs, "FROMLONLAT", 15, 37, "BYRADIUS", "x", "km")
    raises(r, "ERR radius cannot be negative", *gs, "FROMLONLAT", 15, 37, "BYRADIUS", -1, "km")
    raises(r, UNIT, *gs, "FROMLONLAT", 15, 37, "BYRADIUS", 1, "yd")
    raises(r, "ERR need numeric width", *gs, "FROMLONLAT", 15, 37, "BYBOX", "x", 1, "km")
    raises(r, "ERR need numeric height", *gs, "FROMLONLAT", 15, 37, "BYBOX", 1, "x", "km")
    raises(r, "ERR height or width cannot be negative",
           *gs, "FROMLONLAT", 15, 37, "BYBOX", 1, -1, "km")
    raises(r, "ERR invalid longitude,latitude pair 15.000000,91.000000",
           *gs, "FROMLONLAT", 15, 91, "BYRADIUS", 1, "km")
    raises(r, "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
           "GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km", "WITHDIST")
    raises(r, "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and "
              "WITHCOORD options",
           "GEORADIUS", "Sicily", 15, 37, 1, "km", "WITHHASH", "STORE", "d")
    raises(r, SYNTAX, "GEORADIUS_RO", "Sicily", 15, 37, 1, "km", "STORE", "d")
    raises(r, SYNTAX, "GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", 1, "km", "STOREDIST", "d")
    raises(r, SYNTAX, "GEORADIUS", "Sicily", 15, 37, 1, "km", "FROMLONLAT", 1, 1)
    raises(r, "ERR need numeric radius", "GEORADIUS", "Sicily", 15, 37, "x", "km")
    raises(r, UNIT, "GEORADIUS", "Sicily", 15, 37, 1, "kms")
    raises(r, NOT_FLOAT, "GEORADIUS", "Sicily", "x", 37, 1, "km")
    raises(r, arity("geosearch"), "GEOSEARCH", "Sicily", "BYRADIUS", 1, "km")
    raises(r, arity("geosearchstore"), "GEOSEARCHSTORE", "d", "Sicily", "BYRADIUS", 1, "km")
    raises(r, arity("georadius"), "GEORADIUS", "Sicily", 15, 37, 1)
    raises(r, arity("georadiusbymember"), "GEORADIUSBYMEMBER", "Sicily", "Palermo", 1)
    r.execute_command("SET", "str", "v")
    raises(r, WRONGTYPE, "GEOSEARCH", "str", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "km")
    # the source's type is checked before any argument
    raises(r, WRONGTYPE, "GEORADIUS", "str", "x", 37, 1, "km")
    raises(r, WRONGTYPE, "GEOSEARCHSTORE", "d", "str", "BOGUS", 1, 2, 3, 4)
    # a failed store leaves the destination alone
    r.execute_command("SET", "keep", "v")
    raises(r, UNIT, "GEOSEARCHSTORE", "keep", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 1, "x")
    assert r.execute_command("GET", "keep") == "v"


def test_command_getkeys_finds_the_store_key(rr):
    assert rr.execute_command("COMMAND", "GETKEYS", "GEORADIUS", "src", 0, 0, 1, "km",
                              "STORE", "dst") == ["src", "dst"]
    assert rr.execute_command("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "src", "m", 1, "km",
                              "STOREDIST", "d1", "STORE", "d2") == ["src", "d2", "d1"]
    assert rr.execute_command("COMMAND", "GETKEYS", "GEORADIUS", "src", 0, 0, "store", "km") == [
        "src"]
    assert rr.execute_command("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "dst", "src", "FROMLONLAT",
                              0, 0, "BYRADIUS", 1, "km") == ["dst", "src"]


def test_geo_members_are_sorted_set_members(sicily):
    r = sicily
    assert r.execute_command("ZREM", "Sicily", "Palermo") == 1
    assert r.execute_command("GEORADIUS", "Sicily", 15, 37, 500, "km") == ["Catania"]
    r.execute_command("ZADD", "Sicily", "3479099956230698", "Palermo")
    assert r.execute_command("GEOPOS", "Sicily", "Palermo") == [
        ["13.36138933897018433", "38.11555639549629859"]]
