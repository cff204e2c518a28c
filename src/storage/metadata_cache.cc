#include "storage/metadata_cache.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <vector>

#include "common/hash.h"

namespace basalt {

// One allocation: this header, then the key's bytes, then room for the value. The room is
// rounded up, so that the usual rewrites (an absent key's entry becoming a string, a counter
// or a size growing by a digit) happen in place.
struct MetadataCache::Node {
  uint64_t sequence;
  uint32_t key_size;
  uint16_t value_size;
  uint16_t value_capacity;
  bool present;

  char* data() { return reinterpret_cast<char*>(this + 1); }
  std::string_view key() { return {data(), key_size}; }
  std::string_view value() { return {data() + key_size, value_size}; }
  size_t Charge() const { return key_size + value_capacity + kEntryOverhead; }

  void Set(uint64_t seq, const std::string_view* value) {
    sequence = seq;
    present = value != nullptr;
    value_size = static_cast<uint16_t>(present ? value->size() : 0);
    if (value_size > 0) std::memcpy(data() + key_size, value->data(), value_size);
  }

  static Node* New(uint64_t sequence, std::string_view key, const std::string_view* value) {
    size_t value_size = value != nullptr ? value->size() : 0;
    size_t capacity = (std::max<size_t>(value_size, 24) + 15) & ~size_t{15};
    void* mem = std::malloc(sizeof(Node) + key.size() + capacity);
    if (mem == nullptr) throw std::bad_alloc();
    Node* node = new (mem)
        Node{0, static_cast<uint32_t>(key.size()), 0, static_cast<uint16_t>(capacity), false};
    std::memcpy(node->data(), key.data(), key.size());
    node->Set(sequence, value);
    return node;
  }
  static void Free(Node* node) { std::free(node); }
};

// A slot's hash has its top bit free (HashOf clears it): CLOCK's reference bit lives there, so
// that the hand sweeps the slot array alone and reads no node but its victim's.
constexpr uint64_t kReferenced = uint64_t{1} << 63;

struct MetadataCache::Shard {
  struct Slot {
    uint64_t hash = 0;     // the key's hash, | kReferenced once a lookup found it
    Node* node = nullptr;  // nullptr: empty
  };
  static constexpr size_t kInitialSlots = 1024;

  std::mutex mu;
  std::vector<Slot> slots = std::vector<Slot>(kInitialSlots);
  // slots' address and mask, for PrefetchSlots, which reads them without the lock: a stale pair
  // gives the address of freed or unrelated memory, which a prefetch never touches.
  std::atomic<uintptr_t> seen_slots{reinterpret_cast<uintptr_t>(slots.data())};
  std::atomic<size_t> seen_mask{kInitialSlots - 1};
  size_t count = 0;
  size_t hand = 0;  // CLOCK hand: a slot index
  size_t bytes = 0;
  uint64_t floor = 0;
  // Every key of this shard that the database holds has an entry (MetadataCache::MarkComplete).
  bool complete = false;
  int64_t hits = 0;
  int64_t misses = 0;

  ~Shard() {
    for (Slot& s : slots)
      if (s.node != nullptr) Node::Free(s.node);
  }
  size_t mask() const { return slots.size() - 1; }

  // The first slot whose hash is `hash` (its key may still differ), or slots.size() if none is.
  size_t Probe(uint64_t hash) const {
    for (size_t i = hash & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots[i];
      if (s.node == nullptr) return slots.size();
      if ((s.hash & ~kReferenced) == hash) return i;
    }
  }

  // The slot holding `key`, or slots.size() if none does.
  size_t Find(uint64_t hash, std::string_view key) const {
    for (size_t i = hash & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots[i];
      if (s.node == nullptr) return slots.size();
      if ((s.hash & ~kReferenced) == hash && s.node->key() == key) return i;
    }
  }

  void Insert(uint64_t hash, Node* node) {
    if ((count + 1) * 10 > slots.size() * 7) Grow();
    size_t i = hash & mask();
    while (slots[i].node != nullptr) i = (i + 1) & mask();
    slots[i] = Slot{hash, node};
    count++;
    bytes += node->Charge();
  }

