// Saves: the RDB files Basalt writes (types/rdb_writer.h), its backups, and what LASTSAVE and
// INFO persistence report about them. One instance lives for the server's lifetime.
//
// - SAVE writes `dir`/`dbfilename` on the calling worker; BGSAVE on a thread of its own, one
//   at a time. Either replaces the file atomically, then flushes the memtables (what "saved"
//   means for RocksDB's own files; every write is in the WAL already, so the data never waits
//   for a save and the `save` points trigger nothing). FLUSHALL with save points saves the
//   empty data set, as Redis does, and keeps a running BGSAVE from replacing it afterwards.
// - SYNC and PSYNC (redis-cli --rdb, a Redis replica): ServeSync() takes the client's socket
//   and, on a thread of its own, answers as a Redis master's full resynchronization does: for
//   PSYNC "+FULLRESYNC <replid> <offset>", then the RDB file as "$<length>\r\n<bytes>" (written
//   into an unlinked temporary file first, with "\n" keep-alives meanwhile). A client that
//   asked for the file only (REPLCONF rdb-only 1, as redis-cli --rdb does) is then
//   disconnected; any other stays connected as a replica and receives the command stream of
//   every write after the file's snapshot (commands/replica_stream.h), with a PING every
//   repl-ping-replica-period seconds, until it leaves.
// - BACKUP <dir>: a RocksDB checkpoint of the data (repl/checkpoint.h) in a new directory, with
//   the format marker, from which basalt-server --dir <dir> starts.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "commands/replica_stream.h"
#include "common/status.h"

namespace basalt {

struct ServerState;

class Saves {
 public:
  explicit Saves(ServerState* server);
  ~Saves() { Stop(); }

  // SAVE, from a command (which holds the keyspace lock shared).
  Status Save();
  // BGSAVE: false (nothing started) when a background save runs.
  bool StartBackgroundSave();
  // FLUSHALL with save points configured, from the command (which holds the keyspace lock
  // exclusively): the emptied data set replaces the file, as Redis saves after FLUSHALL, and a
  // background save of the data before the flush, if one runs, never replaces it after that.
  Status SaveAfterFlushAll();
  bool background_save_running() const { return bgsave_running_.load(); }

  struct SyncRequest {
    bool psync = false;     // PSYNC: +FULLRESYNC first; SYNC: the file only
    bool rdb_only = false;  // REPLCONF rdb-only 1: disconnect after the file
    std::string replid;
    uint64_t offset = 0;
    std::string ip;  // the replica's address and REPLCONF listening-port, for INFO
    int port = 0;
  };
  // SYNC/PSYNC: serves `fd` (taken over) from a thread of its own.
  void ServeSync(int fd, SyncRequest request);

  // Flushes every memtable to SST files (after a save; BGREWRITEAOF, the WAL being the AOF).
  Status FlushMemtables();

  // BACKUP <dir>: `dir` must not exist; its parent must.
  Status Backup(const std::string& dir);

  struct Info {
    bool bgsave_running = false;
    int64_t bgsave_started_ms = 0;
    int64_t last_bgsave_seconds = -1;  // -1: none finished yet
    bool last_bgsave_ok = true;
    int64_t last_save_keys = 0;  // keys in the last file written
    int64_t syncs = 0;           // files sent to SYNC/PSYNC
    int64_t backups = 0;
    int64_t last_backup_unix = 0;  // 0: none
    bool last_backup_ok = true;
  };
  Info info() const;

  // The Redis replicas (SYNC/PSYNC without rdb-only) connected now, for INFO replication.
  struct RedisReplica {
    std::string ip;
    int port = 0;
    bool online = false;  // streaming commands (else still receiving its file)
    uint64_t offset = 0;  // its last REPLCONF ACK
    int64_t last_ack_unix_ms = 0;
  };
  std::vector<RedisReplica> RedisReplicas() const;
  // The Redis replicas whose acknowledgements cover the command stream up to `position`
  // (ReplicaStream::position(): WAIT), and those that acknowledged within `max_lag_ms`
  // (min-replicas-to-write).
  int CountRedisReplicasAcked(uint64_t position) const;
  int CountRedisReplicasAckedWithin(int64_t max_lag_ms) const;

  // Waits for the background save, closes the SYNC connections and joins their threads.
  void Stop();

 private:
  struct Transfer {
    std::thread thread;
    std::mutex mu;
    int fd = -1;  // -1 once closed
    std::atomic<bool> done{false};
    // A replica's part of INFO replication: it streams once the file is sent; its offset and
    // the time of its last REPLCONF ACK.
    std::string ip;
    int port = 0;
    bool replica = false;  // not rdb-only
    std::atomic<bool> streaming{false};
    std::atomic<uint64_t> acked_offset{0};
    std::atomic<int64_t> last_ack_unix_ms{0};  // 0: no acknowledgement yet
    // The offset of +FULLRESYNC and the stream position of the feed's first byte, which
    // place an acknowledged offset in the stream (replica_stream.h).
    uint64_t start_offset = 0;
    std::atomic<uint64_t> attach_position{0};
  };
  // Writes the RDB file (on the caller's thread) and records the outcome, then flushes the
  // memtables if `flush_memtables`. `may_replace`: see SaveRdbFile.
  Status SaveNow(bool lock, bool flush_memtables = true,
                 const std::function<bool()>& may_replace = nullptr);
  void RunTransfer(Transfer* transfer, SyncRequest request);
  // Sends the RDB file to transfer->fd. With `feed`, attaches a command stream to *feed as the
  // file's snapshot is taken.
  Status SendRdb(Transfer* transfer, const SyncRequest& request,
                 std::shared_ptr<ReplicaStream::Feed>* feed);
  // Sends the command stream on transfer->fd until the replica leaves, its feed is dropped or
  // the server stops, reading its REPLCONF ACKs.
  void StreamCommands(Transfer* transfer, ReplicaStream::Feed& feed);
  void ReapTransfers();

  ServerState* server_;
  mutable std::mutex mu_;  // guards what it names below
  std::thread bgsave_thread_;
  std::atomic<bool> bgsave_running_{false};
  std::atomic<bool> stopping_{false};
  // Held by a background save from deciding to replace the file until its SaveNow returns;
  // FLUSHALL's save cancels the background one under it.
  std::mutex replace_mu_;
  bool bgsave_cancelled_ = false;                     // replace_mu_
  Info info_;                                         // mu_
  std::vector<std::unique_ptr<Transfer>> transfers_;  // mu_
  uint64_t temp_counter_ = 0;                         // mu_
};

}  // namespace basalt
