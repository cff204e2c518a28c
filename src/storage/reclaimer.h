// Reclaimer: compacts, in the background, the files of one column family that hold mostly
// entries a compaction filter will drop, once a writer has said which key range went dead.
//
// Pops and trims of a list only move its ends (types/list.h), and a deleted collection leaves its
// members under a version nobody reads (types/metadata.h); they stay in their files until a
// compaction happens to reach them. RocksDB's own triggers never pick those files for that
// reason: nothing was written over their keys, so no tombstone counts against them, and no later
// write overlaps them either (a queue's indexes only grow; a version is never reused; a sorted
// set's pops delete only its score entries). A list whose end moved far, a large collection's
// ended incarnation, or a large sorted set halved by pops notes its dead range here; a pass
// compacts each file that lies in a noted range or has nine tenths of its bytes in their union:
// in place in levels 1 and up, into the base level from level 0 (where a drained queue's files
// stay once writes stop).
//
// A range is a hint of where to look, never a reason to drop anything: which entries go is still
// the compaction filter's decision, made from the current metadata. A stale or wrong range costs
// a compaction, not data. A pass runs kPassInterval after the first range noted since the last
// pass, with every range noted meanwhile: by then the writes that noted them have committed (a
// pass before that would judge by the old metadata and drop nothing), and many notes cost one
// look at the files.
#pragma once

#include <rocksdb/db.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace basalt {

class Reclaimer {
 public:
  Reclaimer() = default;
  ~Reclaimer() { Stop(); }
  Reclaimer(const Reclaimer&) = delete;
  Reclaimer& operator=(const Reclaimer&) = delete;

  // Starts the background thread over `cf` of `db`; both must outlive Stop().
  void Start(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf);
  // Ends the thread after the pass it may be in; ranges not looked at yet are forgotten.
  void Stop();
  // [begin, end) of the column family holds only dead entries, or will once the caller's write
  // commits. Any thread; dropped unless started.
  void Note(std::string begin, std::string end);
  // Files compacted by passes since the process started.
  uint64_t files_compacted() const { return files_compacted_.load(std::memory_order_relaxed); }
  // Passes finished since the process started.
  uint64_t passes() const { return passes_.load(std::memory_order_acquire); }

  static constexpr std::chrono::milliseconds kPassInterval{1000};
  // A file is compacted once this many tenths of its bytes are dead: at half, the files of a
  // queue being popped would be rewritten again and again as its head goes through them (a third
  // more CPU per pipelined LPOP, docs/benchmarks.md, "Storage upkeep"); at nine tenths a file is
  // rewritten at a tenth of its size each time.
  static constexpr uint64_t kDeadTenths = 9;
  // Ranges kept between passes; beyond it, notes are dropped until the next pass.
  static constexpr size_t kMaxRanges = 4096;

 private:
  using Ranges = std::map<std::string, std::string>;  // begin -> end, as noted

  void Run();
  void Pass(const Ranges& ranges);
  // Whether `file` lies in the ranges or has kDeadTenths of its bytes in them.
  bool MostlyDead(const rocksdb::SstFileMetaData& file, const Ranges& ranges) const;

  rocksdb::DB* db_ = nullptr;
  rocksdb::ColumnFamilyHandle* cf_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool running_ = false;  // guarded by mu_
  Ranges pending_;        // guarded by mu_
  std::atomic<uint64_t> files_compacted_{0};
  std::atomic<uint64_t> passes_{0};
};

}  // namespace basalt
