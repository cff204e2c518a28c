#include "types/key_access.h"

#include <algorithm>
#include <limits>
#include <random>

#include "common/hash.h"

namespace basalt {

namespace {

uint16_t LfuMinutes(int64_t now_ms) {
  return static_cast<uint16_t>((now_ms / 60000) & 0xffff);
}

// Minutes from `then` to `now` on Redis's 16-bit LFU clock, which wraps at most once between.
int64_t LfuElapsed(uint16_t then, uint16_t now) {
  return now >= then ? now - then : 65535 - then + now;
}

// A draw in [0, 1) from a per-thread xorshift64*: every access of a counted key draws one, and
// the standard distributions cost several times more.
double Uniform() {
  thread_local uint64_t state = std::random_device{}() | 1;
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return static_cast<double>((state * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

}  // namespace

KeyAccessTable::KeyAccessTable(const Config* config, int64_t start_ms)
    : config_(config), start_s_(start_ms / 1000), slots_(new Slot[kSlots]) {}

uint64_t KeyAccessTable::Tag(uint8_t pdb, std::string_view key) {
  uint64_t tag = HashBytes(key) ^ ((static_cast<uint64_t>(pdb) + 1) * 0x9e3779b97f4a7c15ull);
  return tag == 0 ? 1 : tag;
}

int32_t KeyAccessTable::Seconds(int64_t now_ms) const {
  const int64_t s = now_ms / 1000 - start_s_;
  return static_cast<int32_t>(std::clamp<int64_t>(s, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

uint8_t KeyAccessTable::Decayed(const Slot& slot, int64_t now_ms) const {
  const int64_t period = config_->lfu_decay_time.load(std::memory_order_relaxed);
  if (period <= 0) return slot.counter;
  const int64_t periods = LfuElapsed(slot.lfu_minutes, LfuMinutes(now_ms)) / period;
  return periods >= slot.counter ? 0 : static_cast<uint8_t>(slot.counter - periods);
}

uint8_t KeyAccessTable::Incremented(uint8_t counter) const {
  if (counter == 255) return counter;
  if (counter <= kLfuInitVal) return counter + 1;  // a probability of one: no draw
  const double base = counter - kLfuInitVal;
  const double factor =
      static_cast<double>(config_->lfu_log_factor.load(std::memory_order_relaxed));
  return Uniform() < 1.0 / (base * factor + 1) ? counter + 1 : counter;
}

KeyAccessTable::Slot* KeyAccessTable::Find(Slot* set, uint64_t tag) {
  for (size_t i = 0; i < kWays; i++) {
    if (set[i].tag == tag) return &set[i];
  }
  return nullptr;
}

// Calls fn(slot, tracked) on the key's record under its stripe's lock; an untracked key gets
// a slot (a free one, or the set's least recently accessed), holding the untracked defaults.
template <typename Fn>
void KeyAccessTable::Update(uint8_t pdb, std::string_view key, Fn fn) {
  const uint64_t tag = Tag(pdb, key);
  const size_t set_index = (tag >> 20) % (kSlots / kWays);
  Slot* set = &slots_[set_index * kWays];
  std::lock_guard<std::mutex> lock(stripes_[set_index % kStripes]);
  Slot* slot = Find(set, tag);
  if (slot != nullptr) return fn(*slot);
  slot = std::min_element(set, set + kWays, [](const Slot& a, const Slot& b) {
    if ((a.tag == 0) != (b.tag == 0)) return a.tag == 0;
    return a.access_s < b.access_s;
  });
  *slot = Slot{tag, 0, LfuMinutes(start_s_ * 1000), kLfuInitVal, 0};
  fn(*slot);
}

KeyAccessTable::Slot KeyAccessTable::Record(uint8_t pdb, std::string_view key) {
  const uint64_t tag = Tag(pdb, key);
  const size_t set_index = (tag >> 20) % (kSlots / kWays);
  Slot* set = &slots_[set_index * kWays];
  std::lock_guard<std::mutex> lock(stripes_[set_index % kStripes]);
  Slot* slot = Find(set, tag);
  if (slot != nullptr) return *slot;
  return Slot{tag, 0, LfuMinutes(start_s_ * 1000), kLfuInitVal, 0};
}

void KeyAccessTable::Touched(uint8_t pdb, std::string_view key, int64_t now_ms) {
  // As Redis: only an LFU policy counts accesses (OBJECT FREQ answers under it alone). The access
  // time is kept under every policy: the table forgets the least recently accessed records.
  const bool lfu = config_->maxmemory_lfu.load(std::memory_order_relaxed);
  Update(pdb, key, [&](Slot& slot) {
    if (lfu) {
      slot.counter = Incremented(Decayed(slot, now_ms));
      slot.lfu_minutes = LfuMinutes(now_ms);
    }
    slot.access_s = Seconds(now_ms);
  });
}

void KeyAccessTable::Created(uint8_t pdb, std::string_view key, int64_t now_ms) {
  Update(pdb, key, [&](Slot& slot) {
    slot.counter = kLfuInitVal;
    slot.lfu_minutes = LfuMinutes(now_ms);
    slot.access_s = Seconds(now_ms);
  });
}

void KeyAccessTable::SetRestored(uint8_t pdb, std::string_view key, int64_t now_ms, int64_t idle_s,
                                 int freq) {
  if (config_->maxmemory_lfu.load(std::memory_order_relaxed)) {
    if (freq < 0) return;
    Update(pdb, key, [&](Slot& slot) {
      slot.counter = static_cast<uint8_t>(std::min(freq, 255));
      slot.lfu_minutes = LfuMinutes(now_ms);
    });
  } else if (idle_s >= 0) {
    const int64_t idle_ms = std::min<int64_t>(idle_s, std::numeric_limits<int32_t>::max()) * 1000;
    Update(pdb, key, [&](Slot& slot) { slot.access_s = Seconds(now_ms - idle_ms); });
  }
}

int64_t KeyAccessTable::IdleSeconds(uint8_t pdb, std::string_view key, int64_t now_ms) {
  return std::max<int64_t>(0, int64_t{Seconds(now_ms)} - Record(pdb, key).access_s);
}

uint8_t KeyAccessTable::Frequency(uint8_t pdb, std::string_view key, int64_t now_ms) {
  return Decayed(Record(pdb, key), now_ms);
}

}  // namespace basalt
