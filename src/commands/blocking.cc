#include "commands/blocking.h"

#include <algorithm>

namespace basalt {

namespace {

// The barrier that tickets handed out on this thread carry (ServeBarrierScope).
thread_local std::shared_ptr<ServeBarrier>* current_barrier = nullptr;

}  // namespace

ServeTicket::~ServeTicket() {
  registry_->TicketReturned(slot_, session_id_, served, std::move(barrier_));
}

ServeBarrierScope::ServeBarrierScope(std::shared_ptr<ServeBarrier> barrier)
    : previous_(current_barrier), barrier_(std::move(barrier)) {
  current_barrier = &barrier_;
}

ServeBarrierScope::~ServeBarrierScope() {
  current_barrier = previous_;
}

std::string BlockingRegistry::Slot(uint8_t db, std::string_view key) {
  std::string slot(1, static_cast<char>(db));
  slot.append(key);
  return slot;
}

void BlockingRegistry::Block(Session& session,
                             const std::vector<std::pair<uint8_t, std::string>>& keys,
                             bool fails_on_deleted_key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slots = slots_of_[session.id];
  if (slots.empty()) blocked_.fetch_add(1, std::memory_order_relaxed);
  for (const auto& [db, key] : keys) {
    std::string slot = Slot(db, key);
    if (std::find(slots.begin(), slots.end(), slot) != slots.end()) continue;
    waiters_[slot].waiters.push_back(Waiter{session.id, session.serve_hook, fails_on_deleted_key});
    slots.push_back(std::move(slot));
  }
}

void BlockingRegistry::Unblock(Session& session) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_of_.find(session.id);
  if (it == slots_of_.end()) return;
  for (const auto& slot : it->second) {
    auto w = waiters_.find(slot);
    if (w == waiters_.end()) continue;
    auto& list = w->second.waiters;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const Waiter& x) { return x.session_id == session.id; }),
               list.end());
    // A queue with a ticket out stays until the ticket is given back.
    if (list.empty() && !w->second.serving) waiters_.erase(w);
  }
  slots_of_.erase(it);
  blocked_.fetch_sub(1, std::memory_order_relaxed);
}

std::shared_ptr<ServeBarrier> BlockingRegistry::NewBarrier(std::function<void()> done) {
  return std::make_shared<ServeBarrier>([this, done = std::move(done)] {
    if (!stopped_.load()) done();
  });
}

bool BlockingRegistry::HasWaiters(uint8_t db, std::string_view key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = waiters_.find(Slot(db, key));
  return it != waiters_.end() && !it->second.waiters.empty();
}

std::function<void()> BlockingRegistry::ServeFirst(const std::string& slot, Queue& queue,
                                                   std::shared_ptr<ServeBarrier> barrier) {
  return Serve(slot, queue, queue.waiters.front(), std::move(barrier));
}

std::function<void()> BlockingRegistry::Serve(const std::string& slot, Queue& queue,
                                              const Waiter& waiter,
                                              std::shared_ptr<ServeBarrier> barrier) {
  queue.serving = true;
  queue.changed = false;
  auto ticket = std::make_shared<ServeTicket>(this, slot, waiter.session_id, std::move(barrier));
  return [serve = waiter.serve, ticket = std::move(ticket)]() mutable {
    if (serve) serve(std::move(ticket));
  };
}

void BlockingRegistry::OnKeyTouched(uint8_t db, std::string_view key) {
  if (blocked_.load(std::memory_order_relaxed) == 0) return;
  std::vector<std::function<void()>> calls;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::string slot = Slot(db, key);
    auto it = waiters_.find(slot);
    if (it == waiters_.end()) return;
    Queue& queue = it->second;
    if (db == kReplicaAckDb) {
      for (const auto& w : queue.waiters) {
        calls.push_back([serve = w.serve] {
          if (serve) serve(nullptr);
        });
      }
    } else if (queue.serving) {
      queue.changed = true;  // the round goes on when the ticket comes back
    } else if (!queue.waiters.empty()) {
      calls.push_back(ServeFirst(slot, queue, current_barrier ? *current_barrier : nullptr));
    }
  }
  for (auto& call : calls) call();
}

void BlockingRegistry::OnDatabaseReplaced(uint8_t db) {
  std::vector<std::function<void()>> calls;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [slot, queue] : waiters_) {
      if (static_cast<uint8_t>(slot[0]) != db) continue;
      if (queue.serving) {
        queue.changed = true;
      } else if (!queue.waiters.empty()) {
        calls.push_back(ServeFirst(slot, queue, current_barrier ? *current_barrier : nullptr));
      }
    }
  }
  for (auto& call : calls) call();
}

void BlockingRegistry::TicketReturned(const std::string& slot, uint64_t session_id, bool served,
                                      std::shared_ptr<ServeBarrier> barrier) {
  if (stopped_.load()) return;
  std::function<void()> next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = waiters_.find(slot);
    if (it == waiters_.end()) return;
    Queue& queue = it->second;
    queue.serving = false;
    auto returned = std::find_if(queue.waiters.begin(), queue.waiters.end(),
                                 [&](const Waiter& w) { return w.session_id == session_id; });
    const bool still_waiting = returned != queue.waiters.end();
    // A waiter that parked again found nothing: the round ends, unless the key was written
    // while it looked. Before it ends, the waiters behind it that a deleted key fails
    // (XREADGROUP) run once each, as Redis runs every client blocked on a deleted key: the key
    // may be gone, which their waiting ahead of nothing would never show them.
    const bool go_on = served || !still_waiting || queue.changed;
    auto failing = still_waiting
                       ? std::find_if(std::next(returned), queue.waiters.end(),
                                      [](const Waiter& w) { return w.fails_on_deleted_key; })
                       : queue.waiters.end();
    if (queue.waiters.empty()) {
      waiters_.erase(it);
    } else if (go_on) {
      next = ServeFirst(slot, queue, std::move(barrier));
    } else if (failing != queue.waiters.end()) {
      next = Serve(slot, queue, *failing, std::move(barrier));
    }
  }
  if (next) next();
}

void BlockingRegistry::BlockOnReplicaAcks(Session& session) {
  Block(session, {{kReplicaAckDb, std::string()}});
}

size_t BlockingRegistry::BlockingKeys() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t keys = 0;
  for (const auto& [slot, queue] : waiters_) {
    if (!queue.waiters.empty() && static_cast<uint8_t>(slot[0]) != kReplicaAckDb) keys++;
  }
  return keys;
}

size_t BlockingRegistry::BlockingKeysOnNokey() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t keys = 0;
  for (const auto& [slot, queue] : waiters_) {
    keys += std::any_of(queue.waiters.begin(), queue.waiters.end(),
                        [](const Waiter& w) { return w.fails_on_deleted_key; });
  }
  return keys;
}

void BlockingRegistry::OnReplicaAck() {
  OnKeyTouched(kReplicaAckDb, std::string_view());
}

bool BlockingRegistry::IsBlocked(uint64_t session_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return slots_of_.count(session_id) != 0;
}

}  // namespace basalt
