// LatencyMonitor: the latency events behind LATENCY LATEST/HISTORY/RESET/GRAPH/DOCTOR.
//
// When a command takes at least `latency-monitor-threshold` ms (0 turns the monitor off), the
// dispatcher records it under the event "command", or "fast-command" for commands flagged fast,
// as Redis does. Each event keeps its last 160 samples, one per second at most (a second's
// sample keeps its worst latency), and its all-time maximum. Recording takes a mutex, but only
// for commands over the threshold, which are rare by definition.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace basalt {

class LatencyMonitor {
 public:
  static constexpr size_t kSamples = 160;

  struct Sample {
    int64_t unix_time = 0;  // seconds; 0: the slot is empty
    int64_t latency_ms = 0;
  };
  struct Event {
    std::string name;
    std::vector<Sample> samples;  // oldest first
    int64_t max_ms = 0;
  };

  void Add(std::string_view event, int64_t latency_ms, int64_t unix_time);
  // Every event with its samples, by name.
  std::vector<Event> Events() const;
  // Drops the named event (case-insensitive), or all when `event` is empty; how many were dropped.
  int Reset(std::string_view event);

 private:
  struct Series {
    std::array<Sample, kSamples> ring{};
    size_t next = 0;
    int64_t max_ms = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, Series, std::less<>> events_;
};

}  // namespace basalt
