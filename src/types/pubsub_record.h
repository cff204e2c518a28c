// The `pubsub` column family: how a published message travels to replicas.
//
// PUBLISH and SPUBLISH add a Put and a Delete of the same record to the command's batch, so the
// message sits in the WAL in commit order with the data writes around it, while the database
// itself never keeps it (the Delete shadows the Put at once; flushes and compactions drop both).
// A replica that replays the master's WAL decodes each Put into this column family with
// DecodePubsubRecord() and delivers it to its own subscribers. The layout is in
// docs/encoding.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/batch.h"

namespace basalt {

struct PubsubRecord {
  bool sharded = false;  // SPUBLISH (shard channel) rather than PUBLISH
  std::string channel;
  std::string message;
};

// Key: an 8-byte big-endian number, unique within this process (records never outlive their
// batch, so uniqueness across restarts does not matter).
std::string NextPubsubRecordKey();
std::string EncodePubsubRecord(bool sharded, std::string_view channel, std::string_view message);
// False if `value` is not a record this version understands.
bool DecodePubsubRecord(std::string_view value, PubsubRecord* out);

// Adds the Put + Delete pair for one published message to `batch`.
void AddPubsubRecord(Batch& batch, bool sharded, std::string_view channel,
                     std::string_view message);

}  // namespace basalt
