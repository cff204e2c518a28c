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
// Buffered entries become one SST file per column family each time they pass kRunBytes; the
// files of each run are ingested together (atomically over the families), run after run, the
// runs landing in level 0 when their ranges overlap. Abandon() (or the destructor without
// Ingest()) deletes the files.
#pragma once

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "storage/engine.h"

namespace basalt {

class SstIngestSink {
 public:
  // Files go to `staging_dir`, created here.
  SstIngestSink(Engine* engine, std::string staging_dir);
  ~SstIngestSink();

  rocksdb::Status Take(rocksdb::WriteBatch* batch);
  // Writes the last run, ingests every run, then writes the merges.
  rocksdb::Status Ingest();
  void Abandon();

 private:
  struct Entry {
    // The key's first 16 bytes, big-endian, zero-padded: most comparisons of the sort end here
    // without touching the arena.
    uint64_t prefix[2];
    uint64_t offset;  // of the key in arena_; the value follows it
    uint32_t key_size, value_size;
  };
  class Collector;
  rocksdb::Status WriteRun();

  Engine* engine_;
  std::string dir_;
  std::string arena_;
  std::vector<Entry> entries_[kColumnFamilyCount];
  rocksdb::WriteBatch merges_;
  // files_[run][cf]: the run's file for the family, empty if it had no entries.
  std::vector<std::vector<std::string>> files_;
  bool done_ = false;
};

}  // namespace basalt
