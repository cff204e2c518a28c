// The paths a skip-list memtable's searches leave to the thread that ran them, so that a later
// search or insert of a nearby key on that thread starts where they left off instead of at the
// head (skiplist_list.h): the paths of a batch's warming for its inserts, and the paths of
// the thread's last seeks, kept for the keys those seeks found.
//
// Everything here is per thread, and names memtables by an id that is never reused. A node
// recorded in a path stays a correct place to start for as long as its memtable lives, since
// nodes are never removed and links only added; the skip list checks that the memtable is the
// one the path names before it follows one.
#pragma once

#include <rocksdb/slice.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace basalt::skiplist {

using rocksdb::Slice;

// One node in two reaches each next level (RocksDB and LevelDB use one in four). A search then
// visits about two nodes per level over log2(n) levels instead of four over log4(n): fewer nodes in
// all, and fewer of them on the lower levels, which are not in the CPU cache when the list holds a
// million entries. A random-key insert into such a list is ~10% faster and a lookup ~15%
// (docs/benchmarks.md, "The memtable skip list"), for 5 more bytes of links per entry on average.
// 24 levels keep the search logarithmic up to ~16M entries.
constexpr int kMaxHeight = 24;

// The paths one memtable's warming walks found, so that the inserts that follow on the same
// thread start each level where a walk left it instead of at the head: a warmed insert then costs
// a comparison or two per level. A recorded node stays a correct place to start for as long as
// its memtable lives: nodes are never removed, links are only added, and each recorded node's
// user key sorts before the key it was recorded for. Keys are copied: their batch may be gone by
// the time a later insert compares with them.
class WarmedPaths {
 public:
  struct Path {
    const char* const* nodes = nullptr;  // nodes[level], for level < height; nullptr: no path
    int height = 0;
    uint64_t id = 0;  // the same for keys warmed in one gap, never reused (0: no path)
  };

  // Forgets everything, to record paths `height` levels high in memtable `list_id`.
  void Start(uint64_t list_id, int height) {
    static std::atomic<uint64_t> next_generation{1};
    generation_ = next_generation.fetch_add(1, std::memory_order_relaxed);
    list_id_ = list_id;
    height_ = height;
    key_bytes_.clear();
    key_ends_.clear();
    path_of_.clear();
    nodes_.clear();
    next_ = 0;
  }
  uint64_t list_id() const { return list_id_; }

  // A new path, its nodes not yet known.
  uint32_t NewPath() {
    nodes_.resize(nodes_.size() + kMaxHeight, nullptr);
    return static_cast<uint32_t>(nodes_.size() / kMaxHeight - 1);
  }
  void SetNode(uint32_t path, int level, const char* node) {
    nodes_[path * kMaxHeight + level] = node;
  }
  // The next key in warming order, whose inserts will start from `path`.
  void AddKey(const Slice& user_key, uint32_t path) {
    key_bytes_.append(user_key.data(), user_key.size());
    key_ends_.push_back(key_bytes_.size());
    path_of_.push_back(path);
  }

  // The path of the next key warmed, if `user_key` is that key: inserts come in the order their
  // keys were warmed, and an insert of a key not warmed matches nothing.
  Path TakeIfNext(const Slice& user_key) {
    if (next_ >= path_of_.size()) return {};
    size_t begin = next_ == 0 ? 0 : key_ends_[next_ - 1];
    if (Slice(key_bytes_.data() + begin, key_ends_[next_] - begin) != user_key) return {};
    uint32_t path = path_of_[next_++];
    return {&nodes_[path * kMaxHeight], height_, generation_ * kMaxPaths + path};
  }

 private:
  // Paths per warming that Path::id tells apart; a warming records one per key at most.
  static constexpr uint64_t kMaxPaths = uint64_t{1} << 32;
  uint64_t list_id_ = 0;  // 0: none; memtable ids are never reused
  uint64_t generation_ = 0;
  int height_ = 0;
  std::string key_bytes_;
  std::vector<size_t> key_ends_;
  std::vector<uint32_t> path_of_;
  std::vector<const char*> nodes_;  // path p's node at level l: nodes_[p * kMaxHeight + l]
  size_t next_ = 0;                 // the key the next insert should match
};

// The calling thread's WarmedPaths, one for each of the last few memtables it warmed (one batch
// warms two column families).
class ThreadWarmedPaths {
 public:
  static WarmedPaths& Start(uint64_t list_id, int height) {
    ThreadWarmedPaths& mine = ForThisThread();
    WarmedPaths* slot = nullptr;
    for (WarmedPaths& candidate : mine.slots_) {
      if (candidate.list_id() == list_id) slot = &candidate;
    }
    if (slot == nullptr) {
      slot = &mine.slots_[mine.next_reused_];
      mine.next_reused_ = (mine.next_reused_ + 1) % kSlots;
    }
    slot->Start(list_id, height);
    return *slot;
  }

