// WatchRegistry: which clients WATCH which keys, so any writer can invalidate their EXEC.
//
// A client's MULTI state owns one WatchState; every write that commits calls Touch() for the
// keys it changed, which marks the watchers dirty. An atomic count of watched keys keeps the
// common case (nobody watching) to one relaxed load per write.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace basalt {

struct WatchState {
  std::atomic<bool> dirty{false};
};

class WatchRegistry {
 public:
  void Watch(uint8_t db, std::string_view key, const std::shared_ptr<WatchState>& state);
  void Unwatch(uint8_t db, std::string_view key, const WatchState* state);
  void Touch(uint8_t db, std::string_view key);
  void TouchDatabase(uint8_t db);
  // The keys of `db` that some client watches.
  std::vector<std::string> Keys(uint8_t db);
  void TouchAll();
  // Whether any key is watched: Touch does nothing while none is.
  bool any() const { return watched_.load(std::memory_order_relaxed) != 0; }

 private:
  static std::string Slot(uint8_t db, std::string_view key);
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<std::shared_ptr<WatchState>>> watchers_;
  std::atomic<size_t> watched_{0};
};

}  // namespace basalt
