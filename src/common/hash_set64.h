// HashSet64: a set of 64-bit hashes in one flat table (open addressing, linear probing), for
// short-lived "may this key be one of those?" questions that a bitmap answers wrongly once it
// fills up. A false match needs two keys with the same 64-bit hash. Clear() is O(1): each slot
// carries the generation it was written in, and clearing starts a new generation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace basalt {

class HashSet64 {
 public:
  void Insert(uint64_t hash) {
    if ((count_ + 1) * 2 > slots_.size()) Grow();
    Slot& slot = slots_[Find(hash)];
    if (slot.generation == generation_) return;
    slot = Slot{hash, generation_};
    count_++;
  }
  bool Contains(uint64_t hash) const {
    return count_ > 0 && slots_[Find(hash)].generation == generation_;
  }
  bool empty() const { return count_ == 0; }
  void Clear() {
    if (count_ == 0) return;
    count_ = 0;
    if (++generation_ == 0) {  // wrapped: slots of generation 0 would look current again
      slots_.assign(slots_.size(), Slot{});
      generation_ = 1;
    }
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t generation = 0;  // the slot is in the set while this is the set's generation
  };
  static constexpr size_t kInitialSlots = 64;

  // The slot holding `hash` in this generation, or the free slot where it would go.
  size_t Find(uint64_t hash) const {
    size_t mask = slots_.size() - 1;
    size_t i = (hash ^ (hash >> 29)) & mask;
    while (slots_[i].generation == generation_ && slots_[i].hash != hash) i = (i + 1) & mask;
    return i;
  }
  void Grow() {
    std::vector<Slot> old(slots_.empty() ? kInitialSlots : slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& slot : old) {
      if (slot.generation == generation_) slots_[Find(slot.hash)] = slot;
    }
  }

  std::vector<Slot> slots_;
  size_t count_ = 0;
  uint32_t generation_ = 1;
};

}  // namespace basalt
