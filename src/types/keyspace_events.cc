#include "types/keyspace_events.h"

namespace basalt {

const char* const kInvalidNotifyClassesError =
    "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";

namespace {

struct ClassLetter {
  char letter;
  uint32_t bits;
};

// In the order CONFIG GET lists them after "A" (or in place of it).
constexpr ClassLetter kTypeLetters[] = {
    {'g', notify::kGeneric}, {'$', notify::kString},  {'l', notify::kList},
    {'s', notify::kSet},     {'h', notify::kHash},    {'z', notify::kZset},
    {'x', notify::kExpired}, {'e', notify::kEvicted}, {'t', notify::kStream},
    {'d', notify::kModule},  {'n', notify::kNew},
};
constexpr ClassLetter kTrailingLetters[] = {
    {'K', notify::kKeyspace},
    {'E', notify::kKeyevent},
    {'m', notify::kKeyMiss},
};

}  // namespace

std::optional<uint32_t> ParseNotifyClasses(std::string_view letters) {
  uint32_t classes = 0;
  for (char c : letters) {
    if (c == 'A') {
      classes |= notify::kAll;
      continue;
    }
    bool known = false;
    for (const ClassLetter& l : kTypeLetters) {
      if (l.letter == c) {
        classes |= l.bits;
        known = true;
      }
    }
    for (const ClassLetter& l : kTrailingLetters) {
      if (l.letter == c) {
        classes |= l.bits;
        known = true;
      }
    }
    if (!known) return std::nullopt;
  }
  return classes;
}

std::string FormatNotifyClasses(uint32_t classes) {
  std::string out;
  if ((classes & notify::kAll) == notify::kAll) {
    out.push_back('A');
  } else {
    for (const ClassLetter& l : kTypeLetters) {
      if (classes & l.bits) out.push_back(l.letter);
    }
  }
  for (const ClassLetter& l : kTrailingLetters) {
    if (classes & l.bits) out.push_back(l.letter);
  }
  return out;
}

}  // namespace basalt
