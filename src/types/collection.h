// Collection helpers shared by every member-holding type (hash, set, list, sorted set).
//
// A collection is one metadata entry (type, expiry, version, size) plus member entries in the
// `subkey` column family (and, for sorted sets, `zset_score`) under the prefix
// db | len | key | version. A new incarnation gets a new version, so a deleted or overwritten
// collection's members are invisible at once and reclaimed later by the compaction filter:
// deleting a million-member collection is one metadata write.
#pragma once

#include <rocksdb/iterator.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "types/keyspace.h"

namespace basalt {

// The metadata of an empty collection about to be created.
Metadata NewCollection(RedisType type);

// Looks up `key` expecting a collection of `type`. Returns:
//   - a live state of that type,
//   - a state with live() == false when the key is absent or expired (callers creating the
//     collection pass it to Context::Write as the old state),
//   - a Status carrying the WRONGTYPE error when the key holds another type.
StatusOr<KeyState> LookupCollection(Context& ctx, int db, std::string_view key, RedisType type);

// The member filter of the incarnation `version` of a hash, set or sorted set, for a command that
// holds the key's lock (types/member_filter.h): a member it rules out needs no read.
MemberFilterRef MemberFilterOf(Context& ctx, uint64_t version);

// db | len | key | version | member, the key of one member in `subkey` or `zset_score`.
std::string MemberKey(Context& ctx, int db, std::string_view key, uint64_t version,
                      std::string_view member);
// The same with `member` given in two parts (a `zset_score` entry: score, then member), built
// without joining them first.
std::string MemberKey(Context& ctx, int db, std::string_view key, uint64_t version,
                      std::string_view member_head, std::string_view member_tail);

// Iterates the entries of one collection incarnation in one column family, in key order,
// seeing the Context's pending writes. Bounds keep it from ever reading into the next key.
class MemberIterator {
 public:
  MemberIterator(Context& ctx, ColumnFamily cf, int db, std::string_view key, uint64_t version);
  // The same, ending before the member `member_limit`: a walk over one range of members stops
  // at the range's end instead of stepping over the deleted entries that lie beyond it.
  MemberIterator(Context& ctx, ColumnFamily cf, int db, std::string_view key, uint64_t version,
                 std::string_view member_limit);
  // The same, over the members in [member_floor, member_limit): a walk in either direction
  // stops at the range's ends.
  MemberIterator(Context& ctx, ColumnFamily cf, int db, std::string_view key, uint64_t version,
                 std::string_view member_floor, std::string_view member_limit);
  // Over the `subkey` entries as the database holds them, through the batch's held iterator
  // (Batch::HeldIterator): commands that seek one collection again and again in a write group
  // (random pops) make it once per group. It does not see the batch's writes, so callers skip
  // the members MayBeStale() does not clear, and miss the members the batch added.
  struct DatabaseOnly {};
  MemberIterator(Context& ctx, DatabaseOnly, int db, std::string_view key, uint64_t version);
  // Positions at the first member >= `member_start` (the whole collection by default).
  void Seek(std::string_view member_start = {});
  // Positions at the last member <= `member_end` (the last member of all when empty).
  void SeekToLast(std::string_view member_end = {});
  bool Valid() const;
  // For a database-only iterator: Seek(member_start), treating members from `member_limit` on
  // as past the end until the next seek, so that a walk stops there instead of stepping over
  // whatever lies beyond.
  void SeekBelow(std::string_view member_start, std::string_view member_limit);
  // Whether the batch may have written the current entry since the database-only iterator read
  // it (never, for an iterator that sees the batch).
  bool MayBeStale() const;
  // Over the `subkey` entries of `meta`, when it is a sorted set some pop took members from:
  // Seek() and Next() step over those members' entries, which stay (ZsetMemberLive,
  // types/zset.h). A failed check ends the walk, and status() tells it. `key` and `meta` must
  // outlive the iterator.
  void SkipPoppedMembers(Context& ctx, int db, std::string_view key, const Metadata& meta);
  void Next() {
    it_->Next();
    if (popped_from_ != nullptr) StepOverPopped();
  }
  void Prev() { it_->Prev(); }
  // db | len | key | version: what every entry's key starts with.
  const std::string& prefix() const { return prefix_; }
  // The current entry's whole key.
  rocksdb::Slice key() const { return it_->key(); }
  // The member part of the current entry's key (everything after the prefix).
  std::string_view member() const;
  std::string_view value() const { return {it_->value().data(), it_->value().size()}; }
  Status status() const;

 private:
  // Moves on to the first entry from here that is not a popped member (SkipPoppedMembers).
  void StepOverPopped();
  // Opens it_ over [lower_, upper_) through the context's batch (lower_ empty: prefix_).
  void OpenThroughBatch(Context& ctx, ColumnFamily cf);

  std::string prefix_;
  std::string lower_;
  std::string upper_;
  rocksdb::Slice upper_slice_;
  rocksdb::Slice lower_slice_;
  rocksdb::ReadOptions options_;
  Batch* held_by_ = nullptr;  // the batch holding it_, for a database-only iterator
  std::unique_ptr<rocksdb::Iterator> owned_;
  rocksdb::Iterator* it_ = nullptr;
  // What SkipPoppedMembers() was given, if it applies (null: every entry is a member).
  Context* ctx_ = nullptr;
  int db_ = 0;
  std::string_view key_;
  const Metadata* popped_from_ = nullptr;
  Status check_;  // a failed check of whether an entry is a member
};

// Copies every live member of the collection (`meta` of src) to a new incarnation at dst_db/dst_key
// and returns that incarnation's metadata (same type, size and expiry, new version). The caller
// then writes it with Context::Write. Used by RENAME, COPY and MOVE.
StatusOr<Metadata> CopyMembers(Context& ctx, int src_db, std::string_view src_key,
                               const Metadata& meta, int dst_db, std::string_view dst_key);

}  // namespace basalt
