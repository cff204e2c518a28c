// Geohash math (types/geohash.h). Values marked "Redis" were returned by redis-server 7.0.15
// for the same positions (GEOADD + ZSCORE / GEOPOS / GEOHASH / GEODIST).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "common/strutil.h"
#include "types/geohash.h"

namespace basalt::geo {
namespace {

std::string Meters4(double d) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%.4f", d);
  return buf;
}

TEST(Geohash, ScoresMatchRedis) {
  EXPECT_EQ(ScoreOf(13.361389, 38.115556), 3479099956230698u);  // Palermo
  EXPECT_EQ(ScoreOf(15.087269, 37.502669), 3479447370796909u);  // Catania
  // The corners: the maximum sets the 27th bit of both coordinates, beyond 52 bits.
  EXPECT_EQ(ScoreOf(180, 85.05112878), 13510798882111488u);
  EXPECT_EQ(ScoreOf(-180, -85.05112878), 0u);
}

TEST(Geohash, DecodingGivesTheCellCentreAsRedisPrintsIt) {
  double lon, lat;
  DecodeScore(3479099956230698.0, &lon, &lat);
  EXPECT_EQ(FormatLongDouble(lon), "13.36138933897018433");
  EXPECT_EQ(FormatLongDouble(lat), "38.11555639549629859");
  DecodeScore(13510798882111488.0, &lon, &lat);  // clamped to the limits
  EXPECT_EQ(FormatLongDouble(lon), "180");
  EXPECT_EQ(FormatLongDouble(lat), "85.0511287799999991");
  DecodeScore(0, &lon, &lat);
  EXPECT_EQ(FormatLongDouble(lon), "-179.99999731779098511");
  EXPECT_EQ(FormatLongDouble(lat), "-85.05112751263942528");
}

TEST(Geohash, Base32StringsMatchRedis) {
  EXPECT_EQ(GeohashString(3479099956230698.0), "sqc8b49rny0");
  EXPECT_EQ(GeohashString(13510798882111488.0), "bp05b5048p0");
  EXPECT_EQ(GeohashString(0), "00bh0hbj200");
}

TEST(Geohash, DistanceMatchesRedis) {
  double lon1, lat1, lon2, lat2;
  DecodeScore(3479099956230698.0, &lon1, &lat1);
  DecodeScore(3479447370796909.0, &lon2, &lat2);
  EXPECT_EQ(Meters4(Distance(lon1, lat1, lon2, lat2)), "166274.1516");
  EXPECT_EQ(Meters4(Distance(lon1, lat1, lon2, lat2) / 1000), "166.2742");
  EXPECT_EQ(Distance(lon1, lat1, lon1, lat1), 0);
  // Along a meridian: one degree of latitude.
  EXPECT_NEAR(Distance(10, 0, 10, 1), kEarthRadiusMeters * M_PI / 180, 1e-6);
}

TEST(Geohash, ValidityLimits) {
  EXPECT_TRUE(ValidLonLat(180, 85.05112878));
  EXPECT_TRUE(ValidLonLat(-180, -85.05112878));
  EXPECT_FALSE(ValidLonLat(180.0000001, 0));
  EXPECT_FALSE(ValidLonLat(0, 85.0511288));
  EXPECT_FALSE(ValidLonLat(0, -90));
  Cell cell;
  EXPECT_FALSE(Encode(kLonRange, kLatRange, 0, 86, 26, &cell));
  EXPECT_FALSE(Encode(kLonRange, kLatRange, 0, 0, 0, &cell));
}

TEST(Geohash, EveryPointLiesInItsDecodedCell) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> lon_d(-180, 180), lat_d(kLatMin, kLatMax);
  for (int i = 0; i < 2000; i++) {
    double lon = lon_d(rng), lat = lat_d(rng);
    int step = 1 + static_cast<int>(rng() % kMaxStep);
    Cell cell;
    ASSERT_TRUE(Encode(kLonRange, kLatRange, lon, lat, step, &cell));
    Area a = Decode(kLonRange, kLatRange, cell);
    EXPECT_LE(a.lon.min, lon);
    EXPECT_GE(a.lon.max, lon);
    EXPECT_LE(a.lat.min, lat);
    EXPECT_GE(a.lat.max, lat);
    // A step-26 cell is well under a meter wide at the equator.
    if (step == kMaxStep) {
      EXPECT_LT(a.lon.max - a.lon.min, 1e-5);
    }
  }
}

