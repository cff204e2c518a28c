// SkipList: the memtable representation SkipListMemTableFactory makes (skiplist_memtable.h),
// shared by the files that implement it and by nothing else: skiplist_memtable.cc (the list,
// its inserts and iterator, the factory) and skiplist_warming.cc (the warming walks). The node
// layout, the searches and the class are here so that both files see one definition.
#pragma once

#include <rocksdb/memtablerep.h>
#include <rocksdb/version.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "storage/memtable_entry.h"
#include "storage/skiplist_memtable.h"
#include "storage/skiplist_paths.h"
#include "storage/skiplist_summit.h"

namespace basalt {
namespace skiplist {
class SkipList;
}  // namespace skiplist

// The newest memtable a factory made: the one that takes that column family's writes. A
// memtable leaves it when it is destroyed, under the lock that WarmInsertPaths holds while it
// walks one, so a walk never outlives its memtable.
class NewestMemTable {
 public:
  std::shared_mutex mutex;
  skiplist::SkipList* rep = nullptr;
  // rep's id (0: none), for a thread that only files a path away to use under the mutex later.
  std::atomic<uint64_t> id{0};
  // rep's index buckets and their mask (null: none), read without the mutex for prefetches
  // only: an address computed from a stale pair may be freed memory, which a prefetch of it
  // never touches (PrefetchLookup). A line of their own: the mutex's is written by every walk.
  alignas(64) std::atomic<const void*> index_buckets{nullptr};
  std::atomic<size_t> index_mask{0};
};

namespace skiplist {

using memtable::CompareBytewise;
using memtable::CompareUserKeys;
using memtable::InternalKeyOf;
using memtable::kTypeValue;
using memtable::LengthPrefixedAt;
using memtable::TrailerOf;
using memtable::UserKeyBefore;
using rocksdb::KeyHandle;
using rocksdb::MemTableRep;
using rocksdb::Slice;

// A node is addressed by its entry: the bytes RocksDB encodes into it (varint32 internal-key
// length, internal key, varint32 value length, value). Its links sit just below the entry, level
// 0 nearest, so the entry is found from a node without knowing the node's height.
using Link = std::atomic<const char*>;

inline Link* LinkOf(const char* entry, int level) {
  return reinterpret_cast<Link*>(const_cast<char*>(entry)) - 1 - level;
}

inline const char* NextOf(const char* entry, int level) {
  return LinkOf(entry, level)->load(std::memory_order_acquire);
}

// Between Allocate and Insert the level-0 link holds the node's height.
inline void StashHeight(const char* entry, int height) {
  LinkOf(entry, 0)->store(reinterpret_cast<const char*>(static_cast<uintptr_t>(height)),
                          std::memory_order_relaxed);
}

inline int TakeHeight(const char* entry) {
  return static_cast<int>(
      reinterpret_cast<uintptr_t>(LinkOf(entry, 0)->load(std::memory_order_relaxed)));
}

inline Slice UserKeyOf(const char* entry) {
  Slice internal_key = InternalKeyOf(entry);
  return Slice(internal_key.data(), internal_key.size() - 8);
}

// The index of a list's nodes by user key (UserKeyIndex, below) chains nodes from a link just
// above their top level link: LinkOf(entry, height). A chain's pointers carry, in their top bits,
// the height of the node they point to, since nothing else in a node records it, and ten bits of
// its key's hash, so that a key is compared only with nodes whose bits match. Linux gives a
// process addresses below 2^47 unless it asks for higher ones (x86-64's five-level paging and
// arm64's 52-bit addresses both need a hint to mmap), which neither RocksDB's arena nor malloc
// gives.
constexpr int kTagShift = 48;
constexpr int kHeightShift = 58;

inline const char* Tagged(const char* entry, int height, uint64_t tag) {
  auto bits = reinterpret_cast<uintptr_t>(entry);
  if (bits >> kTagShift != 0) std::abort();  // the address would lose its top bits
  return reinterpret_cast<const char*>(bits | (tag << kTagShift) |
                                       (static_cast<uintptr_t>(height) << kHeightShift));
}

struct ChainNode {
  const char* entry;  // nullptr: the end of the chain
  int height;
  uint64_t tag;
};

inline ChainNode Untagged(const char* tagged) {
  auto bits = reinterpret_cast<uintptr_t>(tagged);
  return {reinterpret_cast<const char*>(bits & ((uintptr_t{1} << kTagShift) - 1)),
          static_cast<int>(bits >> kHeightShift), (bits >> kTagShift) & 0x3ff};
}

// A hash table from user key to the list's nodes of that key, so that a point lookup reads a
// bucket and the few nodes chained to it instead of walking ~2 log2(n) nodes down the list, most
// of them cache misses in a memtable of a million entries (docs/benchmarks.md, "The memtable
// skip list"). Only for lists ordered bytewise, where equal user keys are equal bytes.
//
// Each node is chained to its bucket once linked into the list, and a key's older nodes follow
// its newest in the list. A key's nodes along a chain run newest first, as in the list: the
// single writer's come in sequence order and go at the head, and one that finds its own key's
// node there takes that node's place instead, so that a key written over and over (a counter)
// keeps one node in the chain, not a chain as long as its history that every other key of the
// bucket would walk. Concurrent writers (one write group's, whose sequence numbers interleave)
// take the bucket's stripe lock and place theirs after the same key's newer nodes. Readers take
// no lock: a node is chained, or takes another's place, with one release store; a reader that
// misses it reads for a snapshot without its write, and the node it replaced still leads on.
class UserKeyIndex {
 public:
  // `buckets`: a power of two.
  explicit UserKeyIndex(size_t buckets) : buckets_(AllocateBuckets(buckets)), mask_(buckets - 1) {
    static_assert(Link::is_always_lock_free && sizeof(Link) == sizeof(const char*));
  }
  ~UserKeyIndex() { munmap(buckets_, MemoryUsage()); }
  UserKeyIndex(const UserKeyIndex&) = delete;
  UserKeyIndex& operator=(const UserKeyIndex&) = delete;

