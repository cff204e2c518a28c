#include "storage/batch.h"

#include <glog/logging.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/skiplist_memtable.h"
#include "storage/sst_ingest.h"

namespace basalt {
namespace {

uint32_t BitOf(ColumnFamily cf) {
  return 1u << static_cast<int>(cf);
}

// The Puts and Deletes of one column family in a write batch, in order. The other kinds of
// entry are passed over (RocksDB's default handler refuses them), whatever their family: the
// family collected never has them while its writes are unindexed, since a merge or range on it
// indexes its writes first.
class FamilyWrites : public rocksdb::WriteBatch::Handler {
 public:
  explicit FamilyWrites(uint32_t cf_id) : cf_id_(cf_id) {}
  rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    if (cf == cf_id_) writes.push_back({key.ToString(), value.ToString()});
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    if (cf == cf_id_) writes.push_back({key.ToString(), std::nullopt});
    return rocksdb::Status::OK();
  }
  rocksdb::Status SingleDeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
    return DeleteCF(cf, key);
  }
  rocksdb::Status MergeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteRangeCF(uint32_t, const rocksdb::Slice&, const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> writes;

 private:
  uint32_t cf_id_;
};

// A database iterator that leaves out the keys in `deleted`: what an iterator over a batch
// whose only writes to the family are those deletions reads, without indexing them.
template <typename KeySet>
class DeletionSkippingIterator : public rocksdb::Iterator {
 public:
  DeletionSkippingIterator(rocksdb::Iterator* base, const KeySet* deleted)
      : base_(base), deleted_(deleted) {}
  bool Valid() const override { return base_->Valid(); }
  void SeekToFirst() override {
    base_->SeekToFirst();
    SkipForward();
  }
  void SeekToLast() override {
    base_->SeekToLast();
    SkipBackward();
  }
  void Seek(const rocksdb::Slice& target) override {
    base_->Seek(target);
    SkipForward();
  }
  void SeekForPrev(const rocksdb::Slice& target) override {
    base_->SeekForPrev(target);
    SkipBackward();
  }
  void Next() override {
    base_->Next();
    SkipForward();
  }
  void Prev() override {
    base_->Prev();
    SkipBackward();
  }
  rocksdb::Slice key() const override { return base_->key(); }
  rocksdb::Slice value() const override { return base_->value(); }
  rocksdb::Status status() const override { return base_->status(); }

 private:
  bool Deleted() const {
    rocksdb::Slice key = base_->key();
    return deleted_->find(std::string_view(key.data(), key.size())) != deleted_->end();
  }
  void SkipForward() {
    while (base_->Valid() && Deleted()) base_->Next();
  }
  void SkipBackward() {
    while (base_->Valid() && Deleted()) base_->Prev();
  }
  std::unique_ptr<rocksdb::Iterator> base_;
  const KeySet* deleted_;
};

// A database iterator that notes, when it stops, whether it stopped because a read limited to
// memory needed the disk: callers take an invalid iterator for the end of the range, and the
// batch must learn that its reads were incomplete even when they do not check the status.
class MissNotingIterator : public rocksdb::Iterator {
 public:
  MissNotingIterator(std::unique_ptr<rocksdb::Iterator> base, bool* missed)
      : base_(std::move(base)), missed_(missed) {}

  bool Valid() const override {
    if (base_->Valid()) return true;
    if (base_->status().IsIncomplete()) *missed_ = true;
    return false;
  }
  void SeekToFirst() override { base_->SeekToFirst(); }
  void SeekToLast() override { base_->SeekToLast(); }
  void Seek(const rocksdb::Slice& target) override { base_->Seek(target); }
  void SeekForPrev(const rocksdb::Slice& target) override { base_->SeekForPrev(target); }
  void Next() override { base_->Next(); }
  void Prev() override { base_->Prev(); }
  rocksdb::Slice key() const override { return base_->key(); }
  rocksdb::Slice value() const override { return base_->value(); }
  rocksdb::Status status() const override {
    rocksdb::Status s = base_->status();
    if (s.IsIncomplete()) *missed_ = true;
    return s;
  }

