// SkipListMemTableFactory: the memtable of every column family, a skip list of RocksDB's
// encoded entries, the structure of RocksDB's default memtable but built with this project (and
// with twice as many levels, each half as sparse, which suits a list larger than the CPU cache).
//
// Why not RocksDB's own: against RocksDB 9.10 built for release, RocksDB's skip list takes
// 20-40% more time per pipelined SET, HSET and LPUSH of random keys (docs/benchmarks.md, "RocksDB
// 9.10"). A write of a random key is mostly a search of the list; this one indexes the keys of
// the families read by key, warms a batch's insert paths several keys at once, and on column
// families that order user keys bytewise (all of Basalt's) compares keys inline, not through
// RocksDB's three virtual calls per comparison. It reads RocksDB's entry encoding and LookupKey,
// which are not public (memtable_entry.h, skiplist_list.h checks the version it was read for).
//
// The contract is RocksDB's MemTableRep: readers run concurrently with writers; writers either
// come one at a time (Insert) or concurrently with each other (InsertConcurrently, used when
// RocksDB's write group has several writers). Entries are never removed; their memory comes from
// the memtable's arena and goes with it. An entry that equals one already present (same user key
// and sequence number) is refused, as RocksDB's skip list refuses it.
#pragma once

#include <rocksdb/memtablerep.h>

#include <atomic>
#include <memory>
#include <vector>

namespace basalt {

class NewestMemTable;

class SkipListMemTableFactory : public rocksdb::MemTableRepFactory {
 public:
  // bytewise: the column family's comparator is rocksdb::BytewiseComparator().
  // index_buckets: for a family that serves point reads, the buckets of each memtable's index by
  // user key (a power of two; 0: no index). With one, a lookup reads a bucket and a node or two
  // instead of searching the list (docs/benchmarks.md, "The memtable skip list"); each node takes 8
  // more bytes, and the buckets 8 bytes each, counted in the memtable's size. Bytewise families
  // only.
  explicit SkipListMemTableFactory(bool bytewise, size_t index_buckets = 0);
  // The index size for a memtable of `write_buffer_size` bytes whose entries take about
  // `entry_bytes` each: a bucket per entry (at least 1024), rounded up to a power of two. 64
  // bytes is about one of a set's members.
  static size_t IndexBucketsFor(size_t write_buffer_size, size_t entry_bytes = 64);
  // Whether the memtables it makes have the index, and its buckets.
  bool indexed() const { return bytewise_ && index_buckets() > 0; }
  size_t index_buckets() const {
    return bytewise_ ? index_buckets_.load(std::memory_order_relaxed) : 0;
  }
  // The index size for the memtables it makes from now on (a live change of the write buffer
  // size); the current memtable keeps its own. An indexed factory stays indexed: 0 is ignored,
  // as is any size for a factory made without an index.
  void ResizeIndex(size_t index_buckets);
  // How many chained nodes this thread's lookups in an index have stepped to, since it started.
  static uint64_t IndexStepsOnThisThread();
  ~SkipListMemTableFactory() override;

  using rocksdb::MemTableRepFactory::CreateMemTableRep;
  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& compare,
                                          rocksdb::Allocator* allocator,
                                          const rocksdb::SliceTransform* prefix_extractor,
                                          rocksdb::Logger* logger) override;
  const char* Name() const override { return "BasaltSkipListFactory"; }
  bool IsInsertConcurrentlySupported() const override { return true; }
  bool CanHandleDuplicatedKey() const override { return true; }

