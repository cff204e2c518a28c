#include "stats/command_stats.h"

namespace basalt {

LatencyHistogram& CommandStat::Histogram() {
  LatencyHistogram* h = histogram.load(std::memory_order_acquire);
  if (h != nullptr) return *h;
  auto created = std::make_unique<LatencyHistogram>();
  if (histogram.compare_exchange_strong(h, created.get(), std::memory_order_acq_rel)) {
    return *created.release();
  }
  return *h;
}

void CommandStats::Reset() {
  for (CommandStat& s : slots_) {
    s.calls.store(0, std::memory_order_relaxed);
    s.usec.store(0, std::memory_order_relaxed);
    s.rejected.store(0, std::memory_order_relaxed);
    s.failed.store(0, std::memory_order_relaxed);
    if (LatencyHistogram* h = s.histogram.load(std::memory_order_acquire)) h->Reset();
  }
}

}  // namespace basalt
