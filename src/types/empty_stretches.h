// EmptyStretches: intervals of one collection's member space known to hold no live member.
//
// A random pop seeks a random point and takes the first member at or after it, leaving a tombstone
// where the member was. A point lands in front of a member in proportion to the empty stretch
// before it, so the members after long stretches go first and the stretches grow: as a large set
// drains, each pop would crawl over hundreds of tombstones (docs/benchmarks.md, "Random pops and
// samples"). A pop knows that the space it walked over, from its point to the member it took, is
// empty now; the next point that falls there can start at the stretch's end instead.
//
// A stretch is a hint about where to start, never a reason to return a member: a probe still
// reads what it lands on. A member added inside a stretch is only missed by probes, and the
// caller forgets the stretches when members may have been added.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace basalt {

class EmptyStretches {
 public:
  EmptyStretches() = default;
  // Not copied or moved: the last lookup points into the map it was made in.
  EmptyStretches(const EmptyStretches&) = delete;
  EmptyStretches& operator=(const EmptyStretches&) = delete;

  // Where a walk for `point` starts: *from gets the start of the stretch holding `point` (the
  // point itself when none does). Returns that stretch's end, or `point` when no stretch holds
  // it, or nullopt when the stretch reaches the end of the member space.
  std::optional<std::string> WalkFrom(const std::string& point, std::string* from) const;
  // The first stretch that starts after `position`: false if none; else *start and *end get it.
  bool NextAfter(const std::string& position, std::string* start,
                 std::optional<std::string>* end) const;
  // Records that [from, to) holds no live member; a nullopt `to`: nothing from `from` on.
  // Stretches that overlap or touch merge.
  void Add(const std::string& from, const std::optional<std::string>& to);
  void Clear() {
    stretches_.clear();
    last_upper_bound_ = stretches_.end();
  }
  size_t size() const { return stretches_.size(); }

  // Beyond this many stretches (a few hundred KiB), they are forgotten and learned again.
  static constexpr size_t kMaxStretches = 16384;

 private:
  using Map = std::map<std::string, std::optional<std::string>, std::less<>>;
  // stretches_.upper_bound(key), checked against the last one first: a pop looks up the same
  // place three times (the stretch holding its point, the stretch after that one, the stretch
  // its walk adds to), and while the map is unchanged the last answer needs two comparisons to
  // confirm instead of a descent of the tree.
  Map::const_iterator UpperBound(const std::string& key) const;

  // Start -> end (nullopt: the end of the member space); disjoint and not touching.
  Map stretches_;
  // The last UpperBound's answer; end() after a Clear, and never an erased node.
  mutable Map::const_iterator last_upper_bound_ = stretches_.end();
};

}  // namespace basalt
