// BatchApplier: writes a master's WAL batches into a replica's database.
//
// Batches are gathered into one group and written with one DB::Write together with the new
// ReplicaPosition, so the replica always holds a prefix of its master's history made of whole
// master batches (never half a MULTI/EXEC or half a multi-key command), and the position can
// never disagree with the data, also across a crash. Grouping also amortises the replica's own
// commit (and fsync, under `durability sync`) over many master batches.
//
// While writing, it locks what the master locked: the key stripes of every key the group
// touches under the shared keyspace lock, or the exclusive keyspace lock when the group holds a
// whole-database operation (a range delete from FLUSHDB/FLUSHALL, a put of a database map or
// epoch from SWAPDB/FLUSHDB). Readers on the replica therefore never observe a multi-key write
// half applied. After the write it applies the group's `counters` writes to the Keyspace's
// in-memory counts, epochs and database map, marks WATCHed keys dirty, wakes blocked
// clients, hands the master's dead-range notes to this replica's reclaimers, and finally hands
// every put and delete in `pubsub`/`propagate` to the registered event handlers (published
// messages, script loads and flushes), in order.
#pragma once

#include <rocksdb/write_batch.h>

#include <array>
#include <atomic>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "repl/state.h"
#include "types/keyspace.h"

namespace basalt {

using ReplicationEventHandler = std::function<void(std::string_view key, std::string_view value)>;
using ReplicationDeleteHandler = std::function<void(std::string_view key)>;

// Locks the keyspace exclusively or shared, giving up when `stop` becomes true (so that a
// thread joining this one while holding the keyspace lock shared cannot deadlock with it).
bool LockKeyspaceExclusive(Keyspace* keyspace, const std::atomic<bool>& stop);
bool LockKeyspaceShared(Keyspace* keyspace, const std::atomic<bool>& stop);

class BatchApplier {
 public:
  explicit BatchApplier(Keyspace* keyspace);

  // `on_put` is called for each put into `cf` (kPubsub or kPropagate) of an applied group, and
  // `on_delete`, if given, for each delete, in batch order: after the group is written for
  // events that announce data (a published message's subscriber may read what the master wrote
  // before it), before it for events that install state the data depends on (a function a
  // reader of the group's keys may call). Set before replication starts.
  enum class EventTiming { kAfterWrite, kBeforeWrite };
  void SetEventHandler(ColumnFamily cf, ReplicationEventHandler on_put,
                       ReplicationDeleteHandler on_delete = nullptr,
                       EventTiming timing = EventTiming::kAfterWrite);

  // Decodes one master batch (WriteBatch::Data() bytes) into the pending group. Returns its
  // operation count. On error the whole pending group is discarded.
  StatusOr<uint32_t> Add(std::string_view data);
  bool empty() const { return group_.Count() == 0 && batches_ == 0; }
  // Drops the pending group (a link that failed before committing it).
  void Discard() { Reset(); }
  size_t pending_bytes() const { return group_.GetDataSize(); }

  // Writes the pending group and `position` in one atomic write, then refreshes in-memory
  // state and runs the event handlers. The group is emptied either way; if `stop` interrupted
  // a lock wait, nothing was written and the status is Busy.
  Status Commit(const ReplicaPosition& position, const std::atomic<bool>& stop);
  // Writes `position` alone (after a full sync), or deletes it when nullopt (on promotion).
  Status WritePosition(const std::optional<ReplicaPosition>& position);

 private:
  friend class GroupCollector;
  void Reset();
  // Calls the handlers of the pending events whose timing is `timing`.
  void DeliverEvents(EventTiming timing);

  Keyspace* keyspace_;
  std::array<ReplicationEventHandler, kColumnFamilyCount> put_handlers_;
  std::array<ReplicationDeleteHandler, kColumnFamilyCount> delete_handlers_;
  std::array<EventTiming, kColumnFamilyCount> event_timings_{};
  rocksdb::WriteBatch group_;
  size_t batches_ = 0;
  bool needs_exclusive_ = false;
  std::vector<size_t> stripes_;
  std::set<std::pair<uint8_t, std::string>> touched_keys_;
  std::set<uint8_t> touched_databases_;
  std::vector<Keyspace::CounterWrite> counter_writes_;
  struct Event {
    ColumnFamily cf;
    bool deleted;
    std::string key;
    std::string value;
  };
  std::vector<Event> events_;
  struct DeadRange {
    ColumnFamily cf;
    std::string begin;
    std::string end;
  };
  std::vector<DeadRange> dead_ranges_;
};

}  // namespace basalt
