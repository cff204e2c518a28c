// INFO commandstats, errorstats and latencystats, and the parsing of
// latency-tracking-info-percentiles.
#include <cstdio>
#include <cstdlib>

#include "commands/command_table.h"
#include "commands/info.h"
#include "commands/info_writer.h"
#include "stats/error_stats.h"

namespace basalt {

StatusOr<std::vector<double>> ParsePercentiles(const std::string& text) {
  std::vector<double> out;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ') {
      i++;
      continue;
    }
    size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(i, end - i);
    char* parsed_end = nullptr;
    double v = strtod(word.c_str(), &parsed_end);
    if (parsed_end != word.c_str() + word.size() || !(v >= 0 && v <= 100)) {
      // Redis's text; each value must be a number from 0 to 100.
      return Status::InvalidArgument("Invalid latency-tracking-info-percentiles parameters");
    }
    out.push_back(v);
    i = end;
  }
  return out;
}

namespace {

// "%f" with trailing zeros (and a trailing dot) removed, as Redis prints percentiles: 99.9 ->
// "99.9".
std::string TrimmedDouble(double v) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

void CommandStatsSection(ServerState& s, InfoWriter& w) {
  w.Section("Commandstats");
  const CommandTable& table = CommandTable::Get();
  for (size_t i = 0; i < s.command_stats.size(); i++) {
    const CommandStat& stat = s.command_stats.at(i);
    int64_t calls = stat.calls.load(), rejected = stat.rejected.load(), failed = stat.failed.load();
    if (calls == 0 && rejected == 0 && failed == 0) continue;
    int64_t usec = stat.usec.load();
    char per_call[32];
    snprintf(per_call, sizeof(per_call), "%.2f",
             calls == 0 ? 0.0 : static_cast<double>(usec) / static_cast<double>(calls));
    w.Field("cmdstat_" + table.StatSlotName(i),
            "calls=" + std::to_string(calls) + ",usec=" + std::to_string(usec) +
                ",usec_per_call=" + per_call + ",rejected_calls=" + std::to_string(rejected) +
                ",failed_calls=" + std::to_string(failed));
  }
}

void ErrorStatsSection(ServerState&, InfoWriter& w) {
  w.Section("Errorstats");
  for (const auto& [code, count] : ProcessErrorStats().ByCode()) {
    w.Field("errorstat_" + code, "count=" + std::to_string(count));
  }
}

void LatencyStatsSection(ServerState& s, InfoWriter& w) {
  w.Section("Latencystats");
  if (!s.latency_tracking.load(std::memory_order_relaxed)) return;
  auto percentiles = ParsePercentiles(s.config->GetString("latency-tracking-info-percentiles"));
  if (!percentiles.ok()) return;
  const CommandTable& table = CommandTable::Get();
  for (size_t i = 0; i < s.command_stats.size(); i++) {
    const LatencyHistogram* h = s.command_stats.at(i).histogram.load(std::memory_order_acquire);
    if (h == nullptr || h->count() == 0) continue;
    std::string line;
    for (double p : *percentiles) {
      if (!line.empty()) line += ',';
      char value[48];
      snprintf(value, sizeof(value), "%.3f", static_cast<double>(h->ValueAtPercentile(p)) / 1000);
      line.push_back('p');
      line.append(TrimmedDouble(p));
      line.push_back('=');
      line.append(value);
    }
    w.Field("latency_percentiles_usec_" + table.StatSlotName(i), line);
  }
}

}  // namespace basalt
