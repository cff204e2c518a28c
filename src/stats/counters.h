// Server-wide counters behind INFO stats and CONFIG RESETSTAT (per-command ones are in
// command_stats.h, error replies in error_stats.h).
#pragma once

#include <atomic>
#include <cstdint>

namespace basalt {

struct ServerCounters {
  std::atomic<int64_t> connections_received{0};
  std::atomic<int64_t> rejected_connections{0};
  std::atomic<int64_t> commands_processed{0};
  std::atomic<int64_t> net_input_bytes{0};
  std::atomic<int64_t> net_output_bytes{0};
  std::atomic<int64_t> keyspace_hits{0};
  std::atomic<int64_t> keyspace_misses{0};
  std::atomic<int64_t> query_buffer_disconnections{0};
  std::atomic<int64_t> reply_size_disconnections{0};
  // Pipelined writes committed together (commands/dispatcher.h): groups of two or more, and
  // the commands in them.
  std::atomic<int64_t> grouped_commits{0};
  std::atomic<int64_t> grouped_commands{0};
  // Writes a worker handed to the worker whose group held their keys (net/worker.h).
  std::atomic<int64_t> delegated_commands{0};
  // Connections that moved to the worker their writes kept being handed to (net/worker.h).
  std::atomic<int64_t> moved_connections{0};
  // Read commands whose data was not all in memory, handed to the read threads
  // (commands/offload.h).
  std::atomic<int64_t> offloaded_reads{0};
  // Socket reads that returned data, and flushes of replies (Redis's total_reads_processed and
  // total_writes_processed).
  std::atomic<int64_t> reads_processed{0};
  std::atomic<int64_t> writes_processed{0};
  // Commands, logins and keys/channels the ACL refused (acl_access_denied_*).
  std::atomic<int64_t> acl_denied_auth{0};
  std::atomic<int64_t> acl_denied_cmd{0};
  std::atomic<int64_t> acl_denied_key{0};
  std::atomic<int64_t> acl_denied_channel{0};
  // Successful SAVE/BGSAVE runs.
  std::atomic<int64_t> rdb_saves{0};

  void Reset() {
    connections_received = 0;
    rejected_connections = 0;
    commands_processed = 0;
    net_input_bytes = 0;
    net_output_bytes = 0;
    keyspace_hits = 0;
    keyspace_misses = 0;
    query_buffer_disconnections = 0;
    reply_size_disconnections = 0;
    grouped_commits = 0;
    grouped_commands = 0;
    delegated_commands = 0;
    moved_connections = 0;
    offloaded_reads = 0;
    reads_processed = 0;
    writes_processed = 0;
    acl_denied_auth = 0;
    acl_denied_cmd = 0;
    acl_denied_key = 0;
    acl_denied_channel = 0;
    rdb_saves = 0;
  }
};

}  // namespace basalt
