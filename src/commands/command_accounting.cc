#include "commands/command_accounting.h"

#include <mutex>

#include "commands/redaction.h"
#include "common/clock.h"
#include "stats/error_stats.h"

namespace basalt {

namespace {

// Error replies this thread had produced when the command being accounted started: Account()
// calls the command failed if the count moved since. A command inside EXEC or a script moves the
// mark forward when it is accounted, so the enclosing EXEC fails only for errors of its own
// (EXECABORT, EXEC without MULTI), as Redis counts them.
thread_local int64_t t_errors_at_start = 0;

}  // namespace

void MarkCommandStart() {
  t_errors_at_start = ThreadErrorReplies();
}

void Account(ServerState& server, Session& session, const CommandSpec& spec,
             const std::vector<std::string>& argv, uint64_t start_ticks, uint64_t end_ticks,
             bool record_latency) {
  // A command that parked its client counts when it replies: woken and run again, or timed out
  // (AccountTimedOutBlock).
  if (session.block.active) return;
  const int64_t duration_us = CommandClock::MicrosBetween(start_ticks, end_ticks);
  size_t slot = CommandTable::Get().StatSlotOf(spec, argv);
  if (slot < server.command_stats.size()) {
    CommandStat& stat = server.command_stats.at(slot);
    stat.calls.fetch_add(1, std::memory_order_relaxed);
    stat.usec.fetch_add(duration_us, std::memory_order_relaxed);
    const int64_t errors = ThreadErrorReplies();
    if (errors != t_errors_at_start) {
      stat.failed.fetch_add(1, std::memory_order_relaxed);
      t_errors_at_start = errors;
    }
    if (record_latency && server.latency_tracking.load(std::memory_order_relaxed)) {
      stat.Histogram().Record(CommandClock::NanosBetween(start_ticks, end_ticks));
    }
  }
  server.counters.commands_processed.fetch_add(1, std::memory_order_relaxed);
  int64_t monitor_ms = server.latency_monitor_threshold_ms.load(std::memory_order_relaxed);
  if (monitor_ms > 0 && duration_us / 1000 >= monitor_ms) {
    server.latency_monitor.Add((spec.flags & kCmdFast) ? "fast-command" : "command",
                               duration_us / 1000, UnixMillis() / 1000);
  }
  int64_t threshold = server.config->slowlog_slower_than.load(std::memory_order_relaxed);
  if (threshold >= 0 && duration_us >= threshold && !(spec.flags & kCmdSkipSlowlog)) {
    std::string name;
    {
      std::lock_guard<std::mutex> lock(session.info_mu);
      name = session.name;
    }
    server.slowlog.Add(NeedsRedaction(argv) ? Redacted(argv) : argv, duration_us, session.addr,
                       name, static_cast<size_t>(server.config->slowlog_max_len.load()));
  }
}

void CountRejected(ServerState& server, const CommandSpec& spec,
                   const std::vector<std::string>& argv) {
  size_t slot = CommandTable::Get().StatSlotOf(spec, argv);
  if (slot < server.command_stats.size()) {
    server.command_stats.at(slot).rejected.fetch_add(1, std::memory_order_relaxed);
  }
}

void CountRejectedLookup(ServerState& server, const std::vector<std::string>& argv,
                         const std::string& error) {
  if (error.rfind("ERR wrong number of arguments", 0) != 0) return;
  if (const CommandSpec* spec = CommandTable::Get().Find(argv[0])) {
    CountRejected(server, *spec, argv);
  }
}

}  // namespace basalt
