#include "types/compaction.h"

#include <optional>
#include <string>
#include <utility>

#include "common/clock.h"
#include "common/coding.h"
#include "types/metadata.h"
#include "types/zset.h"

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

  bool Filter(int, const rocksdb::Slice& key, const rocksdb::Slice& value, std::string*,
              bool*) const override {
    return Stale(key, std::string_view(value.data(), value.size()));
  }

  // The decision needs only the key, so an entry whose value is in a blob file is judged
  // without reading the blob (RocksDB would otherwise read and checksum every such value the
  // compaction passes, to call Filter with it).
  Decision FilterBlobByKey(int, const rocksdb::Slice& key, std::string*,
                           std::string*) const override {
    return Stale(key, std::nullopt) ? Decision::kRemove : Decision::kKeep;
  }

  const char* Name() const override { return "basalt.SubkeyFilter"; }

 private:
  // What a compaction needs of a collection's metadata: its live incarnation's version (0:
  // none), for a list the indexes its elements occupy, and for a sorted set popped from its
  // whole metadata (the ends' marks, lists and reaches).
  struct Alive {
    uint64_t version = 0;
    bool list = false;
    uint64_t list_head = 0;
    uint64_t list_tail = 0;
    std::optional<Metadata> popped_zset;
    bool stored = false;  // read from RocksDB itself rather than the metadata cache
  };

  // True if the entry belongs to no live incarnation of its key (deleted, expired, or
  // overwritten: the metadata's version differs), or is a list element outside [head, tail): a
  // pop only moves the list's ends (types/list.h). An index outside the range, once, stays dead
  // for good, since whatever makes it live again writes the element anew; so metadata read at
  // any time after the entry was written may decide it. The same holds for a sorted set's
  // member the metadata says was popped, judged by its `value` (its score) when there is one.
  bool Stale(const rocksdb::Slice& key, std::optional<std::string_view> value) const {
    std::string_view in(key.data(), key.size());
    uint8_t db;
    std::string_view user_key;
    uint64_t version;
    if (!GetFixed8(&in, &db) || !GetLengthPrefixed(&in, &user_key) || !GetFixed64(&in, &version))
      return false;  // not ours to judge
    // Consecutive entries mostly belong to one collection: its metadata key is built only when
    // the collection changes.
    if (!IsCached(db, user_key) && !Learn(MetadataKey(db, user_key), false)) {
      return false;  // unsure: keep
    }
    if (!DeadBy(cached_, version, in, value)) return false;
    if (cached_.stored) return true;
    // The metadata cache may not yet have applied a write that RocksDB has published (a new
    // incarnation, or a push to a list, whose entries could be here if its writer was held up
    // long enough): a removal is decided on what RocksDB itself holds.
    return Learn(cached_key_, true) && DeadBy(cached_, version, in, value);
  }

  // Whether cached_ holds the metadata of `user_key` in `db`.
  bool IsCached(uint8_t db, std::string_view user_key) const {
    uint8_t cached_db;
    std::string_view cached_user_key;
    return !cached_key_.empty() && ParseMetadataKey(cached_key_, &cached_db, &cached_user_key) &&
           cached_db == db && cached_user_key == user_key;
  }

  // Reads the metadata at `meta_key` into cached_, from the metadata cache or, if `stored`, from
  // RocksDB itself; false, with nothing cached, if the read failed.
  bool Learn(std::string meta_key, bool stored) const {
    cached_key_.clear();
    rocksdb::Status read = stored ? engine_->ReadStored(ColumnFamily::kMetadata, meta_key, &value_)
                                  : engine_->Peek(ColumnFamily::kMetadata, meta_key, &value_);
    if (!read.ok() && !read.IsNotFound()) return false;
    Metadata meta;
    cached_ = Alive{};
    cached_.stored = stored;
    if (read.ok() && meta.Decode(value_) && meta.HasSubkeys() && !meta.ExpiredAt(now_ms_)) {
      cached_.version = meta.version;
      cached_.list = meta.type == RedisType::kList;
      cached_.list_head = meta.list_head;
      cached_.list_tail = meta.list_tail;
      if (meta.type == RedisType::kZset && meta.zset.Marked()) {
        cached_.popped_zset = std::move(meta);
      }
    }
    cached_key_ = std::move(meta_key);
    return true;
  }

  // Whether metadata `alive` rules out the entry of incarnation `version` whose key ends in
  // `member` (and, for a sorted set's member, holds `value`).
  static bool DeadBy(const Alive& alive, uint64_t version, std::string_view member,
                     std::optional<std::string_view> value) {
    if (alive.version != version) return true;
    // Only a sorted set's `subkey` entries hold a score (its `zset_score` entries hold nothing).
    if (alive.popped_zset.has_value() && value.has_value() && value->size() == kScoreBytes) {
      std::string entry = std::string(*value) + std::string(member);
      return JudgeZsetSubkeyEntry(*alive.popped_zset, entry) == ZsetSubkeyEntry::kDead;
    }
    if (!alive.list) return false;
    uint64_t index;
    if (member.size() != 8 || !GetFixed64(&member, &index)) return false;
    return index < alive.list_head || index >= alive.list_tail;
  }

  Engine* engine_;
  int64_t now_ms_ = UnixMillis();
  mutable std::string cached_key_;  // the metadata key cached_ is of (empty: none)
  mutable Alive cached_;
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
