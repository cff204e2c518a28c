// SstIngestSink: takes the batches of a bulk load in place of the database, sorts their entries
// into SST files per column family, and ingests the files at the end (IngestExternalFiles),
// so that the load never passes through the memtables or the write-ahead log.
//
// Only for a load into a fresh data directory by a process that serves nobody (basalt-server
// --import): nothing of it is visible before Ingest(), reads do not see it, and the in-memory
// state a commit normally updates (the metadata cache) is not. Puts are buffered; entries of a
// key put twice keep the last value. Merges (the key counters) are kept in one batch written
// after the ingestion. Any other operation (a delete) is refused: a fresh load has none.
//
// Buffered entries become a run each time they pass the run size. A run's files (one per column
// family that has entries) are sorted and written on background threads, one per family, while
// the caller goes on filling the next run; only one run is written at a time, so at most two
// are in memory. The files of each run are ingested together (atomically over the families),
// run after run, the runs landing in level 0 when their ranges overlap. Abandon() (or the
// destructor without Ingest()) waits for the run being written and deletes the files.
#pragma once

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "storage/engine.h"

namespace basalt {

class SstIngestSink {
 public:
  // Buffered bytes that make one run: the sort and the files stay this size.
  static constexpr size_t kRunBytes = 128ull << 20;

  // Files go to `staging_dir`, created here.
  SstIngestSink(Engine* engine, std::string staging_dir, size_t run_bytes = kRunBytes);
  ~SstIngestSink();

  // Takes the batch's puts and merges; starts writing a run once enough is buffered, and
  // reports the failure of the run written before, if it failed.
  rocksdb::Status Take(rocksdb::WriteBatch* batch);
  // One put, buffered; the next Take() starts the run it may complete.
  void Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value);
  // Writes the last run, ingests every run, then writes the merges.
  rocksdb::Status Ingest();
  void Abandon();

 private:
  struct Entry {
    // The key's first 16 bytes, big-endian, zero-padded: most comparisons of the sort end here
    // without touching the arena.
    uint64_t prefix[2];
    uint64_t offset;  // of the key in arena; the value follows it
    uint32_t key_size, value_size;
  };
  struct Run {
    std::string arena;
    std::vector<Entry> entries[kColumnFamilyCount];
    // The file of each family, empty if the family had no entries.
    std::vector<std::string> files;
    size_t index = 0;  // in the order of the runs
  };
  class Collector;
  // Hands the buffered run to a background writer, after the previous one has finished.
  rocksdb::Status StartRun();
  // Waits for the run being written; its status.
  rocksdb::Status FinishWriting();
  // Sorts one family's entries of `run` and writes them to `path`.
  rocksdb::Status WriteFile(Run& run, int cf, const std::string& path) const;

  Engine* engine_;
  std::string dir_;
  size_t run_bytes_;
  std::shared_ptr<Run> filling_;
  // The run handed over last, and its writer's status if it may still be running. Once written,
  // it is filled again: its memory is already the process's, so filling it faults in no pages.
  std::shared_ptr<Run> written_;
  std::future<rocksdb::Status> writing_;
  rocksdb::WriteBatch merges_;
  // files_[run][cf]: the run's file for the family, empty if it had no entries.
  std::vector<std::vector<std::string>> files_;
  bool done_ = false;
};

}  // namespace basalt