 private:
  std::unique_ptr<rocksdb::Iterator> base_;
  bool* missed_;
};

}  // namespace

Batch::Batch(Engine* engine) : engine_(engine) {}

std::unique_ptr<rocksdb::Iterator> Batch::DatabaseIterator(ColumnFamily cf,
                                                           rocksdb::ReadOptions* options) const {
  options->read_tier = tier_;
  options->snapshot = snapshot_;
  std::unique_ptr<rocksdb::Iterator> it = engine_->NewIterator(cf, *options);
  if (tier_ != rocksdb::kBlockCacheTier) return it;
  return std::make_unique<MissNotingIterator>(std::move(it), &missed_memory_);
}

rocksdb::WriteBatchWithIndex& Batch::Writes() {
  if (!batch_) batch_.emplace(rocksdb::BytewiseComparator(), 0, /*overwrite_key=*/true);
  return *batch_;
}

rocksdb::Status Batch::Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value) {
  if (cf == ColumnFamily::kMetadata && !pending_metadata_.empty()) {
    auto it = pending_metadata_.find(std::string_view(key.data(), key.size()));
    if (it != pending_metadata_.end()) {
      if (!it->second) return rocksdb::Status::NotFound();
      *value = *it->second;
      return rocksdb::Status::OK();
    }
  }
  if (cf == ColumnFamily::kSubkey) {
    // The bucket's cache miss overlaps the checks below and RocksDB's work before it reads the
    // memtable.
    if (const SkipListMemTableFactory* memtables = engine_->memtables(cf)) {
      memtables->PrefetchLookup(key);
    }
    // A read of a member needs the unindexed writes only if it may be one of them (SADD's and
    // HSET's existence checks of a write group are reads of other members).
    bool may_be_written = unindexed_subkeys_.Contains(SubkeyHash(key));
    // Values read ahead are the database's: they answer for keys the batch has not written.
    if (!may_be_written && WritesUnindexed(cf)) {
      if (const std::string* found = FindReadAhead(key)) {
        *value = *found;
        return rocksdb::Status::OK();
      }
    }
    if (may_be_written) IndexWritesOf(cf);
  } else {
    IndexWritesOf(cf);
  }
  // Most commands read before they write anything: then there is nothing to layer, and the
  // batch's index lookup and merge handling are skipped, as they are for a family none of whose
  // writes are in the index.
  if (WriteCount() == 0 || (cf == ColumnFamily::kMetadata && !metadata_in_index_) ||
      WritesUnindexed(cf))
    return NoteMiss(engine_->Get(cf, key, value, snapshot_, tier_));
  rocksdb::ReadOptions ro;
  ro.read_tier = tier_;
  ro.snapshot = snapshot_;
  Engine::PrepareRead(cf, &ro);
  return NoteMiss(batch_->GetFromBatchAndDB(engine_->db(), ro, engine_->cf(cf), key, value));
}

void Batch::Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value) {
  if (cf == ColumnFamily::kZsetScore) NoteScoreIndexWrite(&key, true);
  if (cf == ColumnFamily::kMetadata) return SetPendingMetadata(key, &value);
  if (sink_ != nullptr) return sink_->Put(cf, key, value);
  if (WritesUnindexed(cf)) {
    NoteUnindexed(cf, key, true);
    Writes().GetWriteBatch()->Put(engine_->cf(cf), key, value);
    return;
  }
  Writes().Put(engine_->cf(cf), key, value);
}

void Batch::Delete(ColumnFamily cf, const rocksdb::Slice& key) {
  if (cf == ColumnFamily::kZsetScore) NoteScoreIndexWrite(&key, false);
  if (cf == ColumnFamily::kMetadata) return SetPendingMetadata(key, nullptr);
  if (WritesUnindexed(cf)) {
    NoteUnindexed(cf, key, false);
    Writes().GetWriteBatch()->Delete(engine_->cf(cf), key);
    return;
  }
  Writes().Delete(engine_->cf(cf), key);
}

