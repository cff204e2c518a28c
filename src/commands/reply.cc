#include "commands/reply.h"

#include <cstring>

#include "common/strutil.h"
#include "stats/error_stats.h"

namespace basalt {

void Reply::SetLimit(size_t limit) {
  start_ = out_->size();
  limit_ = limit;
  overflowed_ = false;
}

void Reply::Overflow() {
  overflowed_ = true;
  out_->resize(start_);
}

namespace {

// Writes "<type><n>\r\n" so that it ends at `end`; returns where it starts. Every bulk string
// and aggregate starts with one of these: digits by hand, not snprintf.
char* FormatHeader(char type, int64_t n, char* end) {
  char* p = end;
  *--p = '\n';
  *--p = '\r';
  uint64_t v = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  if (n < 0) *--p = '-';
  *--p = type;
  return p;
}

}  // namespace

void Reply::DropOverLimit() {
  overflowed_ = true;
  out_->resize(start_);
  out_->shrink_to_fit();
}

void Reply::Raw(std::string_view s) {
  if (overflowed_) return;
  out_->append(s);
  CheckLimit();
}

void Reply::Header(char type, int64_t n) {
  if (overflowed_) return;
  char buf[24];
  char* end = buf + sizeof(buf);
  char* p = FormatHeader(type, n, end);
  out_->append(p, static_cast<size_t>(end - p));
  CheckLimit();
}

void Reply::Simple(std::string_view s) {
  if (overflowed_) return;
  out_->push_back('+');
  out_->append(s);
  out_->append("\r\n");
  CheckLimit();
}

void Reply::SimpleLines(std::span<const std::string> lines) {
  Array(lines.size());
  for (const auto& line : lines) Simple(line);
}

void Reply::Error(std::string_view msg) {
  if (tentative_ != nullptr) {
    tentative_->error_replies.emplace_back(msg);
  } else {
    RecordErrorReply(msg);
  }
  ErrorNotCounted(msg);
}

void Reply::ErrorNotCounted(std::string_view msg) {
  NoteFailedCall();
  out_->push_back('-');
  // An error line must not break the framing: newlines become spaces, as Redis does.
  for (char c : msg) out_->push_back(c == '\r' || c == '\n' ? ' ' : c);
  out_->append("\r\n");
}

void Reply::Integer(int64_t v) {
  Header(':', v);
}

void Reply::Bulk(std::string_view s) {
  if (overflowed_) return;
  // Short values (most replies) are framed in one buffer and appended once.
  char buf[64];
  char* header_end = buf + 24;
  char* p = FormatHeader('$', static_cast<int64_t>(s.size()), header_end);
  if (s.size() <= sizeof(buf) - 24 - 2) {
    std::memcpy(header_end, s.data(), s.size());
    std::memcpy(header_end + s.size(), "\r\n", 2);
    out_->append(p, static_cast<size_t>(header_end - p) + s.size() + 2);
  } else {
    out_->append(p, static_cast<size_t>(header_end - p));
    out_->append(s);
    out_->append("\r\n", 2);
  }
  CheckLimit();
}

void Reply::Null() {
  out_->append(resp_ >= 3 ? "_\r\n" : "$-1\r\n");
}
void Reply::NullArray() {
  out_->append(resp_ >= 3 ? "_\r\n" : "*-1\r\n");
}
void Reply::Array(size_t n) {
  Header('*', static_cast<int64_t>(n));
}
void Reply::Map(size_t n) {
  if (resp_ >= 3) {
    Header('%', static_cast<int64_t>(n));
  } else {
    Header('*', static_cast<int64_t>(2 * n));
  }
}
void Reply::Set(size_t n) {
  Header(resp_ >= 3 ? '~' : '*', static_cast<int64_t>(n));
}
void Reply::Push(size_t n) {
  Header(resp_ >= 3 ? '>' : '*', static_cast<int64_t>(n));
}

void Reply::Double(double v) {
  std::string s = FormatDouble(v);
  if (resp_ >= 3) {
    out_->push_back(',');
    out_->append(s);
    out_->append("\r\n");
  } else {
    Bulk(s);
  }
}

void Reply::Bool(bool v) {
  if (resp_ >= 3) {
    out_->append(v ? "#t\r\n" : "#f\r\n");
  } else {
    Integer(v ? 1 : 0);
  }
}

void Reply::Verbatim(std::string_view s) {
  if (resp_ >= 3) {
    Header('=', static_cast<int64_t>(s.size() + 4));
    out_->append("txt:");
    out_->append(s);
    out_->append("\r\n");
  } else {
    Bulk(s);
  }
}

void Reply::BulkArray(const std::string* items, size_t n) {
  Array(n);
  for (size_t i = 0; i < n && !overflowed_; i++) Bulk(items[i]);
}

}  // namespace basalt
