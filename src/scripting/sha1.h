// SHA-1 (FIPS 180-4), for script ids (EVALSHA) and redis.sha1hex(). Not for security.
#pragma once

#include <string>
#include <string_view>

namespace basalt {

// The 40-character lower-case hex digest of `data`.
std::string Sha1Hex(std::string_view data);

}  // namespace basalt
