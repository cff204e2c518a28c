#include "commands/migrate_sockets.h"

#include "common/clock.h"

namespace basalt {

namespace {

int64_t NowMs() {
  return MonotonicMicros() / 1000;
}

}  // namespace

MigrateSockets& MigrateSockets::Get() {
  static MigrateSockets* sockets = new MigrateSockets();  // lives as long as the process
  return *sockets;
}

std::optional<MigrateSockets::Link> MigrateSockets::Take(const std::string& target) {
  std::lock_guard<std::mutex> lock(mu_);
  CloseIdle();
  auto it = idle_.find(target);
  if (it == idle_.end()) return std::nullopt;
  Link link = std::move(it->second.link);
  idle_.erase(it);
  return link;
}

void MigrateSockets::Return(const std::string& target, Link link) {
  std::lock_guard<std::mutex> lock(mu_);
  CloseIdle();
  idle_.try_emplace(target, Idle{std::move(link), NowMs()});
}

size_t MigrateSockets::Count() {
  std::lock_guard<std::mutex> lock(mu_);
  CloseIdle();
  return idle_.size();
}

void MigrateSockets::CloseIdle() {
  int64_t now = NowMs();
  std::erase_if(idle_,
                [now](const auto& entry) { return now - entry.second.last_use_ms > kIdleLimitMs; });
}

}  // namespace basalt
