// Wall-clock and monotonic time in the units Redis uses.
#pragma once

#include <chrono>
#include <cstdint>

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

}  // namespace basalt
