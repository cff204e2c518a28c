#include "commands/client_pause.h"

#include <unordered_set>

#include "commands/command_table.h"
#include "common/clock.h"

namespace basalt {

namespace {

constexpr uint32_t kHeldByWritePause = kCmdWrite | kCmdMayReplicate;

// The commands whose flags come from the script or function they run, as in Redis.
bool RunsScript(const CommandSpec& spec) {
  const std::string_view name(spec.name);
  return name == "eval" || name == "evalsha" || name == "fcall";
}

bool ArityOk(int arity, size_t argc) {
  const int n = static_cast<int>(argc);
  return arity > 0 ? n == arity : n >= -arity;
}

}  // namespace

bool ClientPause::CommandMayWrite(const CommandSpec& spec,
                                  const std::vector<std::string>& argv) const {
  if (!(spec.flags & kHeldByWritePause)) return false;
  if (!RunsScript(spec) || !script_may_write_ || argv.size() < 2) return true;
  return script_may_write_(argv);
}

bool ClientPause::WritesOrMayReplicate(const Session& session,
                                       const std::vector<std::string>& argv) const {
  const CommandSpec* spec = CommandTable::Get().Find(argv[0]);
  // An unknown command or a wrong number of arguments gets its error without waiting.
  if (spec == nullptr || !ArityOk(spec->arity, argv.size())) return false;
  if (CommandMayWrite(*spec, argv)) return true;
  if (std::string_view(spec->name) != "exec" || !session.in_multi) return false;
  for (const auto& queued : session.queued) {
    const CommandSpec* q = CommandTable::Get().Find(queued[0]);
    if (q != nullptr && CommandMayWrite(*q, queued)) return true;
  }
  return false;
}

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
  return WritesOrMayReplicate(session, argv);
}

void ClientPause::Pause(Mode mode, int64_t until_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  const int current = mode_.load(std::memory_order_relaxed);
  const bool running = current != kNone && UnixMillis() < until_ms_.load(std::memory_order_relaxed);
  if (!running || until_ms > until_ms_.load(std::memory_order_relaxed))
    until_ms_.store(until_ms, std::memory_order_relaxed);
  // WRITE does not weaken an ALL pause that still runs.
  if (!running || mode == kAll || current != kAll) mode_.store(mode, std::memory_order_relaxed);
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

size_t ClientPause::HeldClients(const std::function<bool(uint64_t)>& counted) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unordered_set<uint64_t> ids;  // a client held again is listed again
  for (const auto& session : held_) {
    // Only held_ still refers to a client that has disconnected.
    if (session.use_count() > 1 && counted(session->id)) ids.insert(session->id);
  }
  return ids.size();
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