  static WarmedPaths::Path Take(uint64_t list_id, const Slice& user_key) {
    ThreadWarmedPaths& mine = ForThisThread();
    for (WarmedPaths& slot : mine.slots_) {
      if (slot.list_id() != list_id) continue;
      WarmedPaths::Path path = slot.TakeIfNext(user_key);
      if (path.nodes != nullptr) mine.taken_++;
      return path;
    }
    return {};
  }

  static uint64_t Taken() { return ForThisThread().taken_; }
  static void CountSteps(uint64_t steps) { ForThisThread().steps_ += steps; }
  static uint64_t Steps() { return ForThisThread().steps_; }
  static void CountInsertSteps(uint64_t steps) { ForThisThread().insert_steps_ += steps; }
  static uint64_t InsertSteps() { return ForThisThread().insert_steps_; }
  static void CountInsertBeforeRun() { ForThisThread().inserts_before_runs_++; }
  static uint64_t InsertsBeforeRuns() { return ForThisThread().inserts_before_runs_; }

 private:
  static constexpr size_t kSlots = 4;
  static ThreadWarmedPaths& ForThisThread() {
    thread_local ThreadWarmedPaths mine;
    return mine;
  }

  WarmedPaths slots_[kSlots];
  size_t next_reused_ = 0;
  uint64_t taken_ = 0;
  uint64_t steps_ = 0;                // nodes the warming walks compared, for tests
  uint64_t insert_steps_ = 0;         // nodes inserts from warmed paths stepped past, for tests
  uint64_t inserts_before_runs_ = 0;  // inserts linked by SkipList::InsertBeforeRun, for tests
};

// A search's path: at each level below `height`, the last node before the target (head() when
// none). Every node of it sorts before the target, and stays a correct place to start a search
// for any key after the target for as long as its memtable lives (nodes are never removed).
struct SearchPath {
  uint64_t list_id = 0;  // 0: none; memtable ids are never reused
  int height = 0;
  const char* nodes[kMaxHeight];
};

// The path of the calling thread's last seek into each of the last few memtables it sought
// (one read seeks the newest memtable and the immutable ones after it), and the ones it kept for
// keys it is about to write (SkipListMemTableFactory::KeepLastSeekFor), in the order it kept
// them, until its next write forgets them.
class ThreadSeekPaths {
 public:
  static SearchPath& NextSeek(uint64_t list_id) {
    ThreadSeekPaths& mine = ForThisThread();
    for (SearchPath& seek : mine.last_seeks_) {
      if (seek.list_id == list_id) return seek;
    }
    SearchPath& slot = mine.last_seeks_[mine.next_reused_];
    mine.next_reused_ = (mine.next_reused_ + 1) % kSlots;
    slot.list_id = list_id;
    return slot;
  }
  static const SearchPath* LastSeek(uint64_t list_id) {
    for (const SearchPath& seek : ForThisThread().last_seeks_) {
      if (seek.list_id == list_id) return &seek;
    }
    return nullptr;
  }

  static void Keep(const Slice& user_key, const SearchPath& path) {
    ThreadSeekPaths& mine = ForThisThread();
    if (mine.kept_.size() >= kMaxKept) return;
    mine.key_bytes_.append(user_key.data(), user_key.size());
    mine.kept_.push_back({path, mine.key_bytes_.size()});
  }
  // The path kept for `user_key` in memtable `list_id`, if it is among the next few kept: keys
  // are written in the order their paths were kept, and a key that was kept and then not
  // written (a command that failed) is passed over.
  static const SearchPath* Take(uint64_t list_id, const Slice& user_key) {
    ThreadSeekPaths& mine = ForThisThread();
    size_t end = std::min(mine.kept_.size(), mine.next_kept_ + kLookAhead);
    for (size_t i = mine.next_kept_; i < end; i++) {
      const Kept& kept = mine.kept_[i];
      size_t begin = i == 0 ? 0 : mine.kept_[i - 1].key_end;
      if (kept.path.list_id != list_id ||
          Slice(mine.key_bytes_.data() + begin, kept.key_end - begin) != user_key) {
        continue;
      }
      mine.next_kept_ = i + 1;
      mine.taken_++;
      return &kept.path;
    }
    return nullptr;
  }
  static void ForgetKept() {
    ThreadSeekPaths& mine = ForThisThread();
    mine.kept_.clear();
    mine.key_bytes_.clear();
    mine.next_kept_ = 0;
  }
  static uint64_t Taken() { return ForThisThread().taken_; }

 private:
  static constexpr size_t kSlots = 4;
  static constexpr size_t kMaxKept = 1024;  // one write group's pops; more are not kept
  static constexpr size_t kLookAhead = 4;
  struct Kept {
    SearchPath path;
    size_t key_end;  // where the key ends in key_bytes_
  };
  static ThreadSeekPaths& ForThisThread() {
    thread_local ThreadSeekPaths mine;
    return mine;
  }

  SearchPath last_seeks_[kSlots];
  size_t next_reused_ = 0;
  std::vector<Kept> kept_;
  std::string key_bytes_;
  size_t next_kept_ = 0;
  uint64_t taken_ = 0;  // kept paths that a warming or an insert started from, for tests
};

}  // namespace basalt::skiplist
