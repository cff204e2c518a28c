// ReplicationManager: this server's replication role and the threads behind it.
//
// The command layer talks to replication only through this class: REPLICAOF/SLAVEOF (and the
// `replicaof` config key at start-up), the read-only check, REPLSYNC handing over a replica's
// socket, WAIT's acknowledgement count, and snapshots for ROLE and INFO replication.
//
// A master runs one ReplicaFeeder thread per connected replica and shares checkpoints among
// full syncs. A replica runs one MasterLink thread, pauses its active expirer (expiry
// deletions come from the master, as in Redis), and refuses client writes while
// `replica-read-only` is yes. Both roles can hold at once: a replica serves its own replicas
// from its own WAL (chained replication).
//
// Role changes are synchronous: when REPLICAOF NO ONE returns, the link has stopped and
// writes are accepted. They may run while the caller holds the keyspace lock shared, because
// the link thread gives up its own lock waits when asked to stop.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/config.h"
#include "repl/applier.h"
#include "repl/checkpoint.h"
#include "repl/feeder.h"
#include "repl/link.h"
#include "types/expirer.h"
#include "types/keyspace.h"

namespace basalt {

struct ReplicationSnapshot {
  bool replica = false;
  bool read_only = false;
  std::string replid;
  uint64_t latest_seq = 0;
  MasterLink::Info link;  // meaningful when `replica`
  std::vector<ReplicaFeeder::Info> replicas;
  uint64_t checkpoints_created = 0;
};

class ReplicationManager {
 public:
  ReplicationManager(Keyspace* keyspace, Config* config, ActiveExpirer* expirer);
  ~ReplicationManager();

  // Set before Start(). Event handlers: see BatchApplier::SetEventHandler. The data-replaced
  // handler runs after a full sync swapped in the master's data (state derived from data,
  // such as a cache of persisted scripts, must then be rebuilt).
  void SetEventHandler(ColumnFamily cf, ReplicationEventHandler on_put,
                       ReplicationDeleteHandler on_delete = nullptr,
                       BatchApplier::EventTiming timing = BatchApplier::EventTiming::kAfterWrite);
  void SetDataReplacedHandler(std::function<void()> handler) {
    data_replaced_ = std::move(handler);
  }
  void SetAckListener(std::function<void()> listener) { ack_listener_ = std::move(listener); }
  // What following a Redis master needs from the layers above (repl/redis_follower.h).
  void SetRedisMasterHooks(RedisMasterHooks hooks) { redis_hooks_ = std::move(hooks); }

  // Loads the replication id, clears leftovers of a crash, and applies `replicaof`. A server
  // that starts as a master forgets any replica position it held (it may now diverge).
  Status Start(int listening_port);
  void Stop();

  // REPLICAOF host port. *already is set when that is the current master already.
  Status ReplicaOf(const std::string& host, int port, bool* already);
  // REPLICAOF NO ONE.
  Status PromoteToMaster();

  bool is_replica() const { return replica_.load(); }
  // A replica with replica-read-only yes: client writes get READONLY.
  bool rejects_writes() const { return replica_.load() && read_only_.load(); }
  std::string replid() const;
  // DEBUG CHANGE-REPL-ID: a new replication id, so a replica that resumes with the old one
  // syncs in full.
  Status ChangeReplid();

  // REPLSYNC: serves a replica on `fd` (taken over) from a thread of its own.
  void ServeReplica(int fd, SyncRequest request, std::string peer_ip);
  // Replicas that acknowledged every write up to `seq` (WAIT).
  int CountReplicasAcked(uint64_t seq) const;
  // Streaming replicas whose last acknowledgement is at most `max_lag_ms` old: Redis's "good"
  // replicas, which min-replicas-to-write counts.
  int CountGoodReplicas(int64_t max_lag_ms) const;
  // A replica whose link to its master is not streaming (replica-serve-stale-data).
  bool is_stale_replica() const;
  // Whether any replica is connected (syncing or streaming) right now.
  bool HasReplicas() const;
  uint64_t latest_sequence() const { return keyspace_->engine()->LatestSequence(); }

  ReplicationSnapshot Snapshot() const;

 private:
  void StartLink(const std::string& host, int port);
  void StopFeeders();
  void ReapFeeders();
  void BeforeSwap();
  void AfterSwap();

  Keyspace* keyspace_;
  Config* config_;
  ActiveExpirer* expirer_;
  BatchApplier applier_;
  CheckpointSource checkpoints_;
  std::function<void()> ack_listener_;
  std::function<void()> data_replaced_;
  RedisMasterHooks redis_hooks_;
  int listening_port_ = 0;
  std::atomic<bool> replica_{false};
  std::atomic<bool> read_only_{true};

  std::mutex transition_mu_;  // serializes role changes (held while joining the old link)
  mutable std::mutex mu_;     // guards link_ and replid_
  std::unique_ptr<MasterLink> link_;
  std::string replid_;

  mutable std::mutex feeders_mu_;
  std::vector<std::unique_ptr<ReplicaFeeder>> feeders_;
  bool swapping_ = false;  // a full sync is replacing the data: refuse new replicas
};

}  // namespace basalt
