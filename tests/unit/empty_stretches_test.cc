// EmptyStretches against a model: the stretches are the connected pieces of the union of every
// interval added (overlapping or touching ones joined), until the cap forgets them all.
#include "types/empty_stretches.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace basalt {
namespace {

using End = std::optional<std::string>;  // nullopt: the end of the member space
struct Interval {
  std::string start;
  End end;
};

bool EndsBefore(const End& end, const std::string& point) {
  return end && *end < point;
}

// The union of `added`, as sorted disjoint pieces that do not touch.
std::vector<Interval> Union(std::vector<Interval> added) {
  std::sort(added.begin(), added.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> pieces;
  for (const Interval& next : added) {
    if (next.end && *next.end <= next.start) continue;  // empty
    if (!pieces.empty() && !EndsBefore(pieces.back().end, next.start)) {
      End& end = pieces.back().end;
      if (end && (!next.end || *end < *next.end)) end = next.end;
      continue;
    }
    pieces.push_back(next);
  }
  return pieces;
}

std::string RandomKey(std::mt19937& rng) {
  std::uniform_int_distribution<int> length(0, 3), letter('a', 'e');
  std::string key;
  for (int n = length(rng); n > 0; n--) key.push_back(static_cast<char>(letter(rng)));
  return key;
}

TEST(EmptyStretchesTest, MatchesTheUnionOfWhatWasAdded) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; round++) {
    EmptyStretches stretches;
    std::vector<Interval> added;
    for (int op = 0; op < 40; op++) {
      std::string a = RandomKey(rng), b = RandomKey(rng);
      if (b < a) std::swap(a, b);
      End end = rng() % 8 == 0 ? End() : End(b);
      stretches.Add(a, end);
      added.push_back({a, end});
      std::vector<Interval> pieces = Union(added);
      ASSERT_EQ(stretches.size(), pieces.size());
      for (int probe = 0; probe < 20; probe++) {
        std::string point = RandomKey(rng);
        auto holder = std::find_if(pieces.begin(), pieces.end(), [&](const Interval& p) {
          return p.start <= point && !(p.end && *p.end <= point);
        });
        std::string from;
        End walk = stretches.WalkFrom(point, &from);
        if (holder == pieces.end()) {
          EXPECT_EQ(from, point);
          EXPECT_EQ(walk, End(point));
        } else {
          EXPECT_EQ(from, holder->start) << point;
          EXPECT_EQ(walk, holder->end) << point;
        }
        auto after = std::find_if(pieces.begin(), pieces.end(),
                                  [&](const Interval& p) { return p.start > point; });
        std::string start;
        End next_end;
        ASSERT_EQ(stretches.NextAfter(point, &start, &next_end), after != pieces.end());
        if (after != pieces.end()) {
          EXPECT_EQ(start, after->start);
          EXPECT_EQ(next_end, after->end);
        }
        // A walk goes on from the end of the stretch holding its point, to the next stretch.
        if (holder != pieces.end() && holder->end) {
          auto beyond = holder + 1;
          ASSERT_EQ(stretches.NextAfter(*holder->end, &start, &next_end), beyond != pieces.end());
          if (beyond != pieces.end()) {
            EXPECT_EQ(start, beyond->start);
          }
        }
      }
    }
  }
}

// The stretches live in per-set hints that are replaced and moved around; a copy or a move must
// not look anything up in the map it came from, which may be gone (the sanitizer build reports a
// stale lookup; the release build answers wrongly or crashes).
TEST(EmptyStretchesTest, ForgetsEverythingPastTheCap) {
  EmptyStretches stretches;
  auto key = [](size_t i) {
    std::string k = std::to_string(i);
    return std::string(8 - k.size(), '0') + k;
  };
  for (size_t i = 0; i < EmptyStretches::kMaxStretches; i++) {
    stretches.Add(key(2 * i), key(2 * i) + "x");  // disjoint, not touching
  }
  EXPECT_EQ(stretches.size(), EmptyStretches::kMaxStretches);
  stretches.Add("z", std::nullopt);
  EXPECT_EQ(stretches.size(), 1u);
  std::string from;
  EXPECT_EQ(stretches.WalkFrom(key(0), &from), End(key(0)));
  EXPECT_EQ(stretches.WalkFrom("zz", &from), End());
  EXPECT_EQ(from, "z");
}

}  // namespace
}  // namespace basalt