TEST(Geohash, CellScoreRangeCoversTheStep26Cells) {
  Cell cell;
  ASSERT_TRUE(Encode(kLonRange, kLatRange, 13.361389, 38.115556, 10, &cell));
  uint64_t min, max;
  CellScoreRange(cell, &min, &max);
  EXPECT_EQ(max - min, uint64_t{1} << 32);
  uint64_t score = ScoreOf(13.361389, 38.115556);
  EXPECT_LE(min, score);
  EXPECT_LT(score, max);
  CellScoreRange(Cell{score, kMaxStep}, &min, &max);
  EXPECT_EQ(min, score);
  EXPECT_EQ(max, score + 1);
}

TEST(Geohash, StepEstimate) {
  EXPECT_EQ(EstimateSteps(0, 0), 26);
  // 1000 m doubles 15 times before reaching the Mercator half circumference: 16 - 2.
  EXPECT_EQ(EstimateSteps(1000, 0), 14);
  EXPECT_EQ(EstimateSteps(1000, 70), 13);  // towards the poles: coarser
  EXPECT_EQ(EstimateSteps(1000, -81), 12);
  EXPECT_EQ(EstimateSteps(1e8, 0), 1);
  EXPECT_EQ(EstimateSteps(0.001, 0), 26);
}

TEST(Geohash, SearchCellsSurroundTheCentre) {
  Shape s;
  s.lon = 13.361389;
  s.lat = 38.115556;
  s.radius = 5;
  s.to_meters = 1000;
  auto cells = SearchCells(s);
  Area centre = Decode(kLonRange, kLatRange, cells[0]);
  EXPECT_LE(centre.lon.min, s.lon);
  EXPECT_GE(centre.lon.max, s.lon);
  // Each neighbour that is kept lies on its side of the centre, at the same step; with a radius
  // this small next to the cell, some are dropped.
  int kept = 0;
  for (size_t i = 1; i < cells.size(); i++) {
    if (cells[i].IsZero()) continue;
    kept++;
    EXPECT_EQ(cells[i].step, cells[0].step);
    Area a = Decode(kLonRange, kLatRange, cells[i]);
    bool north = i == 1 || i == 5 || i == 6, south = i == 2 || i == 7 || i == 8;
    bool east = i == 3 || i == 5 || i == 7, west = i == 4 || i == 6 || i == 8;
    if (north) {
      EXPECT_DOUBLE_EQ(a.lat.min, centre.lat.max) << i;
    }
    if (south) {
      EXPECT_DOUBLE_EQ(a.lat.max, centre.lat.min) << i;
    }
    if (!north && !south) {
      EXPECT_DOUBLE_EQ(a.lat.min, centre.lat.min) << i;
    }
    if (east) {
      EXPECT_DOUBLE_EQ(a.lon.min, centre.lon.max) << i;
    }
    if (west) {
      EXPECT_DOUBLE_EQ(a.lon.max, centre.lon.min) << i;
    }
    if (!east && !west) {
      EXPECT_DOUBLE_EQ(a.lon.min, centre.lon.min) << i;
    }
  }
  EXPECT_LT(kept, 8);
}

TEST(Geohash, NeighboursWrapAroundTheAntimeridian) {
  Shape s;
  s.lon = 179.9999;
  s.lat = 10;
  s.radius = 100;
  s.to_meters = 1000;
  auto cells = SearchCells(s);
  ASSERT_FALSE(cells[3].IsZero());  // east of the last column is the first one
  Area east = Decode(kLonRange, kLatRange, cells[3]);
  EXPECT_EQ(east.lon.min, -180);
}

TEST(Geohash, ShapesContainWhatTheyShould) {
  Shape circle;
  circle.lon = 15;
  circle.lat = 37;
  circle.radius = 200;
  circle.to_meters = 1000;
  double meters;
  double lon, lat;
  DecodeScore(3479447370796909.0, &lon, &lat);  // Catania: 56.4413 km away (Redis)
  ASSERT_TRUE(InShape(circle, lon, lat, &meters));
  EXPECT_EQ(Meters4(meters / 1000), "56.4413");
  circle.radius = 56;
  EXPECT_FALSE(InShape(circle, lon, lat, &meters));
  Shape box;
  box.kind = Shape::Kind::kBox;
  box.lon = 15;
  box.lat = 37;
  box.width = 400;
  box.height = 120;
  box.to_meters = 1000;
  EXPECT_TRUE(InShape(box, lon, lat, &meters));
  EXPECT_EQ(Meters4(meters / 1000), "56.4413");
  box.height = 100;  // Catania is 55.9 km north of the centre
  EXPECT_FALSE(InShape(box, lon, lat, &meters));
}

}  // namespace
}  // namespace basalt::geo
