// BlockingRegistry: clients parked by BLPOP-style commands, woken by writes to their keys.
//
// A blocking command that finds nothing registers the session here while it still holds its
// key locks, so a writer that later changes one of those keys (and notifies after its commit,
// under its own lock) always finds the waiter: no wake-up is lost between "nothing to pop" and
// "parked". A wake-up only asks the waiter's worker to run the command again; if another
// client got there first, the command simply parks again. Parked connections cost their worker
// thread nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "commands/session.h"
#include "types/keyspace.h"

namespace basalt {

class BlockingRegistry : public Keyspace::TouchListener {
 public:
  // Parks `session` on `keys` (physical db, key). The session's wake_hook is called when one
  // of them is written.
  void Block(Session& session, const std::vector<std::pair<uint8_t, std::string>>& keys);
  void Unblock(Session& session);
  // Called after every commit for each key it changed, while any client is parked.
  bool Listening() const override { return blocked_.load(std::memory_order_relaxed) != 0; }
  void OnKeyTouched(uint8_t db, std::string_view key) override;
  // WAIT parks on replica acknowledgements instead of keys; every acknowledgement that
  // advances a replica wakes all such clients, which count again.
  void BlockOnReplicaAcks(Session& session);
  void OnReplicaAck();
  // Whether the session is parked right now (CLIENT UNBLOCK).
  bool IsBlocked(uint64_t session_id);
  size_t blocked_clients() const { return blocked_.load(std::memory_order_relaxed); }
  // Distinct keys some client is blocked on (INFO clients' total_blocking_keys).
  size_t BlockingKeys();

 private:
  struct Waiter {
    uint64_t session_id;
    std::function<void()> wake;
  };
  static std::string Slot(uint8_t db, std::string_view key);
  // No key lives in physical database 255: this slot is for WAIT.
  static constexpr uint8_t kReplicaAckDb = 255;

  std::mutex mu_;
  std::unordered_map<std::string, std::vector<Waiter>> waiters_;
  std::unordered_map<uint64_t, std::vector<std::string>> slots_of_;  // session -> its slots
  std::atomic<size_t> blocked_{0};
};

}  // namespace basalt
