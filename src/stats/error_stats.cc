#include "stats/error_stats.h"

namespace basalt {

namespace {
thread_local int64_t t_error_replies = 0;
}  // namespace

void ErrorStats::Record(std::string_view msg) {
  total_.fetch_add(1, std::memory_order_relaxed);
  std::string_view code = "ERR";
  size_t space = msg.substr(0, 32).find(' ');
  if (space != std::string_view::npos && space > 0) code = msg.substr(0, space);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_code_.find(code);
  if (it != by_code_.end()) {
    it->second++;
  } else if (by_code_.size() < kMaxCodes) {
    by_code_.emplace(std::string(code), 1);
  }
}

std::map<std::string, int64_t> ErrorStats::ByCode() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::map<std::string, int64_t>(by_code_.begin(), by_code_.end());
}

void ErrorStats::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  by_code_.clear();
  total_.store(0, std::memory_order_relaxed);
}

ErrorStats& ProcessErrorStats() {
  static ErrorStats stats;
  return stats;
}

int64_t ThreadErrorReplies() {
  return t_error_replies;
}

void RecordErrorReply(std::string_view msg) {
  ProcessErrorStats().Record(msg);
}

void NoteFailedCall() {
  t_error_replies++;
}

}  // namespace basalt
