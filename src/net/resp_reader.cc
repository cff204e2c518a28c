#include "net/resp_reader.h"

#include <cctype>
#include <cstring>
#include <optional>
#include <string_view>

#include "common/strutil.h"

namespace basalt {

namespace {
constexpr size_t kInlineMax = 64 * 1024;  // Redis PROTO_INLINE_MAX_SIZE

// The number of a "*N" or "$N" line: ParseInt64's answer, without its sign, zero and overflow
// checks for the short digit strings clients send (up to 18 digits cannot overflow).
std::optional<int64_t> ParseLength(std::string_view s) {
  if (s.empty() || s.size() > 18 || s[0] < '1' || s[0] > '9') return ParseInt64(s);
  int64_t value = 0;
  for (char c : s) {
    auto digit = static_cast<unsigned>(static_cast<unsigned char>(c)) - '0';
    if (digit > 9) return std::nullopt;
    value = value * 10 + static_cast<int64_t>(digit);
  }
  return value;
}

}  // namespace

RespReader::Result RespReader::Fail(const std::string& msg) {
  error_ = "Protocol error: " + msg;
  return Result::kError;
}

void RespReader::Compact() {
  if (pos_ == 0) return;
  if (pos_ >= buffer_.size()) {
    // An idle connection must not keep the memory of its largest command for its whole life.
    constexpr size_t kKeptCapacity = 64 * 1024;
    if (buffer_.capacity() > kKeptCapacity) {
      std::string().swap(buffer_);
    } else {
      buffer_.clear();
    }
  } else if (pos_ > 4096 && pos_ * 2 > buffer_.size()) {
    buffer_.erase(0, pos_);
  } else {
    return;
  }
  pos_ = 0;
}

RespReader::Result RespReader::Next(std::vector<std::string>* argv, const Limits& limits) {
  last_start_ = kNoStart;
  while (true) {
    Compact();
    if (pos_ >= buffer_.size()) return Result::kNeedMore;
    const size_t start = multibulk_remaining_ > 0 ? kNoStart : pos_;
    Result r;
    if (multibulk_remaining_ > 0 || buffer_[pos_] == '*') {
      r = ParseMultibulk(argv, limits);
    } else {
      r = ParseInline(argv);
    }
    if (r == Result::kCommand && argv->empty()) continue;  // empty line or "*0": nothing to run
    if (r == Result::kCommand) last_start_ = start;
    return r;
  }
}

bool RespReader::Unread() {
  if (last_start_ == kNoStart) return false;
  pos_ = last_start_;
  last_start_ = kNoStart;
  return true;
}

RespReader::Result RespReader::ParseInline(std::vector<std::string>* argv) {
  const char* start = buffer_.data() + pos_;
  size_t avail = buffer_.size() - pos_;
  const char* nl = static_cast<const char*>(memchr(start, '\n', avail));
  if (nl == nullptr) {
    if (avail > kInlineMax) return Fail("too big inline request");
    return Result::kNeedMore;
  }
  size_t len = nl - start;
  std::string_view line(start, len);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  argv->clear();
  if (!SplitArgs(line, argv)) return Fail("unbalanced quotes in request");
  pos_ += len + 1;
  return Result::kCommand;
}

namespace {

// Reads a whole "<kind>N\r\n" line at *p, N of 1 to 9 digits without a leading zero (or "0"),
// into *n and moves *p past it; false, *p unchanged, for anything else. Stricter than the
// general path: what passes here parses the same there.
bool ShortLengthLine(char kind, const char* end, const char** p, int64_t* n) {
  const char* at = *p;
  if (end - at < 4 || at[0] != kind || at[1] < '0' || at[1] > '9') return false;
  const char* q = at + 1;
  int64_t value = 0;
  while (q < end && *q >= '0' && *q <= '9' && q - at <= 9) value = value * 10 + (*q++ - '0');
  if (at[1] == '0' && q - at > 2) return false;  // a leading zero
  if (end - q < 2 || q[0] != '\r' || q[1] != '\n') return false;
  *n = value;
  *p = q + 2;
  return true;
}

}  // namespace

bool RespReader::ParseWholeMultibulk(std::vector<std::string>* argv, const Limits& limits) {
  // Only what the general path would parse to the same arguments: short length lines
  // (ShortLengthLine), and counts and lengths within the limits that path checks. Longer arguments
  // gain nothing here and are not kept in argv's strings between commands.
  constexpr int64_t kMaxArguments = 64;
  constexpr int64_t kMaxArgumentBytes = 1024;
  const char* p = buffer_.data() + pos_;
  const char* const end = buffer_.data() + buffer_.size();
  auto length_line = [&](char kind, int64_t* n) { return ShortLengthLine(kind, end, &p, n); };
  int64_t count = 0;
  if (!length_line('*', &count) || count > kMaxArguments || count > limits.max_multibulk_len ||
      (!limits.authenticated && count > 10)) {
    return false;
  }
  argv->resize(static_cast<size_t>(count));
  for (std::string& arg : *argv) {
    int64_t len = 0;
    if (!length_line('$', &len) || len > kMaxArgumentBytes || len > limits.max_bulk_len ||
        end - p < len + 2) {
      return false;
    }
    if (arg.capacity() > static_cast<size_t>(kMaxArgumentBytes)) std::string().swap(arg);
    arg.assign(p, static_cast<size_t>(len));
    p += len + 2;  // the general path does not look at the two bytes after the data either
  }
  pos_ = static_cast<size_t>(p - buffer_.data());
  return true;
}

RespReader::Result RespReader::ParseMultibulk(std::vector<std::string>* argv,
                                              const Limits& limits) {
  if (multibulk_remaining_ == 0 && bulk_len_ < 0 && ParseWholeMultibulk(argv, limits)) {
    return Result::kCommand;
  }
  if (multibulk_remaining_ == 0) {
    const char* start = buffer_.data() + pos_;
    size_t avail = buffer_.size() - pos_;
    const char* cr = static_cast<const char*>(memchr(start, '\r', avail));
    if (cr == nullptr) {
      if (avail > kInlineMax) return Fail("too big mbulk count string");
      return Result::kNeedMore;
    }
    if (static_cast<size_t>(cr - start) + 1 >= avail) return Result::kNeedMore;  // need '\n'
    auto count = ParseLength(std::string_view(start + 1, cr - start - 1));
    if (!count || *count > limits.max_multibulk_len) return Fail("invalid multibulk length");
    if (!limits.authenticated && *count > 10) return Fail("unauthenticated multibulk length");
    pos_ += (cr - start) + 2;
    if (*count <= 0) {
      argv->clear();
      return Result::kCommand;  // "*0" and "*-1" are ignored, as in Redis
    }
    multibulk_remaining_ = *count;
    pending_.clear();
    pending_.reserve(static_cast<size_t>(std::min<int64_t>(*count, 1024)));
  }
  while (multibulk_remaining_ > 0) {
    if (bulk_len_ < 0) {
      const char* start = buffer_.data() + pos_;
      size_t avail = buffer_.size() - pos_;
      if (avail == 0) return Result::kNeedMore;
      const char* cr = static_cast<const char*>(memchr(start, '\r', avail));
      if (cr == nullptr) {
        if (avail > kInlineMax) return Fail("too big bulk count string");
        return Result::kNeedMore;
      }
      if (static_cast<size_t>(cr - start) + 1 >= avail) return Result::kNeedMore;
      if (start[0] != '$') {
        return Fail(std::string("expected '$', got '") + start[0] + "'");
      }
      auto len = ParseLength(std::string_view(start + 1, cr - start - 1));
      if (!len || *len < 0 || *len > limits.max_bulk_len) return Fail("invalid bulk length");
      if (!limits.authenticated && *len > 16384) return Fail("unauthenticated bulk length");
      pos_ += (cr - start) + 2;
      bulk_len_ = *len;
      // No room is reserved for the declared length: a client could declare 512 MB and send
      // nothing. The buffer grows geometrically as the bytes actually arrive.
    }
    if (buffer_.size() - pos_ < static_cast<size_t>(bulk_len_) + 2) return Result::kNeedMore;
    pending_.emplace_back(buffer_.data() + pos_, bulk_len_);
    pos_ += bulk_len_ + 2;
    bulk_len_ = -1;
    multibulk_remaining_--;
  }
  argv->swap(pending_);
  pending_.clear();
  return Result::kCommand;
}

void RespReader::PeekSecondArguments(size_t max, std::vector<std::string_view>* out) const {
  if (multibulk_remaining_ > 0) return;
  const char* const end = buffer_.data() + buffer_.size();
  const char* p = buffer_.data() + pos_;
  // The number on a "*N" or "$N" line at p, and p moved past the line; nullopt when the line is
  // not whole or not a short length (the hint gives up where parsing takes the general path).
  auto length_line = [&](char kind) -> std::optional<int64_t> {
    int64_t n = 0;
    if (!ShortLengthLine(kind, end, &p, &n)) return std::nullopt;
    return n;
  };
  for (size_t found = 0; found < max; found++) {
    std::optional<int64_t> count = length_line('*');
    if (!count || *count < 2 || *count > kPeekMaxArguments) return;
    std::string_view second;
    for (int64_t i = 0; i < *count; i++) {
      std::optional<int64_t> len = length_line('$');
      if (!len || *len < 0 || *len > end - p - 2) return;
      if (i == 1) second = std::string_view(p, static_cast<size_t>(*len));
      p += *len + 2;
    }
    out->push_back(second);
  }
}

}  // namespace basalt
