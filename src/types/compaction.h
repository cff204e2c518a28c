// RocksDB hooks that depend on Basalt's encodings: the compaction filters that reclaim expired
// keys and stale collection members, and the add operator behind the exact key counters.
#pragma once

#include <rocksdb/compaction_filter.h>
#include <rocksdb/merge_operator.h>

#include <atomic>
#include <memory>
#include <string_view>

#include "storage/engine.h"

namespace basalt {

// Counters are 8-byte big-endian signed integers; merge operands are deltas.
std::string EncodeCounter(int64_t v);
int64_t DecodeCounter(const rocksdb::Slice& s);
std::shared_ptr<rocksdb::MergeOperator> NewCounterMergeOperator();

// Drops metadata entries whose expiry has passed. Safe for the counts: the key's expiry index
// entry survives and the active expirer retires the key's count when it consumes that entry.
std::shared_ptr<rocksdb::CompactionFilterFactory> NewMetadataFilterFactory();
// Whether an encoded metadata value has an expiry that has passed (ColumnFamilyHooks).
bool MetadataExpiredNow(std::string_view value);

// Drops subkey/zset_score entries whose collection no longer exists, has expired, or has a
// different version (the collection was deleted or re-created), list elements outside their
// list's [head, tail) (popped or trimmed: types/list.h), and the `subkey` entries of sorted-set
// members that the set's pop marks say were popped (types/zset.h). Looks metadata up through the
// engine, which is attached once the database is open.
class SubkeyFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  void Attach(Engine* engine) { engine_ = engine; }
  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  // Flushes too: a queue's elements are often pushed and popped within one memtable's life, and
  // a flush that kept them would write every value to L0 for the next compaction to drop.
  bool ShouldFilterTableFileCreation(rocksdb::TableFileCreationReason reason) const override {
    return reason == rocksdb::TableFileCreationReason::kCompaction ||
           reason == rocksdb::TableFileCreationReason::kFlush;
  }
  const char* Name() const override { return "basalt.SubkeyFilterFactory"; }

 private:
  std::atomic<Engine*> engine_{nullptr};
};

}  // namespace basalt
