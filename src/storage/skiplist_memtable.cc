#include "storage/skiplist_memtable.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <string>
#include <vector>

#include "storage/iterator_memory.h"
#include "storage/skiplist_list.h"

namespace basalt {
namespace skiplist {

class SkipList::Iter final : public MemTableRep::Iterator {
 public:
  Iter(const SkipList* list, bool recycled) : list_(list), recycled_(recycled) {}
  ~Iter() override {
    if (recycled_) IteratorMemory::ForThisThread().Give(this);
  }

  bool Valid() const override { return node_ != nullptr; }
  const char* key() const override { return node_; }
  // A flush or a range read steps through nodes scattered over the arena: the node after the
  // new one is fetched while the caller works on this one, instead of when it asks for it.
  void Next() override {
    node_ = NextOf(node_, 0);
    if (node_ != nullptr) FetchNext();
  }
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

  void SeekToFirst() override {
    node_ = NextOf(list_->head(), 0);
    if (node_ != nullptr) FetchNext();
  }
  void SeekToLast() override { Settle(list_->FindLast()); }

 private:
  void Settle(const char* node) { node_ = node == list_->head() ? nullptr : node; }
  void FetchNext() const {
    if (const char* after = NextOf(node_, 0)) {
      __builtin_prefetch(after);
      __builtin_prefetch(LinkOf(after, 0));
    }
  }

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
  CountNode(height);
  int max_height = RaiseMaxHeight(height);
  // The bucket's miss overlaps the search's.
  if (index_ != nullptr) index_->Prefetch(UserKeyOf(entry));
  WarmedPaths::Path warmed = TakeWarmedPath(entry);
  EntryTarget target{entry};
  const bool same_run = warmed.id != 0 && warmed.id == last_warmed_path_;
  const bool after_last = same_run && last_insert_ != nullptr && Compare(last_insert_, target) < 0;
  const bool before_run = same_run && !after_last && Compare(run_first_, target) > 0;
  const bool from_warming = warmed.nodes != nullptr;
  RunOrder order = after_last   ? RunOrder::kAscending
                   : before_run ? RunOrder::kDescending
                                : RunOrder::kMixed;
  if (!same_run) {
    order = RunOrder::kOneNode;
  } else if (run_order_ != RunOrder::kOneNode && run_order_ != order) {
    order = RunOrder::kMixed;
  }
  if (warmed.height < max_height) {
    // A list that grew taller since the warming (a large batch into an empty memtable) has
    // levels above the path that would skip the nodes a walk from the path steps over one by
    // one: search from the top instead.
    warmed.nodes = nullptr;
    warmed.height = 0;
  }
  if (order == RunOrder::kDescending && from_warming && height <= run_prev_levels_ &&
      InsertBeforeRun(entry, height, target)) {
    if (index_ != nullptr) index_->Add(entry, height);
    NoteInsert(entry, height, order, /*run_first=*/true, /*descending=*/true, run_prev_levels_,
               warmed.id);
    return true;
  }
  // Keys that go down from the last insert (LPUSH) keep the splice before the new node.
  const bool descending = last_insert_ != nullptr && Compare(last_insert_, target) > 0;
  int level;
  int prev_levels = 0;  // the levels of splice_prev_ that hold the new node's predecessors
  // A path left now is as tall as the list, so it starts every level the new node links into.
  if (warmed.nodes != nullptr) {
    level = height;
    prev_levels =
        SearchFromWarmedPath(target, height, max_height, warmed, order, after_last, descending);
  } else {
    level = BracketingLevel(entry, max_height);
    if (level == max_height) {
      splice_prev_[max_height] = head();
      splice_next_[max_height] = nullptr;
      splice_height_ = max_height;
    }
    size_t steps = 0;
    for (int i = level - 1; i >= 0; i--) {
      steps += FindInLevel(target, i, splice_prev_[i + 1], &splice_prev_[i], &splice_next_[i],
                           splice_next_[i + 1]);
    }
    if (from_warming) ThreadWarmedPaths::CountInsertSteps(steps);
    prev_levels = level;
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
  if (index_ != nullptr) index_->Add(entry, height);
  // Keep the gap on the side the inserts are moving to: after the new node when keys ascend,
  // before it when they descend (LPUSH writes ever smaller indexes).
  for (int i = 0; i < height; i++) (descending ? splice_next_ : splice_prev_)[i] = entry;
  NoteInsert(entry, height, order, !same_run || before_run, descending, prev_levels, warmed.id);
  return true;
}

int SkipList::SearchFromWarmedPath(const EntryTarget& target, int height, int max_height,
                                   const WarmedPaths::Path& warmed, RunOrder order, bool after_last,
                                   bool descending) {
  // The warmed path starts every level the new node links into (most nodes link into level
  // 0 alone): search only those. The splice above them stays unknown. Keys warmed in one gap
  // share a path, and a run of them would walk over all the nodes it inserted before: in an
  // ascending run (RPUSH, ZADD with rising scores, a set moved to a new incarnation) the
  // last insert starts instead, where it is lower, and on the levels above it the run's last
  // node there. Without the latter, a node taller than the one before it would walk its top
  // level over the whole run so far: a run of n inserts would cost O(n^2) steps. A descending run
  // (LPUSH) has none of its nodes before the key: the gap's path is right. A run in neither
  // order (a batch in hash order; MSET key:1 ... key:70000, which goes back inside itself)
  // is searched from the gap's path on the run's top level, which holds few of its nodes,
  // and down from there as a search from the head would: starting from the last insert would
  // walk level 0 over the run between the two keys, and a 70k-key MSET into a memtable holding
  // keys elsewhere would take 5 s of a worker. A warming search that started below the top (from a
  // Summit) leaves the head as its path above the start: where the path is the head, the
  // search continues from the level above instead of walking that whole level, and from the
  // top of the list for the new node's top level.
  splice_height_ = 0;
  if (order == RunOrder::kOneNode) run_height_ = 0;  // a new run
  const bool mixed = order == RunOrder::kMixed;
  int top = mixed ? std::max(height, run_height_) - 1 : height - 1;
  if (warmed.nodes[top] == head()) top = max_height - 1;
  const char* above = head();
  const char* bound = nullptr;
  size_t steps = 0;
  for (int i = top; i >= 0; i--) {
    const char* start = warmed.nodes[i];
    if (mixed) {
      if (i < top || start == head()) start = above;
    } else if (after_last && i < last_insert_height_) {
      start = last_insert_;
    } else if (after_last && i < run_height_ && Compare(run_nodes_[i], target) < 0) {
      start = run_nodes_[i];
    } else if (start == head()) {
      start = above;
    }
    steps += FindInLevel(target, i, start, &splice_prev_[i], &splice_next_[i], bound);
    above = splice_prev_[i];
    bound = splice_next_[i];
  }
  ThreadWarmedPaths::CountInsertSteps(steps);
  // Above the levels searched, what an earlier insert of the run searched, and above those
  // the warmed path's nodes: in a descending run each precedes the run on its level, unless
  // it stands for a level the warming did not search (the head above a Summit), which
  // InsertBeforeRun finds does not bracket the key.
  if (!descending) return 0;
  const int known = order == RunOrder::kDescending ? run_prev_levels_ : 0;
  for (int i = std::max(top + 1, known); i < max_height; i++) splice_prev_[i] = warmed.nodes[i];
  return max_height;
}

void SkipList::NoteInsert(const char* entry, int height, RunOrder order, bool run_first,
                          bool descending, int prev_levels, uint64_t path_id) {
  for (int i = 0; i < height; i++) run_nodes_[i] = entry;
  run_prev_levels_ = descending ? prev_levels : 0;
  run_height_ = std::max(run_height_, height);
  if (run_first) run_first_ = entry;
  run_order_ = order;
  last_insert_ = entry;
  last_insert_height_ = height;
  last_warmed_path_ = path_id;
}

// Each key of a descending run in one gap (LPUSH) lies after the node that precedes the run on each
// level and before the run's nodes there, the last insert's search found the former, and a key
// warmed from that gap has nothing else between: the new node goes right after it. The run's first
// insert may have searched from the top of the list, where the gap is at the front and its path the
// head on every level (about as many comparisons as the list has levels, which for every insert
// would be 24% of a pipelined LPUSH's instructions; docs/benchmarks.md, "The memtable skip list");
// the others compare twice per level they link into. The comparisons check that each level brackets
// the key, so a splice that does not (whatever the reason) leaves the insert to the search.
bool SkipList::InsertBeforeRun(const char* entry, int height, const EntryTarget& target) {
  for (int i = 0; i < height; i++) {
    const char* prev = splice_prev_[i];
    const char* next = NextOf(prev, i);
    if ((prev != head() && Compare(prev, target) >= 0) ||
        (next != nullptr && Compare(next, target) <= 0)) {
      return false;
    }
    splice_next_[i] = next;
  }
  for (int i = 0; i < height; i++) {
    LinkOf(entry, i)->store(splice_next_[i], std::memory_order_relaxed);
    LinkOf(splice_prev_[i], i)->store(entry, std::memory_order_release);
    splice_next_[i] = entry;
  }
  ThreadWarmedPaths::CountInsertBeforeRun();
  return true;
}

bool SkipList::InsertKeyConcurrently(KeyHandle handle) {
  const char* entry = static_cast<const char*>(handle);
  int height = TakeHeight(entry);
  CountNode(height);
  int max_height = RaiseMaxHeight(height);
  EntryTarget target{entry};
  if (index_ != nullptr) index_->Prefetch(UserKeyOf(entry));
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
  if (index_ != nullptr) index_->AddConcurrently(entry, height);
  return true;
}

}  // namespace skiplist

using skiplist::InternalKeyOf;
using skiplist::kTypeValue;
using skiplist::LengthPrefixedAt;
using skiplist::SearchPath;
using skiplist::SkipList;
using skiplist::Slice;
using skiplist::ThreadSeekPaths;
using skiplist::ThreadWarmedPaths;
using skiplist::TrailerOf;

rocksdb::MemTableRep* SkipListMemTableFactory::CreateMemTableRep(
    const rocksdb::MemTableRep::KeyComparator& compare, rocksdb::Allocator* allocator,
    const rocksdb::SliceTransform*, rocksdb::Logger*) {
  return new SkipList(compare, allocator, bytewise_, newest_,
                      index_buckets_.load(std::memory_order_relaxed));
}

void SkipListMemTableFactory::ResizeIndex(size_t index_buckets) {
  if (index_buckets == 0 || index_buckets_.load(std::memory_order_relaxed) == 0) return;
  index_buckets_.store(index_buckets, std::memory_order_relaxed);
}

SkipListMemTableFactory::SkipListMemTableFactory(bool bytewise, size_t index_buckets)
    : bytewise_(bytewise),
      index_buckets_(index_buckets),
      newest_(std::make_shared<NewestMemTable>()) {}

size_t SkipListMemTableFactory::IndexBucketsFor(size_t write_buffer_size, size_t entry_bytes) {
  return std::bit_ceil(
      std::max<size_t>(write_buffer_size / std::max<size_t>(entry_bytes, 1), 1024));
}

SkipListMemTableFactory::~SkipListMemTableFactory() = default;

uint64_t SkipListMemTableFactory::InsertsFromWarmedPathsOnThisThread() {
  return ThreadWarmedPaths::Taken();
}

uint64_t SkipListMemTableFactory::WarmingStepsOnThisThread() {
  return ThreadWarmedPaths::Steps();
}

uint64_t SkipListMemTableFactory::IndexStepsOnThisThread() {
  return skiplist::UserKeyIndex::StepsOnThisThread();
}

uint64_t SkipListMemTableFactory::WarmedInsertStepsOnThisThread() {
  return ThreadWarmedPaths::InsertSteps();
}

uint64_t SkipListMemTableFactory::InsertsBeforeRunsOnThisThread() {
  return ThreadWarmedPaths::InsertsBeforeRuns();
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

void SkipListMemTableFactory::PrefetchLookup(const rocksdb::Slice& user_key) const {
  const void* buckets = newest_->index_buckets.load(std::memory_order_relaxed);
  if (buckets == nullptr) return;
  size_t mask = newest_->index_mask.load(std::memory_order_relaxed);
  // Pointer arithmetic on integers: with a stale mask the address may lie outside any object.
  uintptr_t bucket = reinterpret_cast<uintptr_t>(buckets) +
                     (memtable::HashUserKey(user_key) & mask) * sizeof(skiplist::Link);
  __builtin_prefetch(reinterpret_cast<const void*>(bucket));
}

size_t SkipListMemTableFactory::WarmInsertPaths(
    const std::vector<rocksdb::Slice>& user_keys) const {
  std::shared_lock lock(newest_->mutex);
  return newest_->rep == nullptr ? 0 : newest_->rep->WarmInsertPaths(user_keys);
}

}  // namespace basalt
