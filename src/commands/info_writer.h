// InfoWriter and the figures INFO's sections share with MEMORY and LATENCY (internal to the
// INFO files: info.cc, info_stats.cc, info_rocksdb.cc, memory_commands.cc).
#pragma once

#include <cstdint>
#include <string>

#include "commands/server_state.h"

namespace basalt {

// Builds INFO text: "# Section" headers, "key:value" lines, a blank line between sections.
class InfoWriter {
 public:
  void Section(const char* name) {
    if (!out_.empty()) out_ += "\r\n";
    out_ += "# ";
    out_ += name;
    out_ += "\r\n";
  }
  void Field(const std::string& key, const std::string& value) {
    out_ += key;
    out_ += ':';
    out_ += value;
    out_ += "\r\n";
  }
  void Field(const std::string& key, const char* value) { Field(key, std::string(value)); }
  void Field(const std::string& key, int64_t value) { Field(key, std::to_string(value)); }
  void Field(const std::string& key, int value) { Field(key, std::to_string(value)); }
  void Field(const std::string& key, uint64_t value) { Field(key, std::to_string(value)); }
  // A number printed with `decimals` decimals ("%.2f").
  void Fixed(const std::string& key, double value, int decimals = 2);
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// Redis's bytesToHuman: "1015.49K", "11.81M", "0B".
std::string HumanBytes(int64_t n);

// The process's memory as INFO memory and MEMORY STATS report it. `used` is what the allocator
// has handed out (jemalloc's stats.allocated, or glibc's mallinfo2), as Redis's used_memory;
// RocksDB's caches and memtables are part of it.
struct MemoryFigures {
  int64_t used = 0;
  int64_t peak = 0;     // highest `used` seen by INFO or MEMORY since start
  int64_t startup = 0;  // `used` once the server had started
  int64_t rss = 0;
  int64_t allocator_allocated = 0;
  int64_t allocator_active = 0;
  int64_t allocator_resident = 0;
  int64_t total_system = 0;
  int64_t clients_normal = 0;    // client query and output buffers
  int64_t clients_replicas = 0;  // replicas are served by feeder threads: 0
  int64_t block_cache = 0;
  int64_t memtables = 0;
  int64_t metadata_cache = 0;
  int64_t member_filters = 0;
  // used minus what is not data: start-up memory and client buffers.
  int64_t overhead() const { return startup + clients_normal + clients_replicas; }
  int64_t dataset() const { return used > overhead() ? used - overhead() : 0; }
};
MemoryFigures ReadMemoryFigures(ServerState& s);
// MemoryFigures::used alone (the allocator's figure, else the RSS), cheap enough for the
// maxmemory check's periodic samples (memory_limit.h).
int64_t UsedMemoryBytes();
// "jemalloc-5.3.0" as Redis reports it, or "libc".
std::string MemoryAllocatorName();

// Basalt's own INFO sections and the statistics ones (info_rocksdb.cc, info_stats.cc).
void RocksDbSection(ServerState& s, InfoWriter& w);
void CommandStatsSection(ServerState& s, InfoWriter& w);
void ErrorStatsSection(ServerState& s, InfoWriter& w);
void LatencyStatsSection(ServerState& s, InfoWriter& w);

}  // namespace basalt
