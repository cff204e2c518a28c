#include "types/pubsub_record.h"

#include <atomic>

#include "common/coding.h"

namespace basalt {

namespace {

// The first byte of a value; anything else is refused so that a future layout cannot be
// misread by an older replica.
constexpr uint8_t kPlainMessage = 0;
constexpr uint8_t kShardMessage = 1;

std::atomic<uint64_t> next_record{0};

}  // namespace

std::string NextPubsubRecordKey() {
  std::string key;
  PutFixed64(&key, next_record.fetch_add(1, std::memory_order_relaxed));
  return key;
}

std::string EncodePubsubRecord(bool sharded, std::string_view channel, std::string_view message) {
  std::string value;
  value.reserve(1 + 4 + channel.size() + message.size());
  PutFixed8(&value, sharded ? kShardMessage : kPlainMessage);
  PutLengthPrefixed(&value, channel);
  value.append(message);
  return value;
}

bool DecodePubsubRecord(std::string_view value, PubsubRecord* out) {
  uint8_t kind;
  std::string_view channel;
  if (!GetFixed8(&value, &kind) || (kind != kPlainMessage && kind != kShardMessage)) return false;
  if (!GetLengthPrefixed(&value, &channel)) return false;
  out->sharded = kind == kShardMessage;
  out->channel.assign(channel);
  out->message.assign(value);
  return true;
}

void AddPubsubRecord(Batch& batch, bool sharded, std::string_view channel,
                     std::string_view message) {
  std::string key = NextPubsubRecordKey();
  batch.Put(ColumnFamily::kPubsub, key, EncodePubsubRecord(sharded, channel, message));
  batch.Delete(ColumnFamily::kPubsub, key);
}

}  // namespace basalt
