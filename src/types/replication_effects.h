// ReplicationEffects: the Redis commands that reproduce a Context's changes on a Redis replica
// (commands/replica_stream.h), gathered while it runs and handed to the keyspace's
// EffectsListener when it commits. They are gathered only while a Redis replica is attached
// (capturing()); otherwise a command pays one flag test.
//
// Effects come in units. A unit is one client command with what it ran (EXEC's commands, a
// script's calls); it reaches a replica as its one command, or wrapped in MULTI/EXEC when it
// has several, as Redis 7 propagates them. An effect added while no unit is open (an expired
// key's deletion by the expirer) is a unit of its own.
//
// Each command decides what it sends: by default the command as the client sent it, when it
// changed a key (the dispatcher's rule); a command that reaches replicas otherwise (SET ... EX
// as SET ... PXAT, SPOP as SREM, BLPOP as LPOP) adds its rewrite instead, and one that must
// reach them even when it changed nothing (FLUSHALL, PUBLISH) says so.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace basalt {

class ReplicationEffects {
 public:
  struct Command {
    int db = -1;  // the logical database it runs in; -1: none (MULTI, EXEC)
    std::vector<std::string> argv;
  };
  using Unit = std::vector<Command>;

  // What the current command sends: the default rule, its own effects, or itself as sent.
  enum class Decision { kDefault, kOwnEffects, kAsSent };

  bool capturing() const { return capturing_; }
  void set_capturing(bool capturing) { capturing_ = capturing; }

  // A client command starts and ends: what it and its nested commands add is one unit.
  void OpenUnit() { open_ = true; }
  void CloseUnit() {
    open_ = false;
    if (!open_unit_.empty()) closed_.push_back(std::exchange(open_unit_, Unit()));
  }

  // A command (client's or nested) is about to run.
  void StartCommand() { decision_ = Decision::kDefault; }
  Decision decision() const { return decision_; }
  // The current command sends `argv` in `db` (in addition to any earlier Add of it).
  void Add(int db, std::vector<std::string> argv) {
    decision_ = Decision::kOwnEffects;
    AddEffect(db, std::move(argv));
  }
  // The current command sends nothing, whatever it changed.
  void AddNothing() { decision_ = Decision::kOwnEffects; }
  // The current command is sent as the client sent it, even if it changed no key.
  void SendAsSent() { decision_ = Decision::kAsSent; }
  // Adds an effect without deciding for the current command: what happened on its way (an
  // expired key it found, deleted before it writes the key anew).
  void AddEffect(int db, std::vector<std::string> argv) {
    if (open_) {
      open_unit_.push_back({db, std::move(argv)});
    } else {
      closed_.push_back(Unit{{db, std::move(argv)}});
    }
  }

  bool has_closed_units() const { return !closed_.empty(); }
  std::vector<Unit> TakeClosedUnits() { return std::exchange(closed_, {}); }
  // Forgets every effect (a failed or discarded commit), keeping capturing() and an open unit.
  void Clear() {
    closed_.clear();
    open_unit_.clear();
  }

 private:
  bool capturing_ = false;
  bool open_ = false;
  Decision decision_ = Decision::kDefault;
  Unit open_unit_;
  std::vector<Unit> closed_;
};

}  // namespace basalt
