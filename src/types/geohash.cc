#include "types/geohash.h"

#include <cmath>

namespace basalt::geo {

namespace {

constexpr double kDegToRad = M_PI / 180.0;
// The Mercator projection's half circumference: the ceiling EstimateSteps doubles up to.
constexpr double kMercatorMax = 20037726.37;
constexpr const char* kBase32 = "0123456789bcdefghjkmnpqrstuvwxyz";

double DegToRad(double deg) {
  return deg * kDegToRad;
}
double RadToDeg(double rad) {
  return rad / kDegToRad;
}

// Spreads the 32 bits of x over the even bit positions of the result.
uint64_t Spread(uint32_t x32) {
  uint64_t x = x32;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// Gathers the even bits of x.
uint32_t Compact(uint64_t x) {
  x &= 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

uint64_t Interleave(uint32_t lat, uint32_t lon) {
  return Spread(lat) | (Spread(lon) << 1);
}

// What (uint64_t)score gives in Redis on x86-64: truncation, negatives through int64, and the
// out-of-range results of cvttsd2si.
uint64_t ScoreBits(double score) {
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr uint64_t kIndefinite = uint64_t{1} << 63;
  if (score >= kTwo63) {
    double rest = score - kTwo63;
    uint64_t low = rest < kTwo63 ? static_cast<uint64_t>(static_cast<int64_t>(rest)) : kIndefinite;
    return low ^ kIndefinite;
  }
  if (score >= -kTwo63) return static_cast<uint64_t>(static_cast<int64_t>(score));
  return kIndefinite;
}

// Moves a cell by whole cells; each coordinate wraps around modulo 2^step.
Cell Move(const Cell& cell, int dlon, int dlat) {
  uint64_t mask = (uint64_t{1} << cell.step) - 1;
  uint64_t lat = Compact(cell.bits);
  uint64_t lon = Compact(cell.bits >> 1);
  if (dlon != 0) lon = (lon + static_cast<uint64_t>(static_cast<int64_t>(dlon))) & mask;
  if (dlat != 0) lat = (lat + static_cast<uint64_t>(static_cast<int64_t>(dlat))) & mask;
  return {Interleave(static_cast<uint32_t>(lat), static_cast<uint32_t>(lon)), cell.step};
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(DegToRad(lat2) - DegToRad(lat1));
}

// The bounding box of the shape in degrees: min lon, min lat, max lon, max lat. The longitude
// span is taken at the edge nearer the equator.
std::array<double, 4> BoundingBox(const Shape& s) {
  bool circle = s.kind == Shape::Kind::kRadius;
  double height = s.to_meters * (circle ? s.radius : s.height / 2);
  double width = s.to_meters * (circle ? s.radius : s.width / 2);
  double lat_delta = RadToDeg(height / kEarthRadiusMeters);
  double lon_delta_top =
      RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(s.lat + lat_delta)));
  double lon_delta_bottom =
      RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(s.lat - lat_delta)));
  double lon_delta = s.lat < 0 ? lon_delta_bottom : lon_delta_top;
  return {s.lon - lon_delta, s.lat - lat_delta, s.lon + lon_delta, s.lat + lat_delta};
}

struct Neighborhood {
  Cell centre;
  std::array<Cell, 8> around;  // N, S, E, W, NE, NW, SE, SW
  Area area;
};

Neighborhood NeighborhoodAt(double lon, double lat, int step) {
  Neighborhood n;
  Encode(kLonRange, kLatRange, lon, lat, step, &n.centre);
  n.around = {Move(n.centre, 0, 1),  Move(n.centre, 0, -1), Move(n.centre, 1, 0),
              Move(n.centre, -1, 0), Move(n.centre, 1, 1),  Move(n.centre, -1, 1),
              Move(n.centre, 1, -1), Move(n.centre, -1, -1)};
  n.area = Decode(kLonRange, kLatRange, n.centre);
  return n;
}

enum Side { kNorth, kSouth, kEast, kWest, kNorthEast, kNorthWest, kSouthEast, kSouthWest };

}  // namespace

bool ValidLonLat(double lon, double lat) {
  return !(lon > kLonMax || lon < kLonMin || lat > kLatMax || lat < kLatMin);
}

bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, Cell* out) {
  if (step < 1 || step > 32 || !ValidLonLat(lon, lat)) return false;
  if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max) {
    return false;
  }
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  lat_offset *= static_cast<double>(uint64_t{1} << step);
  lon_offset *= static_cast<double>(uint64_t{1} << step);
  out->bits = Interleave(static_cast<uint32_t>(lat_offset), static_cast<uint32_t>(lon_offset));
  out->step = step;
  return true;
}

uint64_t ScoreOf(double lon, double lat) {
  Cell cell;
  Encode(kLonRange, kLatRange, lon, lat, kMaxStep, &cell);
  return cell.bits;
}

