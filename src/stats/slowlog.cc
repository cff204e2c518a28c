#include "stats/slowlog.h"

#include <ctime>

namespace basalt {

namespace {
constexpr size_t kMaxArgs = 32;
constexpr size_t kMaxArgLen = 128;
}  // namespace

void SlowLog::Add(const std::vector<std::string>& argv, int64_t duration_us,
                  const std::string& addr, const std::string& name, size_t max_len) {
  SlowLogEntry e;
  e.unix_time = time(nullptr);
  e.duration_us = duration_us;
  e.client_addr = addr;
  e.client_name = name;
  size_t n = argv.size() > kMaxArgs ? kMaxArgs - 1 : argv.size();
  for (size_t i = 0; i < n; i++) {
    const std::string& a = argv[i];
    if (a.size() > kMaxArgLen) {
      e.argv.push_back(a.substr(0, kMaxArgLen) + "... (" + std::to_string(a.size() - kMaxArgLen) +
                       " more bytes)");
    } else {
      e.argv.push_back(a);
    }
  }
  if (argv.size() > kMaxArgs) {
    e.argv.push_back("... (" + std::to_string(argv.size() - n) + " more arguments)");
  }
  std::lock_guard<std::mutex> lock(mu_);
  e.id = next_id_++;
  entries_.push_front(std::move(e));
  while (entries_.size() > max_len) entries_.pop_back();
}

std::vector<SlowLogEntry> SlowLog::Get(size_t count) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = std::min(count, entries_.size());
  return std::vector<SlowLogEntry>(entries_.begin(), entries_.begin() + n);
}

size_t SlowLog::Len() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void SlowLog::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
}

}  // namespace basalt
