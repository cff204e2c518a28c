// CheckpointSource: the RocksDB checkpoints a master ships to replicas that need a full sync.
//
// A checkpoint is a directory next to the data directory ("<dir>.checkpoint-N") holding hard
// links to the live SST and blob files plus copies of the small ones (MANIFEST, OPTIONS, the
// WAL tail): a consistent copy of the database that costs almost no disk and no time to make,
// and that stays valid while the master keeps writing. Replicas that ask while one is being
// shipped share it; the directory is removed when the last transfer using it ends.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "storage/engine.h"

namespace basalt {

struct CheckpointFiles {
  std::string dir;
  std::vector<std::pair<std::string, uint64_t>> files;  // name, size
  uint64_t total_bytes = 0;
};

// Makes a checkpoint of `engine`'s data in `dir`, which must not exist (its parent must): the
// memtables flushed, then hard links to the SST and blob files (copies when `dir` is on another
// file system) and copies of the small files. BACKUP uses it directly.
Status MakeCheckpoint(Engine* engine, const std::string& dir);

class CheckpointSource {
 public:
  explicit CheckpointSource(Engine* engine) : engine_(engine) {}

  // The checkpoint currently in use by another transfer, or a new one. Blocks (on a
  // replication thread, never a worker) while one is being made.
  StatusOr<std::shared_ptr<const CheckpointFiles>> Acquire();
  // Removes checkpoint directories a crash left behind. Call at start-up.
  void RemoveStale();
  uint64_t created() const;

 private:
  StatusOr<std::shared_ptr<const CheckpointFiles>> Create();

  Engine* engine_;
  mutable std::mutex mu_;
  std::weak_ptr<const CheckpointFiles> current_;
  uint64_t counter_ = 0;
};

}  // namespace basalt
