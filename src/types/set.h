// Member-level helpers for the member-per-entry collections (sets and hashes): reading one
// member, reading all of them, sampling random members, and building the next state of a
// collection with exactly one metadata write. The readers and the sampling also serve sorted
// sets, whose `subkey` entries are their members, each holding its encoded score.
//
// Sets store each member as a `subkey` entry with an empty value; hashes store each field's entry
// (types/hash.h encodes the value in it). Both keep the exact member count in the metadata,
// which CollectionWriter maintains. The random picks live in types/set_random.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "types/collection.h"
#include "types/member_filter.h"

namespace basalt {

struct Member {
  std::string name;
  std::string value;
};

// Reads one member's value through the Context's batch. NotFound when absent.
Status GetMember(Context& ctx, int db, std::string_view key, uint64_t version,
                 std::string_view member, std::string* value);

// Every member of the incarnation `meta`, in key order.
StatusOr<std::vector<Member>> ReadMembers(Context& ctx, int db, std::string_view key,
                                          const Metadata& meta);

// `count` random members of the incarnation `meta` (which must hold at least one member).
// With `repeats` a member may be returned several times; otherwise count must be < meta.size
// and the members are distinct. Small collections, and counts of an eighth of the collection or
// more, are sampled uniformly from a full read; other samples of large ones are probed at
// random points of their key range, so repeated pops do not crawl over the tombstones left by
// earlier ones.
StatusOr<std::vector<Member>> RandomMembers(Context& ctx, int db, std::string_view key,
                                            const Metadata& meta, uint64_t count, bool repeats);

// Removes `count` random distinct members of the live set in `state` (count < its size) and
// returns them. Long runs of single pops of a large set take members picked ahead, a run of
// neighbours per probe, handed out in random order. When picking them stepped over many
// tombstones (what earlier pops leave behind) and few members remain, the remaining members
// move to a fresh incarnation instead of staying among the tombstones, so later pops and reads
// do not step over them again (the LSM queue problem).
StatusOr<std::vector<Member>> PopRandomMembers(Context& ctx, int db, std::string_view key,
                                               const KeyState& state, uint64_t count);

// Set members were written other than through CollectionWriter (a replication stream applied,
// a database swapped in): random pops look up again the members they picked ahead.
void NoteUntrackedSetWrites();

// Builds the next state of one collection: member writes go to the batch at once, the metadata
// (with the exact new size) is written once by Finish(), which deletes the key when the
// collection becomes empty, as Redis does.
class CollectionWriter {
 public:
  // Continues the live collection in `old`, or starts a new one if `old` is not live.
  CollectionWriter(Context& ctx, int db, std::string_view key, const KeyState& old, RedisType type);
  // Replaces whatever `old` holds (any type) with a new, empty incarnation (the *STORE
  // commands). Finish() then always writes, deleting the key if nothing was added.
  static CollectionWriter Replace(Context& ctx, int db, std::string_view key, const KeyState& old,
                                  RedisType type);
  // Like Replace, but the new incarnation keeps the old one's expiry: the caller moves the
  // members it wants to keep into it.
  static CollectionWriter Reincarnate(Context& ctx, int db, std::string_view key,
                                      const KeyState& old, RedisType type);

  uint64_t version() const { return meta_.version; }
  uint64_t size() const { return meta_.size; }
  // False only for a member the incarnation never held (types/member_filter.h), which callers
  // then need not look up.
  bool MayHold(std::string_view member) const { return filter_.MayHold(member); }
  // `is_new`: the member was not in the collection (the caller has checked).
  void Put(std::string_view member, std::string_view value, bool is_new);
  // The member must be in the collection.
  void Remove(std::string_view member);
  // A set's encoding floor, which only goes up.
  SetFloor set_floor() const { return meta_.set_floor; }
  void RaiseSetFloor(SetFloor floor) {
    if (floor > meta_.set_floor) meta_.set_floor = floor;
  }
  // Nothing changed, yet the command counts as a write of the key (WATCH, blocked clients):
  // Finish() touches it.
  void KeepAsModified() { changed_ = true; }
  void Finish();

 private:
  // Writes the incarnation `meta`; `fresh`: a new, empty one.
  CollectionWriter(Context& ctx, int db, std::string_view key, const KeyState& old, Metadata meta,
                   bool fresh);

  Context& ctx_;
  int db_;
  std::string key_;
  KeyState old_;
  Metadata meta_;
  MemberFilterRef filter_;
  bool changed_ = false;
};

}  // namespace basalt
