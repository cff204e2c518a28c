#include "types/compaction.h"

#include <optional>

#include "common/clock.h"
#include "common/coding.h"
#include "types/metadata.h"

namespace basalt {

std::string EncodeCounter(int64_t v) {
  std::string out;
  PutFixed64(&out, static_cast<uint64_t>(v));
  return out;
}

int64_t DecodeCounter(const rocksdb::Slice& s) {
  if (s.size() != 8) return 0;
  return static_cast<int64_t>(DecodeFixed64(s.data()));
}

namespace {

class CounterMergeOperator : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* new_value, rocksdb::Logger*) const override {
    int64_t base = existing ? DecodeCounter(*existing) : 0;
    *new_value = EncodeCounter(base + DecodeCounter(value));
    return true;
  }
  const char* Name() const override { return "basalt.CounterAdd"; }
};

class MetadataFilter : public rocksdb::CompactionFilter {
 public:
  bool Filter(int, const rocksdb::Slice&, const rocksdb::Slice& value, std::string*,
              bool*) const override {
    RedisType type;
    int64_t expire_ms;
    if (!Metadata::DecodeHeader(std::string_view(value.data(), value.size()), &type, &expire_ms))
      return false;
    return expire_ms != 0 && expire_ms <= now_ms_;
  }
  const char* Name() const override { return "basalt.MetadataFilter"; }

 private:
  int64_t now_ms_ = UnixMillis();
};

class MetadataFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context&) override {
    return std::make_unique<MetadataFilter>();
  }
  const char* Name() const override { return "basalt.MetadataFilterFactory"; }
};

class SubkeyFilter : public rocksdb::CompactionFilter {
 public:
  explicit SubkeyFilter(Engine* engine) : engine_(engine) {}

  bool Filter(int, const rocksdb::Slice& key, const rocksdb::Slice&, std::string*,
              bool*) const override {
    return Stale(key);
  }

  // The decision needs only the key, so an entry whose value is in a blob file is judged
  // without reading the blob (RocksDB would otherwise read and checksum every such value the
  // compaction passes, to call Filter with it).
  Decision FilterBlobByKey(int, const rocksdb::Slice& key, std::string*,
                           std::string*) const override {
    return Stale(key) ? Decision::kRemove : Decision::kKeep;
  }

  const char* Name() const override { return "basalt.SubkeyFilter"; }

 private:
  // True if the entry belongs to no live incarnation of its key (deleted, expired, or
  // overwritten: the metadata's version differs).
  bool Stale(const rocksdb::Slice& key) const {
    std::string_view in(key.data(), key.size());
    uint8_t db;
    std::string_view user_key;
    uint64_t version;
    if (!GetFixed8(&in, &db) || !GetLengthPrefixed(&in, &user_key) || !GetFixed64(&in, &version))
      return false;  // not ours to judge
    std::string meta_key = MetadataKey(db, user_key);
    if (meta_key != cached_key_) {
      cached_key_ = meta_key;
      std::optional<uint64_t> alive =
          AliveVersion(engine_->Peek(ColumnFamily::kMetadata, meta_key, &value_));
      // The metadata cache may not yet have applied a write that RocksDB has published (a new
      // incarnation, whose entries could be in this compaction if its writer was held up long
      // enough): a removal is decided on what RocksDB itself holds.
      if (alive && *alive != version) {
        alive = AliveVersion(engine_->ReadStored(ColumnFamily::kMetadata, meta_key, &value_));
      }
      if (!alive) {
        cached_key_.clear();
        return false;  // unsure: keep
      }
      cached_alive_version_ = *alive;
    }
    return cached_alive_version_ != version;
  }

  // The version of the live incarnation the read found (0: none), or nullopt if it failed.
  std::optional<uint64_t> AliveVersion(const rocksdb::Status& read) const {
    if (!read.ok() && !read.IsNotFound()) return std::nullopt;
    Metadata meta;
    if (read.ok() && meta.Decode(value_) && meta.HasSubkeys() && !meta.ExpiredAt(now_ms_)) {
      return meta.version;
    }
    return 0;
  }

  Engine* engine_;
  int64_t now_ms_ = UnixMillis();
  mutable std::string cached_key_;
  mutable uint64_t cached_alive_version_ = 0;
  mutable std::string value_;  // the last metadata value read
};

}  // namespace

bool MetadataExpiredNow(std::string_view value) {
  RedisType type;
  int64_t expire_ms;
  return Metadata::DecodeHeader(value, &type, &expire_ms) && expire_ms != 0 &&
         expire_ms <= UnixMillis();
}

std::shared_ptr<rocksdb::MergeOperator> NewCounterMergeOperator() {
  return std::make_shared<CounterMergeOperator>();
}

std::shared_ptr<rocksdb::CompactionFilterFactory> NewMetadataFilterFactory() {
  return std::make_shared<MetadataFilterFactory>();
}

std::unique_ptr<rocksdb::CompactionFilter> SubkeyFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context&) {
  Engine* engine = engine_.load();
  if (engine == nullptr) return nullptr;  // during open: keep everything
  return std::make_unique<SubkeyFilter>(engine);
}

}  // namespace basalt
