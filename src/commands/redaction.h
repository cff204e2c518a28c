// Redaction: the arguments Redis 7.2 never shows to MONITOR or keeps in the slow log, each
// replaced by "(redacted)": AUTH's, HELLO's AUTH username and password, MIGRATE's AUTH and
// AUTH2 credentials, ACL SETUSER's name and rules, and the values CONFIG SET gives requirepass,
// masterauth and masteruser.
#pragma once

#include <string>
#include <vector>

namespace basalt {

// Whether `argv` may hold such arguments: one cheap look at its name.
bool NeedsRedaction(const std::vector<std::string>& argv);
// `argv` with those arguments replaced.
std::vector<std::string> Redacted(const std::vector<std::string>& argv);

}  // namespace basalt
