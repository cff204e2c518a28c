// client-output-buffer-limit: Redis's per-class limits on what a client may have pending in its
// output (replies and pub/sub messages not yet written to its socket).
//
// The value is a list of "<class> <hard> <soft> <soft-seconds>" groups, e.g.
// "normal 0 0 0 slave 256mb 64mb 60 pubsub 32mb 8mb 60". A CONFIG SET or a config file line that
// names only some classes leaves the others as they were, as in Redis. A client is disconnected
// when its pending output reaches the hard limit, or stays at or above the soft limit for more
// than soft-seconds; 0 disables a limit.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace basalt {

enum class ClientClass : int { kNormal = 0, kReplica = 1, kPubsub = 2 };
constexpr int kClientClassCount = 3;

struct OutputBufferLimit {
  int64_t hard_bytes = 0;
  int64_t soft_bytes = 0;
  int64_t soft_seconds = 0;
  bool enabled() const { return hard_bytes > 0 || soft_bytes > 0; }
};

using OutputBufferLimits = std::array<OutputBufferLimit, kClientClassCount>;

// Applies `input` on top of `limits`. On error `limits` is unchanged and the message is
// Redis's text ("Wrong number of arguments in buffer limit configuration.", ...).
Status ParseOutputBufferLimits(std::string_view input, OutputBufferLimits* limits);

// The canonical form CONFIG GET shows: every class, sizes in bytes.
std::string FormatOutputBufferLimits(const OutputBufferLimits& limits);

}  // namespace basalt
