#include "commands/script_guard.h"

#include "common/clock.h"

namespace basalt {

void ScriptGuard::Begin() {
  wrote_.store(false, std::memory_order_relaxed);
  kill_.store(shutdown_.load(), std::memory_order_relaxed);
  start_ms_.store(MonotonicMicros() / 1000, std::memory_order_relaxed);
  running_.store(true, std::memory_order_release);
}

void ScriptGuard::End() {
  running_.store(false, std::memory_order_release);
  kill_.store(shutdown_.load(), std::memory_order_relaxed);
}

bool ScriptGuard::Busy(int64_t threshold_ms) const {
  if (threshold_ms <= 0 || !running()) return false;
  return MonotonicMicros() / 1000 - start_ms_.load(std::memory_order_relaxed) > threshold_ms;
}

ScriptGuard::KillResult ScriptGuard::RequestKill() {
  if (!running()) return KillResult::kNotBusy;
  if (wrote_.load(std::memory_order_relaxed)) return KillResult::kUnkillable;
  kill_.store(true, std::memory_order_relaxed);
  return KillResult::kKilled;
}

void ScriptGuard::AbortForShutdown() {
  shutdown_.store(true);
  kill_.store(true);
}

}  // namespace basalt
