// KeyAccessTable: when each key was last accessed, and its LFU counter (Redis's logarithmic access
// frequency), for OBJECT IDLETIME and OBJECT FREQ, RESTORE's IDLETIME and FREQ, and the IDLE
// and FREQ opcodes of an imported RDB file.
//
// Redis keeps these 24 bits in every object in memory. Basalt's keys live on disk, so the
// records live in a bounded table instead: kSlots records of 16 bytes (4 MiB), in sets of kWays
// chosen by a 64-bit hash of the key and its database; a full set forgets its least recently
// accessed record for a new key. A key with no record (untouched since start-up, or forgotten)
// reads as a key created at start-up and never accessed since: idle since start-up, and the
// counter LFU_INIT_VAL (5) decayed for the time since. Two keys with one 64-bit hash would
// share a record. Records are of physical databases, so SWAPDB keeps them with their keys; a
// key written below the Context layer (a replica's applied batches) keeps whatever record its
// name had.
//
// Every access updates the access time, and under an LFU maxmemory-policy the LFU counter too
// (Redis updates the one its policy uses; counting costs a random draw per access, and OBJECT
// FREQ answers under an LFU policy only). A policy switched to LFU at run time finds counters as
// creation left them, decayed since. The counter follows Redis: it loses one per lfu-decay-time
// minutes since the last access, and an access then adds one with probability
// 1/((counter-5)*lfu-log-factor+1), up to 255.
//
// Thread safety: every method may be called from any thread; each set has a striped mutex.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "config/config.h"

namespace basalt {

class KeyAccessTable {
 public:
  static constexpr size_t kSlots = size_t{1} << 18;
  static constexpr size_t kWays = 4;
  static constexpr uint8_t kLfuInitVal = 5;

  KeyAccessTable(const Config* config, int64_t start_ms);

  // A command read or wrote the existing key.
  void Touched(uint8_t pdb, std::string_view key, int64_t now_ms);
  // The key was created now: idle 0, counter kLfuInitVal.
  void Created(uint8_t pdb, std::string_view key, int64_t now_ms);
  // RESTORE's IDLETIME and FREQ, an RDB file's IDLE and FREQ (-1: not given), as Redis sets
  // them: under an LFU maxmemory-policy the counter is `freq` as of now, under the others the
  // key was last accessed `idle_s` seconds ago; the other value is ignored.
  void SetRestored(uint8_t pdb, std::string_view key, int64_t now_ms, int64_t idle_s, int freq);

  // OBJECT IDLETIME: whole seconds since the last access.
  int64_t IdleSeconds(uint8_t pdb, std::string_view key, int64_t now_ms);
  // OBJECT FREQ: the counter, decayed for the time since the last access.
  uint8_t Frequency(uint8_t pdb, std::string_view key, int64_t now_ms);

 private:
  struct Slot {
    uint64_t tag = 0;          // the key's hash, never 0; 0: free
    int32_t access_s = 0;      // last access, in seconds since start_s_
    uint16_t lfu_minutes = 0;  // Redis's LFU time: Unix minutes, modulo 2^16
    uint8_t counter = 0;
    uint8_t unused = 0;
  };
  static constexpr size_t kStripes = 256;

  template <typename Fn>
  void Update(uint8_t pdb, std::string_view key, Fn fn);
  // The record of `tag` in `set` (its first of kWays slots), or nullptr. Requires its stripe.
  Slot* Find(Slot* set, uint64_t tag);
  Slot Record(uint8_t pdb, std::string_view key);
  static uint64_t Tag(uint8_t pdb, std::string_view key);
  int32_t Seconds(int64_t now_ms) const;
  uint8_t Decayed(const Slot& slot, int64_t now_ms) const;
  uint8_t Incremented(uint8_t counter) const;

  const Config* config_;
  int64_t start_s_;
  std::unique_ptr<Slot[]> slots_;
  std::array<std::mutex, kStripes> stripes_;
};

}  // namespace basalt
