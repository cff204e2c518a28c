// ClientPause: CLIENT PAUSE and UNPAUSE. While a pause lasts, a normal client's command that it
// covers (every command with ALL; with WRITE, writes and Redis's "may-replicate" commands:
// PUBLISH, SPUBLISH, PFCOUNT, EVAL/EVALSHA/FCALL unless the script or function declares
// no-writes, and an EXEC of such) is not run: its connection holds it, with everything after
// it, and runs it when the pause ends (UNPAUSE wakes the held clients in the order they were
// held; each also has a timer at the pause's end). A command with the wrong number of
// arguments is not held: it gets its error at once, as in Redis, which checks arity first.
// Monitors are never held, as Redis never holds its replicas. The active expirer deletes
// nothing meanwhile.
//
// A WRITE pause set while an ALL pause lasts keeps ALL (Redis 7.2 keeps the more restrictive
// mode); the end is always the later of the two.
//
// FAILOVER holds writes too, for as long as it runs and independently of CLIENT PAUSE: CLIENT
// UNPAUSE does not end its hold, and its end does not end a client's pause.
//
// While no pause was ever set the request path pays one relaxed atomic load (active()).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "commands/session.h"

namespace basalt {

struct CommandSpec;

class ClientPause {
 public:
  enum Mode : int { kNone = 0, kWrite = 1, kAll = 2 };

  bool active() const {
    return mode_.load(std::memory_order_relaxed) != kNone ||
           failover_hold_.load(std::memory_order_relaxed);
  }
  // Whether `argv` from `session` must wait now. A pause whose time is up ends here.
  bool Holds(const Session& session, const std::vector<std::string>& argv);
  // Whether an EVAL, EVALSHA or FCALL `argv` may write (src/scripting/ installs it before
  // clients are served; unset, every script may write).
  using ScriptWriteCheck = std::function<bool(const std::vector<std::string>& argv)>;
  void SetScriptWriteCheck(ScriptWriteCheck check) { script_may_write_ = std::move(check); }
  // Absolute Unix ms at which the current timed pause ends (0: none; a held client then waits
  // for a wake-up only).
  int64_t until_ms() const { return until_ms_.load(std::memory_order_relaxed); }

  // CLIENT PAUSE: the mode replaces the current one, the end is the later of the two, as in
  // Redis.
  void Pause(Mode mode, int64_t until_ms);
  // CLIENT UNPAUSE: ends the pause and wakes the held clients.
  void Unpause();
  // The client's worker, when it holds a command of `session` for the pause.
  void Hold(Session& session);
  // How many connected clients are held now, among those `counted` accepts by session id
  // (INFO's blocked_clients counts them, as Redis counts its postponed clients).
  size_t HeldClients(const std::function<bool(uint64_t)>& counted);

  // FAILOVER's hold of writes: set while it waits for a replica and hands over, released when
  // it ends either way (the held clients are woken; those a CLIENT PAUSE still covers wait on).
  void HoldWritesForFailover();
  void ReleaseFailoverHold();

 private:
  std::mutex mu_;
  std::atomic<int> mode_{kNone};
  std::atomic<int64_t> until_ms_{0};
  std::atomic<bool> failover_hold_{false};
  std::vector<std::shared_ptr<Session>> held_;
  ScriptWriteCheck script_may_write_;

  // Whether `argv` writes or may replicate: for EXEC, whether one of the queued commands does.
  bool WritesOrMayReplicate(const Session& session, const std::vector<std::string>& argv) const;
  bool CommandMayWrite(const CommandSpec& spec, const std::vector<std::string>& argv) const;

  // The timed pause's mode now; a pause whose time is up ends here.
  int TimedMode();
  void WakeHeld();
};

}  // namespace basalt
