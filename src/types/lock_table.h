// Striped key locks: commands that read-modify-write a key hold its stripe so that concurrent
// writers on one key serialize (HSET's size update, SET's key count), while different keys
// proceed in parallel. Stripes are taken in index order, so multi-key commands cannot deadlock.
// A worker's write group holds the stripes of up to 64 commands until it commits (640 for
// ten-key MSETs), and the other worker's next write waits if it needs any of them: the table is
// large enough (64Ki stripes, 3.5 MiB) to make that rare for unrelated keys.
#pragma once

#include <array>
#include <shared_mutex>
#include <string_view>
#include <vector>

namespace basalt {

class LockTable {
 public:
  static constexpr size_t kStripes = 65536;
  size_t StripeOf(uint8_t db, std::string_view key) const;
  std::shared_mutex& stripe(size_t i) { return stripes_[i]; }

 private:
  std::array<std::shared_mutex, kStripes> stripes_;
};

// Holds a set of stripes for the lifetime of the guard.
class KeyLockGuard {
 public:
  KeyLockGuard() = default;
  KeyLockGuard(LockTable* table, std::vector<size_t> stripes, bool exclusive);
  KeyLockGuard(KeyLockGuard&& other) noexcept;
  KeyLockGuard& operator=(KeyLockGuard&& other) noexcept;
  ~KeyLockGuard() { Release(); }
  void Release();

 private:
  LockTable* table_ = nullptr;
  std::vector<size_t> stripes_;
  bool exclusive_ = false;
};

}  // namespace basalt
