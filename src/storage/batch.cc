#include "storage/batch.h"

namespace basalt {

Batch::Batch(Engine* engine)
    : engine_(engine), batch_(rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/true) {}

rocksdb::Status Batch::Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value) {
  // Most commands read before they write anything: then there is nothing to layer, and the
  // batch's index lookup and merge handling are skipped.
  if (empty()) return engine_->Get(cf, key, value);
  rocksdb::ReadOptions ro;
  return batch_.GetFromBatchAndDB(engine_->db(), ro, engine_->cf(cf), key, value);
}

void Batch::Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value) {
  batch_.Put(engine_->cf(cf), key, value);
}

void Batch::Delete(ColumnFamily cf, const rocksdb::Slice& key) {
  batch_.Delete(engine_->cf(cf), key);
}

void Batch::Merge(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value) {
  batch_.Merge(engine_->cf(cf), key, value);
}

void Batch::DeleteRange(ColumnFamily cf, const rocksdb::Slice& begin, const rocksdb::Slice& end) {
  batch_.GetWriteBatch()->DeleteRange(engine_->cf(cf), begin, end);
}

std::unique_ptr<rocksdb::Iterator> Batch::NewIterator(ColumnFamily cf,
                                                      rocksdb::ReadOptions* options) {
  rocksdb::Iterator* base = engine_->db()->NewIterator(*options, engine_->cf(cf));
  // Nothing pending: the database iterator alone, without the base/delta merging on every
  // step (an LRANGE of 100 elements takes 100 of them). Like the merged iterator, it does not
  // see writes made to the batch after its creation.
  if (empty()) return std::unique_ptr<rocksdb::Iterator>(base);
  return std::unique_ptr<rocksdb::Iterator>(
      batch_.NewIteratorWithBase(engine_->cf(cf), base, options));
}

rocksdb::Status Batch::Commit() {
  if (empty()) return rocksdb::Status::OK();
  rocksdb::Status s = engine_->Write(batch_.GetWriteBatch());
  batch_.Clear();
  return s;
}

}  // namespace basalt