  size_t MemoryUsage() const { return (mask_ + 1) * sizeof(Link); }
  const void* buckets() const { return buckets_; }
  size_t mask() const { return mask_; }

  void Prefetch(const Slice& user_key) const {
    __builtin_prefetch(&buckets_[memtable::HashUserKey(user_key) & mask_]);
  }

  // Chains `entry`, a node of height `height` linked into the list. Add is for the single
  // writer, AddConcurrently for writers that run at the same time as each other.
  void Add(const char* entry, int height) {
    Slice user_key = UserKeyOf(entry);
    uint64_t hash = memtable::HashUserKey(user_key);
    Link* bucket = &buckets_[hash & mask_];
    const char* head = bucket->load(std::memory_order_relaxed);
    ChainNode first = Untagged(head);
    const char* next = head;
    if (first.entry != nullptr && Matches(first, TagOf(hash), user_key)) {
      next = LinkOf(first.entry, first.height)->load(std::memory_order_relaxed);
    }
    LinkOf(entry, height)->store(next, std::memory_order_relaxed);
    bucket->store(Tagged(entry, height, TagOf(hash)), std::memory_order_release);
  }
  void AddConcurrently(const char* entry, int height) {
    Slice user_key = UserKeyOf(entry);
    uint64_t hash = memtable::HashUserKey(user_key), tag = TagOf(hash);
    uint64_t trailer = TrailerOf(InternalKeyOf(entry));
    Link* bucket = &buckets_[hash & mask_];
    std::lock_guard lock(stripes_[(hash & mask_) % kStripes]);
    // After the last node of the same key that is newer than this one, or else at the head.
    Link* place = bucket;
    for (Link* link = bucket;;) {
      ChainNode node = Untagged(link->load(std::memory_order_relaxed));
      if (node.entry == nullptr) break;
      link = LinkOf(node.entry, node.height);
      if (!Matches(node, tag, user_key)) continue;
      if (TrailerOf(InternalKeyOf(node.entry)) < trailer) break;
      place = link;
    }
    LinkOf(entry, height)->store(place->load(std::memory_order_relaxed), std::memory_order_relaxed);
    place->store(Tagged(entry, height, tag), std::memory_order_release);
  }

