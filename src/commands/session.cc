#include "commands/session.h"

namespace basalt {

void ClientRegistry::Add(const std::shared_ptr<Session>& session) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_[session->id] = session;
}

void ClientRegistry::Remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(id);
}

std::vector<std::shared_ptr<Session>> ClientRegistry::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<Session>> out;
  out.reserve(sessions_.size());
  for (const auto& [id, s] : sessions_) out.push_back(s);
  return out;
}

std::shared_ptr<Session> ClientRegistry::Find(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second;
}

size_t ClientRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

}  // namespace basalt
