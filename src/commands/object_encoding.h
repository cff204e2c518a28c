// ObjectEncoding: the name OBJECT ENCODING and DEBUG OBJECT give a value; ObjectRefcount: the
// count OBJECT REFCOUNT and DEBUG OBJECT give it.
//
// Basalt stores every collection the same way on disk, so there is no encoding to report as
// such. Tools and test suites read the name to learn what Redis 7.2 would hold, and tune it
// through the thresholds (hash-max-listpack-entries, set-max-intset-entries, ...), so the name
// is the encoding Redis 7.2 gives a value of this content under the current thresholds:
// strings int/embstr/raw; hashes listpack/hashtable; sets intset/listpack/hashtable; sorted sets
// listpack/skiplist; lists listpack/quicklist; streams stream. Redis keeps a converted collection
// converted when it shrinks again (except lists); this name follows the content only.
#pragma once

#include <string>
#include <string_view>

#include "commands/command_table.h"
#include "common/status.h"
#include "config/config.h"
#include "types/keyspace.h"

namespace basalt {

// Reads at most the thresholds' worth of members (a collection over them is the large encoding
// without a look at its members).
StatusOr<std::string> ObjectEncoding(CommandContext& c, int db, std::string_view key,
                                     const KeyState& state);

// Redis 7.2 holds the integers 0-9999 as shared objects, whose count is INT_MAX, unless a
// maxmemory limit with an LRU or LFU policy needs a clock in every value; any other value is
// its key's alone: 1. Basalt shares nothing, but clients and tests read the count to learn
// whether a value is shared.
int64_t ObjectRefcount(const Config& config, const KeyState& state);

}  // namespace basalt
