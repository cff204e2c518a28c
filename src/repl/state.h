// Durable replication state: where a replica stands in its master's history, and the node's
// own replication id.
//
// ReplicaPosition lives in the `counters` column family under "replpos" and is written in the
// same WriteBatch as the master's batches it follows, so a crash can never separate the data
// from the position: after a restart the replica resumes from exactly what it holds.
//
// The replication id names one history of sequence numbers (one RocksDB database lineage). A
// replica applies its master's batches with its own DB::Write and so gets its own sequence
// numbers: every node therefore has its own id, which its replicas quote when they resume. The
// id is a file in the data directory (REPLID), not a key, so that it never travels in the WAL
// to a replica. A full sync replaces the directory: the node then gets a new id, and its own
// replicas (chained replication) must sync in full.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "storage/engine.h"

namespace basalt {

constexpr std::string_view kReplicaPositionKey = "replpos";

struct ReplicaPosition {
  std::string master_replid;
  uint64_t next_seq = 0;   // the master sequence the next batch starts at
  uint64_t last_hash = 0;  // BatchHash of the last batch applied; 0 right after a full sync

  std::string Encode() const;
  bool Decode(std::string_view in);
};

// Reads the stored position; nullopt if there is none (never synced, or promoted since).
StatusOr<std::optional<ReplicaPosition>> LoadReplicaPosition(Engine* engine);

// Reads the node's id from the data directory, creating and storing a new one if absent.
StatusOr<std::string> LoadOrCreateReplid(const std::string& data_dir);
// Stores a fresh id (after the data directory was replaced) and returns it.
StatusOr<std::string> ResetReplid(const std::string& data_dir);

}  // namespace basalt
