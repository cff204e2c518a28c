// ServerState: what every command may reach besides its own session: the keyspace, the config,
// the other clients, pub/sub subscriptions, counters and the slow log. One instance lives for the
// server's lifetime.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "commands/blocking.h"
#include "commands/client_pause.h"
#include "commands/command_table.h"
#include "commands/failover.h"
#include "commands/memory_limit.h"
#include "commands/monitor.h"
#include "commands/offload.h"
#include "commands/pubsub.h"
#include "commands/replica_stream.h"
#include "commands/script_guard.h"
#include "commands/session.h"
#include "commands/tracking.h"
#include "config/config.h"
#include "repl/replication.h"
#include "security/acl_log.h"
#include "security/acl_store.h"
#include "stats/command_stats.h"
#include "stats/counters.h"
#include "stats/latency_monitor.h"
#include "stats/slowlog.h"
#include "types/expirer.h"
#include "types/keyspace.h"

namespace basalt {

// SCAN cursors: clients (redis-py among them) expect numeric cursors, while the key space is
// ordered by key; this maps issued numbers to the key to resume after.
class ScanCursors {
 public:
  uint64_t Issue(std::string resume_key);
  // False if the cursor is unknown (expired from the map or never issued).
  bool Lookup(uint64_t cursor, std::string* resume_key);

 private:
  static constexpr size_t kMaxCursors = 16384;
  std::mutex mu_;
  std::unordered_map<uint64_t, std::string> cursors_;
  std::vector<uint64_t> order_;  // ring of issued cursors, oldest evicted first
  size_t next_slot_ = 0;
  uint64_t next_cursor_ = 1;
};

class Saves;      // commands/saves.h
class Scripting;  // src/scripting/, above this folder; EVAL/SCRIPT reach it through here

// Every command and subcommand of the table under its original name, with its ACL categories:
// what ACL rules speak about (defined in commands/acl_check.cc).
const AclCatalog& CommandAclCatalog();

struct ServerState {
  Config* config = nullptr;
  Keyspace* keyspace = nullptr;
  ActiveExpirer* expirer = nullptr;
  ReplicationManager* replication = nullptr;
  Failover* failover = nullptr;
  ClientRegistry clients;
  Tracking tracking{&clients};
  SlowLog slowlog;
  ServerCounters counters;
  CommandStats command_stats{CommandTable::Get().StatSlotCount()};  // CommandTable::StatSlotOf
  LatencyMonitor latency_monitor;
  // latency-tracking and latency-monitor-threshold (ms), read by every command: kept here as
  // atomics by the apply hooks InstallStatsConfigHooks() registers (commands/info.h).
  std::atomic<bool> latency_tracking{true};
  std::atomic<int64_t> latency_monitor_threshold_ms{0};
  ScanCursors scan_cursors;
  BlockingRegistry blocking;
  ScriptGuard script_guard;
  MemoryLimit memory_limit;
  Scripting* scripting = nullptr;
  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call noscript commands (Redis's test hook), all
  // but those that cannot run inside a script here (scripting/lua_engine.cc).
  std::atomic<bool> scripts_call_noscript{false};
  // The function libraries' and cached scripts' counts, kept by src/scripting/ for INFO memory,
  // which cannot look
  // inside Scripting.
  std::atomic<int64_t> function_libraries{0};
  std::atomic<int64_t> functions{0};
  std::atomic<int64_t> cached_scripts{0};  // EVAL's script cache (SCRIPT LOAD, EVAL)
  CommandOffloader* offloader = nullptr;   // null: kCmdOffload commands run on the worker
  // The read threads (read-threads); null: a read that needs the disk waits on its worker.
  CommandOffloader* read_offloader = nullptr;
  PubSub pubsub;
  Monitors monitors;
  ReplicaStream replica_stream;  // the command stream to Redis's replicas
  ClientPause pause;
  AclStore acl{&CommandAclCatalog()};
  AclLog acl_log;

  Saves* saves = nullptr;  // SAVE, BGSAVE, SYNC/PSYNC's RDB files, BACKUP

  int64_t start_time_ms = 0;
  std::atomic<int64_t> last_save_unix{0};  // LASTSAVE: the last successful SAVE/BGSAVE
  std::string executable;
  std::string run_id;
  std::atomic<int> tcp_port{0};  // CONFIG SET port changes it

  // Scripting::DeclaresWrites for an EVAL*/FCALL argv, which src/scripting/ provides: whether
  // the call declares before it runs that it may write (min-replicas-to-write).
  std::function<bool(const std::vector<std::string>& argv)> script_declares_writes;

  // Asks the process to stop (SHUTDOWN, signals); the network layer provides it.
  std::function<void()> request_shutdown;
  // Set once shutdown has begun: a MIGRATE waiting on its target gives up (IOERR) rather than
  // holding the shutdown for its timeout.
  std::atomic<bool> stopping{false};
};

// Records what WAIT waits for once `session`'s write has committed as `sequence`: the sequence
// for Basalt replicas, the command stream's position for Redis replicas. A stream no replica
// reads is left alone: a replica that attaches later has the write in its RDB file.
inline void NoteCommittedWrite(ServerState& server, Session& session, uint64_t sequence) {
  session.last_write_seq = sequence;
  if (server.replica_stream.Capturing()) {
    session.last_write_stream_position = server.replica_stream.position();
  }
}

}  // namespace basalt
