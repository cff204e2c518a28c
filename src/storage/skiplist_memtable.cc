#include "storage/skiplist_memtable.h"

#include <rocksdb/version.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "storage/iterator_memory.h"
#include "storage/memtable_entry.h"
#include "storage/skiplist_paths.h"

namespace basalt {
namespace {
class SkipList;
}  // namespace

// The newest memtable a factory made: the one that takes that column family's writes. A
// memtable leaves it when it is destroyed, under the lock that WarmInsertPaths holds while it
// walks one, so a walk never outlives its memtable.
class NewestMemTable {
 public:
  std::shared_mutex mutex;
  SkipList* rep = nullptr;
  // rep's id (0: none), for a thread that only files a path away to use under the mutex later.
  std::atomic<uint64_t> id{0};
};

namespace {

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

using skiplist::IteratorMemory;
using skiplist::kMaxHeight;
using skiplist::SearchPath;
using skiplist::ThreadSeekPaths;
using skiplist::ThreadWarmedPaths;
using skiplist::WarmedPaths;

// A node is addressed by its entry: the bytes RocksDB encodes into it (varint32 internal-key
// length, internal key, varint32 value length, value). Its links sit just below the entry, level
// 0 nearest, so the entry is found from a node without knowing the node's height.
using Link = std::atomic<const char*>;

Link* LinkOf(const char* entry, int level) {
  return reinterpret_cast<Link*>(const_cast<char*>(entry)) - 1 - level;
}

const char* NextOf(const char* entry, int level) {
  return LinkOf(entry, level)->load(std::memory_order_acquire);
}

// Between Allocate and Insert the level-0 link holds the node's height.
void StashHeight(const char* entry, int height) {
  LinkOf(entry, 0)->store(reinterpret_cast<const char*>(static_cast<uintptr_t>(height)),
                          std::memory_order_relaxed);
}

int TakeHeight(const char* entry) {
  return static_cast<int>(
      reinterpret_cast<uintptr_t>(LinkOf(entry, 0)->load(std::memory_order_relaxed)));
}

int RandomHeight() {
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
static_assert(ROCKSDB_MAJOR == 7, "re-check LookupKey's layout for this RocksDB version");
const char* MemtableKeyOf(const rocksdb::LookupKey& lookup) {
  return reinterpret_cast<const char* const*>(&lookup)[0];
}

// A search target: another encoded entry, or a bare internal key.
struct EntryTarget {
  const char* entry;
};

class SkipList final : public MemTableRep {
 public:
  SkipList(const KeyComparator& compare, rocksdb::Allocator* allocator, bool bytewise,
           std::shared_ptr<NewestMemTable> newest)
      : MemTableRep(allocator), compare_(compare), bytewise_(bytewise), newest_(std::move(newest)) {
    for (Link& link : head_links_) link.store(nullptr, std::memory_order_relaxed);
    std::unique_lock lock(newest_->mutex);
    newest_->rep = this;
    newest_->id.store(id_, std::memory_order_release);
  }
  ~SkipList() override {
    std::unique_lock lock(newest_->mutex);
    if (newest_->rep == this) {
      newest_->rep = nullptr;
      newest_->id.store(0, std::memory_order_release);
    }
  }

  // Walks toward the places of `keys` (user keys), several at once; see the factory's
  // WarmInsertPaths. Returns how many searches ran.
  size_t WarmInsertPaths(const std::vector<Slice>& keys) const;

  KeyHandle Allocate(const size_t len, char** buf) override {
    int height = RandomHeight();
    // The arena's unaligned allocation, aligned here: the aligned one is not public.
    char* raw;
    MemTableRep::Allocate(sizeof(Link) * height + len + alignof(Link) - 1, &raw);
    auto aligned = (reinterpret_cast<uintptr_t>(raw) + alignof(Link) - 1) & ~(alignof(Link) - 1);
    auto* links = reinterpret_cast<Link*>(aligned);
    for (int i = 0; i < height; i++) new (&links[i]) Link(nullptr);
    char* entry = reinterpret_cast<char*>(links + height);
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

  // RocksDB's default Get walks an iterator it never frees; this one walks the list itself.
  void Get(const rocksdb::LookupKey& lookup, void* callback_args,
           bool (*callback_func)(void* arg, const char* entry)) override {
    EntryTarget target{MemtableKeyOf(lookup)};
    const char* entry;
    if (ThreadSeekPaths::KeepingLookups() && bytewise_ &&
        newest_->id.load(std::memory_order_relaxed) == id_) {
      SearchPath path;
      path.list_id = id_;
      entry = FindGreaterOrEqual(target, nullptr, &path);
      Slice internal_key = InternalKeyOf(target.entry);
      ThreadSeekPaths::Keep(Slice(internal_key.data(), internal_key.size() - 8), path);
    } else {
      entry = FindGreaterOrEqual(target);
    }
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
    Slice internal_key = InternalKeyOf(node);
    Slice user_key(internal_key.data(), internal_key.size() - 8);
    const char* next = NextOf(node, 0);
    while (next != nullptr) {
      Slice next_key = InternalKeyOf(next);
      if (CompareUserKeys(Slice(next_key.data(), next_key.size() - 8), user_key) != 0) break;
      next = NextOf(next, 0);
    }
    return next;
  }

  // Everything is in the memtable's arena, which RocksDB counts itself.
  size_t ApproximateMemoryUsage() override { return 0; }

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
  // down a level (docs/benchmarks.md, change 51).
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
    Slice internal_key = InternalKeyOf(entry);
    Slice user_key(internal_key.data(), internal_key.size() - 8);
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
};

class SkipList::Iter final : public MemTableRep::Iterator {
 public:
  Iter(const SkipList* list, bool recycled) : list_(list), recycled_(recycled) {}
  ~Iter() override {
    if (recycled_) IteratorMemory::ForThisThread().Give(this);
  }

  bool Valid() const override { return node_ != nullptr; }
  const char* key() const override { return node_; }
  void Next() override { node_ = NextOf(node_, 0); }
  void Prev() override {
    const char* before;
    list_->FindGreaterOrEqual(EntryTarget{node_}, &before);
    Settle(before);
  }

  // Leaves its path to the thread, for a write of the key it finds (KeepLastSeekFor).
  void Seek(const Slice& internal_key, const char* memtable_key) override {
    SearchPath* path = &ThreadSeekPaths::NextSeek(list_->id_);
    node_ = memtable_key != nullptr
                ? list_->FindGreaterOrEqual(EntryTarget{memtable_key}, nullptr, path)
                : list_->FindGreaterOrEqual(internal_key, nullptr, path);
  }

  void SeekForPrev(const Slice& internal_key, const char* memtable_key) override {
    Seek(internal_key, memtable_key);
    if (!Valid()) SeekToLast();
    while (Valid() && (memtable_key != nullptr ? list_->Compare(node_, EntryTarget{memtable_key})
                                               : list_->Compare(node_, internal_key)) > 0) {
      Prev();
    }
  }

  void SeekToFirst() override { node_ = NextOf(list_->head(), 0); }
  void SeekToLast() override { Settle(list_->FindLast()); }

 private:
  void Settle(const char* node) { node_ = node == list_->head() ? nullptr : node; }

  const SkipList* list_;
  const bool recycled_;
  const char* node_ = nullptr;
};

MemTableRep::Iterator* SkipList::GetIterator(rocksdb::Arena* arena) {
  if (arena == nullptr) return new Iter(this, false);
  return new (IteratorMemory::ForThisThread().Take(sizeof(Iter))) Iter(this, true);
}

int SkipList::BracketingLevel(const char* entry, int max_height) const {
  if (splice_height_ < max_height) return max_height;  // the list grew taller since
  for (int level = 0; level < max_height; level++) {
    const char* prev = splice_prev_[level];
    const char* next = splice_next_[level];
    // A concurrent insert landed in between: a higher level may still bracket.
    if (NextOf(prev, level) != next) continue;
    bool after_prev = prev == head() || Compare(prev, EntryTarget{entry}) < 0;
    bool before_next = next == nullptr || Compare(next, EntryTarget{entry}) >= 0;
    return after_prev && before_next ? level : max_height;
  }
  return max_height;
}

bool SkipList::InsertKey(KeyHandle handle) {
  const char* entry = static_cast<const char*>(handle);
  int height = TakeHeight(entry);
  int max_height = RaiseMaxHeight(height);
  WarmedPaths::Path warmed = TakeWarmedPath(entry);
  EntryTarget target{entry};
  int level;
  if (warmed.nodes != nullptr && height <= warmed.height) {
    // The warmed path starts every level the new node links into (most nodes link into level
    // 0 alone): search only those. The splice above them stays unknown. Keys warmed in one gap
    // share a path, and an ascending run of them (RPUSH, ZADD with rising scores, a set moved
    // to a new incarnation) would walk over all the nodes it inserted before: the last one,
    // where it is lower, starts instead, and on the levels above it the run's last node there,
    // where that is lower. Without the latter, a node taller than the one before it walked its
    // top level over the whole run so far: a run of n inserts cost O(n^2) steps.
    level = height;
    splice_height_ = 0;
    if (warmed.id != last_warmed_path_) run_height_ = 0;
    const bool after_last = warmed.id != 0 && warmed.id == last_warmed_path_ &&
                            last_insert_ != nullptr && Compare(last_insert_, target) < 0;
    const char* bound = nullptr;
    size_t steps = 0;
    for (int i = level - 1; i >= 0; i--) {
      const char* start = warmed.nodes[i];
      if (after_last && i < last_insert_height_) {
        start = last_insert_;
      } else if (after_last && i < run_height_ && Compare(run_nodes_[i], target) < 0) {
        start = run_nodes_[i];
      }
      steps += FindInLevel(target, i, start, &splice_prev_[i], &splice_next_[i], bound);
      bound = splice_next_[i];
    }
    ThreadWarmedPaths::CountInsertSteps(steps);
  } else {
    level = warmed.nodes != nullptr ? max_height : BracketingLevel(entry, max_height);
    if (level == max_height) {
      splice_prev_[max_height] = head();
      splice_next_[max_height] = nullptr;
      splice_height_ = max_height;
    }
    for (int i = level - 1; i >= 0; i--) {
      const char* start = i < warmed.height ? warmed.nodes[i] : splice_prev_[i + 1];
      FindInLevel(target, i, start, &splice_prev_[i], &splice_next_[i], splice_next_[i + 1]);
    }
  }
  for (int i = 0; i < height; i++) {
    // Levels above the bracketing one bracket too, unless a concurrent insert landed there.
    if (i >= level && NextOf(splice_prev_[i], i) != splice_next_[i]) {
      FindInLevel(target, i, splice_prev_[i], &splice_prev_[i], &splice_next_[i]);
    }
    if (i == 0 && splice_next_[0] != nullptr && Compare(splice_next_[0], target) == 0) {
      return false;  // the same user key and sequence number is already here
    }
    LinkOf(entry, i)->store(splice_next_[i], std::memory_order_relaxed);
    LinkOf(splice_prev_[i], i)->store(entry, std::memory_order_release);
  }
  // Keep the gap on the side the inserts are moving to: after the new node when keys ascend,
  // before it when they descend (LPUSH writes ever smaller indexes).
  bool descending = last_insert_ != nullptr && Compare(last_insert_, target) > 0;
  for (int i = 0; i < height; i++) {
    (descending ? splice_next_ : splice_prev_)[i] = entry;
    run_nodes_[i] = entry;
  }
  run_height_ = std::max(run_height_, height);
  last_insert_ = entry;
  last_insert_height_ = height;
  last_warmed_path_ = warmed.id;
  return true;
}

size_t SkipList::WarmInsertPaths(const std::vector<Slice>& keys) const {
  if (!bytewise_) return 0;
  // Each lane is one search, advanced a node at a time in turn with the others: the node a lane
  // compares next was prefetched when the lane last ran, `searching` - 1 steps earlier. The
  // lanes searching are lanes[0, searching): a batch of a few keys steps only through those
  // (stepping over idle lanes cost more than the searches of a short batch).
  constexpr size_t kLanes = SkipListMemTableFactory::kWarmingLanes;
  constexpr size_t kFewLanes = 2;
  struct Lane {
    const Slice* key = nullptr;
    const char* prev = nullptr;
    // The node the lane went down before (at or after its key): met again a level lower, as it
    // is half the time, it needs no comparison.
    const char* bound = nullptr;
    int level = 0;
    uint32_t path = 0;
  };
  Lane lanes[kLanes];
  size_t searching = 0;
  size_t next_key = 0;
  size_t searches = 0;
  // The level-0 neighbours of the last finished search: a key between them needs no search of
  // its own (a run of pushes to one list lands in one gap).
  const char* gap_prev = nullptr;
  const char* gap_next = nullptr;
  uint32_t gap_path = 0;
  int top = max_height_.load(std::memory_order_relaxed) - 1;
  WarmedPaths& paths = ThreadWarmedPaths::Start(id_, top + 1);
  int direction = keys.size() >= kMinSortedRun ? SortedDirection(keys) : 0;
  if (direction != 0) return WarmSortedRun(keys, direction > 0, top, paths);
  // Gives `lane` the next key that needs a search of its own; false when none is left.
  auto start_search = [&](Lane& lane) {
    while (next_key < keys.size() && InGap(gap_prev, gap_next, keys[next_key])) {
      paths.AddKey(keys[next_key++], gap_path);
    }
    if (next_key == keys.size()) return false;
    const Slice& key = keys[next_key++];
    lane = Lane{&key, head(), nullptr, top, paths.NewPath()};
    paths.AddKey(key, lane.path);
    searches++;
    // A seek that found this key (a pop's) already walked most of the way.
    const SearchPath* kept = ThreadSeekPaths::Take(id_, key);
    if (kept != nullptr && (kept->nodes[0] == head() || UserKeyBefore(kept->nodes[0], key))) {
      auto node_at = [&](int level) { return level < kept->height ? kept->nodes[level] : head(); };
      lane.level = LevelLeadingTo(node_at, top, key);
      lane.prev = node_at(lane.level);
      for (int level = lane.level + 1; level <= top; level++) {
        paths.SetNode(lane.path, level, node_at(level));
      }
    }
    return true;
  };
  while (searching < kLanes && start_search(lanes[searching])) searching++;
  uint64_t steps = 0;
  while (searching > 0) {
    for (size_t i = 0; i < searching;) {
      Lane& lane = lanes[i];
      steps++;
      const char* node = NextOf(lane.prev, lane.level);
      if (node != nullptr && node != lane.bound && UserKeyBefore(node, *lane.key)) {
        lane.prev = node;
      } else if (lane.level > 0) {
        paths.SetNode(lane.path, lane.level--, lane.prev);
        lane.bound = node;
      } else {
        paths.SetNode(lane.path, 0, lane.prev);
        gap_prev = lane.prev;
        gap_next = node;
        gap_path = lane.path;
        // The lane's next search starts in the next round; with no key left, the last lane
        // takes this one's place and steps now, as it would have later in this round.
        if (start_search(lane)) {
          i++;
        } else {
          lane = lanes[--searching];
        }
        continue;
      }
      // With few lanes, a lane's turns come back to back and each waits for its node: fetch
      // the node it steps to if it goes down as well, as a lookup does (FindInLevel).
      if (searching <= kFewLanes && lane.level > 0) {
        const char* below = NextOf(lane.prev, lane.level - 1);
        if (below != nullptr) {
          __builtin_prefetch(below);
          __builtin_prefetch(LinkOf(below, lane.level - 1));
        }
      }
      if (const char* ahead = NextOf(lane.prev, lane.level)) {
        __builtin_prefetch(ahead);
        __builtin_prefetch(LinkOf(ahead, lane.level));
        // The comparison reads up to the key's length into the entry: for a member of a
        // collection that is often past the entry's first cache line (docs/benchmarks.md,
        // change 50).
        __builtin_prefetch(ahead + lane.key->size());
      }
      i++;
    }
  }
  ThreadWarmedPaths::CountSteps(steps);
  return searches;
}

int SkipList::SortedDirection(const std::vector<Slice>& keys) {
  int direction = 0;
  for (size_t i = 1; i < keys.size(); i++) {
    int c = CompareUserKeys(keys[i - 1], keys[i]);
    if (c == 0) continue;
    if (direction != 0 && (c < 0) != (direction > 0)) return 0;
    direction = c < 0 ? 1 : -1;
  }
  return direction;
}

size_t SkipList::WarmSortedRun(const std::vector<Slice>& keys, bool ascending, int top,
                               WarmedPaths& paths) const {
  // Each search starts from the path of the key before it: it climbs only as high as the
  // distance between the two keys needs, over nodes the last search just brought into the
  // cache, then walks down. A run of neighbours (pops from one end of a list, one element after
  // another) costs a few comparisons per key instead of a search from the head.
  const char* last[kMaxHeight];
  size_t searches = 0;
  const char* gap_prev = nullptr;
  const char* gap_next = nullptr;
  uint32_t gap_path = 0;
  for (const Slice& key : keys) {
    if (InGap(gap_prev, gap_next, key)) {
      paths.AddKey(key, gap_path);
      continue;
    }
    uint32_t path = paths.NewPath();
    paths.AddKey(key, path);
    searches++;
    int level = top;
    const char* prev = head();
    if (gap_prev != nullptr) {
      // The lowest level from which the last path still leads to this key. Above it, the last
      // path's nodes are this key's too: no node of those levels lies between the two keys.
      int from = 0;
      if (ascending) {
        from = LevelLeadingTo([&](int level) { return last[level]; }, top, key);
      } else {
        while (from <= top && last[from] != head() && !UserKeyBefore(last[from], key)) from++;
      }
      if (from <= top) {
        level = from;
        prev = last[from];
        for (int i = from + 1; i <= top; i++) paths.SetNode(path, i, last[i]);
      }
    }
    const char* bound = nullptr;  // as a lane's in WarmInsertPaths
    while (true) {
      const char* node = NextOf(prev, level);
      if (node != nullptr && node != bound && UserKeyBefore(node, key)) {
        prev = node;
        continue;
      }
      bound = node;
      paths.SetNode(path, level, prev);
      last[level] = prev;
      if (level == 0) {
        gap_prev = prev;
        gap_next = node;
        gap_path = path;
        break;
      }
      level--;
    }
  }
  return searches;
}

bool SkipList::InsertKeyConcurrently(KeyHandle handle) {
  const char* entry = static_cast<const char*>(handle);
  int height = TakeHeight(entry);
  int max_height = RaiseMaxHeight(height);
  EntryTarget target{entry};
  WarmedPaths::Path warmed = TakeWarmedPath(entry);
  const char* prev[kMaxHeight];
  const char* next[kMaxHeight];
  const char* before = head();
  const char* bound = nullptr;
  size_t steps = 0;
  for (int i = max_height - 1; i >= 0; i--) {
    if (i < warmed.height) {
      // Keys warmed in one gap share a path: where the levels above got past their warmed
      // nodes (over a run's earlier inserts), go on from there when that is further, or each
      // insert of a run walks every level over the whole run so far.
      const char* above = before;
      bool past = above != head() && (i + 1 >= warmed.height || above != warmed.nodes[i + 1]);
      before = warmed.nodes[i];
      if (past && (before == head() || Compare(before, EntryTarget{above}) < 0)) before = above;
    }
    size_t walked = FindInLevel(target, i, before, &prev[i], &next[i], bound);
    if (warmed.nodes != nullptr) steps += walked;
    before = prev[i];
    bound = next[i];
  }
  ThreadWarmedPaths::CountInsertSteps(steps);
  // Bottom up, so that a reader that meets the node at some level finds it on every level below.
  for (int i = 0; i < height; i++) {
    while (true) {
      if (i == 0 && next[0] != nullptr && Compare(next[0], target) == 0) return false;
      LinkOf(entry, i)->store(next[i], std::memory_order_relaxed);
      const char* expected = next[i];
      if (LinkOf(prev[i], i)
              ->compare_exchange_strong(expected, entry, std::memory_order_release,
                                        std::memory_order_acquire)) {
        break;
      }
      // Another writer linked a node into this gap: find the gap again from the same node.
      FindInLevel(target, i, prev[i], &prev[i], &next[i]);
    }
  }
  return true;
}

}  // namespace

rocksdb::MemTableRep* SkipListMemTableFactory::CreateMemTableRep(
    const rocksdb::MemTableRep::KeyComparator& compare, rocksdb::Allocator* allocator,
    const rocksdb::SliceTransform*, rocksdb::Logger*) {
  return new SkipList(compare, allocator, bytewise_, newest_);
}

SkipListMemTableFactory::SkipListMemTableFactory(bool bytewise)
    : bytewise_(bytewise), newest_(std::make_shared<NewestMemTable>()) {}

SkipListMemTableFactory::~SkipListMemTableFactory() = default;

uint64_t SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread() {
  return ThreadWarmedPaths::Taken();
}

uint64_t SkipListMemTableFactory::WarmingStepsOnThisThread() {
  return ThreadWarmedPaths::Steps();
}

uint64_t SkipListMemTableFactory::WarmedInsertStepsOnThisThread() {
  return ThreadWarmedPaths::InsertSteps();
}

SkipListMemTableFactory::NewestReader::NewestReader(const SkipListMemTableFactory& factory)
    : newest_(factory.newest_) {
  newest_->mutex.lock_shared();
  rep_ = newest_->rep;
}

SkipListMemTableFactory::NewestReader::~NewestReader() {
  if (newest_ != nullptr) newest_->mutex.unlock_shared();
}

void SkipListMemTableFactory::NewestReader::Seek(const rocksdb::Slice& user_key) {
  node_ = rep_ == nullptr ? nullptr : static_cast<const SkipList*>(rep_)->SeekUserKey(user_key);
}

void SkipListMemTableFactory::NewestReader::Next() {
  node_ = SkipList::NextUserKey(node_);
}

rocksdb::Slice SkipListMemTableFactory::NewestReader::user_key() const {
  Slice internal_key = InternalKeyOf(node_);
  return Slice(internal_key.data(), internal_key.size() - 8);
}

bool SkipListMemTableFactory::NewestReader::is_value() const {
  return (TrailerOf(InternalKeyOf(node_)) & 0xff) == kTypeValue;
}

rocksdb::Slice SkipListMemTableFactory::NewestReader::value() const {
  Slice internal_key = InternalKeyOf(node_);
  return LengthPrefixedAt(internal_key.data() + internal_key.size());
}

void SkipListMemTableFactory::KeepLastSeekFor(const rocksdb::Slice& user_key) const {
  // Not checked against the path here: without the mutex the memtable may be gone. The warming
  // that takes the path checks it, in the memtable it holds.
  uint64_t id = newest_->id.load(std::memory_order_acquire);
  const SearchPath* seek = id == 0 ? nullptr : ThreadSeekPaths::LastSeek(id);
  if (seek != nullptr) ThreadSeekPaths::Keep(user_key, *seek);
}

void SkipListMemTableFactory::ForgetKeptSeeks() {
  ThreadSeekPaths::ForgetKept();
}

uint64_t SkipListMemTableFactory::KeptPathsTakenOnThisThread() {
  return ThreadSeekPaths::Taken();
}

SkipListMemTableFactory::KeepingLookupPaths::KeepingLookupPaths() {
  ThreadSeekPaths::SetKeepingLookups(true);
}

SkipListMemTableFactory::KeepingLookupPaths::~KeepingLookupPaths() {
  ThreadSeekPaths::SetKeepingLookups(false);
}

size_t SkipListMemTableFactory::WarmInsertPaths(
    const std::vector<rocksdb::Slice>& user_keys) const {
  std::shared_lock lock(newest_->mutex);
  return newest_->rep == nullptr ? 0 : newest_->rep->WarmInsertPaths(user_keys);
}

}  // namespace basalt
