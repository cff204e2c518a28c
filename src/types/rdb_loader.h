// Importing an RDB file, as Redis 6.0-7.2 write them (RDB versions 9 to 11), into an empty
// keyspace: `basalt-server --import FILE` and the IMPORT RDB command.
//
// The file is read piece by piece through a window of a few megabytes (grown only while one
// value needs more), so its size does not bound memory; each value is parsed with
// ParseRdbObject and written with WriteRdbValue, many keys to a commit. The file's opcodes are
// all understood: SELECTDB (a database beyond `databases` is an error), RESIZEDB and AUX (read
// and passed over), EXPIRETIME and EXPIRETIME_MS (keys already expired are skipped, as a Redis
// master skips them), IDLE and FREQ (the key's access record, types/key_access.h), FUNCTION2
// (the libraries are handed to the caller at the end), MODULE_AUX and module values of
// RDB_TYPE_MODULE_2 (walked over opcode by opcode; a skipped key is logged by name), then EOF
// and the CRC-64 of the whole file (0 when the writer had rdbchecksum off).
//
// The file is untrusted. Anything malformed (a bad header, a length beyond the file, a value
// ParseRdbObject refuses, a duplicate key, a wrong checksum, a truncated file) is an error
// naming what and where, and the keyspace is emptied again: as the import requires an empty
// keyspace, nothing of a failed import stays. Progress (keys, bytes, rate, time left) goes to
// the log every few seconds.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "types/keyspace.h"

namespace basalt {

struct RdbImportOptions {
  // The keys go into sorted SST files that are ingested at the end (storage/sst_ingest.h),
  // bypassing the memtables and the write-ahead log: for a fresh data directory of a process
  // that serves nobody yet. Nothing is in the database until the whole file has been read and
  // checked. A key whose 64-bit hash (keyed per process) equals an earlier key's is reported as
  // a duplicate, as the earlier key cannot be read back.
  bool ingest_sst_files = false;
  // Installs the file's function libraries (their code, in file order) into `ctx`, committed
  // with the last keys; an error fails the import. Unset: a file with libraries is refused.
  std::function<Status(Context& ctx, const std::vector<std::string>& libraries)> install_functions;
};

struct RdbImportStats {
  int version = 0;
  std::array<uint64_t, kMaxDatabases> keys{};  // keys written, per logical database
  uint64_t total_keys = 0;
  uint64_t expired_skipped = 0;  // keys whose expiry had passed
  uint64_t module_keys_skipped = 0;
  uint64_t functions = 0;
  uint64_t bytes = 0;  // the file's size
  double seconds = 0;
};

// Imports `path` into `keyspace`, which must hold no keys. The caller holds the keyspace's
// exclusive lock, or no command runs yet.
StatusOr<RdbImportStats> ImportRdbFile(Keyspace* keyspace, const std::string& path,
                                       const RdbImportOptions& options);

}  // namespace basalt
