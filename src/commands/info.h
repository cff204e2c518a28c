// INFO: renders the server's sections as Redis 7.2 formats them ("# Section", "key:value" lines),
// and the statistics around them: CONFIG RESETSTAT and the config keys that steer them.
#pragma once

#include <string>
#include <vector>

#include "commands/server_state.h"
#include "config/config.h"

namespace basalt {

// `argv` is the INFO command line. No section means the default set (Redis's, plus Basalt's
// rocksdb); "all" adds commandstats and latencystats; "everything" is "all" (Basalt has no
// module sections); "default" adds the default set; other words name sections, case-insensitive;
// unknown ones add nothing.
std::string BuildInfo(ServerState& server, const std::vector<std::string>& argv);

// Publishes latency-tracking and latency-monitor-threshold to `state`'s atomics, now and on every
// CONFIG SET, and checks latency-tracking-info-percentiles values (the start-up one too: an
// error names it). Also records the start-up memory INFO memory reports as used_memory_startup.
Status InstallStatsConfigHooks(Config& config, ServerState& state);

// CONFIG RESETSTAT: what Redis 7.2's resetServerStats, resetCommandTableStats and
// resetErrorTableStats reset (the server counters, per-command statistics and latency
// histograms, error counts); not the slow log, nor the LATENCY events.
void ResetServerStats(ServerState& state);

// The percentiles of latency-tracking-info-percentiles, or an error naming the bad value.
StatusOr<std::vector<double>> ParsePercentiles(const std::string& text);

}  // namespace basalt
