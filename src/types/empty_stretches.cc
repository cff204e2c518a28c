#include "types/empty_stretches.h"

#include <iterator>
#include <utility>

namespace basalt {

namespace {

// Moves `end` out to `other` when that reaches later, where nullopt (the end of the space) is
// the latest.
void ExtendEnd(std::optional<std::string>* end, const std::optional<std::string>& other) {
  if (!*end) return;
  if (!other) {
    end->reset();
  } else if (**end < *other) {
    *end = *other;
  }
}

}  // namespace

EmptyStretches::Map::const_iterator EmptyStretches::UpperBound(const std::string& key) const {
  auto it = last_upper_bound_;
  bool holds = (it == stretches_.end() || key < it->first) &&
               (it == stretches_.begin() || std::prev(it)->first <= key);
  if (!holds) last_upper_bound_ = it = stretches_.upper_bound(key);
  return it;
}

std::optional<std::string> EmptyStretches::WalkFrom(const std::string& point,
                                                    std::string* from) const {
  *from = point;
  auto it = UpperBound(point);
  if (it == stretches_.begin()) return point;
  --it;
  if (it->second && *it->second <= point) return point;
  *from = it->first;
  return it->second;
}

bool EmptyStretches::NextAfter(const std::string& position, std::string* start,
                               std::optional<std::string>* end) const {
  auto it = UpperBound(position);
  if (it == stretches_.end()) return false;
  *start = it->first;
  *end = it->second;
  return true;
}

void EmptyStretches::Add(const std::string& from, const std::optional<std::string>& to) {
  if (to && *to <= from) return;
  // A pop's walk usually starts inside the stretch an earlier pop left: that stretch grows in
  // place, without a node and its key made anew.
  // erase(c, c) erases nothing and turns the const_iterator into a mutable one.
  auto after = UpperBound(from);
  auto it = stretches_.erase(after, after);
  auto grown = stretches_.end();
  if (it != stretches_.begin()) {
    auto before = std::prev(it);
    if (!before->second || *before->second >= from) {
      grown = before;
      ExtendEnd(&grown->second, to);
    }
  }
  if (grown == stretches_.end()) {
    if (stretches_.size() >= kMaxStretches) {
      stretches_.clear();
      it = stretches_.end();
    }
    grown = stretches_.emplace_hint(it, from, to);
  }
  // Stretches that start inside the grown one join it.
  for (auto next = std::next(grown);
       next != stretches_.end() && (!grown->second || next->first <= *grown->second);) {
    ExtendEnd(&grown->second, next->second);
    next = stretches_.erase(next);
  }
  last_upper_bound_ = std::next(grown);
}

}  // namespace basalt
