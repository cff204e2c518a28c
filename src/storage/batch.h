// Batch: the pending writes of one command (or one whole MULTI/EXEC) with read-your-writes.
//
// Reads see the batch's own writes layered over the database, so a transaction's later commands
// observe its earlier ones; nothing is visible to other clients until Commit() writes the whole
// batch atomically. DeleteRange is not indexed by RocksDB's WriteBatchWithIndex, so reads in
// the same batch after a DeleteRange still see older data (documented in docs/encoding.md).
//
// Writes to the `metadata` column family are coalesced: a write group rewrites one hot key's
// metadata once per command (sixteen LPUSHes, sixteen new sizes), and only the last value has
// to reach the WAL and the memtable. They wait in a small map, which Get consults first, until
// Commit(), an iterator over `metadata` or a ranged operation on it writes them into the batch.
//
// Writes to `subkey` and `zset_score` skip the batch's index until the batch reads what they wrote:
// a write group of pushes never reads back the elements it writes, nor SADDs the members they add,
// and indexing each one is an insert into RocksDB's index skip list (docs/benchmarks.md, "The write
// batch"). An iterator, range delete or merge on the family, or a point read of a member whose
// 64-bit hash is among the written members' hashes, indexes the family's writes so far by writing
// them again (only Puts and Deletes, so the state is the same); from then on that family's writes
// are indexed. While the batch's writes to `zset_score` are all deletions (a group of sorted-set
// pops), an iterator there is the database's, leaving out the keys deleted, and indexes nothing.
//
// A caller that will read a run of `subkey` keys (a pipeline of pops) can read them ahead in one
// pass (ReadAhead), or hand over the run it read itself (HoldReadAhead). Those values are the
// database's, so they answer only reads of keys the batch has not written (the same hashes rule
// that out) while its writes to `subkey` are unindexed, and are forgotten at commit; the caller's
// locks keep the keys from changing in the meantime. A run of sorted-set pops remembers the first
// score-index entries at one end (RememberPopRun), and the batch keeps them the first ones as its
// own writes under that prefix delete and add keys.
//
// A batch may read memory only (set_memory_only): every read of the database, point read or
// iterator, is limited to RocksDB's memtables, block cache and the metadata cache, and a read that
// would need the disk answers Incomplete (an iterator stops, its status Incomplete) and is noted
// (missed_memory()). The caller then knows that what the reads returned is incomplete and throws
// the batch away, so that a worker thread never waits for the disk (commands/dispatcher.h).
#pragma once

#include <rocksdb/utilities/write_batch_with_index.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/hash_set64.h"
#include "common/strutil.h"
#include "storage/engine.h"

namespace basalt {

class SstIngestSink;

class Batch {
 public:
  explicit Batch(Engine* engine);

  rocksdb::Status Get(ColumnFamily cf, const rocksdb::Slice& key, std::string* value);
  void Put(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value);
  void Delete(ColumnFamily cf, const rocksdb::Slice& key);
  void Merge(ColumnFamily cf, const rocksdb::Slice& key, const rocksdb::Slice& value);
  void DeleteRange(ColumnFamily cf, const rocksdb::Slice& begin, const rocksdb::Slice& end);
  // [begin, end) of `cf` holds only dead entries once this batch commits: noted with the
  // engine's reclaimer (Engine::NoteDeadRange) and, for replicas, in the batch's WAL record.
  void NoteDeadRange(ColumnFamily cf, std::string begin, std::string end);
  // An iterator over the database with this batch's writes applied on top. `options` (and the
  // bounds it points to) must outlive the iterator, and writes to the batch after its creation
  // are not seen by it (RocksDB forbids changing a batch under its iterators).
  std::unique_ptr<rocksdb::Iterator> NewIterator(ColumnFamily cf, rocksdb::ReadOptions* options);

