#include "common/strutil.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace basalt {

std::optional<uint64_t> ParseUnsigned(std::string_view s) {
  uint64_t v = 0;
  auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (err != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<int64_t> ParseInt64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return std::nullopt;
  }
  if (s[i] == '0') {
    // "0" alone is fine; "-0" and "01" are not canonical.
    if (s.size() == 1) return 0;
    return std::nullopt;
  }
  uint64_t v = 0;
  for (; i < s.size(); i++) {
    char c = s[i];
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - v);
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<long double> ParseLongDouble(std::string_view s, bool allow_inf) {
  if (s.empty() || s.size() >= 5120) return std::nullopt;
  if (isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  long double v = strtold(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return std::nullopt;
  if (isspace(static_cast<unsigned char>(buf.back()))) return std::nullopt;
  if (std::isnan(v)) return std::nullopt;
  if (std::isinf(v) && !allow_inf) return std::nullopt;
  // Overflow and underflow are errors (Redis string2ld); a literal "inf" is not.
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return std::nullopt;
  return v;
}

namespace {

// Clinger's fast path: a decimal of at most 15 digits, without exponent, is an integer below
// 2^53 and a power of ten up to 10^22, both exact doubles, so that one IEEE division rounds
// their quotient correctly, as strtod rounds the decimal. strtod, with the copy it needs for its
// terminating zero, takes 9.5% of a ZADD's instructions (docs/benchmarks.md, "Sorted sets").
// nullopt: not of that form (a sign other than '-', an exponent, more digits, anything else),
// left to strtod.
std::optional<double> ParseShortDecimal(std::string_view s) {
  static constexpr double kPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                            1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                            1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) i++;
  uint64_t mantissa = 0;
  int digits = 0;
  int fraction_digits = 0;
  bool point = false;
  for (; i < s.size(); i++) {
    const char c = s[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9' || ++digits > 15) return std::nullopt;
    mantissa = mantissa * 10 + static_cast<uint64_t>(c - '0');
    if (point) fraction_digits++;
  }
  if (digits == 0) return std::nullopt;
  const double value = static_cast<double>(mantissa) / kPowersOfTen[fraction_digits];
  return negative ? -value : value;
}

}  // namespace

std::optional<double> ParseDouble(std::string_view s, bool allow_inf) {
  if (std::optional<double> v = ParseShortDecimal(s)) return v;
  if (s.empty() || s.size() >= 5120) return std::nullopt;
  if (isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  std::string buf(s);
  char* end = nullptr;
  errno = 0;
  double v = strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return std::nullopt;
  if (std::isnan(v)) return std::nullopt;
  if (std::isinf(v) && !allow_inf) return std::nullopt;
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return std::nullopt;  // Redis string2d
  return v;
}

std::optional<int64_t> ParseMemory(std::string_view s) {
  std::string lower = ToLower(s);
  int64_t mul = 1;
  static const struct {
    const char* suffix;
    int64_t mul;
  } kUnits[] = {{"kb", 1024}, {"mb", 1024 * 1024}, {"gb", 1024LL * 1024 * 1024},
                {"k", 1000},  {"m", 1000 * 1000},  {"g", 1000LL * 1000 * 1000},
                {"b", 1}};
  std::string_view digits = lower;
  for (const auto& unit : kUnits) {
    size_t n = strlen(unit.suffix);
    if (digits.size() > n && digits.substr(digits.size() - n) == unit.suffix) {
      digits.remove_suffix(n);
      mul = unit.mul;
      break;
    }
  }
  auto v = ParseInt64(digits);
  if (!v || *v < 0) return std::nullopt;
  if (*v > INT64_MAX / mul) return std::nullopt;
  return *v * mul;
}

std::string FormatLongDouble(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[5600];
  int len = snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return "0";
  if (strchr(buf, '.') != nullptr) {
    char* p = buf + len - 1;
    while (*p == '0') {
      p--;
      len--;
    }
    if (*p == '.') len--;
  }
  if (len == 2 && buf[0] == '-' && buf[1] == '0') return "0";
  return std::string(buf, len);
}

std::string FormatDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Integral values below 1e16 print as their integer digits under "%.17g" (-0 keeps its sign),
  // and most scores are such: the integer formatting is a fraction of the cost.
  if (v == std::trunc(v) && std::fabs(v) < 1e16 && !(v == 0 && std::signbit(v))) {
    return std::to_string(static_cast<int64_t>(v));
  }
  // The same text as snprintf's "%.17g" (the standard defines it so), at a quarter of the cost:
  // glibc formats through multi-precision arithmetic, 4.5% of an unpipelined ZPOPMIN's
  // instructions (docs/benchmarks.md, "Per-command bookkeeping").
  char buf[128];
  auto [end, error] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 17);
  if (error != std::errc()) return "0";  // not reached: 17 significant digits fit in 128 bytes
  return std::string(buf, end);
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = AsciiLower(c);
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

namespace {

// Matches `c` against the character class at *p, which points at its '['; leaves *p at the
// class's closing ']' (or the pattern's last character when the class is unterminated, which
// Redis treats as closed by the end of the pattern).
bool MatchClass(const char** pattern, size_t* pattern_len, char c, bool nocase) {
  auto fold = [nocase](char ch) {
    return nocase ? static_cast<char>(tolower(static_cast<unsigned char>(ch))) : ch;
  };
  const char* p = *pattern + 1;
  size_t plen = *pattern_len - 1;
  bool negate = plen && p[0] == '^';
  if (negate) {
    p++;
    plen--;
  }
  bool match = false;
  while (plen) {
    if (p[0] == '\\' && plen >= 2) {
      p++;
      plen--;
      if (p[0] == c) match = true;  // Redis compares escaped class members exactly
    } else if (p[0] == ']') {
      break;
    } else if (plen >= 3 && p[1] == '-') {
      // Ordered before folding, as Redis does: with nocase "[Z-a]" matches nothing.
      char start = p[0], end = p[2];
      if (start > end) std::swap(start, end);
      start = fold(start);
      end = fold(end);
      if (fold(c) >= start && fold(c) <= end) match = true;
      p += 2;
      plen -= 2;
    } else if (fold(p[0]) == fold(c)) {
      match = true;
    }
    p++;
    plen--;
  }
  if (plen == 0) {
    p--;
    plen++;
  }
  *pattern = p;
  *pattern_len = plen;
  return negate ? !match : match;
}

// Recursive glob matcher with a nesting limit so that hostile patterns such as
// "*a*a*a*...*b" cannot take exponential time: Redis caps the recursion the same way.
bool GlobMatchImpl(const char* p, size_t plen, const char* s, size_t slen, bool nocase, int nesting,
                   bool* skip_longer) {
  if (nesting > 1000) return false;
  auto fold = [nocase](char c) {
    return nocase ? static_cast<char>(tolower(static_cast<unsigned char>(c))) : c;
  };
  while (plen && slen) {
    switch (p[0]) {
      case '*':
        while (plen > 1 && p[1] == '*') {
          p++;
          plen--;
        }
        if (plen == 1) return true;
        while (slen) {
          if (GlobMatchImpl(p + 1, plen - 1, s, slen, nocase, nesting + 1, skip_longer))
            return true;
          if (*skip_longer) return false;
          s++;
          slen--;
        }
        *skip_longer = true;
        return false;
      case '?':
        s++;
        slen--;
        break;
      case '[':
        if (!MatchClass(&p, &plen, s[0], nocase)) return false;
        s++;
        slen--;
        break;
      case '\\':
        if (plen >= 2) {
          p++;
          plen--;
        }
        [[fallthrough]];
      default:
        if (fold(p[0]) != fold(s[0])) return false;
        s++;
        slen--;
        break;
    }
    p++;
    plen--;
    if (slen == 0) {
      while (plen && *p == '*') {
        p++;
        plen--;
      }
      break;
    }
  }
  return plen == 0 && slen == 0;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase) {
  bool skip_longer = false;
  return GlobMatchImpl(pattern.data(), pattern.size(), text.data(), text.size(), nocase, 0,
                       &skip_longer);
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool SplitArgs(std::string_view line, std::vector<std::string>* args) {
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

std::string QuoteArg(std::string_view s) {
  bool plain = !s.empty();
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (isspace(c) || !isprint(c) || ch == '"' || ch == '\'' || ch == '\\') plain = false;
  }
  if (plain) return std::string(s);
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        if (isprint(c)) {
          out.push_back(ch);
        } else {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        }
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace basalt
