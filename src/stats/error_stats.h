// ErrorStats: the error replies the server sent, in total and per error code ("ERR",
// "WRONGTYPE", ...), behind INFO errorstats and total_error_replies.
//
// Every error reply is recorded by Reply::Error through RecordErrorReply(), which also bumps a
// per-thread count that the dispatcher compares before and after a command to tell a failed call
// (commands/dispatcher.cc). At most 128 distinct codes are kept (Redis keeps any number): past
// that, new codes count only in the total, so a client inventing codes cannot grow the table.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace basalt {

class ErrorStats {
 public:
  static constexpr size_t kMaxCodes = 128;

  // `msg` is the error line without '-': its code is the text before the first space (within
  // 32 characters), or "ERR" when it has none.
  void Record(std::string_view msg);
  int64_t total() const { return total_.load(std::memory_order_relaxed); }
  std::map<std::string, int64_t> ByCode() const;
  void Reset();

 private:
  std::atomic<int64_t> total_{0};
  mutable std::mutex mu_;
  std::map<std::string, int64_t, std::less<>> by_code_;
};

// The process's error statistics: one server per process.
ErrorStats& ProcessErrorStats();

// Error replies this thread produced so far: a command failed if the count moved while it ran.
int64_t ThreadErrorReplies();

// Records one error reply in the process's statistics (Reply::Error calls it).
void RecordErrorReply(std::string_view msg);
// Bumps this thread's count of error replies only (every error reply calls it, counted in the
// statistics or not).
void NoteFailedCall();

}  // namespace basalt