  void Grow() {
    std::vector<Slot> old(slots.size() * 2);
    old.swap(slots);
    for (const Slot& s : old) {
      if (s.node == nullptr) continue;
      size_t i = s.hash & mask();
      while (slots[i].node != nullptr) i = (i + 1) & mask();
      slots[i] = s;
    }
    hand = 0;
    seen_slots.store(reinterpret_cast<uintptr_t>(slots.data()), std::memory_order_relaxed);
    seen_mask.store(mask(), std::memory_order_relaxed);
  }

  // Frees the node in slot `i` and closes the gap (backward-shift deletion: every later slot of
  // the probe run whose home is not between the gap and itself moves into the gap).
  void Erase(size_t i) {
    Node* node = slots[i].node;
    floor = std::max(floor, node->sequence);
    // Forgetting an absent key loses nothing: a miss still means it is absent.
    if (node->present) complete = false;
    bytes -= node->Charge();
    count--;
    Node::Free(node);
    slots[i] = Slot{};
    for (size_t j = (i + 1) & mask(); slots[j].node != nullptr; j = (j + 1) & mask()) {
      size_t home = slots[j].hash & mask();
      bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots[i] = slots[j];
      slots[j] = Slot{};
      i = j;
    }
  }

  void EvictTo(size_t limit) {
    while (bytes > limit && count > 0) {
      Slot& s = slots[hand];
      if (s.node != nullptr && (s.hash & kReferenced) == 0) {
        Erase(hand);  // the slot may now hold a shifted entry: look at it again
        continue;
      }
      s.hash &= ~kReferenced;
      hand = (hand + 1) & mask();
    }
  }

  void Empty() {
    for (size_t i = 0; i < slots.size(); i++) {
      if (slots[i].node == nullptr) continue;
      Node::Free(slots[i].node);
      slots[i] = Slot{};
    }
    count = 0;
    bytes = 0;
    hand = 0;
    complete = false;
  }
};

MetadataCache::MetadataCache(size_t capacity_bytes)
    : capacity_(capacity_bytes), shards_(new Shard[kShards]) {}

MetadataCache::~MetadataCache() = default;

namespace {
uint64_t HashOf(std::string_view key) {
  return HashBytes(key) & ~kReferenced;
}
}  // namespace

MetadataCache::Shard& MetadataCache::ShardOf(uint64_t hash) const {
  // Bits 57-62 pick the shard; the low ones the slot within it.
  return shards_[(hash >> 57) % kShards];
}

void MetadataCache::SetCapacity(size_t capacity_bytes) {
  size_t before = capacity_.exchange(capacity_bytes);
  if ((before == 0) == (capacity_bytes == 0)) return;
  // Writes skip a disabled cache, so nothing read before it was enabled again may enter it.
  Reset();
}

MetadataCache::Lookup MetadataCache::Get(std::string_view key, std::string* value) {
  if (!enabled()) return Lookup::kMiss;
  uint64_t hash = HashOf(key);
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  size_t i = shard.Find(hash, key);
  if (i == shard.slots.size()) {
    if (shard.complete) {
      shard.hits++;
      return Lookup::kAbsent;
    }
    shard.misses++;
    return Lookup::kMiss;
  }
  shard.hits++;
  shard.slots[i].hash |= kReferenced;
  Node* node = shard.slots[i].node;
  if (!node->present) return Lookup::kAbsent;
  value->assign(node->value());
  return Lookup::kPresent;
}

namespace {

// Requests the slot a lookup of `hash` reads first, without the shard's lock: the shard's
// published address and mask, stale or not, only aim a prefetch.
template <typename Shard>
void PrefetchSlotOf(const Shard& shard, uint64_t hash) {
  const uintptr_t slots = shard.seen_slots.load(std::memory_order_relaxed);
  const size_t slot = hash & shard.seen_mask.load(std::memory_order_relaxed);
  __builtin_prefetch(reinterpret_cast<const void*>(slots + slot * sizeof(typename Shard::Slot)));
}

}  // namespace

void MetadataCache::Prefetch(std::span<const std::string_view> keys) const {
  if (!enabled()) return;
  // Two passes: every key's slot is requested before the first is read, then each slot read
  // (by now loaded, or on its way) requests its node.
  const size_t n = std::min(keys.size(), kMaxPrefetch);
  uint64_t hashes[kMaxPrefetch];
  for (size_t k = 0; k < n; k++) {
    hashes[k] = HashOf(keys[k]);
    PrefetchSlotOf(ShardOf(hashes[k]), hashes[k]);
  }
  for (size_t k = 0; k < n; k++) {
    Shard& shard = ShardOf(hashes[k]);
    std::lock_guard<std::mutex> lock(shard.mu);
    const size_t i = shard.Probe(hashes[k]);
    if (i != shard.slots.size()) __builtin_prefetch(shard.slots[i].node);
  }
}

void MetadataCache::PrefetchSlots(std::span<const std::string_view> keys) const {
  if (!enabled()) return;
  for (std::string_view key : keys) {
    const uint64_t hash = HashOf(key);
    PrefetchSlotOf(ShardOf(hash), hash);
  }
}

MetadataCache::Ticket MetadataCache::TakeTicket(uint64_t latest_sequence) const {
  return Ticket{latest_sequence, generation_.load(std::memory_order_acquire)};
}

void MetadataCache::Fill(const Ticket& ticket, std::string_view key,
                         const std::string_view* value) {
  if (!enabled() || !Holds(key, value)) return;
  uint64_t hash = HashOf(key);
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  // Checked under the shard's lock: Reset() changes the generation before it empties the shards.
  if (ticket.generation != generation_.load(std::memory_order_acquire)) return;
  Store(shard, hash, ticket.sequence, key, value);
}

void MetadataCache::Apply(uint64_t sequence, std::string_view key, const std::string_view* value) {
  if (!enabled()) return;
  if (!Holds(key, value)) {
    Invalidate(sequence, key);
    return;
  }
  uint64_t hash = HashOf(key);
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  if (!Store(shard, hash, sequence, key, value)) shard.complete = false;
}

void MetadataCache::Invalidate(uint64_t sequence, std::string_view key) {
  if (!enabled()) return;
  uint64_t hash = HashOf(key);
  Shard& shard = ShardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mu);
  size_t i = shard.Find(hash, key);
  if (i != shard.slots.size()) shard.Erase(i);
  shard.floor = std::max(shard.floor, sequence);
  shard.complete = false;
}

