// Versions: Basalt's own, and the Redis version whose behaviour it follows, which it reports
// wherever Redis reports its own (INFO's redis_version, HELLO, Lua's redis.REDIS_VERSION) so
// that clients that choose features by the server's version choose the ones Basalt serves.
#pragma once

namespace basalt {

inline constexpr const char* kServerVersion = "0.1.0";

inline constexpr const char* kRedisVersion = "7.2.6";
inline constexpr int kRedisVersionNum = 0x070206;  // (major << 16) | (minor << 8) | patch

}  // namespace basalt