  // Reads the database's `subkey` entries in [lower, upper), all under `prefix`, in one pass, so
  // that this batch's point reads of them are answered from memory until it commits or is
  // cleared: one seek where a run of pops would make a lookup each. The pass stops after
  // `max_bytes` of values (and at least one entry), going down from `upper` if `from_upper`,
  // else up from `lower`; a range that fits in `max_bytes` is read going up either way
  // (RocksDB's Prev costs several times a Next). It reads through ReadInOrder()'s iterator over
  // the prefix, made once for passes over the same prefix. The caller's locks must keep those
  // keys from changing meanwhile; the batch's own writes still come first.
  void ReadAhead(const rocksdb::Slice& prefix, const rocksdb::Slice& lower,
                 const rocksdb::Slice& upper, size_t max_bytes, bool from_upper);
  // Keeps `entries` (`subkey` keys and their values, in key order), which the caller read from
  // the database itself, as ReadAhead() keeps what it reads, on the same terms.
  void HoldReadAhead(std::vector<std::pair<std::string, std::string>> entries);
  // A database iterator over the `subkey` keys in [lower, upper), kept until the batch commits
  // or is cleared, so that a run of commands that seek one collection over and over (random
  // pops in a write group) makes it once instead of once each, and does not index the batch's
  // writes as NewIterator() must. It sees the database only, not this batch's writes: callers
  // skip the keys MayHaveWritten() does not rule out. Asking for other bounds replaces it. The
  // caller's locks must keep the keys from changing meanwhile.
  rocksdb::Iterator* HeldIterator(const rocksdb::Slice& lower, const rocksdb::Slice& upper);
  // Lowers the held iterator's upper bound to `upper` (within the bounds it was made with) for
  // the seeks that follow; nullptr restores those bounds. RocksDB checks the bound again after
  // every seek.
  void NarrowHeldIterator(const rocksdb::Slice* upper);
  // Reads `subkey` key `key` (NotFound if absent) for a caller that reads the keys under
  // `prefix` one after another in ascending order (a pipeline of pops at the left end of a
  // list): through one database iterator over the prefix's keys, kept until the batch commits or
  // is cleared, which steps from the key it read last to the next instead of seeking. A seek
  // through every sorted run costs what some ten steps do, and a new iterator more than half as
  // much again (docs/benchmarks.md, "Lists"). Descending order is not offered: RocksDB's Prev
  // costs more than the passes of ReadAhead(). It sees the database only, on the terms of
  // HeldIterator().
  rocksdb::Status ReadInOrder(const rocksdb::Slice& prefix, const rocksdb::Slice& key,
                              std::string* value);
  // Whether ReadInOrder() holds an iterator over the keys under `prefix`.
  bool ReadsInOrder(const rocksdb::Slice& prefix) const;
  // Whether a ReadAhead() since the last commit read `key` (a `subkey` key).
  bool ReadAheadHolds(const rocksdb::Slice& key) const;
  // Whether a point read of `subkey` key `key` may need this batch's own writes, so that no
  // read-ahead would answer it: the family's writes are indexed, or the hashes of the unindexed
  // ones do not rule the key out.
  bool MayHaveWritten(const rocksdb::Slice& key) const;
  // Remembers the first live `zset_score` keys under `prefix` (one sorted set), ascending or,
  // with `descending`, from the last one down: the order a run of pops will take them. The
  // batch's deletions and puts of keys under the prefix keep the run the first live keys: a key
  // deleted leaves it, a key put before its last one joins it (the run keeps kMaxPopRun). A
  // range deletion or merge in the family, a commit or a clear forgets every run.
  void RememberPopRun(std::string prefix, bool descending, std::vector<std::string> keys);
  // The first key of the run remembered for `prefix` and direction, or nullptr.
  const std::string* NextOfPopRun(const std::string& prefix, bool descending) const;
  // Whether a run is remembered for `prefix` and direction, used up or not.
  bool HasPopRun(const std::string& prefix, bool descending) const;
  // Whether this batch writes the `metadata` entry `key` (a command before in the same group
  // changed that key).
  bool WritesMetadata(const rocksdb::Slice& key) const;
  // Changes whenever a `metadata` read of this batch may answer differently than before: at
  // each write to that family, commit and clear. A caller that keeps a value it wrote there may
  // trust it for as long as this stays the same.
  uint64_t metadata_epoch() const { return metadata_epoch_; }