  // The first node in list order at or after `internal_key` if it has the same user key, else
  // nullptr: the node a search of the list would find, when that node is of the key sought.
  const char* Find(const Slice& internal_key) const {
    Slice user_key(internal_key.data(), internal_key.size() - 8);
    uint64_t trailer = TrailerOf(internal_key);
    uint64_t hash = memtable::HashUserKey(user_key), tag = TagOf(hash);
    const Link* link = &buckets_[hash & mask_];
    for (uint64_t& steps = StepsOnThisThread();; steps++) {
      ChainNode node = Untagged(link->load(std::memory_order_acquire));
      if (node.entry == nullptr) return nullptr;
      if (Matches(node, tag, user_key)) {
        // The key's newest node; older ones follow it in the list. A snapshot taken before the
        // newest writes steps past them.
        const char* found = node.entry;
        while (found != nullptr && TrailerOf(InternalKeyOf(found)) > trailer) {
          found = NextOf(found, 0);
          if (found != nullptr && UserKeyOf(found) != user_key) return nullptr;
        }
        return found;
      }
      link = LinkOf(node.entry, node.height);
    }
  }

  // How many chained nodes this thread's lookups have stepped to, since it started.
  static uint64_t& StepsOnThisThread() {
    thread_local uint64_t steps = 0;
    return steps;
  }

 private:
  static constexpr size_t kStripes = 16;

  // The kernel's zeroed pages, faulted in as buckets are first used, rather than megabytes
  // written while RocksDB switches memtables; all-zero bits are a null pointer in a lock-free
  // atomic on the platforms this builds for. Huge pages where the kernel allows them: a lookup's
  // bucket is a random one of up to millions, and with 4 KiB pages its address translation
  // misses as often as the bucket itself (docs/benchmarks.md, "The memtable skip list").
  static Link* AllocateBuckets(size_t buckets) {
    size_t bytes = buckets * sizeof(Link);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<Link*>(p);
  }

  // Ten bits of the hash that the bucket index does not use.
  static uint64_t TagOf(uint64_t hash) { return hash >> 54; }
  static bool Matches(const ChainNode& node, uint64_t tag, const Slice& user_key) {
    return node.tag == tag && UserKeyOf(node.entry) == user_key;
  }

  Link* const buckets_;
  const size_t mask_;
  std::mutex stripes_[kStripes];
};

inline int RandomHeight() {
  thread_local uint64_t state =
      std::hash<std::thread::id>()(std::this_thread::get_id()) | 1;  // xorshift needs non-zero
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  uint64_t bits = state;
  int height = 1;
  while (height < kMaxHeight && (bits & 1) == 0) {
    height++;
    bits >>= 1;
  }
  return height;
}

// RocksDB's LookupKey (db/dbformat.h, not a public header) begins, as LevelDB's does, with
// pointers to its length-prefixed internal key, to the internal key, and to the end. Its first
// pointer is a search target in entry form. Every memtable Get in the unit tests goes through
// this, so a different layout fails them all.
static_assert(ROCKSDB_MAJOR == 9 && ROCKSDB_MINOR == 10,
              "re-check LookupKey's layout for this RocksDB version");
inline const char* MemtableKeyOf(const rocksdb::LookupKey& lookup) {
  return reinterpret_cast<const char* const*>(&lookup)[0];
}

// A search target: another encoded entry, or a bare internal key.
struct EntryTarget {
  const char* entry;
};

class SkipList final : public MemTableRep {
 public:
  // `index_buckets`: the size of the index by user key (0: none; bytewise lists only).
  SkipList(const KeyComparator& compare, rocksdb::Allocator* allocator, bool bytewise,
           std::shared_ptr<NewestMemTable> newest, size_t index_buckets)
      : MemTableRep(allocator),
        compare_(compare),
        bytewise_(bytewise),
        newest_(std::move(newest)),
        index_(bytewise && index_buckets > 0 ? std::make_unique<UserKeyIndex>(index_buckets)
                                             : nullptr) {
    for (Link& link : head_links_) link.store(nullptr, std::memory_order_relaxed);
    std::unique_lock lock(newest_->mutex);
    newest_->rep = this;
    newest_->id.store(id_, std::memory_order_release);
    newest_->index_buckets.store(index_ != nullptr ? index_->buckets() : nullptr,
                                 std::memory_order_relaxed);
    newest_->index_mask.store(index_ != nullptr ? index_->mask() : 0, std::memory_order_relaxed);
  }
  ~SkipList() override {
    std::unique_lock lock(newest_->mutex);
    if (newest_->rep == this) {
      newest_->rep = nullptr;
      newest_->id.store(0, std::memory_order_release);
      newest_->index_buckets.store(nullptr, std::memory_order_relaxed);
    }
  }

