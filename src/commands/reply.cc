#include "commands/reply.h"

#include <cstdio>

#include "common/strutil.h"

namespace basalt {

void Reply::Header(char type, int64_t n) {
  char buf[32];
  int len = snprintf(buf, sizeof(buf), "%c%lld\r\n", type, static_cast<long long>(n));
  out_->append(buf, len);
}

void Reply::Simple(std::string_view s) {
  out_->push_back('+');
  out_->append(s);
  out_->append("\r\n");
}

void Reply::Error(std::string_view msg) {
  out_->push_back('-');
  // An error line must not break the framing: newlines become spaces, as Redis does.
  for (char c : msg) out_->push_back(c == '\r' || c == '\n' ? ' ' : c);
  out_->append("\r\n");
}

void Reply::Integer(int64_t v) {
  Header(':', v);
}

void Reply::Bulk(std::string_view s) {
  Header('$', static_cast<int64_t>(s.size()));
  out_->append(s);
  out_->append("\r\n");
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
  for (size_t i = 0; i < n; i++) Bulk(items[i]);
}

}  // namespace basalt
