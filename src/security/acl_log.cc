#include "security/acl_log.h"

namespace basalt {

namespace {

constexpr int64_t kGroupingWindowMs = 60000;
constexpr size_t kGroupingScan = 10;

bool SameEvent(const AclLogEntry& a, const AclLogEntry& b) {
  int64_t delta = a.created_ms - b.created_ms;
  if (delta < 0) delta = -delta;
  return a.reason == b.reason && a.context == b.context && a.object == b.object &&
         a.username == b.username && delta <= kGroupingWindowMs;
}

}  // namespace

void AclLog::Add(AclLogEntry entry, size_t max_len) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t scan = std::min(kGroupingScan, entries_.size());
  for (size_t i = 0; i < scan; i++) {
    if (!SameEvent(entries_[i], entry)) continue;
    AclLogEntry merged = std::move(entries_[i]);
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    merged.count++;
    merged.created_ms = entry.created_ms;
    merged.client_info = std::move(entry.client_info);
    entries_.push_front(std::move(merged));
    return;
  }
  entries_.push_front(std::move(entry));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<AclLogEntry> AclLog::Recent(size_t count) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = std::min(count, entries_.size());
  return std::vector<AclLogEntry>(entries_.begin(),
                                  entries_.begin() + static_cast<std::ptrdiff_t>(n));
}

void AclLog::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
}

}  // namespace basalt