void Batch::SetPendingMetadata(const rocksdb::Slice& key, const rocksdb::Slice* value) {
  metadata_epoch_++;
  std::string_view k(key.data(), key.size());
  auto it = pending_metadata_.find(k);
  if (it == pending_metadata_.end()) it = pending_metadata_.emplace(k, std::nullopt).first;
  if (value == nullptr) {
    it->second.reset();
  } else if (it->second) {
    it->second->assign(value->data(), value->size());
  } else {
    it->second.emplace(value->data(), value->size());
  }
}

void Batch::Merge(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value) {
  PrepareOrderedWrite(cf);
  Writes().Merge(engine_->cf(cf), key, value);
}

void Batch::DeleteRange(ColumnFamily cf, const rocksdb::Slice& begin, const rocksdb::Slice& end) {
  PrepareOrderedWrite(cf);
  Writes().GetWriteBatch()->DeleteRange(engine_->cf(cf), begin, end);
}

void Batch::NoteDeadRange(ColumnFamily cf, std::string begin, std::string end) {
  if (engine_ == nullptr) return;
  Writes().PutLogData(Engine::EncodeDeadRangeNote(cf, begin, end));
  engine_->NoteDeadRange(cf, std::move(begin), std::move(end));
}

void Batch::PrepareOrderedWrite(ColumnFamily cf) {
  if (cf == ColumnFamily::kZsetScore) NoteScoreIndexWrite(nullptr, false);
  if (cf == ColumnFamily::kMetadata) {
    FlushPendingMetadata();
    metadata_in_index_ = true;
    metadata_epoch_++;
  }
  // The family's writes so far are indexed now: rewritten later, they would land after the
  // merge or the range and undo it.
  IndexWritesOf(cf);
}

void Batch::FlushPendingMetadata() {
  if (pending_metadata_.empty()) return;
  metadata_in_index_ = true;
  rocksdb::ColumnFamilyHandle* handle = engine_->cf(ColumnFamily::kMetadata);
  for (const auto& [key, value] : pending_metadata_) {
    if (value) {
      Writes().Put(handle, key, *value);
    } else {
      Writes().Delete(handle, key);
    }
  }
  pending_metadata_.clear();
}

bool Batch::WritesUnindexed(ColumnFamily cf) const {
  return (cf == ColumnFamily::kSubkey || cf == ColumnFamily::kZsetScore) &&
         (indexed_families_ & BitOf(cf)) == 0;
}

uint64_t Batch::SubkeyHash(const rocksdb::Slice& key) {
  return HashBytes(std::string_view(key.data(), key.size()));
}

void Batch::NoteUnindexed(ColumnFamily cf, const rocksdb::Slice& key, bool put) {
  unindexed_families_ |= BitOf(cf);
  if (cf == ColumnFamily::kSubkey) unindexed_subkeys_.Insert(SubkeyHash(key));
  if (cf != ColumnFamily::kZsetScore || unindexed_score_puts_) return;
  if (put) {
    unindexed_score_puts_ = true;
  } else {
    unindexed_score_deletions_.emplace(key.data(), key.size());
  }
}

void Batch::IndexWritesOf(ColumnFamily cf) {
  indexed_families_ |= BitOf(cf);
  if ((unindexed_families_ & BitOf(cf)) == 0) return;
  unindexed_families_ &= ~BitOf(cf);
  if (cf == ColumnFamily::kSubkey) unindexed_subkeys_.Clear();
  rocksdb::ColumnFamilyHandle* handle = engine_->cf(cf);
  FamilyWrites found(handle->GetID());
  // Iterating a batch in memory fails only on a malformed one, which this class never builds.
  rocksdb::Status s = Writes().GetWriteBatch()->Iterate(&found);
  CHECK(s.ok()) << s.ToString();
  for (const auto& [key, value] : found.writes) {
    if (value) {
      batch_->Put(handle, key, *value);
    } else {
      batch_->Delete(handle, key);
    }
  }
}