  // Walks toward the places of `keys` (user keys), several at once; see the factory's
  // WarmInsertPaths. Returns how many searches ran.
  size_t WarmInsertPaths(const std::vector<Slice>& keys) const;

  KeyHandle Allocate(const size_t len, char** buf) override {
    int height = RandomHeight();
    // An indexed list's nodes have one more link, the index's chain, above the others.
    int links_below = height + (index_ != nullptr ? 1 : 0);
    // The arena's unaligned allocation, aligned here: the aligned one is not public.
    char* raw;
    MemTableRep::Allocate(sizeof(Link) * links_below + len + alignof(Link) - 1, &raw);
    auto aligned = (reinterpret_cast<uintptr_t>(raw) + alignof(Link) - 1) & ~(alignof(Link) - 1);
    auto* links = reinterpret_cast<Link*>(aligned);
    for (int i = 0; i < links_below; i++) new (&links[i]) Link(nullptr);
    char* entry = reinterpret_cast<char*>(links + links_below);
    StashHeight(entry, height);
    *buf = entry;
    return entry;
  }

  void Insert(KeyHandle handle) override { InsertKey(handle); }
  bool InsertKey(KeyHandle handle) override;
  void InsertConcurrently(KeyHandle handle) override { InsertKeyConcurrently(handle); }
  bool InsertKeyConcurrently(KeyHandle handle) override;

  bool Contains(const char* entry) const override {
    const char* found = FindGreaterOrEqual(EntryTarget{entry});
    return found != nullptr && Compare(found, EntryTarget{entry}) == 0;
  }

  // RocksDB's default Get walks an iterator it never frees; this one reads the index, or walks
  // the list itself. The callback sees the entries from the first at or after the lookup key:
  // one whose user key differs ends the lookup, so finding no node of the key is the same.
  void Get(const rocksdb::LookupKey& lookup, void* callback_args,
           bool (*callback_func)(void* arg, const char* entry)) override {
    EntryTarget target{MemtableKeyOf(lookup)};
    const char* entry =
        index_ != nullptr ? index_->Find(InternalKeyOf(target.entry)) : FindGreaterOrEqual(target);
    while (entry != nullptr && callback_func(callback_args, entry)) entry = NextOf(entry, 0);
  }

  // The first node whose user key is at or after `user_key` (its newest entry), or nullptr;
  // nullptr too when keys are not ordered bytewise.
  const char* SeekUserKey(const Slice& user_key) const {
    if (!bytewise_) return nullptr;
    // The largest trailer sorts first among a user key's entries.
    std::string target(user_key.data(), user_key.size());
    target.append(8, '\xff');
    return FindGreaterOrEqual(Slice(target));
  }
  // The first node after `node` with another user key.
  static const char* NextUserKey(const char* node) {
    Slice user_key = UserKeyOf(node);
    const char* next = NextOf(node, 0);
    while (next != nullptr) {
      if (CompareUserKeys(UserKeyOf(next), user_key) != 0) break;
      next = NextOf(next, 0);
    }
    return next;
  }

  // The nodes are in the memtable's arena, which RocksDB counts itself; the index is not.
  size_t ApproximateMemoryUsage() override { return index_ != nullptr ? index_->MemoryUsage() : 0; }

  Iterator* GetIterator(rocksdb::Arena* arena) override;

 private:
  class Iter;

  const char* head() const { return reinterpret_cast<const char*>(head_links_ + kMaxHeight); }

  // <0, 0 or >0 as `entry` sorts before, with or after the target.
  int Compare(const char* entry, const EntryTarget& target) const {
    if (bytewise_) return CompareBytewise(InternalKeyOf(entry), InternalKeyOf(target.entry));
    return compare_(entry, target.entry);
  }
  int Compare(const char* entry, const Slice& internal_key) const {
    if (bytewise_) return CompareBytewise(InternalKeyOf(entry), internal_key);
    return compare_(entry, internal_key);
  }

