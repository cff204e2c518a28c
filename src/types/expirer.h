// ActiveExpirer: deletes keys whose TTL has passed, about ten times a second.
//
// It walks the `expire` column family (ordered by expiry time) from a low-water mark up to
// now, so its cost is proportional to what has expired, never to the size of the key space,
// and its seeks start past the tombstones its own earlier rounds left. Each round commits one
// batch per slice of keys under their key locks, retiring counts exactly as a DEL would.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "config/config.h"
#include "types/keyspace.h"

namespace basalt {

class ActiveExpirer {
 public:
  ActiveExpirer(Keyspace* keyspace, Config* config);
  ~ActiveExpirer() { Stop(); }
  void Start();
  void Stop();

  // Runs one round now; returns how many keys it deleted. Public for tests and DEBUG.
  int64_t RunOnce();
  // A replica does not expire keys itself: its master's deletions arrive with the data. Checked
  // before each slice under the keyspace lock, so a paused expirer commits no further slice.
  void SetPaused(bool paused) { paused_ = paused; }
  // DEBUG PAUSE-CRON: no active rounds while set (lazy expiry goes on), as Redis's paused cron
  // runs no active expire cycle.
  void SetRoundsPaused(bool paused) { rounds_paused_ = paused; }
  // CLIENT PAUSE: nothing is deleted before `until_ms` (absolute Unix ms; 0 lifts it).
  void PauseUntil(int64_t until_ms) { paused_until_ms_ = until_ms; }
  int64_t expired_total() const { return expired_total_.load(); }
  // Lazy expiry: deletes those of `keys` (physical database, key) that are still expired, in
  // one batch under their key locks, as this expirer deletes (counted in expired_total(),
  // `expired` notifications, replicated through the WAL). Not while paused (a replica, CLIENT
  // PAUSE); whatever is left is the active rounds'. The caller holds no keyspace or key lock.
  int64_t ExpireFound(const TouchedKeys& keys);

 private:
  void Loop();
  int64_t ProcessSlice(std::string* resume_from, bool* more);

  Keyspace* keyspace_;
  Config* config_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::string low_water_;  // expire keys below this were consumed by an earlier round
  std::atomic<int64_t> expired_total_{0};
  std::atomic<bool> paused_{false};
  std::atomic<bool> rounds_paused_{false};
  std::atomic<int64_t> paused_until_ms_{0};
  uint64_t rounds_ = 0;
};

}  // namespace basalt
