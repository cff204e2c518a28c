// Wall-clock and monotonic time in the units Redis uses, and a cheap clock for timing commands.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace basalt {

// Unix time in milliseconds: the unit of every stored expiry.
inline int64_t UnixMillis() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

inline int64_t UnixMicros() {
  using namespace std::chrono;
  return duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
}

// Monotonic microseconds, for measuring durations (slowlog, uptime).
inline int64_t MonotonicMicros() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}

// The clock every command is timed by (INFO commandstats, SLOWLOG): two reads per command. It
// reads the CPU's time-stamp counter where the kernel keeps time by it (which the kernel does
// only once it has found the counter invariant and in step across CPUs), else the monotonic
// clock. Two clock_gettime calls through the vDSO take 3.1% of a pipelined LPUSH's samples, two
// reads of the counter 1.3% (docs/benchmarks.md, "Per-command bookkeeping"). Redis times its
// commands by the counter too (monotonic.c). Ticks mean nothing on their own: only MicrosBetween
// two of them, read on any threads, does.
class CommandClock {
 public:
  static uint64_t Now() {
#if defined(__x86_64__)
    if (Rate().ticks_per_micro > 0) return __rdtsc();
#endif
    using namespace std::chrono;
    return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
  }

  // Microseconds from `start` to `end` (0 if `end` is earlier).
  static int64_t MicrosBetween(uint64_t start, uint64_t end) {
    if (end <= start) return 0;
    return static_cast<int64_t>(static_cast<double>(end - start) * Rate().micros_per_tick);
  }

  // Nanoseconds from `start` to `end` (0 if `end` is earlier).
  static uint64_t NanosBetween(uint64_t start, uint64_t end) {
    if (end <= start) return 0;
    return static_cast<uint64_t>(static_cast<double>(end - start) * Rate().micros_per_tick * 1000);
  }

  // Whether ticks are the time-stamp counter's, and how many make a microsecond (measured once,
  // against the monotonic clock, over a few milliseconds at the first use).
  static bool CountsCpuTicks() {
    return Rate().ticks_per_micro > 0;
  }
  static double TicksPerMicro() {
    return Rate().ticks_per_micro;
  }

 private:
  struct TickRate {
    explicit TickRate(double measured)
        : ticks_per_micro(measured), micros_per_tick(measured > 0 ? 1 / measured : 0.001) {}
    double ticks_per_micro;  // 0: ticks are the monotonic clock's nanoseconds
    double micros_per_tick;
  };
  static const TickRate& Rate() {
    static const TickRate rate(MeasureTicksPerMicro());
    return rate;
  }
  static double MeasureTicksPerMicro();
};

}  // namespace basalt
