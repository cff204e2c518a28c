// RespReader: turns a client's input bytes into command argument vectors.
//
// Accepts RESP multibulk requests and inline (telnet-style) commands, pipelined back to back,
// and follows Redis's framing rules and error texts exactly ("Protocol error: invalid bulk
// length", ...). It works incrementally: feed whatever arrived, take the whole commands that
// are complete, and the partial tail stays buffered. A framing error is final for the
// connection. Limits (bulk length, multibulk count, inline size) are checked before memory is
// reserved, so a hostile length costs nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace basalt {

class RespReader {
 public:
  enum class Result { kCommand, kNeedMore, kError };

  struct Limits {
    int64_t max_bulk_len = 512LL * 1024 * 1024;
    int64_t max_multibulk_len = 1024 * 1024;  // Redis: INT_MAX; far lower is kinder to memory
    bool authenticated = true;                // unauthenticated clients get tight limits
  };

  void Feed(const char* data, size_t len) { buffer_.append(data, len); }
  // Parses the next command into *argv. kError leaves the message in error().
  Result Next(std::vector<std::string>* argv, const Limits& limits);
  const std::string& error() const { return error_; }
  // Puts back the command the last Next() returned, so that the next Next() returns it again.
  // False, changing nothing, when that command arrived in pieces (its bytes may be gone) or was
  // put back already.
  bool Unread();
  // Bytes received but not yet parsed into a command (for the query buffer limit and INFO).
  size_t buffered() const { return buffer_.size() - pos_; }
  // The second argument (for most commands, the first key) of each of the next commands
  // received whole, up to `max` of them, appended to *out without parsing them: views into the
  // buffer, valid until the next Feed() or Next(). Stops at the first command that is not a
  // whole multibulk request of 2 to kPeekMaxArguments arguments (an inline one, one in progress
  // or incomplete, a malformed one: Next() reports the error when it gets there).
  static constexpr int64_t kPeekMaxArguments = 64;
  void PeekSecondArguments(size_t max, std::vector<std::string_view>* out) const;

 private:
  Result ParseInline(std::vector<std::string>* argv);
  Result ParseMultibulk(std::vector<std::string>* argv, const Limits& limits);
  // The common case in one pass: a whole request of short arguments already buffered, parsed
  // into *argv's own strings. False, with pos_ unchanged, for anything else, which
  // ParseMultibulk then parses from the same place.
  bool ParseWholeMultibulk(std::vector<std::string>* argv, const Limits& limits);
  Result Fail(const std::string& msg);
  void Compact();

  std::string buffer_;
  size_t pos_ = 0;
  // State of a multibulk request that is only partly received.
  int64_t multibulk_remaining_ = 0;
  int64_t bulk_len_ = -1;
  std::vector<std::string> pending_;
  std::string error_;
  // Where the command the last Next() returned began, if it was parsed in one piece.
  static constexpr size_t kNoStart = SIZE_MAX;
  size_t last_start_ = kNoStart;
};

}  // namespace basalt
