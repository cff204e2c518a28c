// Streams: entries, consumer groups, consumers and pending entries as `subkey` entries.
//
// A stream is a collection whose metadata carries Redis's counters (StreamCounters in
// types/metadata.h). Under the collection prefix each kind of sub key has its own leading byte
// (docs/encoding.md, Streams):
//
//   'E' | id(16)                                   -> n(4) | n x (field, value) length-prefixed
//   'G' | group                                    -> StreamGroup
//   'C' | len(4) | group | consumer                -> StreamConsumer
//   'P' | len(4) | group | id(16)                  -> PendingEntry (the group's pending list)
//   'Q' | len(4) | group | len(4) | consumer | id  -> ""  (the consumer's pending list)
//
// These functions read through the Context's batch and write into it; the caller holds the
// key's lock and writes the metadata itself (Context::Write). Iteration callbacks must not write
// into the batch (RocksDB forbids changing a batch under its iterators): callers collect first.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "types/collection.h"

namespace basalt {

constexpr StreamId kMaxStreamId{UINT64_MAX, UINT64_MAX};

// "ms-seq".
std::string FormatStreamId(StreamId id);

// The live entries of the block of `node_entries` (stream-node-max-entries) that holds the head.
// Redis cuts a stream into radix-tree nodes of that many entries as they arrive, from the first
// entry added to the empty stream, and a node keeps its place when entries before it go, so the
// head's node has lost those trimmed since (counted as if no XDEL left holes further in).
uint64_t HeadBlockEntries(const Metadata& meta, uint64_t node_entries);
// Redis's unsigned parse of one ID part (string2ull): decimal, no sign, no overflow.
bool ParseStreamIdPart(std::string_view s, uint64_t* out);
// The ID after `id` / before `id`; false at the end of the ID space.
bool NextStreamId(StreamId id, StreamId* out);
bool PrevStreamId(StreamId id, StreamId* out);

using StreamFields = std::vector<std::pair<std::string, std::string>>;

struct StreamEntry {
  StreamId id;
  StreamFields fields;
};

// An entry's stored value, from field/value arguments.
std::string EncodeStreamFields(const std::vector<std::string>& argv, size_t first);
std::string EncodeStreamFields(const StreamFields& fields);
bool DecodeStreamFields(std::string_view stored, StreamFields* out);

struct StreamGroup {
  StreamId last_id;           // the last ID delivered to the group
  int64_t entries_read = -1;  // Redis's logical read counter; -1: unknown
  uint64_t pending = 0;       // entries in its pending list
  uint64_t consumers = 0;
};

struct StreamConsumer {
  int64_t seen_ms = 0;     // last attempted interaction
  int64_t active_ms = -1;  // last successful interaction; -1: never
  uint64_t pending = 0;
};

struct PendingEntry {
  StreamId id;
  int64_t delivery_ms = 0;
  uint64_t delivery_count = 0;
  std::string consumer;
};

// One stream incarnation of one key, for reading and writing its sub keys.
class StreamStore {
 public:
  StreamStore(Context& ctx, int db, std::string_view key, uint64_t version)
      : ctx_(ctx), db_(db), key_(key), version_(version) {}

  // Entries. Visits entries with IDs in [start, end] in ascending order, or descending when
  // `reverse`, until `visit` returns false or `count` entries (0: no limit) were visited.
  // Forward reads begin at max(start, first id) of `meta`, past the trimmed head.
  Status ScanEntries(const Metadata& meta, StreamId start, StreamId end, bool reverse,
                     uint64_t count, const std::function<bool(StreamEntry&&)>& visit);
  // The entry `id`; nullopt when it is absent.
  StatusOr<std::optional<StreamEntry>> GetEntry(StreamId id);
  void PutEntry(StreamId id, std::string_view stored);
  void DeleteEntry(StreamId id);
  // Removes entries from the head: while more than `max_len` remain (MAXLEN) or while the first
  // is below `min_id` (MINID), at most `limit` of them (0: no limit). With `approx` (`~`) only
  // whole blocks of `node_entries` (stream-node-max-entries) go, counted from the stream's first
  // entry ever added (the head's block has lost what was trimmed before), the last block however
  // short, as Redis removes only whole radix-tree nodes. Updates the
  // size and first ID in *meta and returns how many went.
  StatusOr<uint64_t> TrimHead(Metadata* meta, std::optional<uint64_t> max_len,
                              std::optional<StreamId> min_id, bool approx, uint64_t limit,
                              uint64_t node_entries);
  // After deletions: the smallest live ID from `from` on into meta's first ID (0-0 if empty).
  Status RefreshFirstId(Metadata* meta, StreamId from);
  // The greatest live entry ID (Redis's streamLastValidID); 0-0 for an empty stream.
  StatusOr<StreamId> LastLiveId(const Metadata& meta);

