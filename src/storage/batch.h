// Batch: the pending writes of one command (or one whole MULTI/EXEC) with read-your-writes.
//
// Reads see the batch's own writes layered over the database, so a transaction's later commands
// observe its earlier ones; nothing is visible to other clients until Commit() writes the whole
// batch atomically. DeleteRange is not indexed by RocksDB's WriteBatchWithIndex, so reads in
// the same batch after a DeleteRange still see older data (documented in docs/encoding.md).
#pragma once

#include <rocksdb/utilities/write_batch_with_index.h>

#include <memory>
#include <string>

#include "storage/engine.h"

namespace basalt {

class Batch {
 public:
  explicit Batch(Engine* engine);

  rocksdb::Status Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value);
  void Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value);
  void Delete(ColumnFamily cf, const rocksdb::Slice& key);
  void Merge(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value);
  void DeleteRange(ColumnFamily cf, const rocksdb::Slice& begin, const rocksdb::Slice& end);
  // An iterator over the database with this batch's writes applied on top. `options` (and the
  // bounds it points to) must outlive the iterator, and writes to the batch after its creation
  // are not seen by it (RocksDB forbids changing a batch under its iterators).
  std::unique_ptr<rocksdb::Iterator> NewIterator(ColumnFamily cf, rocksdb::ReadOptions* options);

  bool empty() { return batch_.GetWriteBatch()->Count() == 0; }
  rocksdb::Status Commit();
  void Clear() { batch_.Clear(); }
  Engine* engine() const { return engine_; }

 private:
  Engine* engine_;
  rocksdb::WriteBatchWithIndex batch_;
};

}  // namespace basalt
