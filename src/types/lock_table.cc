#include "types/lock_table.h"

#include <algorithm>
#include <functional>
#include <string>

namespace basalt {

size_t LockTable::StripeOf(uint8_t db, std::string_view key) const {
  size_t h = std::hash<std::string_view>()(key);
  return (h ^ (static_cast<size_t>(db) * 0x9E3779B97F4A7C15ULL)) % kStripes;
}

KeyLockGuard::KeyLockGuard(LockTable* table, std::vector<size_t> stripes, bool exclusive)
    : table_(table), stripes_(std::move(stripes)), exclusive_(exclusive) {
  std::sort(stripes_.begin(), stripes_.end());
  stripes_.erase(std::unique(stripes_.begin(), stripes_.end()), stripes_.end());
  for (size_t s : stripes_) {
    if (exclusive_) {
      table_->stripe(s).lock();
    } else {
      table_->stripe(s).lock_shared();
    }
  }
}

KeyLockGuard::KeyLockGuard(KeyLockGuard&& other) noexcept {
  *this = std::move(other);
}

KeyLockGuard& KeyLockGuard::operator=(KeyLockGuard&& other) noexcept {
  if (this != &other) {
    Release();
    table_ = other.table_;
    stripes_ = std::move(other.stripes_);
    exclusive_ = other.exclusive_;
    other.table_ = nullptr;
    other.stripes_.clear();
  }
  return *this;
}

void KeyLockGuard::Release() {
  if (table_ == nullptr) return;
  for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) {
    if (exclusive_) {
      table_->stripe(*it).unlock();
    } else {
      table_->stripe(*it).unlock_shared();
    }
  }
  stripes_.clear();
  table_ = nullptr;
}

}  // namespace basalt
