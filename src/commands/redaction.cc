#include "commands/redaction.h"

#include "common/strutil.h"

namespace basalt {

namespace {

constexpr const char* kRedacted = "(redacted)";

// Redis's SENSITIVE_CONFIG keys, whose CONFIG SET values are secrets.
bool IsSensitiveConfig(std::string_view name) {
  return EqualsIgnoreCase(name, "requirepass") || EqualsIgnoreCase(name, "masterauth") ||
         EqualsIgnoreCase(name, "masteruser");
}

}  // namespace

std::vector<std::string> Redacted(const std::vector<std::string>& argv) {
  std::vector<std::string> out = argv;
  if (EqualsIgnoreCase(argv[0], "auth")) {
    for (size_t i = 1; i < out.size(); i++) out[i] = kRedacted;
  } else if (EqualsIgnoreCase(argv[0], "migrate")) {
    // As Redis parses MIGRATE's options: from the sixth argument up to KEYS.
    for (size_t i = 6; i < out.size() && !EqualsIgnoreCase(out[i], "keys"); i++) {
      const size_t secrets = EqualsIgnoreCase(out[i], "auth")    ? 1
                             : EqualsIgnoreCase(out[i], "auth2") ? 2
                                                                 : 0;
      for (size_t k = 1; k <= secrets && i + 1 < out.size(); k++) out[++i] = kRedacted;
    }
  } else if (EqualsIgnoreCase(argv[0], "acl") && out.size() > 2 &&
             EqualsIgnoreCase(out[1], "setuser")) {
    for (size_t i = 2; i < out.size(); i++) out[i] = kRedacted;  // the name and every rule
  } else if (EqualsIgnoreCase(argv[0], "config") && out.size() > 2 &&
             EqualsIgnoreCase(out[1], "set")) {
    for (size_t i = 2; i + 1 < out.size(); i += 2) {
      if (IsSensitiveConfig(out[i])) out[i + 1] = kRedacted;
    }
  } else if (EqualsIgnoreCase(argv[0], "hello")) {
    // As Redis parses it: the protocol version, then options; SETNAME's value is no option.
    for (size_t i = 2; i < out.size(); i++) {
      if (EqualsIgnoreCase(out[i], "setname")) {
        i++;
      } else if (EqualsIgnoreCase(out[i], "auth") && i + 2 < out.size()) {
        out[i + 1] = kRedacted;
        out[i + 2] = kRedacted;
        i += 2;
      }
    }
  }
  return out;
}

bool NeedsRedaction(const std::vector<std::string>& argv) {
  return EqualsIgnoreCase(argv[0], "auth") || EqualsIgnoreCase(argv[0], "hello") ||
         EqualsIgnoreCase(argv[0], "migrate") || EqualsIgnoreCase(argv[0], "acl") ||
         EqualsIgnoreCase(argv[0], "config");
}

}  // namespace basalt
