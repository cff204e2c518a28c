// BlockingRegistry: clients parked by BLPOP-style commands, served in the order they blocked
// after the write that made their key ready.
//
// A blocking command that finds nothing registers the session here while it still holds its
// key locks, so a writer that later changes one of those keys (and notifies after its commit,
// under its own lock) always finds the waiter: no wake-up is lost between "nothing to pop" and
// "parked". Parked connections cost their worker thread nothing.
//
// Serving follows Redis: the clients parked on a key are served one at a time, oldest first.
// A write to the key wakes only the oldest waiter, handing it a ServeTicket; its worker runs the
// command again and gives the ticket back. When the ticket is given back and the waiter was
// served (or is gone, or the key changed meanwhile), the next waiter gets a ticket; a waiter
// that parks again ends the round and keeps its place. A writer that must not run its next
// command before the waiters its write woke were served (a pipeline `LPUSH q a`, `LPUSH q b`
// serves `a`) opens a ServeBarrierScope around its commit: the tickets handed out carry the
// barrier, and the barrier's callback runs once the last of them is given back.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/session.h"
#include "types/keyspace.h"

namespace basalt {

class BlockingRegistry;

// Runs `done` when destroyed, that is when the last ticket that carries it is given back.
class ServeBarrier {
 public:
  explicit ServeBarrier(std::function<void()> done) : done_(std::move(done)) {}
  ServeBarrier(const ServeBarrier&) = delete;
  ServeBarrier& operator=(const ServeBarrier&) = delete;
  ~ServeBarrier() {
    if (done_) done_();
  }
  // Drops `done`, for a barrier that no ticket carries or whose holder no longer waits.
  void Disarm() { done_ = nullptr; }

 private:
  std::function<void()> done_;
};

// The right to be served next on one key. Given back by destroying it: the waiter's worker
// drops it after running the command again (setting `served` if the command did not park), and
// a wake-up that finds its client gone drops it unused.
class ServeTicket {
 public:
  ServeTicket(BlockingRegistry* registry, std::string slot, uint64_t session_id,
              std::shared_ptr<ServeBarrier> barrier)
      : registry_(registry),
        slot_(std::move(slot)),
        session_id_(session_id),
        barrier_(std::move(barrier)) {}
  ServeTicket(const ServeTicket&) = delete;
  ServeTicket& operator=(const ServeTicket&) = delete;
  ~ServeTicket();

  // The barrier of the write that started this round: what the served command writes in turn
  // serves its own waiters under it too (a chain of BRPOPLPUSH), before the writer goes on.
  const std::shared_ptr<ServeBarrier>& barrier() const { return barrier_; }

  bool served = false;

 private:
  BlockingRegistry* registry_;
  std::string slot_;
  uint64_t session_id_;
  std::shared_ptr<ServeBarrier> barrier_;
};

// While alive, the tickets that commits on this thread hand out carry `barrier`.
class ServeBarrierScope {
 public:
  explicit ServeBarrierScope(std::shared_ptr<ServeBarrier> barrier);
  ~ServeBarrierScope();
  ServeBarrierScope(const ServeBarrierScope&) = delete;
  ServeBarrierScope& operator=(const ServeBarrierScope&) = delete;

 private:
  std::shared_ptr<ServeBarrier>* previous_;
  std::shared_ptr<ServeBarrier> barrier_;
};

class BlockingRegistry : public Keyspace::TouchListener {
 public:
  // Parks `session` on `keys` (physical db, key), behind the clients already parked on them.
  // The session's serve_hook is called when it is its turn after a write. A session parked
  // again while still registered keeps its place.
  // `fails_on_deleted_key`: the command ends with an error when its key is deleted (XREADGROUP).
  void Block(Session& session, const std::vector<std::pair<uint8_t, std::string>>& keys,
             bool fails_on_deleted_key = false);
  void Unblock(Session& session);
  // Whether a client waits on (physical db, key).
  bool HasWaiters(uint8_t db, std::string_view key);
  // A barrier whose `done` runs when the last ticket carrying it is given back, unless the
  // registry has stopped by then.
  std::shared_ptr<ServeBarrier> NewBarrier(std::function<void()> done);
  // From here on given-back tickets start no new service and barriers call nothing: the
  // workers are stopping.
  void Stop() { stopped_.store(true); }
  // Called after every commit for each key it changed, while any client is parked.
  bool Listening() const override { return blocked_.load(std::memory_order_relaxed) != 0; }
  void OnKeyTouched(uint8_t db, std::string_view key) override;
  // Serves the clients parked on keys of the database, which now shows other data (SWAPDB) or
  // none (FLUSHDB, FLUSHALL): a group reader gets NOGROUP, a reader of a missing key parks again.
  void OnDatabaseReplaced(uint8_t db) override;
  // WAIT parks on replica acknowledgements instead of keys; every acknowledgement that
  // advances a replica wakes all such clients, which count again.
  void BlockOnReplicaAcks(Session& session);
  void OnReplicaAck();
  // Whether the session is parked right now (CLIENT UNBLOCK).
  bool IsBlocked(uint64_t session_id);
  size_t blocked_clients() const { return blocked_.load(std::memory_order_relaxed); }
  // Distinct keys some client is blocked on (INFO clients' total_blocking_keys).
  size_t BlockingKeys();
  // Of those, the keys some client waits on that a deletion fails (total_blocking_keys_on_nokey).
  size_t BlockingKeysOnNokey();

 private:
  friend class ServeTicket;
  struct Waiter {
    uint64_t session_id;
    std::function<void(std::shared_ptr<ServeTicket>)> serve;
    bool fails_on_deleted_key = false;
  };
  struct Queue {
    std::deque<Waiter> waiters;  // oldest first
    bool serving = false;        // a ticket for this key is out
    bool changed = false;        // written while the ticket was out
  };
  static std::string Slot(uint8_t db, std::string_view key);
  // No key lives in physical database 255: this slot is for WAIT, whose clients all count again
  // on every acknowledgement.
  static constexpr uint8_t kReplicaAckDb = 255;
  // Hands the oldest waiter of `queue` a ticket (mu_ held); the caller calls the returned
  // function after releasing mu_.
  std::function<void()> Serve(const std::string& slot, Queue& queue, const Waiter& waiter,
                              std::shared_ptr<ServeBarrier> barrier);
  std::function<void()> ServeFirst(const std::string& slot, Queue& queue,
                                   std::shared_ptr<ServeBarrier> barrier);
  void TicketReturned(const std::string& slot, uint64_t session_id, bool served,
                      std::shared_ptr<ServeBarrier> barrier);

  std::mutex mu_;
  std::unordered_map<std::string, Queue> waiters_;
  std::unordered_map<uint64_t, std::vector<std::string>> slots_of_;  // session -> its slots
  std::atomic<size_t> blocked_{0};
  std::atomic<bool> stopped_{false};
};

}  // namespace basalt