bool MetadataCache::Store(Shard& shard, uint64_t hash, uint64_t sequence, std::string_view key,
                          const std::string_view* value) {
  size_t i = shard.Find(hash, key);
  if (i != shard.slots.size()) {
    Node* node = shard.slots[i].node;
    if (node->sequence > sequence) return true;  // holds a newer state
    if ((value != nullptr ? value->size() : 0) <= node->value_capacity) {
      node->Set(sequence, value);
      return true;
    }
    Node* replacement = Node::New(sequence, key, value);
    shard.bytes += replacement->Charge();
    shard.bytes -= node->Charge();
    Node::Free(node);
    shard.slots[i].node = replacement;
  } else {
    if (sequence < shard.floor) return false;  // a newer state may have been dropped
    shard.Insert(hash, Node::New(sequence, key, value));
  }
  shard.EvictTo(capacity_.load(std::memory_order_relaxed) / kShards);
  return true;
}

void MetadataCache::Clear(uint64_t sequence) {
  for (int i = 0; i < kShards; i++) {
    Shard& shard = shards_[i];
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.Empty();
    shard.floor = std::max(shard.floor, sequence);
  }
}

void MetadataCache::Reset() {
  generation_.fetch_add(1, std::memory_order_acq_rel);
  for (int i = 0; i < kShards; i++) {
    Shard& shard = shards_[i];
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.Empty();
    shard.floor = 0;
  }
}

void MetadataCache::MarkComplete() {
  if (!enabled()) return;
  for (int i = 0; i < kShards; i++) {
    Shard& shard = shards_[i];
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.complete = true;
  }
}

MetadataCache::Stats MetadataCache::stats() const {
  Stats out;
  for (int i = 0; i < kShards; i++) {
    Shard& shard = shards_[i];
    std::lock_guard<std::mutex> lock(shard.mu);
    out.hits += shard.hits;
    out.misses += shard.misses;
    out.entries += static_cast<int64_t>(shard.count);
    out.bytes += static_cast<int64_t>(shard.bytes);
    out.complete_shards += shard.complete ? 1 : 0;
  }
  return out;
}

}  // namespace basalt
