// Geo commands on top of sorted sets, as in Redis: a member's score is the 52-bit geohash of
// its position (types/geohash.h), so ZRANGE, ZREM, ZSCORE ... work on geo keys unchanged.
//
// GEOADD is ZADD with computed scores. A search (GEOSEARCH, GEORADIUS and their variants)
// scans the score ranges of the 9 cells types/geohash.h picks, in Redis's order, keeps the
// members inside the shape, then sorts and trims them like Redis. Replies use Redis's number
// formats: coordinates with up to 17 decimals, distances with exactly 4.
#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "commands/zset_util.h"
#include "types/geohash.h"

namespace basalt {

namespace {

constexpr const char* kUnitError = "ERR unsupported unit provided. please use M, KM, FT, MI";
constexpr const char* kNoMemberError = "ERR could not decode requested zset member";

// The meters in one `unit`; replies and returns nullopt for an unknown unit.
std::optional<double> UnitArg(CommandContext& c, size_t i) {
  const std::string& u = c.arg(i);
  if (EqualsIgnoreCase(u, "m")) return 1;
  if (EqualsIgnoreCase(u, "km")) return 1000;
  if (EqualsIgnoreCase(u, "ft")) return 0.3048;
  if (EqualsIgnoreCase(u, "mi")) return 1609.34;
  c.reply.Error(kUnitError);
  return std::nullopt;
}

std::optional<double> DoubleArg(CommandContext& c, size_t i, const char* error) {
  auto v = ParseDouble(c.arg(i), true);
  if (!v) c.reply.Error(error);
  return v;
}

// argv[i], argv[i+1] as a valid longitude, latitude pair.
bool LonLatArgs(CommandContext& c, size_t i, double* lon, double* lat) {
  auto x = DoubleArg(c, i, kNotFloatError);
  if (!x) return false;
  auto y = DoubleArg(c, i + 1, kNotFloatError);
  if (!y) return false;
  if (!geo::ValidLonLat(*x, *y)) {
    char buf[1024];
    snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", *x, *y);
    c.reply.Error(buf);
    return false;
  }
  *lon = *x;
  *lat = *y;
  return true;
}

// A coordinate: RESP2 bulk string, RESP3 double, both with up to 17 decimals.
void ReplyCoordinate(CommandContext& c, double v) {
  std::string text = FormatLongDouble(v);
  if (c.reply.resp() >= 3) {
    c.reply.Raw("," + text + "\r\n");
  } else {
    c.reply.Bulk(text);
  }
}

void ReplyPosition(CommandContext& c, double lon, double lat) {
  c.reply.Array(2);
  ReplyCoordinate(c, lon);
  ReplyCoordinate(c, lat);
}

// A distance: always a bulk string with 4 decimals.
void ReplyDistance(CommandContext& c, double d) {
  char buf[512];
  int n = snprintf(buf, sizeof(buf), "%.4f", d);
  c.reply.Bulk(std::string_view(buf, static_cast<size_t>(std::clamp(n, 0, 511))));
}

// The member's score in the live sorted set `state`; false (nothing replied) when absent.
bool MemberScore(CommandContext& c, const KeyState& state, std::string_view key,
                 std::string_view member, double* score, Status* error) {
  *error = Status::OK();
  if (!state.live() || !MemberFilterOf(c.ctx, state.meta.version).MayHold(member)) return false;
  Status s = GetScore(c.ctx, c.db(), key, state.meta, member, score);
  if (s.ok()) return true;
  if (!s.IsNotFound()) *error = s;
  return false;
}

// GEOADD key [NX|XX] [CH] longitude latitude member [...]
void GeoaddCommand(CommandContext& c) {
  bool nx = false, xx = false, ch = false;
  size_t i = 2;
  for (; i < c.argc(); i++) {
    if (EqualsIgnoreCase(c.arg(i), "nx")) {
      nx = true;
    } else if (EqualsIgnoreCase(c.arg(i), "xx")) {
      xx = true;
    } else if (EqualsIgnoreCase(c.arg(i), "ch")) {
      ch = true;
    } else {
      break;
    }
  }
  size_t elements = (c.argc() - i) / 3;
  if ((c.argc() - i) % 3 != 0 || (nx && xx) || elements == 0) return c.reply.Error(kSyntaxError);
  std::vector<double> scores;
  for (size_t j = 0; j < elements; j++) {
    double lon, lat;
    if (!LonLatArgs(c, i + 3 * j, &lon, &lat)) return;
    scores.push_back(static_cast<double>(geo::ScoreOf(lon, lat)));
  }
  auto old = LookupZset(c, c.arg(1));
  if (!old) return;
  if (!old->live() && xx) return c.reply.Integer(0);
  ZsetWriter w(c.ctx, c.db(), c.arg(1), *old);
  int64_t added = 0, updated = 0;
  for (size_t j = 0; j < elements; j++) {
    const std::string& member = c.arg(i + 3 * j + 2);
    double cur;
    Status s = w.Find(member, &cur);
    if (!s.ok() && !s.IsNotFound()) return (void)ReplyIfError(c, s);
    if (s.ok()) {
      if (nx || cur == scores[j]) continue;
      w.Put(member, scores[j], &cur);
      updated++;
    } else if (!xx) {
      w.Put(member, scores[j], nullptr);
      added++;
    }
  }
  w.Finish();
  // GEOADD is ZADD underneath in Redis, and notifies as ZADD does.
  if (added + updated != 0) {
    Notify(c, notify::kZset, "zadd", c.arg(1));
    CountChanges(c, added + updated);
  }
  c.reply.Integer(ch ? added + updated : added);
}

// GEOPOS key [member ...]
void GeoposCommand(CommandContext& c) {
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  c.reply.Array(c.argc() - 2);
  for (size_t i = 2; i < c.argc(); i++) {
    double score, lon, lat;
    Status error;
    if (!MemberScore(c, *state, c.arg(1), c.arg(i), &score, &error)) {
      if (ReplyIfError(c, error)) return;
      c.reply.NullArray();
      continue;
    }
    geo::DecodeScore(score, &lon, &lat);
    ReplyPosition(c, lon, lat);
  }
}

// GEOHASH key [member ...]
void GeohashCommand(CommandContext& c) {
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  c.reply.Array(c.argc() - 2);
  for (size_t i = 2; i < c.argc(); i++) {
    double score;
    Status error;
    if (!MemberScore(c, *state, c.arg(1), c.arg(i), &score, &error)) {
      if (ReplyIfError(c, error)) return;
      c.reply.Null();
      continue;
    }
    c.reply.Bulk(geo::GeohashString(score));
  }
}

// GEODIST key member1 member2 [M|KM|FT|MI]
void GeodistCommand(CommandContext& c) {
  double to_meters = 1;
  if (c.argc() == 5) {
    auto unit = UnitArg(c, 4);
    if (!unit) return;
    to_meters = *unit;
  } else if (c.argc() > 5) {
    return c.reply.Error(kSyntaxError);
  }
  auto state = LookupZset(c, c.arg(1));
  if (!state) return;
  CountHit(c, c.arg(1), state->live());
  double score1, score2;
  Status error;
  if (!MemberScore(c, *state, c.arg(1), c.arg(2), &score1, &error) ||
      !MemberScore(c, *state, c.arg(1), c.arg(3), &score2, &error)) {
    if (ReplyIfError(c, error)) return;
    return c.reply.Null();
  }
  double lon1, lat1, lon2, lat2;
  geo::DecodeScore(score1, &lon1, &lat1);
  geo::DecodeScore(score2, &lon2, &lat2);
  ReplyDistance(c, geo::Distance(lon1, lat1, lon2, lat2) / to_meters);
}

// ---- Searches ----

enum SearchFlags : uint32_t {
  kByCoords = 1 << 0,     // GEORADIUS: centre and radius are positional
  kByMember = 1 << 1,     // GEORADIUSBYMEMBER: member and radius are positional
  kSearch = 1 << 2,       // GEOSEARCH: everything is an option
  kSearchStore = 1 << 3,  // GEOSEARCHSTORE
  kNoStore = 1 << 4,      // the _RO variants
};

enum class Sort { kNone, kAsc, kDesc };

struct SearchRequest {
  geo::Shape shape;
  bool withdist = false, withhash = false, withcoord = false, any = false;
  bool from_member = false, from_lonlat = false, by_radius = false, by_box = false;
  Sort sort = Sort::kNone;
  int64_t count = 0;     // 0: unlimited
  size_t store_key = 0;  // argv index of the destination, 0 when not storing
  bool storedist = false;
};

struct GeoPoint {
  std::string member;
  double score, lon, lat, dist;
};

// Sets the shape's centre from a member of the source; replies when it is not there.
bool CentreFromMember(CommandContext& c, const KeyState& src, size_t src_index, size_t member,
                      SearchRequest* q) {
  double score;
  Status error;
  if (!MemberScore(c, src, c.arg(src_index), c.arg(member), &score, &error)) {
    if (!ReplyIfError(c, error)) c.reply.Error(kNoMemberError);
    return false;
  }
  geo::DecodeScore(score, &q->shape.lon, &q->shape.lat);
  return true;
}

// BYRADIUS's radius unit at argv[i], argv[i+1].
bool RadiusArgs(CommandContext& c, size_t i, SearchRequest* q) {
  auto radius = DoubleArg(c, i, "ERR need numeric radius");
  if (!radius) return false;
  if (*radius < 0) return c.reply.Error("ERR radius cannot be negative"), false;
  auto unit = UnitArg(c, i + 1);
  if (!unit) return false;
  q->shape.kind = geo::Shape::Kind::kRadius;
  q->shape.radius = *radius;
  q->shape.to_meters = *unit;
  return true;
}

// BYBOX's width height unit at argv[i..i+2].
bool BoxArgs(CommandContext& c, size_t i, SearchRequest* q) {
  auto width = DoubleArg(c, i, "ERR need numeric width");
  if (!width) return false;
  auto height = DoubleArg(c, i + 1, "ERR need numeric height");
  if (!height) return false;
  if (*height < 0 || *width < 0) {
    return c.reply.Error("ERR height or width cannot be negative"), false;
  }
  auto unit = UnitArg(c, i + 2);
  if (!unit) return false;
  q->shape.kind = geo::Shape::Kind::kBox;
  q->shape.width = *width;
  q->shape.height = *height;
  q->shape.to_meters = *unit;
  return true;
}

// One option at argv[i]; advances `i` past its arguments. Replies and returns false on error.
bool ParseOption(CommandContext& c, const KeyState& src, size_t src_index, uint32_t flags,
                 size_t& i, SearchRequest* q) {
  const std::string& o = c.arg(i);
  size_t left = c.argc() - i - 1;
  bool search = flags & kSearch;
  if (EqualsIgnoreCase(o, "withdist")) {
    q->withdist = true;
  } else if (EqualsIgnoreCase(o, "withhash")) {
    q->withhash = true;
  } else if (EqualsIgnoreCase(o, "withcoord")) {
    q->withcoord = true;
  } else if (EqualsIgnoreCase(o, "any")) {
    q->any = true;
  } else if (EqualsIgnoreCase(o, "asc")) {
    q->sort = Sort::kAsc;
  } else if (EqualsIgnoreCase(o, "desc")) {
    q->sort = Sort::kDesc;
  } else if (EqualsIgnoreCase(o, "count") && left >= 1) {
    auto n = IntArg(c, ++i);
    if (!n) return false;
    if (*n <= 0) return c.reply.Error("ERR COUNT must be > 0"), false;
    q->count = *n;
  } else if ((EqualsIgnoreCase(o, "store") || EqualsIgnoreCase(o, "storedist")) && left >= 1 &&
             !(flags & kNoStore) && !search) {
    q->storedist = EqualsIgnoreCase(o, "storedist");
    q->store_key = ++i;
  } else if (EqualsIgnoreCase(o, "storedist") && (flags & kSearchStore)) {
    q->storedist = true;
  } else if (EqualsIgnoreCase(o, "frommember") && left >= 1 && search && !q->from_lonlat) {
    // Without a source key the search is empty anyway: only the syntax is checked.
    if (src.live() && !CentreFromMember(c, src, src_index, i + 1, q)) return false;
    q->from_member = true;
    i++;
  } else if (EqualsIgnoreCase(o, "fromlonlat") && left >= 2 && search && !q->from_member) {
    if (!LonLatArgs(c, i + 1, &q->shape.lon, &q->shape.lat)) return false;
    q->from_lonlat = true;
    i += 2;
  } else if (EqualsIgnoreCase(o, "byradius") && left >= 2 && search && !q->by_box) {
    if (!RadiusArgs(c, i + 1, q)) return false;
    q->by_radius = true;
    i += 2;
  } else if (EqualsIgnoreCase(o, "bybox") && left >= 3 && search && !q->by_radius) {
    if (!BoxArgs(c, i + 1, q)) return false;
    q->by_box = true;
    i += 3;
  } else {
    return c.reply.Error(kSyntaxError), false;
  }
  return true;
}

// Parses everything after the source key, in Redis's order of checks.
bool ParseSearch(CommandContext& c, const KeyState& src, size_t src_index, uint32_t flags,
                 SearchRequest* q) {
  size_t first_option;
  if (flags & kByCoords) {
    first_option = 6;
    if (!LonLatArgs(c, 2, &q->shape.lon, &q->shape.lat) || !RadiusArgs(c, 4, q)) return false;
  } else if (flags & kByMember) {
    first_option = 5;
    // Without a source key the reply is empty whatever the radius says.
    if (src.live() && (!CentreFromMember(c, src, src_index, 2, q) || !RadiusArgs(c, 3, q))) {
      return false;
    }
  } else {
    first_option = src_index + 1;
    if (flags & kSearchStore) q->store_key = 1;
  }
  for (size_t i = first_option; i < c.argc(); i++) {
    if (!ParseOption(c, src, src_index, flags, i, q)) return false;
  }
  if (q->store_key != 0 && (q->withdist || q->withhash || q->withcoord)) {
    c.reply.Error(std::string("ERR ") +
                  (flags & kSearchStore ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
                  " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
    return false;
  }
  if ((flags & kSearch) && !(q->from_member || q->from_lonlat)) {
    c.reply.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + c.arg(0));
    return false;
  }
  if ((flags & kSearch) && !(q->by_radius || q->by_box)) {
    c.reply.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + c.arg(0));
    return false;
  }
  if (q->any && q->count == 0) {
    c.reply.Error("ERR the ANY argument requires COUNT argument");
    return false;
  }
  return true;
}

// The members inside the shape in the order Redis finds them: cell by cell, each in score
// order; with ANY it stops at `count`.
StatusOr<std::vector<GeoPoint>> FindPoints(CommandContext& c, const std::string& key,
                                           const Metadata& meta, const SearchRequest& q) {
  std::vector<GeoPoint> found;
  size_t limit = q.any ? static_cast<size_t>(q.count) : 0;
  auto cells = geo::SearchCells(q.shape);
  size_t last = 0;  // index of the last cell scanned; 0 doubles as "none", as in Redis
  for (size_t i = 0; i < cells.size(); i++) {
    if (cells[i].IsZero()) continue;
    // A huge radius can make neighbours coincide: skip a repeat of the cell just scanned.
    if (last != 0 && cells[i] == cells[last]) continue;
    if (limit != 0 && found.size() >= limit) break;
    uint64_t min, max;
    geo::CellScoreRange(cells[i], &min, &max);
    ScoreRange range{static_cast<double>(min), static_cast<double>(max), false, true};
    Status s = ScanScoreRange(c.ctx, c.db(), key, meta, range, false,
                              [&](std::string_view member, double score) {
                                GeoPoint p{std::string(member), score, 0, 0, 0};
                                geo::DecodeScore(score, &p.lon, &p.lat);
                                if (geo::InShape(q.shape, p.lon, p.lat, &p.dist)) {
                                  found.push_back(std::move(p));
                                }
                                return limit == 0 || found.size() < limit;
                              });
    if (!s.ok()) return s;
    last = i;
  }
  return found;
}

void ReplyPoints(CommandContext& c, const std::vector<GeoPoint>& points, const SearchRequest& q) {
  size_t options = q.withdist + q.withhash + q.withcoord;
  c.reply.Array(points.size());
  for (const GeoPoint& p : points) {
    if (options > 0) c.reply.Array(options + 1);
    c.reply.Bulk(p.member);
    if (q.withdist) ReplyDistance(c, p.dist / q.shape.to_meters);
    if (q.withhash) c.reply.Integer(static_cast<int64_t>(p.score));
    if (q.withcoord) ReplyPosition(c, p.lon, p.lat);
  }
}

// Replaces the destination with the points (scores: their geohash, or with STOREDIST their
// distance in the request's unit); an empty result deletes it.
void StorePoints(CommandContext& c, const std::vector<GeoPoint>& points, const SearchRequest& q) {
  const std::string& dst = c.arg(q.store_key);
  auto old = c.ctx.Lookup(c.db(), dst);
  if (ReplyIfError(c, old.status())) return;
  ZsetWriter w(c.ctx, c.db(), dst, *old, /*replace=*/true);
  std::unordered_set<std::string_view> stored;
  for (const GeoPoint& p : points) {
    if (!stored.insert(p.member).second) continue;
    w.Put(p.member, q.storedist ? p.dist / q.shape.to_meters : p.score, nullptr);
  }
  w.Finish();
  if (!stored.empty()) {
    CountChanges(c, static_cast<int64_t>(stored.size()));
    // GEOSEARCHSTORE names its destination first; GEORADIUS names it after STORE.
    Notify(c, notify::kZset, q.store_key == 1 ? "geosearchstore" : "georadiusstore", dst);
  } else if (old->live()) {
    Notify(c, notify::kGeneric, "del", dst);
  }
  c.reply.Integer(static_cast<int64_t>(stored.size()));
}

void SearchGeneric(CommandContext& c, size_t src_index, uint32_t flags) {
  auto src = LookupZset(c, c.arg(src_index));
  if (!src) return;
  CountHit(c, c.arg(src_index), src->live());
  SearchRequest q;
  if (!ParseSearch(c, *src, src_index, flags, &q)) return;
  std::vector<GeoPoint> points;
  if (src->live()) {
    if (q.count != 0 && q.sort == Sort::kNone && !q.any) q.sort = Sort::kAsc;
    auto found = FindPoints(c, c.arg(src_index), src->meta, q);
    if (ReplyIfError(c, found.status())) return;
    points = std::move(*found);
  }
  // Stable, as glibc's qsort is on these sizes: equal distances keep the order found.
  if (q.sort == Sort::kAsc) {
    std::stable_sort(points.begin(), points.end(),
                     [](const GeoPoint& a, const GeoPoint& b) { return a.dist < b.dist; });
  } else if (q.sort == Sort::kDesc) {
    std::stable_sort(points.begin(), points.end(),
                     [](const GeoPoint& a, const GeoPoint& b) { return a.dist > b.dist; });
  }
  if (q.count != 0 && points.size() > static_cast<size_t>(q.count)) {
    points.resize(static_cast<size_t>(q.count));
  }
  if (q.store_key != 0) return StorePoints(c, points, q);
  ReplyPoints(c, points, q);
}

void GeoradiusCommand(CommandContext& c) {
  SearchGeneric(c, 1, kByCoords);
}
void GeoradiusRoCommand(CommandContext& c) {
  SearchGeneric(c, 1, kByCoords | kNoStore);
}
void GeoradiusbymemberCommand(CommandContext& c) {
  SearchGeneric(c, 1, kByMember);
}
void GeoradiusbymemberRoCommand(CommandContext& c) {
  SearchGeneric(c, 1, kByMember | kNoStore);
}
void GeosearchCommand(CommandContext& c) {
  SearchGeneric(c, 1, kSearch);
}
void GeosearchstoreCommand(CommandContext& c) {
  SearchGeneric(c, 2, kSearch | kSearchStore);
}

// GEORADIUS[BYMEMBER] keys: the source, then as Redis's key specs report them the key after
// the first STORE and the one after the first STOREDIST, searched from the options on; then any
// other STORE/STOREDIST argument, because the command writes the last one given and every key
// it writes must be locked.
template <size_t kFirstOption>
std::vector<size_t> GeoradiusKeys(const std::vector<std::string>& argv) {
  std::vector<size_t> keys;
  if (argv.size() < 2) return keys;
  keys.push_back(1);
  std::vector<size_t> store, storedist;
  for (size_t i = kFirstOption; i + 1 < argv.size(); i++) {
    if (EqualsIgnoreCase(argv[i], "store")) store.push_back(i + 1);
    if (EqualsIgnoreCase(argv[i], "storedist")) storedist.push_back(i + 1);
  }
  if (!store.empty()) keys.push_back(store.front());
  if (!storedist.empty()) keys.push_back(storedist.front());
  for (const auto* more : {&store, &storedist}) {
    for (size_t i : *more) {
      if (std::find(keys.begin(), keys.end(), i) == keys.end()) keys.push_back(i);
    }
  }
  return keys;
}

constexpr uint32_t kW = kCmdWrite | kCmdDenyOom;
constexpr uint32_t kR = kCmdReadOnly;

const std::vector<CommandSpec> kGeoCommands = {
    {"geoadd", -5, kW, 1, 1, 1, GeoaddCommand, "geo",
     "Adds one or more members to a geospatial index. The key is created if it doesn't exist.",
     "@write @geo @slow"},
    {"geopos", -2, kR, 1, 1, 1, GeoposCommand, "geo",
     "Returns the longitude and latitude of members from a geospatial index.", "@read @geo @slow"},
    {"geodist", -4, kR, 1, 1, 1, GeodistCommand, "geo",
     "Returns the distance between two members of a geospatial index.", "@read @geo @slow"},
    {"geohash", -2, kR, 1, 1, 1, GeohashCommand, "geo",
     "Returns members from a geospatial index as geohash strings.", "@read @geo @slow"},
    {"geosearch", -7, kR, 1, 1, 1, GeosearchCommand, "geo",
     "Queries a geospatial index for members inside an area of a box or a circle.",
     "@read @geo @slow"},
    {"geosearchstore", -8, kW, 1, 2, 1, GeosearchstoreCommand, "geo",
     "Queries a geospatial index for members inside an area of a box or a circle, optionally "
     "stores the result.",
     "@write @geo @slow"},
    {"georadius", -6, kW | kCmdMovableKeys, 1, 1, 1, GeoradiusCommand, "geo",
     "Queries a geospatial index for members within a distance from a coordinate, optionally "
     "stores the result.",
     "@write @geo @slow", GeoradiusKeys<6>},
    {"georadius_ro", -6, kR, 1, 1, 1, GeoradiusRoCommand, "geo",
     "Returns members from a geospatial index that are within a distance from a coordinate.",
     "@read @geo @slow"},
    {"georadiusbymember", -5, kW | kCmdMovableKeys, 1, 1, 1, GeoradiusbymemberCommand, "geo",
     "Queries a geospatial index for members within a distance from a member, optionally "
     "stores the result.",
     "@write @geo @slow", GeoradiusKeys<5>},
    {"georadiusbymember_ro", -5, kR, 1, 1, 1, GeoradiusbymemberRoCommand, "geo",
     "Returns members from a geospatial index that are within a distance from a member.",
     "@read @geo @slow"},
};

}  // namespace

const std::vector<CommandSpec>& GeoCommands() {
  return kGeoCommands;
}

}  // namespace basalt
