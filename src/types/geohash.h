// Geohash math for the GEO commands, with Redis's exact numbers: pure functions, no storage.
//
// A position is stored as a sorted-set score: the 52-bit geohash of (longitude, latitude) at
// step 26, latitude bits at the even positions and longitude bits at the odd ones (bit 51, the
// most significant, is longitude's). Longitude covers [-180, 180] and latitude the Web Mercator
// limits [-85.05112878, 85.05112878]. A score decodes to the centre of its cell, clamped to
// those ranges. Distances use the haversine formula on a sphere of radius 6372797.560856 m.
//
// A search covers the shape with the cell that holds its centre and that cell's 8 neighbours,
// at the largest step whose cells are still wider than the shape; neighbours that cannot hold a
// match are dropped. Every step, boundary test and floating-point operation follows Redis
// 7.0's order of evaluation, so the same members are found in the same order and every
// printed digit matches.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace basalt::geo {

constexpr double kLonMin = -180;
constexpr double kLonMax = 180;
constexpr double kLatMin = -85.05112878;
constexpr double kLatMax = 85.05112878;
constexpr int kMaxStep = 26;  // 52 bits
constexpr double kEarthRadiusMeters = 6372797.560856;

struct Range {
  double min, max;
};
constexpr Range kLonRange{kLonMin, kLonMax};
constexpr Range kLatRange{kLatMin, kLatMax};

// A geohash cell: `step` bits per coordinate. The zero cell (bits 0, step 0) means "none".
struct Cell {
  uint64_t bits = 0;
  int step = 0;
  bool IsZero() const { return bits == 0 && step == 0; }
  bool operator==(const Cell& o) const { return bits == o.bits && step == o.step; }
};

struct Area {
  Range lon, lat;
};

bool ValidLonLat(double lon, double lat);

// The cell of `step` (1..32) holding the point over the given ranges; false for a point
// outside them or outside the valid longitude/latitude limits.
bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, Cell* out);
// The sorted-set score of a valid point.
uint64_t ScoreOf(double lon, double lat);
// The cell's bounds over the given ranges.
Area Decode(Range lon_range, Range lat_range, const Cell& cell);
// The position a score stands for: the centre of its step-26 cell, clamped to the limits.
// Scores that no GEOADD produces (fractions, negatives, huge values) are converted to bits as
// Redis's C cast does on x86-64.
void DecodeScore(double score, double* lon, double* lat);
// GEOHASH's 11-character base32 string (standard latitude range [-90, 90]).
std::string GeohashString(double score);

// Great-circle distance in meters.
double Distance(double lon1, double lat1, double lon2, double lat2);

// A search area: a circle of `radius` or a `width` x `height` box (both in the request's
// unit, `to_meters` converting it) centred on (lon, lat).
struct Shape {
  enum class Kind { kRadius, kBox };
  Kind kind = Kind::kRadius;
  double lon = 0, lat = 0;
  double radius = 0;
  double width = 0, height = 0;
  double to_meters = 1;
};

// Whether (lon, lat) lies in the shape; `*meters` is then its distance from the centre.
bool InShape(const Shape& shape, double lon, double lat, double* meters);

// The cells to scan, in Redis's order: centre, north, south, east, west, north-east,
// north-west, south-east, south-west. Dropped neighbours are zero cells.
std::array<Cell, 9> SearchCells(const Shape& shape);

// The scores of a cell's members: [*min, *max).
void CellScoreRange(const Cell& cell, uint64_t* min, uint64_t* max);

// The step whose cells cover `meters` around a point at latitude `lat` (Redis's estimate).
int EstimateSteps(double meters, double lat);

}  // namespace basalt::geo