  // Brings into the CPU cache the nodes that inserting `user_keys` into the newest memtable this
  // factory made will visit. A lone insert into a large memtable waits on one cache miss after
  // another down its path; this walks several keys' paths at once, prefetching each one's next
  // node, so that their misses overlap. Keys that fall in the gap the previous search found (a
  // run of pushes to one list) are not searched again, and a batch whose keys all run in one
  // direction (pops from one end) is searched one key after another, each from the last one's
  // path. Returns how many searches ran. Any thread, any time: it only reads, and a memtable is
  // not destroyed while a walk is in it.
  size_t WarmInsertPaths(const std::vector<rocksdb::Slice>& user_keys) const;
  // Searches walked at once: 16 run faster than 8 and 32 (docs/benchmarks.md, "The memtable skip
  // list").
  static constexpr size_t kWarmingLanes = 16;
  // The walks also leave their paths to the calling thread: its inserts of the keys it warmed,
  // in the order it warmed them, into the same memtable, start each level where the walk left it
  // rather than at the head. How many of this thread's inserts did so, since it started.
  static uint64_t InsertsFromWarmedPathsOnThisThread();
  // How many nodes this thread's warming of unsorted keys has stepped to, since it started.
  static uint64_t WarmingStepsOnThisThread();
  // How many nodes this thread's inserts from warmed paths have stepped past, since it started.
  static uint64_t WarmedInsertStepsOnThisThread();
  // How many of this thread's inserts went into a descending run of keys warmed in one gap
  // (LPUSH) straight from the nodes before the run, without a search, since it started.
  static uint64_t InsertsBeforeRunsOnThisThread();
  // The calling thread's last seek into the newest memtable found the place of `user_key`, a key
  // the thread is about to write (a random pop seeks a point and deletes the member after it): the
  // thread's next WarmInsertPaths starts that key's search from the seek's path instead of the
  // head, and climbs only as high as the distance between them needs; an insert of it that no
  // warming ran for (the only key its batch writes to that family) starts there itself. Keys should
  // be kept in the order they will be written. A kept path that no longer fits (another memtable, a
  // key before the seek's target) is not used.
  void KeepLastSeekFor(const rocksdb::Slice& user_key) const;
  // Brings into the CPU cache the index bucket of `user_key` in the newest memtable, for a point
  // read of it that has RocksDB's own work to do first. Any thread, any time; no lock taken.
  void PrefetchLookup(const rocksdb::Slice& user_key) const;
  // Forgets the paths this thread kept; a write does, once it has made its inserts.
  static void ForgetKeptSeeks();
  // How many of the paths this thread kept a warming or an insert started from, since it started.
  static uint64_t KeptPathsTakenOnThisThread();
  // Reads the newest memtable this factory made: for each user key in it, in order, the key's
  // newest entry there. The memtable is not destroyed while the reader exists (hold it briefly:
  // RocksDB waits for it to drop a memtable it flushed). Whether keys written meanwhile are
  // seen is undefined, and an entry here may be older than one in a newer memtable: a caller
  // must know otherwise (its locks keep the keys it reads from changing, and it finds every key
  // it needs here, newer than anything elsewhere). Invalid at once for a memtable whose
  // comparator is not bytewise.
  class NewestReader {
   public:
    NewestReader(NewestReader&&) = default;
    ~NewestReader();
    // Positions at the first user key at or after `user_key`.
    void Seek(const rocksdb::Slice& user_key);
    bool Valid() const { return node_ != nullptr; }
    // To the next user key.
    void Next();
    rocksdb::Slice user_key() const;
    // Whether the key's newest entry is a value (a Put), rather than a deletion, a merge operand
    // or any other kind; value() is meaningful only then.
    bool is_value() const;
    rocksdb::Slice value() const;

   private:
    friend class SkipListMemTableFactory;
    explicit NewestReader(const SkipListMemTableFactory& factory);
    std::shared_ptr<NewestMemTable> newest_;  // its mutex is held shared while the reader lives
    const rocksdb::MemTableRep* rep_ = nullptr;
    const char* node_ = nullptr;
  };
  NewestReader ReadNewest() const { return NewestReader(*this); }

 private:
  bool bytewise_;
  std::atomic<size_t> index_buckets_;
  std::shared_ptr<NewestMemTable> newest_;
};

}  // namespace basalt
