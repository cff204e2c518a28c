// maxmemory, enforced as Redis's noeviction policy enforces it: while the memory in use
// (INFO's used_memory) is past maxmemory, commands that may grow the data set (flagged denyoom,
// scripts and functions that may write without allow-oom) and, inside MULTI, every command but
// EXEC, DISCARD, QUIT and RESET are refused with Redis's OOM error.
//
// The other policies promise that writes succeed by evicting keys. Basalt's data is on disk and
// dropping keys frees no memory, so under them it evicts nothing and refuses nothing: memory is
// bounded by the caches' sizes (docs/configuration.md).
#pragma once

#include <atomic>
#include <cstdint>

#include "config/config.h"

namespace basalt {

inline constexpr const char* kOomError = "OOM command not allowed when used memory > 'maxmemory'.";

class MemoryLimit {
 public:
  // Whether memory is past maxmemory under noeviction. One relaxed load while maxmemory is 0;
  // otherwise the memory in use is sampled at most every 100 ms, and at once after maxmemory
  // changes (so a CONFIG SET takes effect on the next command).
  bool Exceeded(const Config& config) {
    int64_t limit = config.maxmemory.load(std::memory_order_relaxed);
    return limit != 0 && ExceededSlow(config, limit);
  }

 private:
  bool ExceededSlow(const Config& config, int64_t limit);

  std::atomic<int64_t> sampled_at_us_{0};
  std::atomic<int64_t> sampled_limit_{0};
  std::atomic<int64_t> used_{0};
};

}  // namespace basalt
