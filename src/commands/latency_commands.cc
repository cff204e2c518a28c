// LATENCY: LATEST, HISTORY, RESET, GRAPH, DOCTOR, HISTOGRAM, HELP, in Redis 7.2's reply shapes,
// over the latency events of stats/latency_monitor.h and the per-command histograms of
// stats/command_stats.h.
#include <algorithm>
#include <cstdio>

#include "commands/command_table.h"
#include "commands/command_util.h"
#include "common/clock.h"

namespace basalt {

namespace {

const LatencyMonitor::Event* FindEvent(const std::vector<LatencyMonitor::Event>& events,
                                       const std::string& name) {
  for (const auto& e : events) {
    if (EqualsIgnoreCase(e.name, name)) return &e;
  }
  return nullptr;
}

void LatencyLatest(CommandContext& c) {
  auto events = c.server.latency_monitor.Events();
  c.reply.Array(events.size());
  for (const auto& e : events) {
    const auto& last = e.samples.back();
    c.reply.Array(4);
    c.reply.Bulk(e.name);
    c.reply.Integer(last.unix_time);
    c.reply.Integer(last.latency_ms);
    c.reply.Integer(e.max_ms);
  }
}

void LatencyHistory(CommandContext& c) {
  auto events = c.server.latency_monitor.Events();
  const LatencyMonitor::Event* e = FindEvent(events, c.arg(2));
  if (e == nullptr) return c.reply.Array(0);
  c.reply.Array(e->samples.size());
  for (const auto& sample : e->samples) {
    c.reply.Array(2);
    c.reply.Integer(sample.unix_time);
    c.reply.Integer(sample.latency_ms);
  }
}

// "12s", "3m", "2h", "1d": how long ago a sample was taken.
std::string Age(int64_t seconds) {
  if (seconds < 60) return std::to_string(seconds) + "s";
  if (seconds < 3600) return std::to_string(seconds / 60) + "m";
  if (seconds < 86400) return std::to_string(seconds / 3600) + "h";
  return std::to_string(seconds / 86400) + "d";
}

// A header as Redis prints it, then one column per sample (the newest 80): a bar of up to four
// rows scaled between the lowest and highest sample, and each sample's age written downwards.
std::string LatencyGraph(const LatencyMonitor::Event& e) {
  constexpr size_t kColumns = 80;
  constexpr int kRows = 4;
  size_t first = e.samples.size() > kColumns ? e.samples.size() - kColumns : 0;
  std::vector<LatencyMonitor::Sample> shown(e.samples.begin() + first, e.samples.end());
  int64_t low = shown.front().latency_ms, high = low;
  for (const auto& s : shown) {
    low = std::min(low, s.latency_ms);
    high = std::max(high, s.latency_ms);
  }
  char header[160];
  snprintf(header, sizeof(header), "%s - high %lld ms, low %lld ms (all time high %lld ms)\n",
           e.name.c_str(), static_cast<long long>(high), static_cast<long long>(low),
           static_cast<long long>(e.max_ms));
  std::string out = header;
  out.append(kColumns, '-');
  out += '\n';
  std::vector<int> heights;
  for (const auto& s : shown) {
    int h = high == low ? kRows
                        : 1 + static_cast<int>((s.latency_ms - low) * (kRows - 1) / (high - low));
    heights.push_back(h);
  }
  for (int row = kRows; row >= 1; row--) {
    for (int h : heights) out += h >= row ? '#' : ' ';
    out += '\n';
  }
  int64_t now = UnixMillis() / 1000;
  std::vector<std::string> ages;
  size_t longest = 0;
  for (const auto& s : shown) {
    ages.push_back(Age(now - s.unix_time));
    longest = std::max(longest, ages.back().size());
  }
  for (size_t row = 0; row < longest; row++) {
    for (const auto& age : ages) out += row < age.size() ? age[row] : ' ';
    out += '\n';
  }
  return out;
}

std::string LatencyDoctor(ServerState& s) {
  auto events = s.latency_monitor.Events();
  int64_t threshold = s.latency_monitor_threshold_ms.load();
  if (events.empty() && threshold == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it. If we weren't in a deep space mission I'd suggest to take a look "
           "at https://redis.io/topics/latency-monitor.\n";
  }
  if (events.empty()) {
    return "Dave, no latency spike was observed during the lifetime of this Redis instance, not "
           "in the slightest bit. I honestly think you ought to sit down calmly, take a stress "
           "pill, and think things over.\n";
  }
  std::string report =
      "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about "
      "it, do you Dave?\n\n";
  int n = 0;
  for (const auto& e : events) {
    int64_t sum = 0;
    for (const auto& sample : e.samples) sum += sample.latency_ms;
    int64_t avg = sum / static_cast<int64_t>(e.samples.size());
    int64_t deviation = 0;
    for (const auto& sample : e.samples) deviation += std::llabs(sample.latency_ms - avg);
    deviation /= static_cast<int64_t>(e.samples.size());
    double period = static_cast<double>(e.samples.back().unix_time - e.samples.front().unix_time) /
                    static_cast<double>(e.samples.size());
    char line[256];
    snprintf(line, sizeof(line),
             "%d. %s: %zu latency spikes (average %lldms, mean deviation %lldms, period %.2f "
             "sec). Worst all time event %lldms.\n",
             ++n, e.name.c_str(), e.samples.size(), static_cast<long long>(avg),
             static_cast<long long>(deviation), period, static_cast<long long>(e.max_ms));
    report += line;
  }
  report +=
      "\nI have a few advices for you:\n\n"
      "- Check your Slow Log (SLOWLOG GET) to see which commands are too slow; large values and "
      "collections read or deleted whole take longest.\n";
  return report;
}

// One command's histogram as Redis replies it: calls, then the cumulative count at each power
// of two of microseconds from 1 (1024 ns) up, where the count grew.
void ReplyHistogram(Reply& r, const LatencyHistogram& h) {
  std::vector<std::pair<int64_t, uint64_t>> points;
  uint64_t cumulative = 0, reported = 0;
  size_t bucket = 0;
  for (uint64_t limit = 1024; reported < h.count() && limit <= (uint64_t{1} << 40); limit *= 2) {
    while (bucket < LatencyHistogram::kBuckets && LatencyHistogram::BucketHighest(bucket) < limit) {
      cumulative += h.bucket(bucket++);
    }
    if (cumulative > reported) {
      points.emplace_back(static_cast<int64_t>(limit / 1000), cumulative);
      reported = cumulative;
    }
    if (bucket == LatencyHistogram::kBuckets) break;
  }
  r.Map(2);
  r.Bulk("calls");
  r.Integer(static_cast<int64_t>(h.count()));
  r.Bulk("histogram_usec");
  r.Map(points.size());
  for (const auto& [usec, count] : points) {
    r.Integer(usec);
    r.Integer(static_cast<int64_t>(count));
  }
}

void LatencyHistogramCommand(CommandContext& c) {
  const CommandTable& table = CommandTable::Get();
  std::vector<size_t> slots;
  auto add_if_used = [&](size_t slot) {
    const LatencyHistogram* h = c.server.command_stats.at(slot).histogram.load();
    if (h != nullptr && h->count() > 0 &&
        std::find(slots.begin(), slots.end(), slot) == slots.end()) {
      slots.push_back(slot);
    }
  };
  if (c.argc() == 2) {
    for (size_t slot = 0; slot < c.server.command_stats.size(); slot++) add_if_used(slot);
  } else {
    for (size_t j = 2; j < c.argc(); j++) {
      std::string name = ToLower(c.arg(j));
      size_t bar = name.find('|');
      const CommandSpec* spec = table.Find(name.substr(0, bar));
      if (spec == nullptr) continue;
      if (bar != std::string::npos) {
        std::vector<std::string> argv = {spec->name, name.substr(bar + 1)};
        size_t slot = table.StatSlotOf(*spec, argv);
        if (slot != table.IndexOf(spec)) add_if_used(slot);
        continue;
      }
      add_if_used(table.IndexOf(spec));
      for (const SubcommandSpec& sub : table.Subcommands(*spec)) add_if_used(sub.stat_slot);
    }
  }
  c.reply.Map(slots.size());
  for (size_t slot : slots) {
    c.reply.Bulk(table.StatSlotName(slot));
    ReplyHistogram(c.reply, *c.server.command_stats.at(slot).histogram.load());
  }
}

void LatencyCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  if (sub == "history" && c.argc() == 3) return LatencyHistory(c);
  if (sub == "latest" && c.argc() == 2) return LatencyLatest(c);
  if (sub == "graph" && c.argc() == 3) {
    auto events = c.server.latency_monitor.Events();
    const LatencyMonitor::Event* e = FindEvent(events, c.arg(2));
    if (e == nullptr) {
      return c.reply.Error("ERR No samples available for event '" + c.arg(2) + "'");
    }
    return c.reply.Verbatim(LatencyGraph(*e));
  }
  if (sub == "doctor" && c.argc() == 2) return c.reply.Verbatim(LatencyDoctor(c.server));
  if (sub == "reset") {
    if (c.argc() == 2) return c.reply.Integer(c.server.latency_monitor.Reset(""));
    int64_t resets = 0;
    for (size_t j = 2; j < c.argc(); j++) {
      if (!c.arg(j).empty()) resets += c.server.latency_monitor.Reset(c.arg(j));
    }
    return c.reply.Integer(resets);
  }
  if (sub == "histogram") return LatencyHistogramCommand(c);
  if (sub == "help" && c.argc() == 2) {
    static const std::string kHelp[] = {
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the "
        "specified command names.",
        "    If no commands are specified then all histograms are replied.",
        "HELP",
        "    Print this help."};
    return c.reply.SimpleLines(kHelp);
  }
  c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                "'. Try LATENCY HELP.");
}

constexpr uint32_t kLatencyFlags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;

const std::vector<CommandSpec> kLatencyCommands = {
    {"latency", -2, kLatencyFlags, 0, 0, 0, LatencyCommand, "server",
     "A container for latency diagnostics commands.", "@slow", nullptr,
     "doctor:2:@admin@slow@dangerous graph:3:@admin@slow@dangerous help:2:@slow "
     "histogram:-2:@admin@slow@dangerous history:3:@admin@slow@dangerous "
     "latest:2:@admin@slow@dangerous reset:-2:@admin@slow@dangerous"},
};

}  // namespace

const std::vector<CommandSpec>& LatencyCommands() {
  return kLatencyCommands;
}

}  // namespace basalt