  // Limits this batch's reads of the database to memory, or lifts the limit (see the top).
  void set_memory_only(bool memory_only) {
    tier_ = memory_only ? rocksdb::kBlockCacheTier : rocksdb::kReadAllTier;
  }
  // Makes every later read of the database read `snapshot` (nullptr: the latest data). Only a
  // batch that never writes should read a snapshot: its writes would rest on old data.
  void set_snapshot(const rocksdb::Snapshot* snapshot) { snapshot_ = snapshot; }
  const rocksdb::Snapshot* snapshot() const { return snapshot_; }
  // Whether a read limited to memory found that it needed the disk: the results of this batch's
  // reads are then incomplete.
  bool missed_memory() const { return missed_memory_; }

  bool empty() { return pending_metadata_.empty() && WriteCount() == 0; }
  // Writes in the indexed batch (not the coalesced metadata ones): a caller compares two
  // readings to learn whether something was written between them (a commit resets it).
  uint32_t WriteCount() { return batch_ ? batch_->GetWriteBatch()->Count() : 0; }
  // Commits hand the batch to `sink` instead of the database (a bulk load into a fresh data
  // directory, storage/sst_ingest.h); nullptr: to the database. Puts outside `metadata` then go
  // to the sink at once, unindexed: a bulk load reads back none of what it writes but its keys'
  // metadata, and the batch's reads do not see them.
  void set_ingest_sink(SstIngestSink* sink) { sink_ = sink; }
  rocksdb::Status Commit();
  void Clear();
  Engine* engine() const { return engine_; }

 private:
  // A database iterator over `cf` at this batch's read tier, which notes a read that missed
  // memory. `options` (and its bounds) must outlive it.
  std::unique_ptr<rocksdb::Iterator> DatabaseIterator(ColumnFamily cf,
                                                      rocksdb::ReadOptions* options) const;
  // Notes `s` if it is a memory-only read that needed the disk; returns it.
  rocksdb::Status NoteMiss(rocksdb::Status s) {
    if (s.IsIncomplete() && tier_ == rocksdb::kBlockCacheTier) missed_memory_ = true;
    return s;
  }
  // The indexed batch, made at the first write: a command that only reads (most of them) never
  // pays for its arena and index.
  rocksdb::WriteBatchWithIndex& Writes();
  // Moves the coalesced metadata writes into the batch, so that an operation whose meaning
  // depends on the order of writes (an iterator, a range, a merge) sees them.
  void FlushPendingMetadata();
  // Readies the batch for a write whose meaning depends on the order of the writes before it in
  // `cf` (a merge or a range deletion): the pending metadata and the family's unindexed writes
  // go into the index first, and the sorted-set pop runs and metadata epoch learn of it.
  void PrepareOrderedWrite(ColumnFamily cf);
  // Records `key`'s value in pending_metadata_ (nullptr: deleted).
  void SetPendingMetadata(const rocksdb::Slice& key, const rocksdb::Slice* value);
  // The same at commit time, straight into the write batch: its index is about to be dropped.
  rocksdb::Status AppendPendingMetadataUnindexed();
  // Whether writes to `cf` bypass the index for now.
  bool WritesUnindexed(ColumnFamily cf) const;
  void NoteUnindexed(ColumnFamily cf, const rocksdb::Slice& key, bool put);
  static uint64_t SubkeyHash(const rocksdb::Slice& key);
  void ForgetUnindexed();
  // Makes `cf`'s writes so far visible to reads of the batch, and indexes its later ones.
  void IndexWritesOf(ColumnFamily cf);
  // The read-ahead value of `key`, or nullptr.
  const std::string* FindReadAhead(const rocksdb::Slice& key) const;
  // Keeps the pop runs true to a write to `zset_score`: the put (or deletion) of `key`, or,
  // without a key, a write the runs cannot follow, which forgets them all.
  void NoteScoreIndexWrite(const rocksdb::Slice* key, bool put);
  struct HeldSubkeyIterator {
    std::string lower;
    std::string upper;
    rocksdb::Slice lower_slice;
    rocksdb::Slice upper_slice;
    std::string narrowed;  // the bound NarrowHeldIterator() set, if any
    rocksdb::ReadOptions options;
    std::unique_ptr<rocksdb::Iterator> it;  // last: destroyed before the bounds it points to
  };
  // A database iterator over `subkey`'s keys in [lower, upper); an empty `upper` bounds nothing.
  std::unique_ptr<HeldSubkeyIterator> NewHeldIterator(std::string lower, std::string upper) const;
  // in_order_'s iterator, made over the keys under `prefix` unless it is already.
  rocksdb::Iterator* InOrderIterator(const rocksdb::Slice& prefix);
  static constexpr size_t kReadAheadEntries = 128;
  static constexpr size_t kPopRuns = 4;
  static constexpr size_t kMaxPopRun = 64;

