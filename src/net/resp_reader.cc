#include "net/resp_reader.h"

#include <cctype>
#include <cstring>

#include "common/strutil.h"

namespace basalt {

namespace {
constexpr size_t kInlineMax = 64 * 1024;  // Redis PROTO_INLINE_MAX_SIZE

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool SplitInlineArgs(std::string_view line, std::vector<std::string>* args) {
  size_t i = 0, n = line.size();
  while (true) {
    while (i < n && isspace(static_cast<unsigned char>(line[i]))) i++;
    if (i >= n) return true;
    std::string current;
    bool in_double = false, in_single = false, done = false;
    while (!done) {
      if (in_double) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && HexValue(line[i + 2]) >= 0 &&
            HexValue(line[i + 3]) >= 0) {
          current.push_back(static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3])));
          i += 3;
        } else if (line[i] == '\\' && i + 1 < n) {
          i++;
          char c = line[i];
          switch (c) {
            case 'n':
              c = '\n';
              break;
            case 'r':
              c = '\r';
              break;
            case 't':
              c = '\t';
              break;
            case 'b':
              c = '\b';
              break;
            case 'a':
              c = '\a';
              break;
            default:
              break;
          }
          current.push_back(c);
        } else if (line[i] == '"') {
          // A closing quote must be followed by a space or the end.
          if (i + 1 < n && !isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          done = true;
        } else {
          current.push_back(line[i]);
        }
      } else if (in_single) {
        if (i >= n) return false;
        if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
          i++;
          current.push_back('\'');
        } else if (line[i] == '\'') {
          if (i + 1 < n && !isspace(static_cast<unsigned char>(line[i + 1]))) return false;
          done = true;
        } else {
          current.push_back(line[i]);
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        char c = line[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\0') {
          done = true;
        } else if (c == '"') {
          in_double = true;
        } else if (c == '\'') {
          in_single = true;
        } else {
          current.push_back(c);
        }
      }
      if (i < n) i++;
    }
    args->push_back(std::move(current));
  }
}

RespReader::Result RespReader::Fail(const std::string& msg) {
  error_ = "Protocol error: " + msg;
  return Result::kError;
}

void RespReader::Compact() {
  if (pos_ == 0) return;
  if (pos_ >= buffer_.size()) {
    buffer_.clear();
  } else if (pos_ > 4096 && pos_ * 2 > buffer_.size()) {
    buffer_.erase(0, pos_);
  } else {
    return;
  }
  pos_ = 0;
}

RespReader::Result RespReader::Next(std::vector<std::string>* argv, const Limits& limits) {
  while (true) {
    Compact();
    if (pos_ >= buffer_.size()) return Result::kNeedMore;
    Result r;
    if (multibulk_remaining_ > 0 || buffer_[pos_] == '*') {
      r = ParseMultibulk(argv, limits);
    } else {
      r = ParseInline(argv);
    }
    if (r == Result::kCommand && argv->empty()) continue;  // empty line or "*0": nothing to run
    return r;
  }
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
  if (!SplitInlineArgs(line, argv)) return Fail("unbalanced quotes in request");
  pos_ += len + 1;
  return Result::kCommand;
}

RespReader::Result RespReader::ParseMultibulk(std::vector<std::string>* argv,
                                              const Limits& limits) {
  if (multibulk_remaining_ == 0) {
    const char* start = buffer_.data() + pos_;
    size_t avail = buffer_.size() - pos_;
    const char* cr = static_cast<const char*>(memchr(start, '\r', avail));
    if (cr == nullptr) {
      if (avail > kInlineMax) return Fail("too big mbulk count string");
      return Result::kNeedMore;
    }
    if (static_cast<size_t>(cr - start) + 1 >= avail) return Result::kNeedMore;  // need '\n'
    auto count = ParseInt64(std::string_view(start + 1, cr - start - 1));
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
      auto len = ParseInt64(std::string_view(start + 1, cr - start - 1));
      if (!len || *len < 0 || *len > limits.max_bulk_len) return Fail("invalid bulk length");
      if (!limits.authenticated && *len > 16384) return Fail("unauthenticated bulk length");
      pos_ += (cr - start) + 2;
      bulk_len_ = *len;
      // Large arguments: make room once instead of growing the buffer chunk by chunk.
      if (bulk_len_ >= 32 * 1024) buffer_.reserve(pos_ + bulk_len_ + 2);
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

}  // namespace basalt
