// ReplicaStream: the command stream a Redis replica of Basalt receives after the RDB file of its
// full resynchronization (a redis-server started with `replicaof` a Basalt master, redis-cli
// --replica, Redis's own test suite), as a Redis 7.2 master sends it: each write as a RESP
// array in the order the writes committed, `SELECT <db>` before a command of another database
// than the previous one, MULTI/EXEC around a unit of several commands. Which commands a write
// sends is decided while it runs (types/replication_effects.h).
//
// Order. A unit is appended at its Context's commit, while the writer's key locks and the
// keyspace lock are still held, so units that touch one key are appended in the order they
// committed. A replica attaches while the keyspace lock is held exclusively, at the moment the
// snapshot of its RDB file is taken (commands/saves.h): every commit after the snapshot reaches
// it, and none that the file holds.
//
// Each replica has a Feed: the bytes not yet sent, which the replica's sending thread takes. A
// replica whose unsent bytes reach the hard limit of the replica class's
// client-output-buffer-limit is dropped, as Redis drops it. With no replica attached,
// Capturing() is false and writers gather nothing.
//
// Positions. Every attached feed receives the same bytes (commands, PINGs, GETACKs), so one
// count of the bytes appended since start-up, position(), places each of them: a replica that
// attached at position P after a +FULLRESYNC at offset O and acknowledges offset A has
// everything up to position P + (A - O). WAIT compares that with the position after a
// client's last write (commands/saves.h counts the replicas).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "types/keyspace.h"

namespace basalt {

class ReplicaStream : public Keyspace::EffectsListener {
 public:
  // One replica's unsent bytes. Thread-safe.
  class Feed {
   public:
    Feed();
    ~Feed();
    Feed(const Feed&) = delete;
    Feed& operator=(const Feed&) = delete;

    // A descriptor that polls readable while bytes wait (for the sender's poll()).
    int wake_fd() const { return wake_fd_; }
    // Moves the waiting bytes to *out. False once the feed was dropped (over its limit).
    bool Take(std::string* out);
    // Appends `bytes`; drops the feed when its unsent bytes reach `hard_limit` (0: none).
    void Append(std::string_view bytes, int64_t hard_limit);
    // Drops the feed: its sender disconnects the replica.
    void Drop();
    bool dropped() const;
    // position() when the feed attached: its first byte's position is this one.
    uint64_t attach_position() const { return attach_position_; }

   private:
    friend class ReplicaStream;
    void Wake();  // makes wake_fd() poll readable
    mutable std::mutex mu_;
    std::string pending_;
    bool dropped_ = false;
    int wake_fd_ = -1;
    uint64_t attach_position_ = 0;  // set by Attach() before the feed is handed out
  };

  void set_config(const Config* config) { config_ = config; }

  bool Capturing() const override { return replicas_.load(std::memory_order_relaxed) > 0; }
  void OnEffects(std::vector<ReplicationEffects::Unit> units) override;

  // A new replica's feed. The caller holds the keyspace lock exclusively (see the top).
  std::shared_ptr<Feed> Attach();
  void Detach(const std::shared_ptr<Feed>& feed);
  // Disconnects every replica: this server became a replica itself, and its data will be its
  // master's, which no command stream carries (Redis disconnects its replicas then too).
  void DropAll();
  // The replicas' PING, in the stream like a command, when `period_ms` (repl-ping-replica-period)
  // passed since the last one. Each replica's sending thread calls this; one PING serves all.
  void PingIfDue(int64_t period_ms);
  // REPLCONF GETACK * to every replica, which answers with REPLCONF ACK <offset> at once (WAIT).
  void RequestAcks();
  int replicas() const { return replicas_.load(std::memory_order_relaxed); }
  // The bytes appended to the stream since start-up (see the top).
  uint64_t position() const { return position_.load(std::memory_order_acquire); }

 private:
  // The RESP of `argv`, after a SELECT when `db` is not the stream's current database.
  void AppendCommand(int db, const std::vector<std::string>& argv, std::string* out);
  // Appends `bytes` to every feed, dropping those over the limit. The caller holds mu_.
  void Broadcast(std::string_view bytes);
  int64_t HardLimit() const;

  const Config* config_ = nullptr;
  std::mutex mu_;  // orders the appends; guards what follows
  std::vector<std::shared_ptr<Feed>> feeds_;
  int selected_db_ = -1;  // the database the stream's last command ran in; -1: none yet
  int64_t last_ping_ms_ = 0;
  std::atomic<uint64_t> position_{0};  // written under mu_
  std::atomic<int> replicas_{0};
};

}  // namespace basalt