rocksdb::Status Batch::AppendPendingMetadataUnindexed() {
  if (pending_metadata_.empty()) return rocksdb::Status::OK();
  rocksdb::WriteBatch* raw = Writes().GetWriteBatch();
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
  rocksdb::Iterator* base = DatabaseIterator(cf, options).release();
  // Nothing pending: the database iterator alone, without the base/delta merging on every
  // step (an LRANGE of 100 elements takes 100 of them). Like the merged iterator, it does not
  // see writes made to the batch after its creation, so the family's later writes need not be
  // indexed for it.
  if (WriteCount() == 0) return std::unique_ptr<rocksdb::Iterator>(base);
  // Only deletions in `zset_score` (a group of pops): the database less the keys deleted, where
  // indexing them would cost each later deletion an insert into RocksDB's index (2.5k
  // instructions, a tenth of an unpipelined ZPOPMIN).
  if (cf == ColumnFamily::kZsetScore && WritesUnindexed(cf) && !unindexed_score_puts_) {
    return std::make_unique<DeletionSkippingIterator<ScoreKeySet>>(base,
                                                                   &unindexed_score_deletions_);
  }
  IndexWritesOf(cf);
  return std::unique_ptr<rocksdb::Iterator>(
      batch_->NewIteratorWithBase(engine_->cf(cf), base, options));
}

void Batch::ReadAhead(const rocksdb::Slice& prefix, const rocksdb::Slice& lower,
                      const rocksdb::Slice& upper, size_t max_bytes, bool from_upper) {
  rocksdb::Iterator* it = InOrderIterator(prefix);
  std::vector<std::pair<std::string, std::string>> entries;
  size_t bytes = 0;
  auto take = [&] {
    entries.emplace_back(it->key().ToString(), it->value().ToString());
    bytes += it->value().size();
  };
  // Going down, RocksDB's Prev costs several times a Next (it looks for each key's newest
  // version from below), so the pass first goes up from `lower`: when the whole range fits in
  // `max_bytes`, that read it all.
  for (it->Seek(lower); it->Valid() && it->key().compare(upper) < 0 && bytes < max_bytes;
       it->Next()) {
    take();
  }
  if (from_upper && it->Valid() && it->key().compare(upper) < 0) {
    entries.clear();
    bytes = 0;
    it->SeekForPrev(upper);
    if (it->Valid() && it->key().compare(upper) >= 0) it->Prev();
    for (; it->Valid() && it->key().compare(lower) >= 0 && bytes < max_bytes; it->Prev()) take();
    std::reverse(entries.begin(), entries.end());
  }
  // A failed pass leaves nothing read ahead: the point reads then go to the database, and the
  // next pass or in-order read to a new iterator.
  if (!it->status().ok()) {
    read_ahead_.clear();
    in_order_.reset();
    return;
  }
  HoldReadAhead(std::move(entries));
}

std::unique_ptr<Batch::HeldSubkeyIterator> Batch::NewHeldIterator(std::string lower,
                                                                  std::string upper) const {
  auto held = std::make_unique<HeldSubkeyIterator>();
  held->lower = std::move(lower);
  held->upper = std::move(upper);
  held->lower_slice = held->lower;
  held->upper_slice = held->upper;
  held->options.iterate_lower_bound = &held->lower_slice;
  if (!held->upper.empty()) held->options.iterate_upper_bound = &held->upper_slice;
  held->it = DatabaseIterator(ColumnFamily::kSubkey, &held->options);
  return held;
}

rocksdb::Iterator* Batch::HeldIterator(const rocksdb::Slice& lower, const rocksdb::Slice& upper) {
  if (held_ && held_->lower == lower && held_->upper == upper) return held_->it.get();
  held_.reset();
  held_ = NewHeldIterator(lower.ToString(), upper.ToString());
  return held_->it.get();
}

bool Batch::ReadsInOrder(const rocksdb::Slice& prefix) const {
  return in_order_ && in_order_->lower == prefix;
}

