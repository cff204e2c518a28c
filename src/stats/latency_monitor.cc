#include "stats/latency_monitor.h"

#include <strings.h>

namespace basalt {

void LatencyMonitor::Add(std::string_view event, int64_t latency_ms, int64_t unix_time) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Series{}).first;
  Series& s = it->second;
  if (latency_ms > s.max_ms) s.max_ms = latency_ms;
  Sample& prev = s.ring[(s.next + kSamples - 1) % kSamples];
  if (prev.unix_time == unix_time) {
    if (latency_ms > prev.latency_ms) prev.latency_ms = latency_ms;
    return;
  }
  s.ring[s.next] = {unix_time, latency_ms};
  s.next = (s.next + 1) % kSamples;
}

std::vector<LatencyMonitor::Event> LatencyMonitor::Events() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Event> out;
  for (const auto& [name, s] : events_) {
    Event e{name, {}, s.max_ms};
    for (size_t j = 0; j < kSamples; j++) {
      const Sample& sample = s.ring[(s.next + j) % kSamples];
      if (sample.unix_time != 0) e.samples.push_back(sample);
    }
    out.push_back(std::move(e));
  }
  return out;
}

int LatencyMonitor::Reset(std::string_view event) {
  std::lock_guard<std::mutex> lock(mu_);
  int dropped = 0;
  for (auto it = events_.begin(); it != events_.end();) {
    if (event.empty() || (it->first.size() == event.size() &&
                          strncasecmp(it->first.data(), event.data(), event.size()) == 0)) {
      it = events_.erase(it);
      dropped++;
    } else {
      ++it;
    }
  }
  return dropped;
}

}  // namespace basalt
