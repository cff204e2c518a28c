// Striped key locks: commands that read-modify-write a key hold its stripe so that concurrent
// writers on one key serialize (HSET's size update, SET's key count), while different keys
// proceed in parallel. Stripes are taken in index order, so multi-key commands cannot deadlock.
// A worker's write group holds the stripes of up to 64 commands until it commits (640 for
// ten-key MSETs), and the other worker's next write waits if it needs any of them: the table is
// large enough (64Ki stripes, 3.5 MiB) to make that rare for unrelated keys.
//
// A stripe's mutex does not queue its waiters: a worker that releases a hot key's stripe at the
// end of its turn and wants it again for its next turn takes it back before the waiting worker
// has even woken up, and can go on doing so for as long as its clients keep it busy (a second
// at a time was measured, with the other worker's clients getting no reply). So a group that
// has to wait for a stripe announces the wait (LockWaitingInTurn), the group that releases it
// notices (HasWaiter), and before its next group it lets the waiter take the stripe first
// (AwaitTakenByWaiter). The slots are few: they serve the workers' groups, and a wait that
// finds them full simply blocks unannounced.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <shared_mutex>
#include <string_view>
#include <vector>

namespace basalt {

class LockTable {
 public:
  static constexpr size_t kStripes = 65536;
  LockTable();
  size_t StripeOf(uint8_t db, std::string_view key) const;
  static constexpr size_t kNoStripe = SIZE_MAX;
  std::shared_mutex& stripe(size_t i) { return stripes_[i]; }
  // Starts loading stripe `i`'s lock for writing: a command's stripes are spread over 3.5 MiB,
  // and loaded together before the first is taken they wait for memory once, not once each.
  void Prefetch(size_t i) const { __builtin_prefetch(&stripes_[i], 1); }

  // Locks stripe `i` exclusively; if it is held, announces the wait until it is taken.
  void LockWaitingInTurn(size_t i);
  // True while some thread waits in LockWaitingInTurn() for stripe `i`.
  bool HasWaiter(size_t i) const;
  // Waits (yielding the CPU) until no thread waits for stripe `i` any more, or `max_wait_us`
  // passed: the waiter may itself be blocked behind a third holder.
  void AwaitTakenByWaiter(size_t i, int64_t max_wait_us) const;

  // Which worker's write group holds stripe `i` (its tag, 1 and up), or 0: a hint that the
  // groups keep while they hold stripes, read without the lock, so possibly stale by the time
  // it is used. A worker whose client's next write needs a stripe that another worker's group
  // holds passes that client's commands to that worker instead of waiting (net/worker.h).
  void SetHolder(size_t i, uint8_t tag) { holders_[i].store(tag, std::memory_order_relaxed); }
  uint8_t HolderOf(size_t i) const { return holders_[i].load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kWaitSlots = 8;

  std::array<std::shared_mutex, kStripes> stripes_;
  std::array<std::atomic<uint8_t>, kStripes> holders_{};
  std::array<std::atomic<size_t>, kWaitSlots> waiting_for_{};
  std::atomic<int> waiters_{0};
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
