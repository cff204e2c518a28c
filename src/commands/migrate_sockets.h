// MigrateSockets: the connections MIGRATE keeps to its targets, as Redis does. After a call
// its connection is kept, one per host:port, and the next MIGRATE to that target reuses it,
// sending no SELECT when the database is the one it selected last. A connection unused for
// more than 10 seconds is closed by the next call here (Take, Return or Count), so an idle
// server may keep one open longer than Redis, whose cron closes it.
//
// Thread-safe: MIGRATE runs on the read threads. A connection is used by one call at a time: it
// leaves the cache while in use (INFO does not count it then).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "repl/wire.h"

namespace basalt {

class MigrateSockets {
 public:
  struct Link {
    std::unique_ptr<ReplSocket> sock;
    int64_t db = -1;  // the database it selected last; -1: unknown, SELECT first
  };

  static MigrateSockets& Get();

  // The kept connection to `target` ("host:port"), if one was used within the last 10 s.
  std::optional<Link> Take(const std::string& target);
  // Keeps `link` for the next call to `target` (closing it if one is kept already).
  void Return(const std::string& target, Link link);
  // The connections kept (INFO migrate_cached_sockets).
  size_t Count();

 private:
  static constexpr int64_t kIdleLimitMs = 10000;
  struct Idle {
    Link link;
    int64_t last_use_ms;
  };
  void CloseIdle();  // with mu_ held

  std::mutex mu_;
  std::unordered_map<std::string, Idle> idle_;
};

}  // namespace basalt
