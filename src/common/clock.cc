#include "common/clock.h"

#include <fstream>
#include <string>

namespace basalt {

namespace {

// The kernel switches its clock away from the time-stamp counter when it finds the counter
// unstable or out of step between CPUs; while it keeps time by it, so can this.
bool KernelKeepsTimeByTsc() {
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  return static_cast<bool>(source >> name) && name == "tsc";
}

}  // namespace

double CommandClock::MeasureTicksPerMicro() {
#if defined(__x86_64__)
  if (!KernelKeepsTimeByTsc()) return 0;
  using namespace std::chrono;
  // Five milliseconds bound the rate's error to a few parts in a million: a duration of a
  // second is off by microseconds.
  auto begin = steady_clock::now();
  uint64_t first = __rdtsc();
  auto end = begin;
  do {
    end = steady_clock::now();
  } while (end - begin < milliseconds(5));
  uint64_t last = __rdtsc();
  double micros = duration<double, std::micro>(end - begin).count();
  return last > first ? static_cast<double>(last - first) / micros : 0;
#else
  return 0;
#endif
}

}  // namespace basalt
