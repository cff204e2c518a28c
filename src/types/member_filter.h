// MemberFilters: for each hash, set and sorted set this server started, a filter of every member
// ever written into it, so that a command naming a member the collection never held knows it is
// absent without reading the database: a write adding it (HSET of a new field, SADD or ZADD of a
// new member), or a read looking for it (HGET, SISMEMBER, ZSCORE, an intersection's lookups).
//
// That existence read is a point lookup through the memtable and, per candidate SST file,
// RocksDB's bloom filter and index: over a third of a pipelined HSET's CPU into a large
// hash (docs/benchmarks.md, "Member filters").
//
// The contract: a filter answers "absent" only for a member never written into its incarnation.
// It is born empty with the incarnation (when a writer gives a collection a new version, which no
// member can have yet), and every member put into the incarnation passes through it before its
// batch commits (CollectionWriter::Put, ZsetWriter::Put), so it holds a superset of the
// incarnation's members; removals leave it as it is. Writes of members that go around the writers
// (a replica applying its master's batches, a full sync's swap-in) call Clear(). An incarnation
// without a filter (older than the process, or whose filter was dropped) reads as before, and a
// dropped filter never comes back: it would lack the members written since.
//
// Concurrency: the registry is thread-safe. A filter is not: it is used only by holders of its
// collection's key lock (exclusively by the writers that add to it, shared by readers), and that
// lock keeps them apart.
//
// Memory: a member costs 4-8 bytes (a 32-bit fingerprint in an open-addressing table at most half
// full; two members whose 64-bit hashes share their upper 32 bits look alike, which costs a read).
// Past the budget, filters are dropped in CLOCK order: one used since the hand last passed it gets
// another round. A filter that would grow past a quarter of the budget gives up and is dropped.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace basalt {

class MemberFilter {
 public:
  MemberFilter();
  // Adds the member with 64-bit hash `hash` (HashBytes). True when bytes() changed: the table
  // doubled, the last of the table before it was let go, or it would have grown past
  // `max_bytes` and gave up: from then on it answers "maybe" for every member.
  bool Add(uint64_t hash, size_t max_bytes);
  bool MayContain(uint64_t hash) const;
  bool saturated() const { return saturated_; }
  // A command learned from the filter that a member is absent (counted for INFO).
  void NoteAbsentAnswer() {
    absent_answers_.store(absent_answers_.load(std::memory_order_relaxed) + 1,
                          std::memory_order_relaxed);
  }
  uint64_t absent_answers() const { return absent_answers_.load(std::memory_order_relaxed); }
  size_t bytes() const { return sizeof(*this) + (slots_.size() + old_.size()) * sizeof(uint32_t); }

 private:
  // Old slots each Add moves into the doubled table: all of them are moved well before the next
  // doubling (at least a quarter of the old table's size in adds away), and no add waits for a
  // whole table to be rehashed (21 ms at 1M members).
  static constexpr size_t kMovesPerAdd = 8;

  static uint32_t Fingerprint(uint64_t hash) {
    uint32_t fp = static_cast<uint32_t>(hash >> 32);
    return fp != 0 ? fp : 1;  // 0 marks an empty slot
  }
  // Slots from calloc: a large table comes as the kernel's zeroed pages, faulted in as adds
  // reach them rather than all at the doubling (18 ms for a 32 MiB table written at once).
  class Table {
   public:
    Table() = default;
    explicit Table(size_t size);
    Table(Table&& other) noexcept
        : slots_(std::move(other.slots_)), size_(std::exchange(other.size_, 0)) {}
    Table& operator=(Table&& other) noexcept {
      slots_ = std::move(other.slots_);
      size_ = std::exchange(other.size_, 0);
      return *this;
    }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    uint32_t& operator[](size_t i) { return slots_[i]; }
    uint32_t operator[](size_t i) const { return slots_[i]; }

   private:
    struct Free {
      void operator()(uint32_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint32_t[], Free> slots_;
    size_t size_ = 0;
  };
  // The slot of `table` holding `fp`, or the empty slot where it would go. A fingerprint's home
  // slot is its top bits (32 - `shift` of them), so growing needs no other record of the member.
  static size_t Find(const Table& table, int shift, uint32_t fp);
  void MoveSome(size_t slots);

  Table slots_;
  // The table before the last doubling, while its entries are being moved (those before moved_
  // are); a lookup asks both.
  Table old_;
  size_t moved_ = 0;
  size_t count_ = 0;
  int shift_;  // 32 - log2(slots_.size())
  bool saturated_ = false;
  // Counted by the lock holders (readers hold the lock shared, and two of them may lose a count),
  // read by INFO at any time.
  std::atomic<uint64_t> absent_answers_{0};
};

class MemberFilters {
 public:
  explicit MemberFilters(size_t budget_bytes) { SetBudget(budget_bytes); }

  // 0 drops every filter and starts no new one.
  void SetBudget(size_t budget_bytes);
  // The most one filter may take, its table before a doubling included: a quarter of the
  // budget, so that one large collection's filter does not push out all the others.
  size_t max_filter_bytes() const { return max_filter_bytes_.load(std::memory_order_relaxed); }
  // A new, empty filter for the new incarnation `version` (nullptr when the budget is 0).
  std::shared_ptr<MemberFilter> Start(uint64_t version);
  // The filter of `version`, or nullptr.
  std::shared_ptr<MemberFilter> Find(uint64_t version);
  // `version`'s filter (`filter`) has grown: accounts for it, dropping filters past the budget.
  // A filter that gave up growing is dropped.
  void Resized(uint64_t version, const MemberFilter& filter);
  // Members were written without the writers: no filter can be trusted.
  void Clear();

  struct Stats {
    size_t filters = 0;
    size_t bytes = 0;
    uint64_t absent_answers = 0;  // existence reads the filters made unnecessary
  };
  Stats stats() const;

 private:
  struct Entry {
    std::shared_ptr<MemberFilter> filter;
    size_t bytes = 0;
    size_t clock_slot = 0;  // its place in clock_
    bool used = false;      // since the hand last passed it
  };
  // Drops filters until the total is within the budget. mu_ held.
  void DropOverBudget();
  void Drop(std::unordered_map<uint64_t, Entry>::iterator it);

  mutable std::mutex mu_;
  size_t budget_ = 0;
  std::atomic<size_t> max_filter_bytes_{0};
  size_t bytes_ = 0;
  std::unordered_map<uint64_t, Entry> entries_;
  std::vector<uint64_t> clock_;  // the versions of entries_, in no particular order
  size_t hand_ = 0;
  uint64_t dropped_absent_answers_ = 0;  // those of filters dropped since
  // Whether entries_ may be non-empty: Clear() from every replicated batch checks it without
  // the mutex.
  std::atomic<bool> any_{false};
};

// What a collection writer keeps of its incarnation's filter. Without one (none was kept for
// the incarnation), every member may be there. The registry is asked at the first use, so a
// writer that only removes members (pops) never takes its mutex.
class MemberFilterRef {
 public:
  // `new_incarnation`: `version` was just made for an empty collection.
  MemberFilterRef(MemberFilters& filters, uint64_t version, bool new_incarnation)
      : filters_(&filters), version_(version), new_incarnation_(new_incarnation) {}
  // False only for a member never written into the incarnation.
  bool MayHold(std::string_view member) const;
  // `member` is being written into the incarnation.
  void Note(std::string_view member);

 private:
  MemberFilter* filter() const;

  MemberFilters* filters_;
  uint64_t version_;
  bool new_incarnation_;
  mutable bool resolved_ = false;
  mutable std::shared_ptr<MemberFilter> filter_;
};

}  // namespace basalt