  // Walks `level` from `before` (head or a node before the target) to the last node before the
  // target; *prev gets that node and *next its successor (the first at or after the target).
  // `bound`, when known, is a node at or after the target (the level above's answer): reaching
  // it ends the walk without comparing it again. Returns how many nodes it stepped past.
  // `kFetchBelow`: for a search from the head through nodes not in the cache (a lookup's; an
  // insert's nodes were warmed), each step also fetches the node it compares next if it goes
  // down a level, so that the two misses overlap whichever way it goes (docs/benchmarks.md,
  // "The memtable skip list").
  template <bool kFetchBelow = false, typename Target>
  size_t FindInLevel(const Target& target, int level, const char* before, const char** prev,
                     const char** next, const char* bound = nullptr) const {
    size_t steps = 0;
    while (true) {
      const char* node = NextOf(before, level);
      // About half the time `node` is past the target and the walk goes down at `before`: the
      // node it compares next is then before's successor a level lower. Fetching it now
      // overlaps its cache miss with node's instead of following it.
      if (kFetchBelow && level > 0) {
        const char* below = NextOf(before, level - 1);
        if (below != node && below != nullptr) {
          __builtin_prefetch(below);
          __builtin_prefetch(LinkOf(below, level - 1));
        }
      }
      if (node == nullptr) {
        *next = nullptr;
        break;
      }
      // The node after this one is where the walk goes if this one sorts before the target.
      if (const char* after = NextOf(node, level)) __builtin_prefetch(LinkOf(after, level));
      if (node == bound || Compare(node, target) >= 0) {
        *next = node;
        break;
      }
      before = node;
      steps++;
    }
    *prev = before;
    return steps;
  }

  // The first node at or after the target (nullptr if none); *before, if given, gets the last
  // node before the target (head() if none), and *path, if given, the search's whole path.
  template <typename Target>
  const char* FindGreaterOrEqual(const Target& target, const char** before = nullptr,
                                 SearchPath* path = nullptr) const {
    const char* prev = head();
    const char* next = nullptr;
    int height = max_height_.load(std::memory_order_relaxed);
    if (path != nullptr) path->height = height;
    for (int level = height - 1; level >= 0; level--) {
      FindInLevel<true>(target, level, prev, &prev, &next, next);
      if (path != nullptr) path->nodes[level] = prev;
    }
    if (before != nullptr) *before = prev;
    return next;
  }

  // The lowest level, up to `top`, at which the path's node (node_at(level)) is followed by
  // `key` or a node at or after it. Above that level no node lies between the path and `key`,
  // so the path's nodes there are `key`'s too, and a search for `key` can start at that level
  // from the path's node: it then walks only as far down as the distance between them needs.
  // Every node of the path must sort before `key`.
  template <typename NodeAt>
  int LevelLeadingTo(const NodeAt& node_at, int top, const Slice& key) const {
    int level = 0;
    while (level < top) {
      const char* next = NextOf(node_at(level), level);
      if (next == nullptr || !UserKeyBefore(next, key)) break;
      level++;
    }
    return level;
  }

  const char* FindLast() const {
    const char* node = head();
    for (int level = max_height_.load(std::memory_order_relaxed) - 1; level >= 0; level--) {
      while (const char* next = NextOf(node, level)) node = next;
    }
    return node;
  }

  int RaiseMaxHeight(int height) {
    int max_height = max_height_.load(std::memory_order_relaxed);
    while (height > max_height &&
           !max_height_.compare_exchange_weak(max_height, height, std::memory_order_relaxed)) {
    }
    return std::max(height, max_height);
  }

  // The lowest level at which the last insert's neighbours still bracket `entry`, or
  // `max_height` when the search must start from the top. Consecutive inserts next to each
  // other (list pushes, ordered loads) then cost a few comparisons instead of a search.
  int BracketingLevel(const char* entry, int max_height) const;

  // Whether `key` falls between the level-0 neighbours a search found (nullptr prev: none yet),
  // so that it needs no search of its own.
  bool InGap(const char* prev, const char* next, const Slice& key) const {
    return prev != nullptr && (prev == head() || UserKeyBefore(prev, key)) &&
           (next == nullptr || !UserKeyBefore(next, key));
  }
  // Batches with at least this many keys, all in one direction, are warmed as a sorted run.
  static constexpr size_t kMinSortedRun = 4;
  // 1 if the keys never descend, -1 if they never ascend, 0 if they do both or are all equal.
  static int SortedDirection(const std::vector<Slice>& keys);
  // The list's Summit, made again first if the list grew by a quarter since the last one (or
  // nullptr while the list is small). Any thread that holds the memtable.
  const Summit* CurrentSummit() const;
  // A node this tall counts towards the list's growth, for CurrentSummit.
  static constexpr int kCountedHeight = 7;
  void CountNode(int height) {
    if (height >= kCountedHeight) counted_nodes_.fetch_add(1, std::memory_order_relaxed);
  }

