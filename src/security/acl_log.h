// AclLog: the recent ACL denials and failed logins that ACL LOG shows.
//
// As in Redis, an event equal to one of the ten most recent entries (same reason, context,
// object and user, within 60 seconds) increments that entry's count and moves it to the front
// instead of adding a new one, so a client hammering one denied command fills one entry. The
// log keeps at most `max_len` entries (acllog-max-len), newest first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace basalt {

struct AclLogEntry {
  uint64_t count = 1;
  std::string reason;   // "command", "key", "channel", "auth"
  std::string context;  // "toplevel", "multi", "lua"
  std::string object;   // the command, key or channel denied; AUTH/HELLO for a failed login
  std::string username;
  int64_t created_ms = 0;   // time of the latest occurrence
  std::string client_info;  // CLIENT LIST line of the client at the latest occurrence
};

class AclLog {
 public:
  void Add(AclLogEntry entry, size_t max_len);
  std::vector<AclLogEntry> Recent(size_t count) const;  // newest first
  void Reset();

 private:
  mutable std::mutex mu_;
  std::deque<AclLogEntry> entries_;
};

}  // namespace basalt
