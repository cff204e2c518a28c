#include "types/empty_stretches.h"

#include <iterator>
#include <utility>

namespace basalt {

namespace {

// The later of two stretch ends, where nullopt (the end of the space) is the latest.
std::optional<std::string> Later(const std::optional<std::string>& a,
                                 const std::optional<std::string>& b) {
  if (!a || !b) return std::nullopt;
  return *a < *b ? b : a;
}

}  // namespace

std::optional<std::string> EmptyStretches::WalkFrom(const std::string& point,
                                                    std::string* from) const {
  *from = point;
  auto it = stretches_.upper_bound(point);
  if (it == stretches_.begin()) return point;
  --it;
  if (it->second && *it->second <= point) return point;
  *from = it->first;
  return it->second;
}

bool EmptyStretches::NextAfter(const std::string& position, std::string* start,
                               std::optional<std::string>* end) const {
  auto it = stretches_.upper_bound(position);
  if (it == stretches_.end()) return false;
  *start = it->first;
  *end = it->second;
  return true;
}

void EmptyStretches::Add(const std::string& from, const std::optional<std::string>& to) {
  if (to && *to <= from) return;
  std::string start = from;
  std::optional<std::string> end = to;
  auto it = stretches_.upper_bound(from);
  if (it != stretches_.begin()) {
    auto before = std::prev(it);
    if (!before->second || *before->second >= from) {
      start = before->first;
      end = Later(before->second, end);
      it = stretches_.erase(before);
    }
  }
  while (it != stretches_.end() && (!end || it->first <= *end)) {
    end = Later(it->second, end);
    it = stretches_.erase(it);
  }
  if (stretches_.size() >= kMaxStretches) stretches_.clear();
  stretches_.emplace(std::move(start), std::move(end));
}

}  // namespace basalt
