// MEMORY: USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE, HELP, in Redis 7.2's reply shapes.
//
// MEMORY USAGE estimates what a key costs as stored: its metadata entry (key and encoded value)
// and the entries of its members in `subkey` (and `zset_score` for a sorted set), each counted as
// its key and value bytes plus the 8-byte sequence/type trailer RocksDB adds to every key. Like
// Redis, it reads at most SAMPLES members (default 5, 0 for all) of each column family and
// scales their average to the collection's size.
#include <cstring>

#include "commands/command_table.h"
#include "commands/command_util.h"
#include "commands/info_writer.h"
#include "types/collection.h"

// jemalloc's interface, present only when the server binary links jemalloc.
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));
extern "C" void malloc_stats_print(void (*write_cb)(void*, const char*), void* cbopaque,
                                   const char* opts) __attribute__((weak));

namespace basalt {

namespace {

constexpr int64_t kDefaultSamples = 5;
constexpr int64_t kEntryTrailer = 8;  // RocksDB's sequence number and value type per key

// The bytes of one incarnation's entries in `cf`: all of them, or `samples` of them scaled to
// `entries` (the number the metadata says there are).
StatusOr<int64_t> EntryBytes(CommandContext& c, ColumnFamily cf, const Metadata& meta,
                             int64_t entries, int64_t samples) {
  MemberIterator it(c.ctx, cf, c.db(), c.arg(2), meta.version);
  int64_t read = 0, bytes = 0;
  for (it.Seek(); it.Valid() && read < samples; it.Next()) {
    bytes += static_cast<int64_t>(it.key().size() + it.value().size()) + kEntryTrailer;
    read++;
  }
  if (!it.status().ok()) return it.status();
  if (read == 0) return int64_t{0};
  if (read >= entries) return bytes;
  return static_cast<int64_t>(static_cast<double>(bytes) / static_cast<double>(read) *
                              static_cast<double>(entries));
}

void MemoryUsage(CommandContext& c) {
  int64_t samples = kDefaultSamples;
  for (size_t j = 3; j < c.argc(); j++) {
    if (EqualsIgnoreCase(c.arg(j), "samples") && j + 1 < c.argc()) {
      auto n = IntArg(c, j + 1);
      if (!n) return;
      if (*n < 0) return c.reply.Error(kSyntaxError);
      samples = *n == 0 ? INT64_MAX : *n;
      j++;
    } else {
      return c.reply.Error(kSyntaxError);
    }
  }
  auto state = c.ctx.Peek(c.db(), c.arg(2));  // as Redis, no access of the key
  if (ReplyIfError(c, state.status())) return;
  if (!state->live()) return c.reply.Null();
  const Metadata& meta = state->meta;
  uint8_t pdb = c.server.keyspace->Physical(c.db());
  int64_t usage = static_cast<int64_t>(MetadataKey(pdb, c.arg(2)).size() + meta.Encode().size()) +
                  kEntryTrailer;
  if (meta.HasSubkeys()) {
    int64_t entries = static_cast<int64_t>(meta.size);
    if (meta.type == RedisType::kString) {
      const uint64_t segment = uint64_t{1} << meta.segment_shift;
      entries = static_cast<int64_t>((meta.size + segment - 1) / segment);
    }
    auto members = EntryBytes(c, ColumnFamily::kSubkey, meta, entries, samples);
    if (ReplyIfError(c, members.status())) return;
    usage += *members;
    if (meta.type == RedisType::kZset) {
      auto scores = EntryBytes(c, ColumnFamily::kZsetScore, meta, entries, samples);
      if (ReplyIfError(c, scores.status())) return;
      usage += *scores;
    }
  }
  c.reply.Integer(usage);
}

void MemoryStats(CommandContext& c) {
  ServerState& s = c.server;
  MemoryFigures m = ReadMemoryFigures(s);
  std::vector<int> dbs;
  int64_t keys = 0;
  for (int db = 0; db < s.keyspace->databases(); db++) {
    int64_t n = s.keyspace->KeyCount(db);
    if (n > 0 || s.keyspace->ExpireCount(db) > 0) dbs.push_back(db);
    if (n > 0) keys += n;
  }
  int64_t net = m.used > m.startup ? m.used - m.startup : 0;
  auto ratio = [](int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / b : 0.0; };
  Reply& r = c.reply;
  // Redis's 27 entries and one per database with keys, then Basalt's own four.
  r.Map(27 + dbs.size() + 4);
  auto field = [&r](const char* name, int64_t v) {
    r.Bulk(name);
    r.Integer(v);
  };
  auto real = [&r](const char* name, double v) {
    r.Bulk(name);
    r.Double(v);
  };
  field("peak.allocated", m.peak);
  field("total.allocated", m.used);
  field("startup.allocated", m.startup);
  field("replication.backlog", 0);
  field("clients.slaves", m.clients_replicas);
  field("clients.normal", m.clients_normal);
  field("cluster.links", 0);
  field("aof.buffer", 0);
  field("lua.caches", 0);
  field("functions.caches", 0);
  for (int db : dbs) {
    r.Bulk("db." + std::to_string(db));
    // Keys live in RocksDB, not in in-memory hash tables: no per-database table overhead.
    r.Map(3);
    field("overhead.hashtable.main", 0);
    field("overhead.hashtable.expires", 0);
    field("overhead.hashtable.slot-to-keys", 0);
  }
  field("overhead.total", m.overhead());
  field("keys.count", keys);
  field("keys.bytes-per-key", keys > 0 ? net / keys : 0);
  field("dataset.bytes", m.dataset());
  real("dataset.percentage", ratio(m.dataset(), net) * 100);
  real("peak.percentage", ratio(m.used, m.peak) * 100);
  field("allocator.allocated", m.allocator_allocated);
  field("allocator.active", m.allocator_active);
  field("allocator.resident", m.allocator_resident);
  real("allocator-fragmentation.ratio", ratio(m.allocator_active, m.allocator_allocated));
  field("allocator-fragmentation.bytes", m.allocator_active - m.allocator_allocated);
  real("allocator-rss.ratio", ratio(m.allocator_resident, m.allocator_active));
  field("allocator-rss.bytes", m.allocator_resident - m.allocator_active);
  real("rss-overhead.ratio", ratio(m.rss, m.allocator_resident));
  field("rss-overhead.bytes", m.rss - m.allocator_resident);
  real("fragmentation", ratio(m.rss, m.used));
  field("fragmentation.bytes", m.rss - m.used);
  field("rocksdb.block-cache", m.block_cache);
  field("rocksdb.memtables", m.memtables);
  field("metadata-cache", m.metadata_cache);
  field("member-filters", m.member_filters);
}

// Redis's checks (an almost empty instance, a past peak, fragmentation, large client buffers)
// with Basalt's own wording.
std::string MemoryDoctorReport(ServerState& s) {
  MemoryFigures m = ReadMemoryFigures(s);
  constexpr int64_t kTenMb = 10 << 20;
  auto over = [](int64_t a, int64_t b, double limit) {
    return b > 0 && static_cast<double>(a) / b > limit;
  };
  if (m.used < 5 * 1024 * 1024) {
    return "Hi Sam, this instance is empty or is using very little memory, my issues detector "
           "can't be used in these conditions. Please, leave for your mission on Earth and fill "
           "it with some data. The new Sam and I will be back to our programming as soon as I "
           "finished rebooting.\n";
  }
  std::vector<std::string> issues;
  if (over(m.peak, m.used, 1.5)) {
    issues.push_back(
        " * Peak memory: the server once used more than 150% of what it uses now; the allocator "
        "keeps memory it got at the peak, so the RSS can stay high.\n\n");
  }
  if (over(m.rss, m.used, 1.4) && m.rss - m.used > kTenMb) {
    issues.push_back(
        " * High total RSS: the resident set is more than 1.4 times the allocated memory "
        "(RocksDB's block cache and memtables are part of the allocated memory).\n\n");
  }
  if (over(m.allocator_active, m.allocator_allocated, 1.1) &&
      m.allocator_active - m.allocator_allocated > kTenMb) {
    issues.push_back(
        " * High allocator fragmentation: the allocator's active pages exceed what it has handed "
        "out by more than 10%.\n\n");
  }
  if (over(m.allocator_resident, m.allocator_active, 1.1) &&
      m.allocator_resident - m.allocator_active > kTenMb) {
    issues.push_back(
        " * High allocator RSS overhead: the allocator holds resident pages it does not use; "
        "MEMORY PURGE can return them to the system.\n\n");
  }
  size_t clients = s.clients.size();
  if (clients > 0 && m.clients_normal / static_cast<int64_t>(clients) > 200 * 1024) {
    issues.push_back(
        " * Big client buffers: clients hold more than 200K of buffered input or output each on "
        "average (slow readers, large replies or large pipelines).\n\n");
  }
  if (issues.empty()) {
    return "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
           "occurs on this base.\n";
  }
  std::string report = "Sam, I detected a few issues in this Redis instance memory implants:\n\n";
  for (const auto& issue : issues) report += issue;
  report += "I'm here to keep you safe, Sam. I want to help you.\n";
  return report;
}

void AppendStats(void* out, const char* text) {
  static_cast<std::string*>(out)->append(text);
}

void MemoryCommand(CommandContext& c) {
  std::string sub = ToLower(c.arg(1));
  if (sub == "help" && c.argc() == 2) {
    static const std::string kHelp[] = {
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP",
        "    Print this help."};
    return c.reply.SimpleLines(kHelp);
  }
  if (sub == "usage" && c.argc() >= 3) return MemoryUsage(c);
  if (sub == "stats" && c.argc() == 2) return MemoryStats(c);
  if (sub == "doctor" && c.argc() == 2) return c.reply.Verbatim(MemoryDoctorReport(c.server));
  if (sub == "malloc-stats" && c.argc() == 2) {
    if (malloc_stats_print == nullptr) {
      return c.reply.Bulk("Stats not supported for the current allocator");
    }
    std::string stats;
    malloc_stats_print(AppendStats, &stats, nullptr);
    return c.reply.Verbatim(stats);
  }
  if (sub == "purge" && c.argc() == 2) {
    // jemalloc: return every arena's dirty pages to the system, as Redis's jemalloc_purge.
    if (mallctl != nullptr) {
      // 4096 is jemalloc's MALLCTL_ARENAS_ALL.
      if (mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0) != 0) {
        return c.reply.Error("ERR Error purging dirty pages");
      }
    }
    return c.reply.Ok();
  }
  c.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + c.arg(1) +
                "'. Try MEMORY HELP.");
}

const std::vector<CommandSpec> kMemoryCommands = {
    {"memory", -2, kCmdReadOnly, 2, 2, 1, MemoryCommand, "server",
     "A container for memory diagnostics commands.", "@slow", nullptr,
     "doctor:2:@slow: help:2:@slow malloc-stats:2:@slow: purge:2:@slow: stats:2:@slow: "
     "usage:-3:@read@slow"},
};

}  // namespace

const std::vector<CommandSpec>& MemoryCommands() {
  return kMemoryCommands;
}

}  // namespace basalt
