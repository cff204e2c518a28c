// ScriptGuard: what every thread must know about the Lua script that may be running elsewhere.
//
// A script runs as one unit of work under the keyspace's exclusive lock, on the offload thread
// (or on a worker, inside EXEC). Other clients would simply wait for that lock; Redis instead
// answers them `BUSY ...` once the script has run longer than busy-reply-threshold, and lets
// SCRIPT KILL and SHUTDOWN NOSAVE through. The dispatcher asks Busy() before and while it waits
// for the lock; the script's Lua hook polls kill_requested(). All members are atomics: the
// script's thread writes, any thread reads.
#pragma once

#include <atomic>
#include <cstdint>

namespace basalt {

class ScriptGuard {
 public:
  // kOtherKind: SCRIPT KILL while a function runs, or FUNCTION KILL while an EVAL script runs.
  enum class KillResult { kNotBusy, kUnkillable, kOtherKind, kKilled };

  // Around a script run, on the thread that runs it. Scripts never overlap (exclusive lock).
  // `function`: an FCALL's function rather than an EVAL script.
  void Begin(bool function);
  void End();
  // The script has called a write command: SCRIPT KILL must refuse from now on, as in Redis.
  void MarkWrote() { wrote_.store(true, std::memory_order_relaxed); }

  bool running() const { return running_.load(std::memory_order_acquire); }
  // Whether the running (or last) script is a function: BUSY and the KILL commands name
  // FUNCTION KILL for those.
  bool running_function() const { return function_.load(std::memory_order_relaxed); }
  // How long the running script has run (FUNCTION STATS).
  int64_t RunningForMs() const;
  // A script is running and has run longer than `threshold_ms` (never when threshold <= 0).
  bool Busy(int64_t threshold_ms) const;
  bool kill_requested() const { return kill_.load(std::memory_order_relaxed); }
  // Set when the kill came from shutdown: the script's writes must be discarded, not committed.
  bool aborted_for_shutdown() const { return shutdown_.load(std::memory_order_relaxed); }

  // SCRIPT KILL (function = false) or FUNCTION KILL (function = true).
  KillResult RequestKill(bool function);
  // Shutdown: stops the running script even after writes (its batch is then discarded), and
  // any script started later at its first hook.
  void AbortForShutdown();

 private:
  std::atomic<bool> running_{false};
  std::atomic<bool> wrote_{false};
  std::atomic<bool> function_{false};
  std::atomic<bool> kill_{false};
  std::atomic<bool> shutdown_{false};
  std::atomic<int64_t> start_ms_{0};  // monotonic
};

}  // namespace basalt