Area Decode(Range lon_range, Range lat_range, const Cell& cell) {
  uint32_t lat = Compact(cell.bits);
  uint32_t lon = Compact(cell.bits >> 1);
  double cells = static_cast<double>(uint64_t{1} << cell.step);
  double lat_scale = lat_range.max - lat_range.min;
  double lon_scale = lon_range.max - lon_range.min;
  // The +1 is 32-bit arithmetic, as in Redis (it wraps for the all-ones index).
  uint32_t lat_next = lat + 1, lon_next = lon + 1;
  Area a;
  a.lat.min = lat_range.min + (lat * 1.0 / cells) * lat_scale;
  a.lat.max = lat_range.min + (lat_next * 1.0 / cells) * lat_scale;
  a.lon.min = lon_range.min + (lon * 1.0 / cells) * lon_scale;
  a.lon.max = lon_range.min + (lon_next * 1.0 / cells) * lon_scale;
  return a;
}

void DecodeScore(double score, double* lon, double* lat) {
  Area a = Decode(kLonRange, kLatRange, Cell{ScoreBits(score), kMaxStep});
  *lon = (a.lon.min + a.lon.max) / 2;
  if (*lon > kLonMax) *lon = kLonMax;
  if (*lon < kLonMin) *lon = kLonMin;
  *lat = (a.lat.min + a.lat.max) / 2;
  if (*lat > kLatMax) *lat = kLatMax;
  if (*lat < kLatMin) *lat = kLatMin;
}

std::string GeohashString(double score) {
  double lon, lat;
  DecodeScore(score, &lon, &lat);
  Cell cell;
  Encode(Range{-180, 180}, Range{-90, 90}, lon, lat, kMaxStep, &cell);
  std::string out(11, '0');
  // 52 bits make 10 characters and 2 spare bits; the 11th character is always '0' in Redis.
  for (int i = 0; i < 10; i++) out[i] = kBase32[(cell.bits >> (52 - (i + 1) * 5)) & 0x1f];
  return out;
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  double lon1r = DegToRad(lon1), lon2r = DegToRad(lon2);
  double v = std::sin((lon2r - lon1r) / 2);
  // Same longitude: the distance is along the meridian.
  if (v == 0.0) return LatDistance(lat1, lat2);
  double lat1r = DegToRad(lat1), lat2r = DegToRad(lat2);
  double u = std::sin((lat2r - lat1r) / 2);
  double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool InShape(const Shape& s, double lon, double lat, double* meters) {
  if (s.kind == Shape::Kind::kRadius) {
    *meters = Distance(s.lon, s.lat, lon, lat);
    return *meters <= s.radius * s.to_meters;
  }
  // Latitude first: it is the cheaper test.
  if (LatDistance(lat, s.lat) > s.height * s.to_meters / 2) return false;
  if (Distance(lon, lat, s.lon, lat) > s.width * s.to_meters / 2) return false;
  *meters = Distance(s.lon, s.lat, lon, lat);
  return true;
}

int EstimateSteps(double meters, double lat) {
  if (meters == 0) return kMaxStep;
  int step = 1;
  while (meters < kMercatorMax) {
    meters *= 2;
    step++;
  }
  step -= 2;  // one step coarser, so that the shape fits in most cases
  // Cells narrow towards the poles.
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > kMaxStep) step = kMaxStep;
  return step;
}

std::array<Cell, 9> SearchCells(const Shape& s) {
  std::array<double, 4> box = BoundingBox(s);
  double min_lon = box[0], min_lat = box[1], max_lon = box[2], max_lat = box[3];
  double meters = s.kind == Shape::Kind::kRadius
                      ? s.radius
                      : std::sqrt((s.width / 2) * (s.width / 2) + (s.height / 2) * (s.height / 2));
  meters *= s.to_meters;
  int step = EstimateSteps(meters, s.lat);
  Neighborhood n = NeighborhoodAt(s.lon, s.lat, step);
  // Near a cell's edge the neighbours may still not reach the end of the shape: one step
  // coarser then.
  Area north = Decode(kLonRange, kLatRange, n.around[kNorth]);
  Area south = Decode(kLonRange, kLatRange, n.around[kSouth]);
  Area east = Decode(kLonRange, kLatRange, n.around[kEast]);
  Area west = Decode(kLonRange, kLatRange, n.around[kWest]);
  bool too_fine = north.lat.max < max_lat || south.lat.min > min_lat || east.lon.max < max_lon ||
                  west.lon.min > min_lon;
  if (step > 1 && too_fine) n = NeighborhoodAt(s.lon, s.lat, --step);
  // Drop the neighbours on a side the shape does not reach.
  if (step >= 2) {
    auto drop = [&n](std::initializer_list<Side> sides) {
      for (Side side : sides) n.around[side] = Cell{};
    };
    if (n.area.lat.min < min_lat) drop({kSouth, kSouthWest, kSouthEast});
    if (n.area.lat.max > max_lat) drop({kNorth, kNorthEast, kNorthWest});
    if (n.area.lon.min < min_lon) drop({kWest, kSouthWest, kNorthWest});
    if (n.area.lon.max > max_lon) drop({kEast, kSouthEast, kNorthEast});
  }
  std::array<Cell, 9> out;
  out[0] = n.centre;
  for (size_t i = 0; i < n.around.size(); i++) out[i + 1] = n.around[i];
  return out;
}

void CellScoreRange(const Cell& cell, uint64_t* min, uint64_t* max) {
  int shift = 2 * kMaxStep - 2 * cell.step;
  *min = cell.bits << shift;
  *max = (cell.bits + 1) << shift;
}

}  // namespace basalt::geo
