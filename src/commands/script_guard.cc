#include "commands/script_guard.h"

#include "common/clock.h"

namespace basalt {

void ScriptGuard::Begin(bool function) {
  wrote_.store(false, std::memory_order_relaxed);
  function_.store(function, std::memory_order_relaxed);
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

int64_t ScriptGuard::RunningForMs() const {
  if (!running()) return 0;
  return MonotonicMicros() / 1000 - start_ms_.load(std::memory_order_relaxed);
}

ScriptGuard::KillResult ScriptGuard::RequestKill(bool function) {
  if (!running()) return KillResult::kNotBusy;
  if (wrote_.load(std::memory_order_relaxed)) return KillResult::kUnkillable;
  if (function != running_function()) return KillResult::kOtherKind;
  kill_.store(true, std::memory_order_relaxed);
  return KillResult::kKilled;
}

void ScriptGuard::AbortForShutdown() {
  shutdown_.store(true);
  kill_.store(true);
}

}  // namespace basalt
