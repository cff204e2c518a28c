// String parsing and formatting with Redis's exact rules.
//
// Redis is strict about numbers ("+1", " 1", "01" are not integers) and has its own float
// formatting; clients and test suites depend on both, so these helpers follow Redis's util.c
// behaviour rather than the C library's looser defaults.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/hash.h"

namespace basalt {

// A signed 64-bit integer in canonical decimal form (Redis string2ll).
std::optional<int64_t> ParseInt64(std::string_view s);
// An unsigned 64-bit integer: decimal digits only (replication offsets and sequences).
std::optional<uint64_t> ParseUnsigned(std::string_view s);

// A finite or infinite double as Redis accepts it for scores and INCRBYFLOAT: no spaces, no
// NaN. `allow_inf` lets "inf"/"-inf"/"+inf" through.
std::optional<long double> ParseLongDouble(std::string_view s, bool allow_inf = false);
std::optional<double> ParseDouble(std::string_view s, bool allow_inf = true);

// A size such as "512", "64kb", "1mb", "2gb" (redis.conf units, case-insensitive).
std::optional<int64_t> ParseMemory(std::string_view s);

// INCRBYFLOAT's reply format: up to 17 fractional digits with trailing zeros removed.
std::string FormatLongDouble(long double v);
// Scores and other doubles: "%.17g" style, "inf"/"-inf".
std::string FormatDouble(double v);

// The C locale's tolower(), which the server runs in, without a call per character.
inline char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
}
std::string ToLower(std::string_view s);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// A hash for maps keyed by std::string that are looked up by std::string_view (with
// std::equal_to<>), so that a lookup builds no string.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return HashBytes(s); }
};

// Splits a line into arguments like Redis's sdssplitargs (inline commands, config files):
// whitespace separated, "double quotes" with \n \r \t \b \a \\ \" \xHH escapes, 'single
// quotes' with \' only; a closing quote must end the argument. False for unbalanced quotes.
bool SplitArgs(std::string_view line, std::vector<std::string>* args);
// The inverse for one argument (like sdscatrepr): bare when that parses back as one argument,
// else double-quoted with escapes, so SplitArgs(QuoteArg(s)) yields exactly s.
std::string QuoteArg(std::string_view s);

// Redis glob matching: '*', '?', '[...]' with ranges and '^' negation, '\' escapes.
bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase = false);

}  // namespace basalt
