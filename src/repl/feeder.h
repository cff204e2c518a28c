// ReplicaFeeder: a master's side of one replica's link, on a thread of its own.
//
// It answers the replica's REPLSYNC. If the replica's position is in this master's history
// (same replication id, the sequence still in the WAL, and the hash of the replica's last
// batch equal to the master's batch at that place) it streams the WAL from there: "+CONTINUE".
// Otherwise it ships a checkpoint ("+FULLSYNC"), waits for the replica to swap it in and say
// where its copy ends, and streams from there. WAL file deletion is held off from before the
// checkpoint until streaming has found its start, so the WAL the replica needs cannot be
// purged in between.
//
// Streaming follows the WAL as it grows (TransactionLogIterator, re-created when RocksDB
// switches WAL files) and waits for new commits on the engine, never polling. Sends block
// while the replica does not read, so a slow replica only slows its own feeder: memory stays
// bounded by one send chunk. Acknowledgements from the replica feed WAIT and INFO.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <rocksdb/transaction_log.h>

#include "common/status.h"
#include "config/config.h"
#include "repl/checkpoint.h"
#include "repl/wire.h"
#include "storage/engine.h"

namespace basalt {

// Reads the WAL batch by batch from a sequence number, following it as it grows. It only
// asks its iterator for a batch it knows has committed: a TransactionLogIterator that reaches
// the end of the WAL while a write commits ends in TryAgain, and a new iterator re-reads its
// WAL file from the start, which costs time proportional to the file.
class WalCursor {
 public:
  WalCursor(rocksdb::DB* db, uint64_t next);
  // Continues with an iterator whose current batch has already been taken.
  void Adopt(std::unique_ptr<rocksdb::TransactionLogIterator> iter);
  // The batch starting at next(), if `latest` (the latest committed sequence) covers it and
  // it is readable; nothing otherwise. An error if the WAL no longer holds it.
  StatusOr<std::optional<rocksdb::BatchResult>> Next(uint64_t latest);
  uint64_t next() const { return next_; }

 private:
  rocksdb::DB* db_;
  uint64_t next_;
  std::unique_ptr<rocksdb::TransactionLogIterator> iter_;
  bool taken_ = false;  // the iterator's current batch was returned already
};

// A replica's REPLSYNC arguments.
struct SyncRequest {
  std::string replica_replid;  // the replica's own id
  std::string master_replid;   // the history its position refers to ("?" when it has none)
  uint64_t next_seq = 0;
  uint64_t last_hash = 0;
  int listening_port = 0;
};

struct FeederContext {
  Engine* engine = nullptr;
  Config* config = nullptr;
  CheckpointSource* checkpoints = nullptr;
  std::string replid;            // this master's id
  std::function<void()> on_ack;  // a replica acknowledged new writes (wakes WAIT)
};

class ReplicaFeeder {
 public:
  enum class State { kWaitCheckpoint, kSendCheckpoint, kOnline };
  struct Info {
    std::string ip;
    int port = 0;
    State state = State::kWaitCheckpoint;
    uint64_t acked_seq = 0;
    int64_t last_ack_unix_ms = 0;
    uint64_t sync_total_bytes = 0;
    uint64_t sync_sent_bytes = 0;
  };

  // Takes ownership of `fd`, the replica's socket.
  ReplicaFeeder(FeederContext context, int fd, SyncRequest request, std::string peer_ip);
  ~ReplicaFeeder();

  void Start();
  // Asks the thread to end and joins it.
  void Stop();
  bool finished() const { return finished_.load(); }
  Info info() const;
  bool online() const { return state_.load() == State::kOnline; }
  uint64_t acked_seq() const { return acked_seq_.load(); }
  int64_t last_ack_unix_ms() const { return last_ack_unix_ms_.load(); }

 private:
  void Run();
  Status Serve();
  // True if the replica can resume where it stands; positions *iter at the first batch to
  // send (or leaves it empty if there is nothing to send yet).
  bool CanResume(std::unique_ptr<rocksdb::TransactionLogIterator>* iter);
  bool CheckResume(std::unique_ptr<rocksdb::TransactionLogIterator>* iter, const char** why);
  // Ships a checkpoint and returns the sequence the replica continues from.
  StatusOr<uint64_t> FullSync();
  Status Stream(WalCursor cursor, bool deletions_disabled);
  Status Flush(std::string* out, int64_t* last_send_ms);
  Status ReadAcks();

  FeederContext ctx_;
  SyncRequest request_;
  std::string peer_ip_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::unique_ptr<ReplSocket> sock_;
  std::thread thread_;

  std::atomic<State> state_{State::kWaitCheckpoint};
  std::atomic<uint64_t> acked_seq_{0};
  std::atomic<int64_t> last_ack_unix_ms_{0};
  std::atomic<uint64_t> sync_total_bytes_{0};
  std::atomic<uint64_t> sync_sent_bytes_{0};
};

}  // namespace basalt
