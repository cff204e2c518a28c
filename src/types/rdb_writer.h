// RDB files: the whole key space as a Redis RDB file, what SAVE/BGSAVE write to
// `dir`/`dbfilename` and what SYNC/PSYNC send to redis-cli --rdb and Redis replicas.
//
// The file is RDB version 10, which Redis 7.0 and later load: "REDIS0010", the aux fields
// redis-ver, redis-bits, ctime, used-mem and aof-base, then for each database that has keys a
// SELECTDB and a RESIZEDB, and each live key as an optional EXPIRETIME_MS, its object type, its
// name and its object (the encoding DUMP uses, types/rdb_value.h); then each function library
// as a FUNCTION2 opcode and its code, the EOF opcode and the CRC-64 of everything before it.
//
// The key space is read as of one moment: a RocksDB snapshot taken at the start (with the
// logical->physical database map of that moment), read by a Context of its own, so writes go
// on meanwhile and none of them shows in the file. A writer on a thread of its own takes the
// keyspace lock shared while it takes the snapshot (so a transaction running then is in the
// file whole or not at all), and holds none afterwards; one inside a command already holds it.
// A SWAPDB during the write, or a replica's full sync replacing the data, makes it fail
// cleanly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "types/keyspace.h"

namespace basalt {

struct RdbFileStats {
  int64_t keys = 0;    // keys written
  uint64_t bytes = 0;  // size of the file
};

// Where the file's bytes go, in order, in chunks of some tens of KB; an error stops the writing
// and is returned by WriteRdb.
using RdbSink = std::function<Status(std::string_view chunk)>;

// Writes the key space to `sink` as one RDB file. `lock` (see above): false for a caller that
// holds the keyspace lock already. `stats` may be nullptr. `at_snapshot`, if given (with `lock`),
// runs as the snapshot is taken, with the keyspace lock held exclusively instead of shared, so
// that no unit of work is between its commands and its commit: a Redis replica attaching its
// command stream (commands/replica_stream.h) then gets exactly the commits the file misses.
Status WriteRdb(Keyspace* keyspace, bool lock, const RdbSink& sink, RdbFileStats* stats,
                const std::function<void()>& at_snapshot = nullptr);

// WriteRdb into `path`, atomically: into a temporary file beside it, which is fsynced, renamed
// over `path`, and the directory fsynced. On error `path` is untouched and the temporary file
// removed. `may_replace`, if given, is called right before the rename; when it returns false
// the file is dropped and the result is Status::Busy.
Status SaveRdbFile(Keyspace* keyspace, bool lock, const std::string& path, RdbFileStats* stats,
                   const std::function<bool()>& may_replace = nullptr);

}  // namespace basalt
