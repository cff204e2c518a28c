#include "commands/memory_limit.h"

#include "commands/info_writer.h"
#include "common/clock.h"

namespace basalt {

namespace {
constexpr int64_t kSampleIntervalUs = 100 * 1000;
}  // namespace

bool MemoryLimit::ExceededSlow(const Config& config, int64_t limit) {
  if (!config.maxmemory_noeviction.load(std::memory_order_relaxed)) return false;
  int64_t now = MonotonicMicros();
  if (now - sampled_at_us_.load(std::memory_order_relaxed) >= kSampleIntervalUs ||
      sampled_limit_.load(std::memory_order_relaxed) != limit) {
    // Racing samplers store equally fresh figures: whichever lands last is as good.
    used_.store(UsedMemoryBytes(), std::memory_order_relaxed);
    sampled_limit_.store(limit, std::memory_order_relaxed);
    sampled_at_us_.store(now, std::memory_order_relaxed);
  }
  return used_.load(std::memory_order_relaxed) > limit;
}

}  // namespace basalt