  Engine* engine_;
  SstIngestSink* sink_ = nullptr;
  rocksdb::ReadTier tier_ = rocksdb::kReadAllTier;
  const rocksdb::Snapshot* snapshot_ = nullptr;
  // mutable: iterators note a miss from their const Valid().
  mutable bool missed_memory_ = false;
  std::optional<rocksdb::WriteBatchWithIndex> batch_;
  // Metadata key -> its last value in this batch (nullopt: deleted). Looked up by view, and a
  // key written again (a hot key, by every command of a group) keeps its value's buffer.
  std::unordered_map<std::string, std::optional<std::string>, StringViewHash, std::equal_to<>>
      pending_metadata_;
  // Whether the indexed batch holds `metadata` writes (moved there by FlushPendingMetadata, or
  // a merge or range): until then a metadata read needs only pending_metadata_ and the engine,
  // whose metadata cache answers it.
  bool metadata_in_index_ = false;
  uint64_t metadata_epoch_ = 1;
  // Bit per column family: its writes now go through the index / some of its writes did not.
  uint32_t indexed_families_ = 0;
  uint32_t unindexed_families_ = 0;
  // Hashes of the `subkey` keys written outside the index (a false match only costs indexing).
  // A 4096-bit filter here would match some read in nearly every pipelined group of a few
  // hundred writes, and the rest of the group would then pay for the index (docs/benchmarks.md,
  // "The write batch").
  HashSet64 unindexed_subkeys_;
  // The `zset_score` keys deleted outside the index before that family's first unindexed put
  // (kept until the commit: an iterator made from them may still read them).
  using ScoreKeySet = std::unordered_set<std::string, StringViewHash, std::equal_to<>>;
  ScoreKeySet unindexed_score_deletions_;
  bool unindexed_score_puts_ = false;
  // What HeldIterator() made, if anything since the last commit.
  std::unique_ptr<HeldSubkeyIterator> held_;
  // What ReadInOrder() reads through, if anything since the last commit; its lower bound is
  // the prefix.
  std::unique_ptr<HeldSubkeyIterator> in_order_;
  // What ReadAhead() read since the last commit, in key order (a few runs at most).
  std::vector<std::pair<std::string, std::string>> read_ahead_;
  // Where FindReadAhead() last found a key (checked against the bounds before use).
  mutable size_t last_read_ahead_ = 0;
  struct PopRun {
    std::string prefix;
    bool descending = false;
    std::vector<std::string> keys;
    size_t next = 0;  // keys before it were deleted, in order
  };
  // The pop runs remembered, a few at most (pops alternating between sorted sets keep theirs).
  std::vector<PopRun> pop_runs_;
};

}  // namespace basalt
