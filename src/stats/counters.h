// Server-wide counters behind INFO stats, INFO commandstats and CONFIG RESETSTAT.
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
  std::atomic<int64_t> error_replies{0};
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

  void Reset() {
    connections_received = 0;
    rejected_connections = 0;
    commands_processed = 0;
    net_input_bytes = 0;
    net_output_bytes = 0;
    keyspace_hits = 0;
    keyspace_misses = 0;
    error_replies = 0;
    query_buffer_disconnections = 0;
    reply_size_disconnections = 0;
    grouped_commits = 0;
    grouped_commands = 0;
    delegated_commands = 0;
    moved_connections = 0;
  }
};

// Per-command call counts and time, indexed by the command's position in the table.
struct CommandCounters {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> usec{0};
  std::atomic<int64_t> rejected{0};
  std::atomic<int64_t> failed{0};
};

}  // namespace basalt