rocksdb::Iterator* Batch::InOrderIterator(const rocksdb::Slice& prefix) {
  if (ReadsInOrder(prefix)) return in_order_->it.get();
  in_order_.reset();
  // The least key after every key under the prefix: its last byte below 0xff, raised by one.
  std::string upper = prefix.ToString();
  while (!upper.empty() && static_cast<uint8_t>(upper.back()) == 0xff) upper.pop_back();
  if (!upper.empty()) upper.back() = static_cast<char>(static_cast<uint8_t>(upper.back()) + 1);
  // None for a prefix of 0xff bytes.
  in_order_ = NewHeldIterator(prefix.ToString(), std::move(upper));
  return in_order_->it.get();
}

rocksdb::Status Batch::ReadInOrder(const rocksdb::Slice& prefix, const rocksdb::Slice& key,
                                   std::string* value) {
  rocksdb::Iterator* it = InOrderIterator(prefix);
  // Mostly the key after the one read last: one step. Otherwise (the first read, a key read
  // again, or keys skipped) a seek.
  if (it->Valid() && it->key() != key) it->Next();
  if (!it->Valid() || it->key() != key) {
    if (it->status().ok()) it->Seek(key);
    if (!it->status().ok()) {
      // A failed iterator stays failed: the next read makes a new one.
      rocksdb::Status s = it->status();
      in_order_.reset();
      return s;
    }
  }
  if (!it->Valid() || it->key() != key) return rocksdb::Status::NotFound();
  value->assign(it->value().data(), it->value().size());
  return rocksdb::Status::OK();
}

void Batch::NarrowHeldIterator(const rocksdb::Slice* upper) {
  if (!held_) return;
  if (upper == nullptr) {
    held_->upper_slice = held_->upper;
    return;
  }
  held_->narrowed.assign(upper->data(), upper->size());
  held_->upper_slice = held_->narrowed;
}

void Batch::HoldReadAhead(std::vector<std::pair<std::string, std::string>> entries) {
  // Room for a few lists' runs (pops alternating between queues), then start over.
  if (read_ahead_.size() >= kReadAheadEntries) read_ahead_.clear();
  size_t before = read_ahead_.size();
  read_ahead_.insert(read_ahead_.end(), std::make_move_iterator(entries.begin()),
                     std::make_move_iterator(entries.end()));
  auto added = read_ahead_.begin() + static_cast<ptrdiff_t>(before);
  // Entries already held (a range read again) are equal: keep one of each, in key order.
  std::inplace_merge(read_ahead_.begin(), added, read_ahead_.end());
  read_ahead_.erase(std::unique(read_ahead_.begin(), read_ahead_.end(),
                                [](const auto& a, const auto& b) { return a.first == b.first; }),
                    read_ahead_.end());
}

void Batch::RememberPopRun(std::string prefix, bool descending, std::vector<std::string> keys) {
  std::erase_if(pop_runs_, [&](const PopRun& run) {
    return run.prefix == prefix && run.descending == descending;
  });
  if (pop_runs_.size() >= kPopRuns) pop_runs_.erase(pop_runs_.begin());
  if (keys.size() > kMaxPopRun) keys.resize(kMaxPopRun);
  pop_runs_.push_back(PopRun{std::move(prefix), descending, std::move(keys), 0});
}

const std::string* Batch::NextOfPopRun(const std::string& prefix, bool descending) const {
  for (const PopRun& run : pop_runs_) {
    if (run.prefix == prefix && run.descending == descending)
      return run.next < run.keys.size() ? &run.keys[run.next] : nullptr;
  }
  return nullptr;
}

bool Batch::HasPopRun(const std::string& prefix, bool descending) const {
  return std::any_of(pop_runs_.begin(), pop_runs_.end(), [&](const PopRun& run) {
    return run.prefix == prefix && run.descending == descending;
  });
}

