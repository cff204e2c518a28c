#include "commands/client_pause.h"

#include "commands/command_table.h"
#include "common/clock.h"

namespace basalt {

namespace {

constexpr uint32_t kHeldByWritePause = kCmdWrite | kCmdMayReplicate;

// Whether `argv` writes or may replicate: for EXEC, whether one of the queued commands does.
bool WritesOrMayReplicate(const Session& session, const CommandSpec& spec) {
  if (spec.flags & kHeldByWritePause) return true;
  if (std::string_view(spec.name) != "exec" || !session.in_multi) return false;
  for (const auto& queued : session.queued) {
    const CommandSpec* q = CommandTable::Get().Find(queued[0]);
    if (q != nullptr && (q->flags & kHeldByWritePause)) return true;
  }
  return false;
}

}  // namespace

int ClientPause::TimedMode() {
  const int mode = mode_.load(std::memory_order_relaxed);
  if (mode == kNone || UnixMillis() < until_ms_.load(std::memory_order_relaxed)) return mode;
  std::lock_guard<std::mutex> lock(mu_);
  if (UnixMillis() >= until_ms_.load(std::memory_order_relaxed)) {
    mode_.store(kNone, std::memory_order_relaxed);
    until_ms_.store(0, std::memory_order_relaxed);
    // Each held client woke, or wakes, by its own timer; a failover's hold keeps the others.
    if (!failover_hold_.load(std::memory_order_relaxed)) held_.clear();
  }
  return mode_.load(std::memory_order_relaxed);
}

bool ClientPause::Holds(const Session& session, const std::vector<std::string>& argv) {
  if (!active() || session.monitor.load(std::memory_order_relaxed)) return false;
  const int mode = TimedMode();
  if (mode == kAll) return true;
  if (mode == kNone && !failover_hold_.load(std::memory_order_relaxed)) return false;
  const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
  return spec != nullptr && WritesOrMayReplicate(session, *spec);
}

void ClientPause::Pause(Mode mode, int64_t until_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  if (mode_.load(std::memory_order_relaxed) == kNone) {
    until_ms_.store(until_ms, std::memory_order_relaxed);
  } else if (until_ms > until_ms_.load(std::memory_order_relaxed)) {
    until_ms_.store(until_ms, std::memory_order_relaxed);
  }
  mode_.store(mode, std::memory_order_relaxed);
}

void ClientPause::Unpause() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    mode_.store(kNone, std::memory_order_relaxed);
    until_ms_.store(0, std::memory_order_relaxed);
  }
  WakeHeld();
}

void ClientPause::HoldWritesForFailover() {
  failover_hold_.store(true, std::memory_order_relaxed);
}

void ClientPause::ReleaseFailoverHold() {
  failover_hold_.store(false, std::memory_order_relaxed);
  WakeHeld();
}

// Each woken client asks Holds() again, and is held again if something still covers it.
void ClientPause::WakeHeld() {
  std::vector<std::shared_ptr<Session>> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held.swap(held_);
  }
  for (const auto& session : held) {
    if (session->wake_hook) session->wake_hook();
  }
}

void ClientPause::Hold(Session& session) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (mode_.load(std::memory_order_relaxed) != kNone ||
        failover_hold_.load(std::memory_order_relaxed)) {
      held_.push_back(session.shared_from_this());
      return;
    }
  }
  // Whatever held it ended between Holds() and here, and woke only those held already.
  if (session.wake_hook) session.wake_hook();
}

}  // namespace basalt
