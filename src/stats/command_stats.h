// CommandStats: per-command statistics behind INFO commandstats and latencystats, LATENCY
// HISTOGRAM and CONFIG RESETSTAT.
//
// One slot per command of the table and per subcommand of a container command ("client|list"),
// numbered by the command table (CommandTable::StatSlotOf). Each slot counts calls, their time,
// the calls refused before they ran (rejected: arity, ACL, OOM, ...) and those that ran and
// replied an error (failed), as Redis 7.2 counts them. The latency histogram is created on a
// slot's first timed call, so only the commands in use pay its ~32 KiB.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "stats/latency_histogram.h"

namespace basalt {

struct CommandStat {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> usec{0};
  std::atomic<int64_t> rejected{0};
  std::atomic<int64_t> failed{0};
  std::atomic<LatencyHistogram*> histogram{nullptr};

  ~CommandStat() { delete histogram.load(); }
  // The slot's histogram, created by the first caller (a racing creator's copy is dropped).
  LatencyHistogram& Histogram();
};

class CommandStats {
 public:
  explicit CommandStats(size_t slots = 0) : slots_(slots) {}
  size_t size() const { return slots_.size(); }
  CommandStat& at(size_t slot) { return slots_[slot]; }
  const CommandStat& at(size_t slot) const { return slots_[slot]; }
  // Counts back to zero; histograms are emptied (not freed: a worker may be recording into one).
  void Reset();

 private:
  std::vector<CommandStat> slots_;
};

}  // namespace basalt
