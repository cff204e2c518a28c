#include "types/watch_registry.h"

#include <algorithm>

namespace basalt {

std::string WatchRegistry::Slot(uint8_t db, std::string_view key) {
  std::string slot(1, static_cast<char>(db));
  slot.append(key);
  return slot;
}

void WatchRegistry::Watch(uint8_t db, std::string_view key,
                          const std::shared_ptr<WatchState>& state) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& list = watchers_[Slot(db, key)];
  for (const auto& w : list) {
    if (w.get() == state.get()) return;
  }
  list.push_back(state);
  watched_.fetch_add(1, std::memory_order_relaxed);
}

void WatchRegistry::Unwatch(uint8_t db, std::string_view key, const WatchState* state) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = watchers_.find(Slot(db, key));
  if (it == watchers_.end()) return;
  auto& list = it->second;
  auto pos =
      std::find_if(list.begin(), list.end(), [state](const auto& w) { return w.get() == state; });
  if (pos == list.end()) return;
  list.erase(pos);
  watched_.fetch_sub(1, std::memory_order_relaxed);
  if (list.empty()) watchers_.erase(it);
}

void WatchRegistry::Touch(uint8_t db, std::string_view key) {
  if (watched_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = watchers_.find(Slot(db, key));
  if (it == watchers_.end()) return;
  for (const auto& w : it->second) w->dirty = true;
}

void WatchRegistry::TouchDatabase(uint8_t db) {
  if (watched_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [slot, list] : watchers_) {
    if (static_cast<uint8_t>(slot[0]) != db) continue;
    for (const auto& w : list) w->dirty = true;
  }
}

std::vector<std::string> WatchRegistry::Keys(uint8_t db) {
  std::vector<std::string> keys;
  if (watched_.load(std::memory_order_relaxed) == 0) return keys;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [slot, list] : watchers_) {
    if (static_cast<uint8_t>(slot[0]) == db) keys.emplace_back(slot, 1);
  }
  return keys;
}

void WatchRegistry::TouchAll() {
  if (watched_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [slot, list] : watchers_) {
    for (const auto& w : list) w->dirty = true;
  }
}

}  // namespace basalt
