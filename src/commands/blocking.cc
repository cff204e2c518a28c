#include "commands/blocking.h"

#include <algorithm>

namespace basalt {

std::string BlockingRegistry::Slot(uint8_t db, std::string_view key) {
  std::string slot(1, static_cast<char>(db));
  slot.append(key);
  return slot;
}

void BlockingRegistry::Block(Session& session,
                             const std::vector<std::pair<uint8_t, std::string>>& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slots = slots_of_[session.id];
  if (slots.empty()) blocked_.fetch_add(1, std::memory_order_relaxed);
  for (const auto& [db, key] : keys) {
    std::string slot = Slot(db, key);
    if (std::find(slots.begin(), slots.end(), slot) != slots.end()) continue;
    waiters_[slot].push_back(Waiter{session.id, session.wake_hook});
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
    auto& list = w->second;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const Waiter& x) { return x.session_id == session.id; }),
               list.end());
    if (list.empty()) waiters_.erase(w);
  }
  slots_of_.erase(it);
  blocked_.fetch_sub(1, std::memory_order_relaxed);
}

void BlockingRegistry::OnKeyTouched(uint8_t db, std::string_view key) {
  if (blocked_.load(std::memory_order_relaxed) == 0) return;
  std::vector<std::function<void()>> wakes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = waiters_.find(Slot(db, key));
    if (it == waiters_.end()) return;
    // Oldest waiter first: its worker retries first, which approximates Redis's FIFO service.
    for (const auto& w : it->second) wakes.push_back(w.wake);
  }
  for (auto& wake : wakes) {
    if (wake) wake();
  }
}

void BlockingRegistry::BlockOnReplicaAcks(Session& session) {
  Block(session, {{kReplicaAckDb, std::string()}});
}

size_t BlockingRegistry::BlockingKeys() {
  std::lock_guard<std::mutex> lock(mu_);
  size_t keys = 0;
  for (const auto& [slot, waiters] : waiters_) {
    if (!waiters.empty() && static_cast<uint8_t>(slot[0]) != kReplicaAckDb) keys++;
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
