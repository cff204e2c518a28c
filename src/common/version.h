// The server's own version, for replies that name it (LOLWUT).
#pragma once

namespace basalt {

inline constexpr const char* kServerVersion = "0.1.0";

}  // namespace basalt