  // Groups.
  StatusOr<std::optional<StreamGroup>> GetGroup(std::string_view group);
  void PutGroup(std::string_view group, const StreamGroup& g);
  // Every group in name order.
  StatusOr<std::vector<std::pair<std::string, StreamGroup>>> ListGroups();
  // Removes the group with its consumers and pending lists.
  Status DeleteGroup(std::string_view group);

  // Consumers.
  StatusOr<std::optional<StreamConsumer>> GetConsumer(std::string_view group,
                                                      std::string_view consumer);
  void PutConsumer(std::string_view group, std::string_view consumer, const StreamConsumer& c);
  void DeleteConsumer(std::string_view group, std::string_view consumer);
  StatusOr<std::vector<std::pair<std::string, StreamConsumer>>> ListConsumers(
      std::string_view group);

  // Pending entries. The group's list, from `start` on, in ID order, at most `count` (0: all).
  StatusOr<std::vector<PendingEntry>> ListPending(std::string_view group, StreamId start,
                                                  StreamId end, uint64_t count);
  // The IDs a consumer holds, from `start` on, in ID order, at most `count` (0: all).
  StatusOr<std::vector<StreamId>> ListConsumerPending(std::string_view group,
                                                      std::string_view consumer, StreamId start,
                                                      StreamId end, uint64_t count);
  StatusOr<std::optional<PendingEntry>> GetPending(std::string_view group, StreamId id);
  // Writes the group's entry and the owner's entry (moving it from `previous_owner` if given).
  void PutPending(std::string_view group, const PendingEntry& p, const std::string* previous_owner);
  void DeletePending(std::string_view group, const PendingEntry& p);
  // One of the two records PutPending and DeletePending write: the group's list entry
  // (`group_list`) or the consumer's, written when `put` and deleted otherwise.
  void WritePendingRecord(std::string_view group, const PendingEntry& p, bool group_list, bool put);

 private:
  std::string Key(std::string_view member) const;
  Status Get(std::string_view member, std::string* value);
  // Visits the entries whose member lies in [from, to] (member bytes), ascending.
  Status Walk(std::string_view from, std::string_view to,
              const std::function<bool(std::string_view member, std::string_view value)>& visit);
  // Visits the entries whose member starts with `prefix`, ascending.
  Status WalkPrefix(
      std::string_view prefix,
      const std::function<bool(std::string_view member, std::string_view value)>& visit);

  Context& ctx_;
  int db_;
  std::string key_;
  uint64_t version_;
};

// One consumer group being changed by a command: its record and the consumer records the
// command touches, loaded once and written back by Flush(), with the pending counts of both
// kept in step with the pending entries written.
class StreamGroupEditor {
 public:
  StreamGroupEditor(StreamStore& store, std::string_view group, const StreamGroup& g)
      : store_(store), name_(group), group_(g) {}
  const std::string& name() const { return name_; }
  StreamGroup& group() { return group_; }
  // The consumer `name`, created (seen now, never active) when absent and `create`; nullptr when
  // absent and not created. *created says whether this call created it. The record is read once
  // per editor, and the pointer stays valid for the editor's life; Flush() writes it back.
  StatusOr<StreamConsumer*> Consumer(std::string_view name, bool create, int64_t now_ms,
                                     bool* created = nullptr);
  // Removes the consumer and its pending entries; returns how many pending entries it had.
  StatusOr<uint64_t> DeleteConsumer(std::string_view name);
  // Writes `p` as pending for its consumer; `previous` is the entry it replaces, if any.
  Status SetPending(const PendingEntry& p, const PendingEntry* previous);
  Status RemovePending(const PendingEntry& p);
  // SetPending for an entry not pending in the group, and RemovePending, whose records Flush()
  // writes after the group's record: the group's list entries in ID order, then the consumers'
  // (a batch whose keys come in order costs its memtable inserts much less than one that
  // alternates between the two lists). The caller passes each ID once per editor and reads none
  // of these records again before Flush().
  Status AddPendingLater(const PendingEntry& p);
  Status RemovePendingLater(const PendingEntry& p);
  void Flush();

 private:
  struct Loaded {
    StreamConsumer consumer;
    bool exists = false;
    bool dirty = false;
  };
  StatusOr<Loaded*> Load(std::string_view name);

  StreamStore& store_;
  std::string name_;
  StreamGroup group_;
  // A deque: the consumers handed out by Consumer() stay where they are as others load.
  std::deque<std::pair<std::string, Loaded>> consumers_;
  struct LaterPending {
    PendingEntry entry;
    bool put;
  };
  std::vector<LaterPending> later_;
};

// Redis 7.2's streamEstimateDistanceFromFirstEverEntry: the logical read counter of `id`, or -1
// when it cannot be known.
int64_t StreamEstimateDistance(const Metadata& meta, StreamId id);
// streamRangeHasTombstones with an open end: whether an XDEL'd ID may lie at or after `start`.
bool StreamHasTombstonesFrom(const Metadata& meta, StreamId start);
// The lag XINFO reports for a group; nullopt: unknown (a null reply).
std::optional<int64_t> StreamGroupLag(const Metadata& meta, const StreamGroup& g);

}  // namespace basalt