  // WarmInsertPaths for keys sorted in one direction: one search after another, each from the
  // last one's path. Returns how many searches ran.
  size_t WarmSortedRun(const std::vector<Slice>& keys, bool ascending, int top,
                       WarmedPaths& paths) const;

  // Identifies this memtable among every one the process makes, for WarmedPaths.
  static uint64_t NewId() {
    static std::atomic<uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  // The path to start `entry`'s insert from: its warming's, or else the one a seek or lookup
  // kept for its key (a write no warming ran for: one key alone in its family), if that path's
  // nodes all sort before the key. A kept path has id 0: no other insert shares its gap.
  WarmedPaths::Path TakeWarmedPath(const char* entry) const {
    Slice user_key = UserKeyOf(entry);
    WarmedPaths::Path warmed = ThreadWarmedPaths::Take(id_, user_key);
    if (warmed.nodes != nullptr) return warmed;
    const SearchPath* kept = ThreadSeekPaths::Take(id_, user_key);
    if (kept == nullptr || (kept->nodes[0] != head() && !UserKeyBefore(kept->nodes[0], user_key)))
      return {};
    return {kept->nodes, kept->height, 0};
  }

  const uint64_t id_ = NewId();
  const KeyComparator& compare_;
  const bool bytewise_;
  const std::shared_ptr<NewestMemTable> newest_;
  const std::unique_ptr<UserKeyIndex> index_;
  std::atomic<int> max_height_{1};
  Link head_links_[kMaxHeight];

  // The single-writer path's splice: at each level, the nodes around the last insert.
  int splice_height_ = 0;
  const char* splice_prev_[kMaxHeight + 1];
  const char* splice_next_[kMaxHeight + 1];
  const char* last_insert_ = nullptr;
  int last_insert_height_ = 0;
  // The warmed path the last insert started from (0: none): a later insert from the same path
  // lies in the same gap as it.
  uint64_t last_warmed_path_ = 0;
  // The inserts since the last one from another warmed path: at each level below run_height_
  // (the tallest of them), the last of them that links into it.
  const char* run_nodes_[kMaxHeight];
  int run_height_ = 0;
  // The smallest of those inserts: a key between it and the last insert has the run's nodes
  // before it that its gap's path is behind.
  const char* run_first_ = nullptr;
  // The order of the run's keys so far: each after the last (RPUSH), each before the first
  // (LPUSH), or neither (a batch in hash order, an MSET of key:0 ... key:N).
  enum class RunOrder { kOneNode, kAscending, kDescending, kMixed };
  RunOrder run_order_ = RunOrder::kOneNode;
  // In a descending run, how many of the lowest levels of splice_prev_ hold the last node before
  // the run on their level (0: none known). The run's next key falls between that node and its
  // successor on each of them (InsertBeforeRun).
  int run_prev_levels_ = 0;

  // Links `entry`, of height `height`, into a descending run from the nodes before the run,
  // when the splice holds them for every level it links into and each brackets the key; false
  // (nothing done) otherwise.
  bool InsertBeforeRun(const char* entry, int height, const EntryTarget& target);
  // Searches the levels an insert from a warmed path links into (see InsertKey), leaving the
  // new node's neighbours on them in the splice. Returns how many of the lowest levels of
  // splice_prev_ then hold the node's predecessors, for a descending insert (0 otherwise).
  int SearchFromWarmedPath(const EntryTarget& target, int height, int max_height,
                           const WarmedPaths::Path& warmed, RunOrder order, bool after_last,
                           bool descending);
  // Notes the insert of `entry` in the run state above; `run_first`: it is the run's first
  // insert or comes before all of the run's.
  void NoteInsert(const char* entry, int height, RunOrder order, bool run_first, bool descending,
                  int prev_levels, uint64_t path_id);

  // CurrentSummit's: the nodes counted so far, and when the last Summit was made. The Summits
  // made are kept until the list goes, since a search may still start from an older one.
  std::atomic<size_t> counted_nodes_{0};
  mutable std::atomic<size_t> summit_counted_{0};
  mutable std::atomic<bool> making_summit_{false};
  mutable std::atomic<const Summit*> summit_{nullptr};
  mutable std::vector<std::unique_ptr<Summit>> summits_;  // appended under making_summit_
};

}  // namespace skiplist
}  // namespace basalt
