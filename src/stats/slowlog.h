// SlowLog: the most recent commands that took longer than `slowlog-log-slower-than`.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace basalt {

struct SlowLogEntry {
  int64_t id;
  int64_t unix_time;
  int64_t duration_us;
  std::vector<std::string> argv;  // shortened as Redis does: 32 args, 128 bytes each
  std::string client_addr;
  std::string client_name;
};

class SlowLog {
 public:
  void Add(const std::vector<std::string>& argv, int64_t duration_us, const std::string& addr,
           const std::string& name, size_t max_len);
  std::vector<SlowLogEntry> Get(size_t count) const;
  size_t Len() const;
  void Reset();

 private:
  mutable std::mutex mu_;
  std::deque<SlowLogEntry> entries_;  // newest first
  int64_t next_id_ = 0;
};

}  // namespace basalt
