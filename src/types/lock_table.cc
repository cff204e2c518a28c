#include "types/lock_table.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>

#include "common/hash.h"

namespace basalt {

size_t LockTable::StripeOf(uint8_t db, std::string_view key) const {
  size_t h = HashBytes(key);
  return (h ^ (static_cast<size_t>(db) * 0x9E3779B97F4A7C15ULL)) % kStripes;
}

LockTable::LockTable() {
  for (auto& slot : waiting_for_) slot.store(kNoStripe, std::memory_order_relaxed);
}

void LockTable::LockWaitingInTurn(size_t i) {
  if (stripes_[i].try_lock()) return;
  size_t slot = 0;
  for (; slot < kWaitSlots; slot++) {
    size_t free = kNoStripe;
    if (waiting_for_[slot].compare_exchange_strong(free, i)) break;
  }
  if (slot < kWaitSlots) waiters_.fetch_add(1);
  stripes_[i].lock();
  if (slot < kWaitSlots) {
    waiting_for_[slot].store(kNoStripe);
    waiters_.fetch_sub(1);
  }
}

bool LockTable::HasWaiter(size_t i) const {
  if (waiters_.load() == 0) return false;
  return std::any_of(waiting_for_.begin(), waiting_for_.end(),
                     [i](const std::atomic<size_t>& slot) { return slot.load() == i; });
}

void LockTable::AwaitTakenByWaiter(size_t i, int64_t max_wait_us) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(max_wait_us);
  while (HasWaiter(i) && std::chrono::steady_clock::now() < deadline) sched_yield();
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