void Batch::NoteScoreIndexWrite(const rocksdb::Slice* key, bool put) {
  if (pop_runs_.empty()) return;
  if (key == nullptr) {
    pop_runs_.clear();
    return;
  }
  for (PopRun& run : pop_runs_) {
    // Every key between two keys under the prefix is under it too: other keys pass the run by.
    if (!key->starts_with(run.prefix)) continue;
    auto precedes = [&](const std::string& a, const rocksdb::Slice& b) {
      int c = rocksdb::Slice(a).compare(b);
      return run.descending ? c > 0 : c < 0;
    };
    auto rest = run.keys.begin() + static_cast<ptrdiff_t>(run.next);
    auto at = std::lower_bound(rest, run.keys.end(), *key, precedes);
    // Past the run's last key the run says nothing, and a key equal to one in it changes no
    // order: neither a put there nor a deletion of a key that is not live matters.
    if (at == run.keys.end()) continue;
    bool present = *key == *at;
    if (put && !present) {
      run.keys.insert(at, key->ToString());
      if (run.keys.size() - run.next > kMaxPopRun) run.keys.pop_back();
    } else if (!put && present) {
      if (at == rest) {
        run.next++;
      } else {
        run.keys.erase(at);
      }
    }
  }
}

bool Batch::MayHaveWritten(const rocksdb::Slice& key) const {
  return !WritesUnindexed(ColumnFamily::kSubkey) || unindexed_subkeys_.Contains(SubkeyHash(key));
}

bool Batch::ReadAheadHolds(const rocksdb::Slice& key) const {
  return FindReadAhead(key) != nullptr;
}

const std::string* Batch::FindReadAhead(const rocksdb::Slice& key) const {
  if (read_ahead_.empty()) return nullptr;
  // A run of pops asks for each key twice (ReadAheadHolds, then Get), one entry after another
  // in either direction: the entry found last, or one of its neighbours, is usually the one.
  for (size_t at : {last_read_ahead_, last_read_ahead_ + 1, last_read_ahead_ - 1}) {
    if (at < read_ahead_.size() && rocksdb::Slice(read_ahead_[at].first) == key) {
      last_read_ahead_ = at;
      return &read_ahead_[at].second;
    }
  }
  auto it = std::lower_bound(
      read_ahead_.begin(), read_ahead_.end(), key,
      [](const std::pair<std::string, std::string>& entry, const rocksdb::Slice& k) {
        return rocksdb::Slice(entry.first).compare(k) < 0;
      });
  if (it == read_ahead_.end() || rocksdb::Slice(it->first) != key) return nullptr;
  last_read_ahead_ = static_cast<size_t>(it - read_ahead_.begin());
  return &it->second;
}

bool Batch::WritesMetadata(const rocksdb::Slice& key) const {
  return pending_metadata_.count(std::string_view(key.data(), key.size())) != 0;
}

rocksdb::Status Batch::Commit() {
  // Nothing reads the batch after this: the entries need no place in its index.
  rocksdb::Status s = AppendPendingMetadataUnindexed();
  if (s.ok() && !empty())
    s = sink_ != nullptr ? sink_->Take(batch_->GetWriteBatch())
                         : engine_->Write(batch_->GetWriteBatch());
  if (batch_) batch_->Clear();
  metadata_in_index_ = false;
  metadata_epoch_++;
  ForgetUnindexed();
  // The batch's writes are now the database's: what was read ahead may be old.
  held_.reset();
  in_order_.reset();
  read_ahead_.clear();
  pop_runs_.clear();
  return s;
}

void Batch::Clear() {
  if (batch_) batch_->Clear();
  pending_metadata_.clear();
  metadata_in_index_ = false;
  metadata_epoch_++;
  ForgetUnindexed();
  held_.reset();
  in_order_.reset();
  read_ahead_.clear();
  pop_runs_.clear();
}

void Batch::ForgetUnindexed() {
  indexed_families_ = unindexed_families_ = 0;
  unindexed_subkeys_.Clear();
  unindexed_score_deletions_.clear();
  unindexed_score_puts_ = false;
}

}  // namespace basalt
