// Blob garbage collection driven by garbage, not by age.
//
// RocksDB's integrated blob GC, once enabled, relocates the live blobs of the oldest blob files
// (`blob_garbage_collection_age_cutoff`) whenever a compaction passes their keys, however little
// garbage those files hold. Values that are overwritten whole need none of that: a blob file
// whose blobs are all garbage is dropped as it is, and relocating a value shortly before its
// overwrite only writes it twice (docs/benchmarks.md, "Storage upkeep": a 128 KiB overwrite
// writes 1.77-2.08x its data with GC always on, 1.00x with it off). The governor keeps GC off in
// each column family with blob files until the garbage RocksDB has accounted there exceeds a share
// of its blob bytes, and turns it off again once compactions have brought the share below half of
// that.
#pragma once

#include <rocksdb/db.h>

#include <array>
#include <atomic>
#include <cstdint>

namespace basalt {

// Whether blob GC should run given `garbage_bytes` of `file_bytes` in blob files and whether it
// runs now: from above `ratio` until below `ratio / 2`; always when `ratio` is 0.
bool WantBlobGc(bool running, uint64_t garbage_bytes, uint64_t file_bytes, double ratio);

class BlobGcGovernor {
 public:
  static constexpr int kMaxColumnFamilies = 16;

  // Whether GC starts enabled in a column family (`enable_blob_garbage_collection` at open).
  static bool InitiallyOn(bool allowed, double ratio) { return allowed && ratio == 0; }

  // Records the state RocksDB was opened with (see InitiallyOn).
  void Reset(bool allowed, double ratio) {
    for (auto& r : running_) r.store(InitiallyOn(allowed, ratio), std::memory_order_relaxed);
  }

  // Measures the garbage of column family `index` and switches its GC (SetOptions) when
  // `allowed` (rocksdb.enable-blob-gc) and `ratio` (rocksdb.blob-gc-garbage-ratio) say so.
  // Logs each switch.
  rocksdb::Status Govern(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, int index, bool allowed,
                         double ratio);
  // Safe from any thread (INFO reads it while the engine's background thread governs).
  bool running(int index) const { return running_[index].load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<bool>, kMaxColumnFamilies> running_{};
};

}  // namespace basalt
