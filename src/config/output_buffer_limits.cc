#include "config/output_buffer_limits.h"

#include <cctype>
#include <optional>
#include <vector>

#include "common/strutil.h"

namespace basalt {

namespace {

constexpr const char* kClassNames[kClientClassCount] = {"normal", "slave", "pubsub"};

// Redis parses these with strtoull/strtoll, so leading zeros are fine ("01"); signs and
// fractions are not.
std::optional<int64_t> ParseCount(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// A size with redis.conf units ("32mb", "1k", "512").
std::optional<int64_t> ParseSize(std::string_view s) {
  std::string lower = ToLower(s);
  static const struct {
    const char* suffix;
    int64_t mul;
  } kUnits[] = {{"kb", 1024}, {"mb", 1024 * 1024}, {"gb", 1024LL * 1024 * 1024},
                {"k", 1000},  {"m", 1000 * 1000},  {"g", 1000LL * 1000 * 1000},
                {"b", 1}};
  std::string_view digits = lower;
  int64_t mul = 1;
  for (const auto& unit : kUnits) {
    std::string_view suffix = unit.suffix;
    if (digits.size() > suffix.size() && digits.substr(digits.size() - suffix.size()) == suffix) {
      digits.remove_suffix(suffix.size());
      mul = unit.mul;
      break;
    }
  }
  auto v = ParseCount(digits);
  if (!v || *v > INT64_MAX / mul) return std::nullopt;
  return *v * mul;
}

std::optional<int> ClassByName(std::string_view name) {
  if (EqualsIgnoreCase(name, "normal")) return static_cast<int>(ClientClass::kNormal);
  if (EqualsIgnoreCase(name, "slave") || EqualsIgnoreCase(name, "replica"))
    return static_cast<int>(ClientClass::kReplica);
  if (EqualsIgnoreCase(name, "pubsub")) return static_cast<int>(ClientClass::kPubsub);
  return std::nullopt;  // "master" too: Redis refuses a limit for the master link
}

std::vector<std::string_view> Words(std::string_view input) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < input.size()) {
    while (i < input.size() && isspace(static_cast<unsigned char>(input[i]))) i++;
    size_t start = i;
    while (i < input.size() && !isspace(static_cast<unsigned char>(input[i]))) i++;
    if (i > start) words.push_back(input.substr(start, i - start));
  }
  return words;
}

}  // namespace

Status ParseOutputBufferLimits(std::string_view input, OutputBufferLimits* limits) {
  std::vector<std::string_view> words = Words(input);
  if (words.size() % 4 != 0)
    return Status::InvalidArgument("Wrong number of arguments in buffer limit configuration.");
  OutputBufferLimits result = *limits;
  for (size_t i = 0; i < words.size(); i += 4) {
    auto cls = ClassByName(words[i]);
    if (!cls)
      return Status::InvalidArgument(
          "Invalid client class specified in buffer limit configuration.");
    auto hard = ParseSize(words[i + 1]);
    auto soft = ParseSize(words[i + 2]);
    auto seconds = ParseCount(words[i + 3]);
    if (!hard || !soft || !seconds)
      return Status::InvalidArgument(
          "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    result[*cls] = OutputBufferLimit{*hard, *soft, *seconds};
  }
  *limits = result;
  return Status::OK();
}

std::string FormatOutputBufferLimits(const OutputBufferLimits& limits) {
  std::string out;
  for (int i = 0; i < kClientClassCount; i++) {
    if (!out.empty()) out.push_back(' ');
    out.append(kClassNames[i]);
    for (int64_t v : {limits[i].hard_bytes, limits[i].soft_bytes, limits[i].soft_seconds}) {
      out.push_back(' ');
      out.append(std::to_string(v));
    }
  }
  return out;
}

}  // namespace basalt
