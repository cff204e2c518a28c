#include "storage/batch.h"

namespace basalt {

Batch::Batch(Engine* engine)
    : engine_(engine), batch_(rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/true) {}

rocksdb::Status Batch::Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value) {
  if (cf == ColumnFamily::kMetadata && !pending_metadata_.empty()) {
    auto it = pending_metadata_.find(key.ToString());
    if (it != pending_metadata_.end()) {
      if (!it->second) return rocksdb::Status::NotFound();
      *value = *it->second;
      return rocksdb::Status::OK();
    }
  }
  // Most commands read before they write anything: then there is nothing to layer, and the
  // batch's index lookup and merge handling are skipped.
  if (batch_.GetWriteBatch()->Count() == 0 ||
      (cf == ColumnFamily::kMetadata && !metadata_in_index_))
    return engine_->Get(cf, key, value);
  rocksdb::ReadOptions ro;
  return batch_.GetFromBatchAndDB(engine_->db(), ro, engine_->cf(cf), key, value);
}

void Batch::Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value) {
  if (cf == ColumnFamily::kMetadata) {
    pending_metadata_[key.ToString()] = value.ToString();
    return;
  }
  batch_.Put(engine_->cf(cf), key, value);
}

void Batch::Delete(ColumnFamily cf, const rocksdb::Slice& key) {
  if (cf == ColumnFamily::kMetadata) {
    pending_metadata_[key.ToString()] = std::nullopt;
    return;
  }
  batch_.Delete(engine_->cf(cf), key);
}

void Batch::Merge(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value) {
  if (cf == ColumnFamily::kMetadata) {
    FlushPendingMetadata();
    metadata_in_index_ = true;
  }
  batch_.Merge(engine_->cf(cf), key, value);
}

void Batch::DeleteRange(ColumnFamily cf, const rocksdb::Slice& begin, const rocksdb::Slice& end) {
  if (cf == ColumnFamily::kMetadata) {
    FlushPendingMetadata();
    metadata_in_index_ = true;
  }
  batch_.GetWriteBatch()->DeleteRange(engine_->cf(cf), begin, end);
}

void Batch::FlushPendingMetadata() {
  if (pending_metadata_.empty()) return;
  metadata_in_index_ = true;
  rocksdb::ColumnFamilyHandle* handle = engine_->cf(ColumnFamily::kMetadata);
  for (const auto& [key, value] : pending_metadata_) {
    if (value) {
      batch_.Put(handle, key, *value);
    } else {
      batch_.Delete(handle, key);
    }
  }
  pending_metadata_.clear();
}

rocksdb::Status Batch::AppendPendingMetadataUnindexed() {
  rocksdb::WriteBatch* raw = batch_.GetWriteBatch();
  rocksdb::ColumnFamilyHandle* handle = engine_->cf(ColumnFamily::kMetadata);
  rocksdb::Status s;
  for (const auto& [key, value] : pending_metadata_) {
    s = value ? raw->Put(handle, key, *value) : raw->Delete(handle, key);
    if (!s.ok()) break;
  }
  pending_metadata_.clear();
  return s;
}

std::unique_ptr<rocksdb::Iterator> Batch::NewIterator(ColumnFamily cf,
                                                      rocksdb::ReadOptions* options) {
  if (cf == ColumnFamily::kMetadata) FlushPendingMetadata();
  rocksdb::Iterator* base = engine_->db()->NewIterator(*options, engine_->cf(cf));
  // Nothing pending: the database iterator alone, without the base/delta merging on every
  // step (an LRANGE of 100 elements takes 100 of them). Like the merged iterator, it does not
  // see writes made to the batch after its creation.
  if (batch_.GetWriteBatch()->Count() == 0) return std::unique_ptr<rocksdb::Iterator>(base);
  return std::unique_ptr<rocksdb::Iterator>(
      batch_.NewIteratorWithBase(engine_->cf(cf), base, options));
}

rocksdb::Status Batch::Commit() {
  // Nothing reads the batch after this: the entries need no place in its index.
  rocksdb::Status s = AppendPendingMetadataUnindexed();
  if (s.ok() && !empty()) s = engine_->Write(batch_.GetWriteBatch());
  batch_.Clear();
  metadata_in_index_ = false;
  return s;
}

void Batch::Clear() {
  batch_.Clear();
  pending_metadata_.clear();
  metadata_in_index_ = false;
}

}  // namespace basalt
